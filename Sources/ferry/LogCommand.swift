import ArgumentParser
import Ferry
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `ferry log`: who pasted what.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the broker's paste log, newest first.",
        discussion: """
            Every paste is logged, one line each: when (in local time, with the offset from \
            UTC), the pasteboard ('history N' for a read of history entry N, as 'ferry history \
            show N' makes), the item's index, the type delivered (a dynamic type by the MIME \
            type it came from), who read it (an app id, or 'pid N' for a command-line caller), \
            the reader's process name, as the broker learned it from the kernel when it pasted \
            (at most a second before, for pastes on the same connection), and the process name \
            of the item's writer, who copied it, learned when it copied \
            ('-' when unknown, as for pastes logged by an older broker). A read that asked the \
            user for consent ends with 'asked: allowed', 'asked: denied', 'asked: timed-out' or \
            'asked: withdrawn'; only an allowed one delivered the type.

            JSON keys: entries (array of objects with timestamp (ISO 8601, UTC), appID (string or \
            null), uniqueName, uid, pid, process (string or null), writerProcess (string or \
            null), historyEntry (the history entry read, or null for an ordinary paste), \
            pasteboard, item, type (the identifier), mime (its MIME type or null), consent \
            (string or null)).
            """)

    @Option(name: [.short, .long], parsing: .unconditional, help: ArgumentHelp("Show at most this many pastes (1–10000).", valueName: "n"))
    var limit = 20

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var timestamp: String
        var appID: String?
        var uniqueName: String
        var uid: UInt32
        var pid: Int32
        var process: String?
        var writerProcess: String?
        var historyEntry: Int?
        var pasteboard: String
        var item: Int
        var type: TypeReport
        var consent: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(timestamp, forKey: .timestamp)
            try c.encode(appID, forKey: .appID)
            try c.encode(uniqueName, forKey: .uniqueName)
            try c.encode(uid, forKey: .uid)
            try c.encode(pid, forKey: .pid)
            try c.encode(process, forKey: .process)
            try c.encode(writerProcess, forKey: .writerProcess)
            try c.encode(historyEntry, forKey: .historyEntry)
            try c.encode(pasteboard, forKey: .pasteboard)
            try c.encode(item, forKey: .item)
            try type.encode(into: &c, identifier: .type, mime: .mime)
            try c.encode(consent, forKey: .consent)
        }

        enum CodingKeys: String, CodingKey {
            case timestamp, appID, uniqueName, uid, pid, process, writerProcess, historyEntry, pasteboard, item, type, mime,
                 consent
        }
    }

    struct Report: Encodable {
        var entries: [Entry]
    }

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000.") }
    }

    func run() async throws {
        let log = try await bus.connect().pasteLog(limit: limit)
        let times = log.map { localTime($0.timestamp) }
        let entries = log.map {
            Entry(timestamp: timestamp($0.timestamp), appID: $0.appID, uniqueName: $0.uniqueName, uid: $0.uid,
                  pid: $0.pid, process: $0.process, writerProcess: $0.writerProcess, historyEntry: $0.historyEntry,
                  pasteboard: $0.pasteboard, item: $0.item, type: TypeReport($0.type), consent: $0.consent)
        }
        if json { return try printJSON(Report(entries: entries)) }
        var text = ""
        for (record, time) in zip(log, times) {
            let who = record.appID ?? "pid \(record.pid)"
            let source = record.historyEntry.map { "history \($0)" } ?? record.pasteboard
            var line = "\(time)  \(source)  \(record.item)  \(typeName(record.type))  \(who)  \(record.process ?? "-")  "
                + (record.writerProcess ?? "-")
            if let consent = record.consent { line += "  asked: \(consent)" }
            text += line.printableLine() + "\n"
        }
        try writeOut(text)
    }
}

/// `2026-11-26 20:15:57.123 +0100`: `date` in the local time zone (`TZ`, else /etc/localtime).
func localTime(_ date: Date) -> String {
    let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
    let fraction = Int(millis - Int64(seconds) * 1000)
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return timestamp(date) }
    var buffer = [CChar](repeating: 0, count: 64)
    let day = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    var zone = [CChar](repeating: 0, count: 16)
    let offset = strftime(&zone, zone.count, "%z", &parts)
    let head = String(decoding: buffer.prefix(day).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let tail = String(decoding: zone.prefix(offset).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let millisText = String(fraction)
    return head + "." + String(repeating: "0", count: 3 - millisText.count) + millisText + " " + tail
}

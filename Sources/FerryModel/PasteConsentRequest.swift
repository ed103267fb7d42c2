#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A read waiting for the user's consent: an app reads another app's content without a user
/// action, and the paste policy says to ask (as iOS 16's "Allow Paste" prompt does).
///
/// One record on both sides of the bus: the broker keeps its pending requests as these, and
/// `org.ferry.Broker1.PendingPasteConsents` carries each as its ``wireDictionary()``
/// (docs/wire.md, "Paste consent request"), which the client reads back with
/// ``init(wireDictionary:)``.
public struct PasteConsentRequest: Sendable, Hashable {
    /// The request's id, unique while the broker runs (the first is 1).
    public var id: UInt64
    /// The reading app's id.
    public var readerApp: String
    /// The reader's unique bus name.
    public var readerUniqueName: String
    /// The reader's pid (0 when unknown).
    public var readerPID: Int32
    /// The reader's process name (`/proc/PID/comm`), nil when unknown.
    public var readerProcess: String?
    /// The app that wrote the content read, nil when it was not a registered app (the CLI).
    public var sourceApp: String?
    /// The pasteboard read from.
    public var pasteboard: String
    /// The types the read would hand over.
    public var types: [String]
    /// When the read asked.
    public var asked: Date
    /// When the request times out (the read is denied) unless answered.
    public var expires: Date

    /// Makes a request; the broker sets `id`, `asked` and `expires` when it asks.
    public init(id: UInt64, readerApp: String, readerUniqueName: String, readerPID: Int32, readerProcess: String?,
                sourceApp: String?, pasteboard: String, types: [String], asked: Date, expires: Date) {
        self.id = id
        self.readerApp = readerApp
        self.readerUniqueName = readerUniqueName
        self.readerPID = readerPID
        self.readerProcess = readerProcess
        self.sourceApp = sourceApp
        self.pasteboard = pasteboard
        self.types = types
        self.asked = asked
        self.expires = expires
    }
}

extension PasteConsentRequest: WireCodable {
    /// `{id: t, reader-app: s, reader-unique-name: s, reader-pid: i, reader-process: s,
    /// source-app: s, pasteboard: s, types: as, asked: x, expires: x}`; the two optional strings
    /// are left out when nil, dates are microseconds since 1970.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "id": .uint64(id),
            "reader-app": .string(readerApp),
            "reader-unique-name": .string(readerUniqueName),
            "reader-pid": .int32(readerPID),
            "pasteboard": .string(pasteboard),
            "types": .strings(types),
            "asked": .int64(PropertyListValue.microseconds(asked)),
            "expires": .int64(PropertyListValue.microseconds(expires)),
        ]
        if let readerProcess { out["reader-process"] = .string(readerProcess) }
        if let sourceApp { out["source-app"] = .string(sourceApp) }
        return out
    }

    /// Reads a request: `id`, `reader-app`, `pasteboard`, `asked` and `expires` are required.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the missing or mistyped key.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        self.init(id: try wire.required("id", wire.uint64),
                  readerApp: try wire.required("reader-app", wire.string),
                  readerUniqueName: try wire.string("reader-unique-name") ?? "",
                  readerPID: try wire.int32("reader-pid") ?? 0,
                  readerProcess: try wire.string("reader-process"),
                  sourceApp: try wire.string("source-app"),
                  pasteboard: try wire.required("pasteboard", wire.string),
                  types: try wire.strings("types") ?? [],
                  asked: Self.date(try wire.required("asked", wire.int64)),
                  expires: Self.date(try wire.required("expires", wire.int64)))
    }

    private static func date(_ microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

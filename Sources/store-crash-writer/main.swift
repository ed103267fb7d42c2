// Test-only helper for PasteboardStore.
//
//   store-crash-writer [--not-durable] DIRECTORY [COUNT]
//     Opens a store and writes to the general pasteboard in a loop (COUNT times, 0 or absent:
//     forever), printing `DONE <n> <changeCount>` after each write returns, so a test can kill -9
//     it and check that every write it saw acknowledged survived. `--not-durable` writes as
//     remote items are written (`durable: false`: no WAL fsync), which must survive it too.
//   store-crash-writer --measure DIRECTORY
//     Prints the latency of 1 KiB inline writes and reads and the throughput of a 256 MiB blob
//     copied from a file descriptor.
import BrokerCore
import FerryModel
import Foundation

/// Writes a line to standard output at once (no buffering: the test reads it before the kill).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The bytes of write `n`'s large representation: 200 KiB, so it is a blob.
func blobBytes(_ n: Int) -> Data { Data(repeating: UInt8(truncatingIfNeeded: n), count: 200 * 1024) }

func crashLoop(directory: String, count: Int, durable: Bool) throws {
    let store = try PasteboardStore.open(directory: directory, historyLimit: 10)
    say("READY")
    var n = 1
    while count == 0 || n <= count {
        let item = NewItem(representations: [
            NewRepresentation(contentType: .utf8PlainText, data: .bytes(Data("write \(n)".utf8))),
            NewRepresentation(contentType: .data, data: .bytes(blobBytes(n))),
        ])
        let changeCount = try store.write([item], to: PasteboardStore.general, durable: durable)
        say("DONE \(n) \(changeCount)")
        n += 1
    }
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func measure(directory: String) throws {
    let store = try PasteboardStore.open(directory: directory, historyLimit: 100)
    let clock = ContinuousClock()
    let kib = Data(repeating: 0x61, count: 1024)
    let rounds = 500
    var id = UUID()
    let writes = try clock.measure {
        for _ in 0..<rounds {
            let item = NewItem(representations: [NewRepresentation(contentType: .utf8PlainText, data: .bytes(kib))])
            id = item.id
            try store.write([item], to: "bench")
        }
    }
    let quickWrites = try clock.measure {
        for _ in 0..<rounds {
            let item = NewItem(representations: [NewRepresentation(contentType: .utf8PlainText, data: .bytes(kib))])
            try store.write([item], to: "bench", durable: false)
        }
    }
    let reads = try clock.measure {
        for _ in 0..<rounds {
            guard case .bytes(let data) = try store.readData(item: id, representation: .utf8PlainText),
                  data.count == 1024 else { fatalError("bad read") }
        }
    }
    let listings = try clock.measure {
        for _ in 0..<rounds { _ = try store.items(in: "bench") }
    }
    let logs = try clock.measure {
        for n in 0..<rounds {
            try store.logPaste(PasteRecord(appID: nil, uniqueName: ":1.1", uid: 0, pid: 1, pasteboard: "bench",
                                           itemIndex: n, contentType: .utf8PlainText))
        }
    }
    say(String(format: "1 KiB inline write (durable): %.0f µs", microseconds(writes) / Double(rounds)))
    say(String(format: "1 KiB inline write (not durable): %.0f µs", microseconds(quickWrites) / Double(rounds)))
    say(String(format: "1 KiB inline read:            %.1f µs", microseconds(reads) / Double(rounds)))
    say(String(format: "items(in:) of 1 item:         %.1f µs", microseconds(listings) / Double(rounds)))
    say(String(format: "paste log record:             %.0f µs", microseconds(logs) / Double(rounds)))

    let size = 256 << 20
    let source = directory + "/measure-source"
    _ = FileManager.default.createFile(atPath: source, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
    let chunk = Data(repeating: 0x5A, count: 1 << 20)
    for _ in 0..<(size >> 20) { handle.write(chunk) }
    try handle.close()
    let fd = open(source, O_RDONLY)
    defer { close(fd); unlink(source) }
    let copy = try clock.measure {
        let item = NewItem(representations: [NewRepresentation(contentType: .data, data: .fileDescriptor(fd))])
        try store.write([item], to: "bench")
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    say(String(format: "256 MiB blob from an fd (durable): %.0f ms, %.0f MiB/s; peak RSS %ld MiB",
               microseconds(copy) / 1000, Double(size >> 20) / (microseconds(copy) / 1e6), usage.ru_maxrss / 1024))
}

let arguments = CommandLine.arguments
let loopArguments = arguments.dropFirst().filter { $0 != "--not-durable" }
do {
    if arguments.count == 3, arguments[1] == "--measure" {
        try measure(directory: arguments[2])
    } else if let directory = loopArguments.first, !directory.hasPrefix("-") {
        try crashLoop(directory: directory, count: loopArguments.count > 1 ? Int(loopArguments[1]) ?? 0 : 0,
                      durable: !arguments.contains("--not-durable"))
    } else {
        FileHandle.standardError.write(Data("usage: store-crash-writer [--not-durable] DIRECTORY [COUNT] | --measure DIRECTORY\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("store-crash-writer: \(error)\n".utf8))
    exit(1)
}

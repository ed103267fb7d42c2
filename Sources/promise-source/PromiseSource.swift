// Test-only: a second process that promises one large representation on the general pasteboard
// of the bus at its first argument, so the client library's tests can read it across processes
// (progress, cancellation reaching the loader, streaming without holding the bytes).
//
//     promise-source <bus-address> <form> <size> [<chunk-delay-ms> [<file>]]
//
// <form>: `loader` (a data loader that builds the bytes 1 MiB at a time), `sequence` (an
// AsyncSequence of 1 MiB `Data` chunks), `handle` (the descriptor of a FileHandle of <file>), `file` (a file
// representation of <file>). The bytes are ``pattern(_:)`` (for `handle` and `file`, whatever
// <file> holds). Prints `READY` once the item is on the pasteboard and `CANCELLED <form>` when its
// loader or sequence sees its task cancelled; runs until it is terminated.
import Ferry
import FerryModel
import Foundation

/// Byte `index` of the payload (the tests compute the same).
func pattern(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 7 ^ index >> 13) }

/// `count` bytes of the payload starting at `offset`.
func payload(from offset: Int, count: Int) -> Data {
    Data((offset..<offset + count).map(pattern))
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// 1 MiB chunks of the payload, each after `delay`; says `CANCELLED sequence` when the task
/// asking for the next chunk was cancelled.
struct PayloadChunks: AsyncSequence {
    typealias Element = Data
    let size: Int
    let delay: Duration

    struct AsyncIterator: AsyncIteratorProtocol {
        let size: Int
        let delay: Duration
        var offset = 0

        mutating func next() async throws -> Data? {
            guard offset < size else { return nil }
            do {
                if delay > .zero { try await Task.sleep(for: delay) }
                try Task.checkCancellation()
            } catch {
                say("CANCELLED sequence")
                throw error
            }
            let count = Swift.min(1 << 20, size - offset)
            defer { offset += count }
            return payload(from: offset, count: count)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(size: size, delay: delay) }
}

@main
enum PromiseSource {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let size = Int(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: promise-source <bus-address> <form> <size> [<chunk-delay-ms> [<file>]]\n".utf8))
            exit(2)
        }
        let delay = Duration.milliseconds(arguments.count > 4 ? Int(arguments[4]) ?? 0 : 0)
        let file = arguments.count > 5 ? URL(fileURLWithPath: arguments[5]) : nil

        var provider = ItemProvider()
        switch arguments[2] {
        case "loader":
            provider.registerDataRepresentation(for: .data, estimatedSize: Int64(size)) { progress in
                var data = Data()
                data.reserveCapacity(size)
                while data.count < size {
                    do {
                        if delay > .zero { try await Task.sleep(for: delay) }
                        try Task.checkCancellation()
                    } catch {
                        say("CANCELLED loader progress.isCancelled=\(progress.isCancelled)")
                        throw error
                    }
                    data.append(payload(from: data.count, count: min(1 << 20, size - data.count)))
                }
                return data
            }
        case "sequence":
            provider.registerStreamRepresentation(for: .data, estimatedSize: Int64(size), chunks: {
                PayloadChunks(size: size, delay: delay)
            })
        case "handle":
            guard let file else { exit(2) }
            provider.registerStreamRepresentation(for: .data, estimatedSize: Int64(size), readingFrom: {
                // The handle closes its own descriptor when it goes; the load gets a duplicate.
                let handle = try FileHandle(forReadingFrom: file)
                return withExtendedLifetime(handle) { dup(handle.fileDescriptor) }
            })
        case "file":
            guard let file else { exit(2) }
            provider.registerFileRepresentation(for: .data, fileAt: file)
        default:
            FileHandle.standardError.write(Data("unknown form \(arguments[2])\n".utf8))
            exit(2)
        }

        do {
            let client = try await FerryClient.connect(address: arguments[1])
            try await client.registerCommandLineTool()
            try await client.general.setItemProviders([provider])
            say("READY")
            while true { try await Task.sleep(for: .seconds(3600)) }
        } catch {
            FileHandle.standardError.write(Data("promise-source: \(error)\n".utf8))
            exit(1)
        }
    }
}

import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Copies bytes from one descriptor to another on a thread of the blocking pool (`BlockingIO`),
/// never on a task's: the
/// bridge's only way of moving bytes (desktop owner → Ferry, Ferry → desktop reader, owner →
/// scratch file). Converts on the way (``ByteConverter``), stops at a byte limit, gives up on a
/// source silent for the idle timeout or a reader that takes nothing for the stall timeout
/// (desktop-bridge R7: a stalled reader never holds the bridge). Both descriptors are the pump's:
/// it closes them when it ends.
package enum DescriptorPump {
    /// How a copy ended.
    package enum Outcome: Sendable, Hashable {
        /// The source reached end of file; this many bytes were written.
        case complete(UInt64)
        /// The source had more than the limit: the copy stopped there.
        case overLimit
        /// The source sent nothing for the idle timeout.
        case sourceSilent
        /// The destination took nothing for the stall timeout.
        case destinationStalled
        /// The destination went away (a reader that closed its end) or an I/O error.
        case failed(String)
        /// The copy was cancelled.
        case cancelled
    }

    /// The size of one read.
    static let chunkSize = 256 * 1024
    /// Copies `source` into `destination` until end of file and closes both.
    /// - Parameters:
    ///   - limit: the most bytes the source may deliver (before conversion); nil: no limit.
    ///   - idleTimeout: how long the source may send nothing.
    ///   - stallTimeout: how long the destination may take nothing.
    ///   - cancellation: set to stop the copy (the task's cancellation sets it too).
    package static func copy(from source: Int32, to destination: Int32, conversion: ByteConversion = .none,
                            limit: UInt64? = nil, idleTimeout: Duration, stallTimeout: Duration = .seconds(5),
                            cancellation: Cancellation = Cancellation()) async -> Outcome {
        await withTaskCancellationHandler {
            await BlockingIO.run {
                let outcome = run(source: source, destination: destination, conversion: conversion, limit: limit,
                                  idle: idleTimeout, stall: stallTimeout, cancellation: cancellation)
                close(source)
                close(destination)
                return outcome
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// A switch that stops a running copy: a pump waiting for its source or its destination
    /// polls this switch's wake beside the descriptor, so it stops at once.
    package final class Cancellation: Sendable {
        fileprivate let wake = Wake()
        /// A switch that is off.
        package init() {}
        /// Stops the copies using this switch.
        package func cancel() { wake.signal() }
        /// Whether ``cancel()`` was called.
        package var isCancelled: Bool { wake.isSignalled }
    }

    /// Makes a pipe: (read end, write end), both close-on-exec.
    /// - Throws: `BridgeError` `.io`.
    package static func makePipe() throws(BridgeError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw BridgeError(.io, "cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    private static func run(source: Int32, destination: Int32, conversion: ByteConversion, limit: UInt64?,
                            idle: Duration, stall: Duration, cancellation: Cancellation) -> Outcome {
        _ = fcntl(source, F_SETFL, fcntl(source, F_GETFL) | O_NONBLOCK)
        _ = fcntl(destination, F_SETFL, fcntl(destination, F_GETFL) | O_NONBLOCK)
        var converter = ByteConverter(conversion)
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var converted: [UInt8] = []
        var read: UInt64 = 0
        var written: UInt64 = 0
        while true {
            guard wait(for: source, events: Int16(POLLIN), timeout: idle, cancellation: cancellation) else {
                return cancellation.isCancelled ? .cancelled : .sourceSilent
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failed("reading: \(String(cString: strerror(errno)))")
            }
            var chunk = ArraySlice(buffer[0..<n])
            if n == 0 {
                converted.removeAll(keepingCapacity: true)
                converter.finish(into: &converted)
                chunk = converted[...]
            } else {
                read += UInt64(n)
                if let limit, read > limit { return .overLimit }
                if conversion != .none {
                    converted.removeAll(keepingCapacity: true)
                    converter.convert(chunk, into: &converted)
                    chunk = converted[...]
                }
            }
            if let failure = write(chunk, to: destination, stall: stall, cancellation: cancellation) { return failure }
            written += UInt64(chunk.count)
            if n == 0 { return .complete(written) }
        }
    }

    /// Writes all of `bytes`, waiting at most `stall` each time the destination is full.
    private static func write(_ bytes: ArraySlice<UInt8>, to destination: Int32, stall: Duration,
                              cancellation: Cancellation) -> Outcome? {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(destination, $0.baseAddress, $0.count) }
            if n >= 0 {
                offset += n
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                guard wait(for: destination, events: Int16(POLLOUT), timeout: stall, cancellation: cancellation) else {
                    return cancellation.isCancelled ? .cancelled : .destinationStalled
                }
            default:
                return .failed("writing: \(String(cString: strerror(errno)))")
            }
        }
        return nil
    }

    /// Waits until `descriptor` is ready (or has hung up), at most `timeout`; false on timeout
    /// or cancellation.
    private static func wait(for descriptor: Int32, events: Int16, timeout: Duration, cancellation: Cancellation) -> Bool {
        do {
            return try cancellation.wake.poll(descriptor, events: events, until: .now + timeout) == .ready
        } catch {
            return !cancellation.isCancelled  // poll itself failed: the read or write reports the error
        }
    }
}

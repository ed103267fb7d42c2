#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryModel
import FerrySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PromiseRelay {
    /// Makes the pipe, builds the call carrying its write end, closes the broker's own write end,
    /// and starts a task that sends the call and waits (at most `timeout`) for the byte count,
    /// then hands the outcome to `ended`.
    ///
    /// The task runs on the connection's thread (it only sends and waits): the call goes out, and
    /// the reply resumes it and whoever waits for it (`FinishTransfer`, on that thread too),
    /// without a hop to another thread.
    ///
    /// `paste` says whether the bytes go to someone (a reader, a share's delivery): the call's
    /// option `paste`, which a source that serves its data once (`ferry copy --paste-once`) counts
    /// by. The broker's own reads (pattern detection) pass false. `resume`: the option naming a
    /// load the source kept from `ProvideBytes`.
    func call(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType, estimatedSize: Int64? = nil,
              timeout: Duration, paste: Bool, resume: String? = nil,
              ended: (@Sendable (Result<UInt64, any Error>) -> Void)? = nil)
        throws -> (read: FileDescriptor, task: Task<UInt64, any Error>)
    {
        let message: Message
        let read: FileDescriptor
        do {
            let fits = estimatedSize.map { (0...Int64(Self.defaultPipeSize)).contains($0) } ?? false
            let pipe = try FileDescriptor.pipe(bufferSize: fits ? nil : Self.pipeBufferSize)
            read = pipe.read
            // Appending the write end duplicates it into the message; ours goes right away, so
            // the only copies left are the message's (freed once it is sent) and the source's.
            defer { pipe.write.close() }
            message = try Message.methodCall(
                destination: owner, path: clientPath, interface: Self.clientInterface, member: Self.provideMember,
                body: [.string(itemID.uuidString), .string(type.identifier), .unixFD(pipe.write),
                       Self.options(paste: paste, resume: resume)])
        } catch {
            throw FerryModelError(.unavailable, "cannot ask \(owner.rawValue) for \(type.identifier): \(error)")
        }
        let handOff = HandOff(message)
        let connection = callConnection(for: owner)
        let task = Task<UInt64, any Error>(executorPreference: connection.taskExecutor) {
            let started = ContinuousClock.now
            let result: Result<UInt64, any Error>
            do {
                // Taken out of the box so that nothing but this call holds the message (and its
                // copy of the write end) once the call returns.
                guard let message = handOff.take() else { throw CancellationError() }
                let reply = try await connection.call(consume message, timeout: timeout)
                let body = try reply.body
                guard body.count == 1, case .uint64(let size) = body[0] else {
                    throw FerryModelError(.unavailable, "the source \(owner.rawValue) replied \(reply.signature.rawValue) instead of a size (t)")
                }
                result = .success(size)
            } catch {
                result = .failure(Self.transferError(error, owner: owner, type: type, timeout: timeout,
                                                     elapsed: ContinuousClock.now - started))
            }
            ended?(result)
            return try result.get()
        }
        return (read, task)
    }

    /// `ProvideRepresentation`'s options: `paste` when the bytes go to someone, `resume` the load
    /// a `ProvideBytes` kept.
    static func options(paste: Bool, resume: String?) -> DBusValue {
        var entries: [DBusDictionaryEntry] = []
        if paste { entries.append(DBusDictionaryEntry(key: .string("paste"), value: .variant(.boolean(true)))) }
        if let resume { entries.append(DBusDictionaryEntry(key: .string("resume"), value: .variant(.string(resume)))) }
        return .dictionary(key: .string, value: .variant, entries: entries)
    }

    /// The connection `owner` is called over: its direct connection when it serves its callbacks
    /// there (no dbus-daemon hops), the bus otherwise.
    func callConnection(for owner: BusName) -> Connection {
        direct?.callbackConnection(for: owner.rawValue) ?? connection
    }

    /// The `FerryModelError` a failed `ProvideRepresentation` call stands for.
    static func transferError(_ error: any Error, owner: BusName, type: ContentType, timeout: Duration,
                              elapsed: Duration) -> FerryModelError {
        let source = "the source \(owner.rawValue)"
        if let error = error as? FerryModelError { return error }
        if error is CancellationError {
            return FerryModelError(.cancelled, "the transfer of \(type.identifier) from \(owner.rawValue) was cancelled")
        }
        guard let error = error as? DBusError else {
            return FerryModelError(.unavailable, "\(source) failed to provide \(type.identifier): \(error)")
        }
        switch error.name {
        case .noReply where elapsed >= timeout * 0.99, .timeout:
            return FerryModelError(.timeout, "\(source) did not finish writing \(type.identifier) within \(seconds(timeout)) s")
        case .noReply, .disconnected, .serviceUnknown, .nameHasNoOwner:
            return FerryModelError(.unavailable, "\(source) went away mid-transfer: \(error.message)")
        default:
            return FerryModelError(.unavailable, "\(source) failed to provide \(type.identifier): \(error.message)")
        }
    }

    /// The error for a pipe that timed out (`message` nil) or failed before end of file.
    static func pipeFailure(_ message: String?, owner: BusName, type: ContentType, timeout: Duration) -> FerryModelError {
        guard let message else {
            return FerryModelError(.timeout, "the source \(owner.rawValue) did not finish writing \(type.identifier) "
                                   + "within \(seconds(timeout)) s")
        }
        return FerryModelError(.unavailable, "reading \(type.identifier) from \(owner.rawValue) failed: \(message)")
    }

    static func seconds(_ duration: Duration) -> String {
        let (s, attoseconds) = duration.components
        return attoseconds == 0 ? "\(s)" : "\(Double(s) + Double(attoseconds) / 1e18)"
    }

    /// Files a transfer for its reader to finish.
    func file(_ id: String, _ transfer: Transfer) {
        book.withLock { book in
            forgetExpired(&book)
            book.transfers[id] = transfer
        }
    }

    /// Forgets a transfer no one will finish (its bytes went inline, or its failure to the reader).
    func forget(_ id: String) {
        _ = book.withLock { $0.transfers.removeValue(forKey: id) }
    }

    /// Notes that a transfer's call has returned with `outcome`, which replaces the finished task.
    /// Recorded even before the transfer is in the book (a call that ends before `start` has filed
    /// it: the task then stays) or after it was cancelled: forgetting an id that is not there does
    /// nothing.
    func ended(_ id: String, _ outcome: Result<UInt64, any Error>) {
        book.withLock { book in
            book.transfers[id]?.state = .ended(outcome)
            book.endedOrder.append((id, .now))
        }
    }

    /// Drops transfers that ended more than `retention` ago: amortized O(1) per call.
    func forgetExpired(_ book: inout Book) {
        let now = ContinuousClock.now
        while book.endedHead < book.endedOrder.count, now - book.endedOrder[book.endedHead].at >= retention {
            book.transfers[book.endedOrder[book.endedHead].id] = nil
            book.endedHead += 1
        }
        if book.endedHead >= 1024, book.endedHead * 2 >= book.endedOrder.count {
            book.endedOrder.removeFirst(book.endedHead)
            book.endedHead = 0
        }
    }
}

/// Hands one value to one taker.
final class HandOff<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: Value) { self.value = Mutex(value) }

    /// The value the first time, nil afterwards.
    func take() -> Value? { value.withLock { v in defer { v = nil }; return v } }
}

/// Drains a pipe with a deadline on a thread of the blocking pool (never on a connection's thread
/// or the cooperative pool, which a silent source would otherwise block), once the pipe has
/// something to read: until then it waits on the process's `DescriptorWatcher`, without a thread.
/// Each read waits in `poll` on the pipe and on the task's cancellation (a `Wake`), so a cancelled
/// transfer (a share cancelled, the broker shutting down) stops at once instead of at its deadline.
enum PipeReader {
    /// How a drain ended.
    enum Outcome: Sendable {
        /// End of file after this many bytes.
        case endOfFile(UInt64)
        /// The deadline passed (nil) or reading failed (why).
        case stopped(String?)
        /// The sink threw.
        case sinkFailed(any Error)
        /// The task was cancelled.
        case cancelled
    }

    /// Everything up to end of file, handed to `sink` chunk by chunk (on the blocking pool's
    /// thread: it may block, as a file's `write` does).
    static func drain(_ fd: FileDescriptor, deadline: ContinuousClock.Instant,
                      into sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async -> Outcome {
        if let raw = fd.rawValue {
            do {
                defer { withExtendedLifetime(fd) {} }
                guard try await DescriptorWatcher.shared.waitUntilReadable(raw, timeout: max(deadline - .now, .zero)) else {
                    return .stopped(nil)
                }
            } catch is CancellationError {
                return .cancelled
            } catch {
                return .stopped("\(error)")
            }
        }
        return await BlockingIO.run(cancellable: { wake in drainBlocking(fd, deadline: deadline, wake: wake, sink: sink) })
    }

    private static func drainBlocking(_ fd: FileDescriptor, deadline: ContinuousClock.Instant, wake: Wake,
                                      sink: (UnsafeRawBufferPointer) throws -> Void) -> Outcome {
        do {
            return try fd.withRawValue { raw -> Outcome in
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                var total: UInt64 = 0
                while true {
                    switch try wake.poll(raw, until: deadline) {
                    case .woken: return .cancelled
                    case .timedOut: return .stopped(nil)
                    case .ready: break
                    }
                    let n = chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) }
                    if n < 0 {
                        if errno == EINTR || errno == EAGAIN { continue }
                        return .stopped(String(cString: strerror(errno)))
                    }
                    if n == 0 { return .endOfFile(total) }
                    total += UInt64(n)
                    do {
                        try chunk.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    } catch {
                        return .sinkFailed(error)
                    }
                }
            }
        } catch {
            return .stopped("\(error)")
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryModel
import Synchronization

extension PromiseRelay {
    /// What a promised read delivers: the bytes themselves, when the source wrote them all and
    /// replied within the wait; otherwise the pipe's read end and a transfer, as ``start`` returns.
    package enum Delivery: Sendable {
        case bytes([UInt8])
        case stream(FileDescriptor, transfer: String)
    }

    /// Starts a transfer as ``start`` does, then waits up to `window` for the source: when it has
    /// replied by then and the pipe holds exactly the bytes it said it wrote, they are read here and
    /// returned, and no transfer is left to finish. A small promise is then one round trip for the
    /// reader instead of `Read`, the pipe and `FinishTransfer`. Otherwise (a slow source, one still
    /// writing, one whose count does not match) the reader gets the pipe and a transfer, exactly as
    /// from ``start``: nothing has been read from it.
    ///
    /// A source that answers `ProvideBytes` on its direct connection is asked that first: bytes it
    /// has at once come in the reply, with no pipe at all; a load it started but could not answer
    /// with at once is resumed by the `ProvideRepresentation` that follows, within what is left of
    /// `window`.
    ///
    /// - Parameters: as ``start``; `window`: how long to wait for the source.
    /// - Throws: as ``start``; and what ``finish`` would throw when the source failed within `window`.
    package func read(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType,
                      estimatedSize: Int64? = nil, reader: BusName, pasteboard: String? = nil,
                      waitingAtMost window: Duration) async throws -> Delivery {
        let deadline = ContinuousClock.now + window
        var resume: String?
        if let connection = direct?.bytesConnection(for: owner.rawValue) {
            switch try await askForBytes(owner: owner, clientPath: clientPath, itemID: itemID, type: type,
                                         over: connection, waitingAtMost: window) {
            case .bytes(let bytes): return .bytes(bytes)
            case .resume(let token): resume = token
            }
        }
        let wait = ShortWait()
        let (read, id) = try begin(owner: owner, clientPath: clientPath, itemID: itemID, type: type,
                                   estimatedSize: estimatedSize, reader: reader, pasteboard: pasteboard, resume: resume,
                                   claim: wait.end)
        let outcome = await wait.outcome(within: max(.zero, deadline - .now), timedOn: callConnection(for: owner))
        switch outcome {
        case .success(let count)?:
            if count <= UInt64(Self.defaultPipeSize), let bytes = read.readUnread(exactly: Int(count)) {
                forget(id)
                read.close()
                return .bytes(bytes)
            }
            ended(id, .success(count))
        case .failure(let error)?:
            forget(id)
            read.close()
            throw error
        case nil:
            break
        }
        return .stream(read, transfer: id)
    }

    /// What a source answered to `ProvideBytes`.
    enum BytesAnswer {
        /// All the bytes.
        case bytes([UInt8])
        /// Ask with a pipe; resuming the load it kept under this token, when not nil.
        case resume(String?)
    }

    /// Asks `owner` for the bytes in the reply (`org.ferry.Client1.ProvideBytes`) over `connection`,
    /// at most ``defaultPipeSize`` of them, waiting at most `window`. A source that does not answer
    /// within it, or does not know the method, is asked with a pipe (`.resume(nil)`).
    /// - Throws: what ``finish`` would throw for the source's error (no such item, a loader that failed).
    func askForBytes(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType, over connection: Connection,
                     waitingAtMost window: Duration) async throws -> BytesAnswer {
        let started = ContinuousClock.now
        do {
            let message = try Message.methodCall(
                destination: owner, path: clientPath, interface: Self.clientInterface, member: Self.provideBytesMember,
                body: [.string(itemID.uuidString), .string(type.identifier), .uint32(UInt32(Self.defaultPipeSize)),
                       Self.options(paste: true, resume: nil)])
            let reply = try await connection.call(message, timeout: window)
            let (done, bytes, resume) = try reply.arguments(as: Bool.self, [UInt8].self, String.self)
            guard done else { return .resume(resume.isEmpty ? nil : resume) }
            guard bytes.count <= Self.defaultPipeSize else {
                throw FerryModelError(.unavailable, "the source \(owner.rawValue) answered \(bytes.count) bytes of "
                                      + "\(type.identifier), over the \(Self.defaultPipeSize) asked for")
            }
            return .bytes(bytes)
        } catch let error as DBusError where [.unknownMethod, .noReply, .timeout].contains(error.name) {
            return .resume(nil)
        } catch {
            throw Self.transferError(error, owner: owner, type: type, timeout: window, elapsed: ContinuousClock.now - started)
        }
    }
}

/// A short wait for a call's outcome: whichever comes first, the outcome or the end of the wait,
/// decides. Once the wait has ended, ``end(_:)`` refuses the outcome (its caller records it elsewhere).
final class ShortWait: Sendable {
    typealias Outcome = Result<UInt64, any Error>

    private enum State {
        /// Not decided yet; the waiter's continuation once it waits.
        case waiting(CheckedContinuation<Outcome?, Never>?)
        case ended(Outcome)
        case over
    }

    private let state = Mutex(State.waiting(nil))

    /// Hands over the call's outcome: true when the waiter takes it, false when its wait is over.
    func end(_ outcome: Outcome) -> Bool { settle(.ended(outcome), outcome) }

    /// The outcome, when it comes within `window` (timed on `connection`'s thread); nil otherwise.
    func outcome(within window: Duration, timedOn connection: Connection) async -> Outcome? {
        let timer = connection.schedule(after: window) { [self] in _ = settle(.over, nil) }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let decided: Outcome?? = state.withLock { state in
                switch state {
                case .waiting: state = .waiting(continuation); return nil
                case .ended(let outcome): return .some(outcome)
                case .over: return .some(nil)
                }
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// Decides (`new`) unless already decided, resuming a waiting waiter with `value`; whether it did.
    private func settle(_ new: State, _ value: Outcome?) -> Bool {
        let decided: CheckedContinuation<Outcome?, Never>?? = state.withLock { state in
            guard case .waiting(let waiter) = state else { return nil }
            state = new
            return .some(waiter)
        }
        guard let decided else { return false }
        decided?.resume(returning: value)
        return true
    }
}

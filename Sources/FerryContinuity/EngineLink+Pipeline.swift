import CNATS
import Synchronization

extension EngineLink {
    /// A pipeline of requests on this link (``RequestPipeline``).
    public func pipeline() throws -> RequestPipeline {
        try RequestPipeline(connection: connection)
    }
}

/// Requests with many in flight: each is published with a reply subject of its own under one
/// inbox (`_INBOX.<unique>.<tag>`), and the replies are taken from that inbox as they come, so
/// the requester works on one reply while the responder prepares the next. Used by one thread
/// at a time; ``close()`` (or deinit) ends the inbox's subscription.
public final class RequestPipeline: @unchecked Sendable {
    let connection: OpaquePointer
    let subscription: OpaquePointer
    let inbox: String
    private let closed = Mutex(false)

    init(connection: OpaquePointer) throws {
        var raw: UnsafeMutablePointer<natsInbox>?
        try EngineLink.check(natsInbox_Create(&raw), "cannot make an inbox")
        guard let raw else { throw EngineError(.failed, "no inbox") }
        inbox = String(cString: raw)
        natsInbox_Destroy(raw)
        var subscription: OpaquePointer?
        try EngineLink.check(natsConnection_SubscribeSync(&subscription, connection, inbox + ".*"), "cannot subscribe to \(inbox)")
        guard let subscription else { throw EngineError(.failed, "no subscription to \(inbox)") }
        self.connection = connection
        self.subscription = subscription
    }

    deinit { close() }

    /// Publishes a request on `subject` whose reply comes back with `tag`.
    public func send(_ subject: String, _ bytes: [UInt8], tag: Int) throws {
        let status = bytes.withUnsafeBytes {
            natsConnection_PublishRequest(connection, subject, "\(inbox).\(tag)", $0.baseAddress, Int32($0.count))
        }
        try EngineLink.check(status, "cannot send a request on \(subject)")
    }

    /// The next reply, with its request's tag; waits at most `timeout`.
    /// - Throws: ``EngineError`` `.noResponders` when nobody serves the subject a request went
    ///   to, `.timeout` when no reply came.
    public func next(timeout: Duration) throws -> (tag: Int, bytes: [UInt8]) {
        var message: OpaquePointer?
        let ms = max(1, Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        let status = natsSubscription_NextMsg(&message, subscription, ms)
        guard status == NATS_OK, let message else { throw EngineError.status(status, "no answer on \(inbox)") }
        defer { natsMsg_Destroy(message) }
        guard let subject = natsMsg_GetSubject(message).map({ String(cString: $0) }),
              let tag = subject.split(separator: ".").last.flatMap({ Int($0) }) else {
            throw EngineError(.failed, "a reply on \(inbox) without a tag")
        }
        return (tag, EngineLink.bytes(of: message))
    }

    /// Ends the inbox's subscription (replies still on their way are dropped). Idempotent.
    public func close() {
        guard !closed.withLock({ closed in defer { closed = true }; return closed }) else { return }
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }
}

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
        inbox = try EngineLink.makeInbox()
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

    /// The next reply, with its request's tag, as it came (its bytes are not copied out); waits
    /// at most `timeout`.
    /// - Throws: ``EngineError`` `.noResponders` when nobody serves the subject a request went
    ///   to, `.timeout` when no reply came.
    public func next(timeout: Duration) throws -> (tag: Int, message: EngineMessage) {
        var raw: OpaquePointer?
        let status = natsSubscription_NextMsg(&raw, subscription, EngineLink.milliseconds(timeout))
        guard status == NATS_OK, let raw else { throw EngineError.status(status, "no answer on \(inbox)") }
        let message = EngineMessage(raw)
        guard let tag = message.inboxTag else {
            throw EngineError(.failed, "a reply on \(inbox) without a tag")
        }
        return (tag, message)
    }

    /// Ends the inbox's subscription (replies still on their way are dropped). Idempotent.
    public func close() {
        guard !closed.withLock({ closed in defer { closed = true }; return closed }) else { return }
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }
}

/// A message from the engine, kept as libnats made it: its bytes are read in place (a 512 KiB
/// chunk is opened straight from libnats' buffer, not copied into an array first). Destroyed
/// with this object.
public final class EngineMessage: @unchecked Sendable {
    // The natsMsg, owned by this object alone; nothing mutates it after it arrived.
    private let message: OpaquePointer

    init(_ message: OpaquePointer) {
        self.message = message
    }

    deinit { natsMsg_Destroy(message) }

    /// The message's bytes.
    public var count: Int { Int(natsMsg_GetDataLength(message)) }

    /// The subject it came on.
    var subject: String? { natsMsg_GetSubject(message).map { String(cString: $0) } }

    /// The tag a reply carries as the last token of its inbox subject (`<inbox>.<tag>`).
    var inboxTag: Int? { subject?.split(separator: ".").last.flatMap { Int($0) } }

    /// Where an answer to it goes, when it is a request.
    var reply: String? { natsMsg_GetReply(message).map { String(cString: $0) } }

    /// Whether it is the engine's word that nobody serves the subject a request went to.
    var isNoResponders: Bool { natsMsg_IsNoResponders(message) }

    /// Calls `body` with the message's bytes (valid only during the call).
    public func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let count = self.count
        guard count > 0, let data = natsMsg_GetData(message) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: count))
    }
}

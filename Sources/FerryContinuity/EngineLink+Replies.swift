import CNATS
import Dispatch
import Synchronization

extension EngineLink {
    /// Sends a request on `subject` and hands its outcome to `handler` where the reply arrives,
    /// on libnats' delivery thread of the link's standing reply subscription: no thread waits
    /// for it. `handler` runs exactly once, with the reply, `.noResponders` (at once, when nobody
    /// serves `subject`) or `.timeout`; it must not block, since the replies to this link's
    /// other requests are handed out after it returns.
    /// - Throws: ``EngineError`` when the request cannot be sent (then `handler` never runs).
    public func request(_ subject: String, _ bytes: [UInt8], timeout: Duration,
                        then handler: @escaping @Sendable (Result<EngineMessage, EngineError>) -> Void) throws {
        try replyRouter().send(subject, bytes, timeout: timeout, then: handler)
    }

    /// The link's reply router, made at its first use.
    private func replyRouter() throws -> ReplyRouter {
        try router.withLock { router in
            if let router { return router }
            let made = try ReplyRouter(link: self)
            router = made
            return made
        }
    }
}

/// The replies to a link's asynchronous requests: one subscription on a wildcard inbox
/// (`_INBOX.<unique>.*`, kept across reconnects by libnats), each request's reply subject that
/// inbox with a tag of its own, and the handlers waiting for them by tag.
final class ReplyRouter: @unchecked Sendable {
    typealias Handler = @Sendable (Result<EngineMessage, EngineError>) -> Void

    // The link's connection: libnats serializes its own use, and the link outlives the router.
    private let connection: OpaquePointer
    private let inbox: String
    private let waiting = Mutex<(next: Int, handlers: [Int: Handler])>((0, [:]))

    init(link: EngineLink) throws {
        inbox = try EngineLink.makeInbox()
        connection = link.connection
        // The subscription lasts as long as the link (it holds the router, which holds no link).
        _ = try link.subscribeUntilCancelled(inbox + ".*") { [weak self] message in self?.arrived(message) }
    }

    func send(_ subject: String, _ bytes: [UInt8], timeout: Duration, then handler: @escaping Handler) throws {
        let tag = waiting.withLock { waiting in
            defer { waiting.next += 1 }
            waiting.handlers[waiting.next] = handler
            return waiting.next
        }
        let status = bytes.withUnsafeBytes {
            natsConnection_PublishRequest(connection, subject, "\(inbox).\(tag)", $0.baseAddress, Int32($0.count))
        }
        guard status == NATS_OK else {
            _ = take(tag)
            throw EngineError.status(status, "cannot send a request on \(subject)")
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(EngineLink.milliseconds(timeout)))) { [weak self] in
            self?.take(tag)?(.failure(EngineError(.timeout, "no answer on \(subject) within \(timeout)")))
        }
    }

    private func arrived(_ message: EngineMessage) {
        guard let tag = message.inboxTag, let handler = take(tag) else {
            return  // a reply that came too late, or was never asked for
        }
        handler(message.isNoResponders ? .failure(EngineError(.noResponders, "nobody serves the request's subject")) : .success(message))
    }

    private func take(_ tag: Int) -> Handler? {
        waiting.withLock { $0.handlers.removeValue(forKey: tag) }
    }
}

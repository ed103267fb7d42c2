import CDBus
import Synchronization

extension Connection {
    /// Sends a method call and waits for its reply.
    ///
    /// Cancelling the calling task cancels the call (the reply, if any, is dropped) and throws
    /// `CancellationError`.
    ///
    /// - Parameters:
    ///   - message: a method call.
    ///   - timeout: how long to wait; `nil` is libdbus's default (25 s).
    /// - Returns: the method-return message.
    /// - Throws: the remote error as a `DBusError` with its name and message;
    ///   `org.freedesktop.DBus.Error.NoReply` when the timeout passes;
    ///   `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    public func call(_ message: consuming Message, timeout: Duration? = nil) async throws -> Message {
        let reply = PendingReply()
        let ms = Self.milliseconds(timeout)
        let loop = self.loop, router = self.router
        // Only `direct` holds the message from here, and `start` takes it out once the message is
        // sent: whatever it carries (a pipe's write end) is not kept alive until the reply.
        var direct: Message? = consume message
        return try await withTaskCancellationHandler {
            // Unsafe (no checking canary) is sound: it is resumed exactly once, here when the loop
            // refuses the job, or else on the owner thread by `start` or by `PendingReply`, which
            // clears it before resuming.
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Message, any Error>) in
                if loop.onOwnerThread {
                    // A task on the connection's executor, run by the loop between its libdbus
                    // calls, or a connection-thread handler started inside dispatch (where
                    // libdbus has unlocked the connection): send right here, with no job.
                    Self.start(reply, direct.take(), ms, router, continuation)
                    return
                }
                // From another thread the message travels in a box, emptied once it is sent.
                let outgoing = Outgoing(direct.take()!)
                if !loop.submit({ Self.start(reply, outgoing.take(), ms, router, continuation) }) {
                    continuation.resume(throwing: DBusError(.disconnected, "the connection is closed"))
                }
            }
        } onCancel: {
            // On the owner thread (a task already cancelled when it calls, run by the loop, or
            // one cancelled by code on that thread) `reply` is ours to touch now: a task
            // cancelled already then never sends.
            if loop.onOwnerThread {
                reply.cancel()
            } else {
                loop.submit { reply.cancel() }
            }
        }
    }

    /// Sends `message` for `reply` (owner thread).
    private static func start(_ reply: PendingReply, _ message: Message?, _ ms: Int32, _ router: ConnectionRouter,
                              _ continuation: UnsafeContinuation<Message, any Error>) {
        guard let message, router.endpoint.isOpen else {
            continuation.resume(throwing: DBusError(.disconnected, "the connection is closed"))
            return
        }
        if let conn = router.endpoint.connection {
            reply.start(message, timeoutMs: ms, on: conn, continuation: continuation, router: router)
        } else {
            reply.start(message, timeoutMs: ms, onWire: router.endpoint, continuation: continuation, router: router)
        }
    }

    /// A message on its way out, held once: `take` hands it over and forgets it.
    private final class Outgoing: Sendable {
        private let message: Mutex<Message?>
        init(_ message: Message) { self.message = Mutex(message) }
        func take() -> Message? { message.withLock { m in defer { m = nil }; return m } }
    }

    /// Calls a method and returns the reply's values.
    ///
    /// - Parameters:
    ///   - destination: the bus name to call (nil on a peer-to-peer connection).
    ///   - path: the object.
    ///   - interface: the method's interface (nil lets the receiver pick).
    ///   - member: the method.
    ///   - body: the arguments.
    ///   - timeout: how long to wait; `nil` is libdbus's default (25 s).
    /// - Throws: see `call(_:timeout:)`; also `DBusError` when an argument fails validation.
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface,
                                             member: member, body: body)
        return try await call(consume message, timeout: timeout).body
    }

    /// Calls a method that returns one value, converted to `R`.
    ///
    /// - Throws: see `call(destination:path:interface:member:body:timeout:)`; also
    ///   `org.freedesktop.DBus.Error.InvalidArgs` when the reply is not exactly one `R`.
    public func call<R: DBusRepresentable>(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [DBusValue] = [], timeout: Duration? = nil, returning type: R.Type
    ) async throws -> R {
        let values = try await call(destination: destination, path: path, interface: interface, member: member,
                                    body: body, timeout: timeout)
        guard values.count == 1 else {
            throw DBusError(.invalidArgs, "expected one value of type '\(R.dbusSignature)', got \(values.count)")
        }
        return try values[0].get(R.self)
    }

    /// Sends a message without waiting for a reply.
    ///
    /// A method call is marked NO_REPLY_EXPECTED, so the peer sends no reply.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    public func send(_ message: Message) throws {
        let router = self.router
        try enqueue { try? router.send(message, markingNoReply: true) }
    }

    static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return Int32(CDBUS_TIMEOUT_USE_DEFAULT) }
        let ms = timeout / .milliseconds(1)
        if ms >= Double(Int32.max) { return Int32(CDBUS_TIMEOUT_INFINITE) }
        return Int32(max(1, ms.rounded(.up)))
    }
}

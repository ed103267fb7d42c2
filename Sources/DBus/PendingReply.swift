import CDBus

/// One method call waiting for its reply.
///
/// Created by the calling task, then touched only on the owner thread: the send, the notify
/// callback, cancellation and teardown all run there, so the continuation is resumed exactly once.
final class PendingReply: @unchecked Sendable {
    // Thread safety: every mutable property is used only on the connection's owner thread.
    var continuation: UnsafeContinuation<Message, any Error>?
    var pending: OpaquePointer?
    /// The call's serial, for one sent on a ``WireTransport``.
    var serial: UInt32?
    var cancelled = false
    weak var router: ConnectionRouter?

    /// Starts the call: sends `message` and arranges for the reply to resume `continuation`.
    func start(_ message: Message, timeoutMs: Int32, on conn: OpaquePointer,
               continuation: UnsafeContinuation<Message, any Error>, router: ConnectionRouter) {
        if cancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        var call: OpaquePointer?
        _ = message.markSent()
        let queued: Bool
        do {
            queued = try message.withRaw { dbus_connection_send_with_reply(conn, $0, &call, timeoutMs) != 0 }
        } catch {
            continuation.resume(throwing: error)
            return
        }
        guard queued else {
            continuation.resume(throwing: DBusError(.noMemory, "out of memory sending a call"))
            return
        }
        guard let call else {
            // libdbus gives no pending call when disconnected, or when the message carries fds
            // the transport cannot pass.
            continuation.resume(throwing: dbus_connection_get_is_connected(conn) != 0
                ? DBusError(.notSupported, "this connection cannot pass unix fds")
                : DBusError(.disconnected, "the connection is closed"))
            return
        }
        self.continuation = continuation
        self.pending = call
        self.router = router
        router.replies[ObjectIdentifier(self)] = self
        // Set on the owner thread, before any dispatch, so the reply cannot slip past it.
        let box = Unmanaged.passRetained(self).toOpaque()
        let ok = dbus_pending_call_set_notify(call, { _, data in
            Unmanaged<PendingReply>.fromOpaque(data!).takeUnretainedValue().replied()
        }, box, { data in
            Unmanaged<PendingReply>.fromOpaque(data!).release()
        })
        if ok == 0 {
            Unmanaged<PendingReply>.fromOpaque(box).release()
            fail(DBusError(.noMemory, "out of memory waiting for a reply"))
        } else if dbus_pending_call_get_completed(call) != 0 {
            replied()
        }
    }

    /// Starts the call on a connection this library serves itself: sends `message` on
    /// `endpoint`'s ``WireTransport``, files the call under its serial for the reply, and sets
    /// its timer.
    func start(_ message: Message, timeoutMs: Int32, onWire endpoint: LoopEndpoint,
               continuation: UnsafeContinuation<Message, any Error>, router: ConnectionRouter) {
        if cancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        _ = message.markSent()
        do {
            guard try endpoint.sendOnWire(message) else {
                throw DBusError(.disconnected, "the connection is closed")
            }
        } catch {
            continuation.resume(throwing: error)
            return
        }
        self.continuation = continuation
        self.router = router
        serial = message.serial
        router.replies[ObjectIdentifier(self)] = self
        router.wireReplies[message.serial] = self
        guard timeoutMs != Int32(CDBUS_TIMEOUT_INFINITE) else { return }
        let ms = timeoutMs == Int32(CDBUS_TIMEOUT_USE_DEFAULT) ? Self.defaultTimeoutMs : timeoutMs
        router.loop.addTimer(of: self, milliseconds: ms) { [weak self] in
            self?.fail(DBusError(.noReply, "no reply within \(ms) ms"))
        }
    }

    /// How long a call waits by default, as libdbus's (25 s).
    static let defaultTimeoutMs: Int32 = 25_000

    /// The reply to a call made on a ``WireTransport``: resumes the caller with it.
    func replied(_ reply: Message) {
        if let error = reply.error {
            finish(.failure(error))
        } else {
            finish(.success(reply))
        }
    }

    /// The notify callback: takes the reply and resumes the caller.
    private func replied() {
        guard let call = pending else { return }
        guard let raw = dbus_pending_call_steal_reply(call) else {
            fail(DBusError(.noReply, "no reply"))
            return
        }
        let reply = Message(taking: raw)
        if let error = reply.error {
            finish(.failure(error))
        } else {
            finish(.success(reply))
        }
    }

    /// Cancels the call on the bus (if sent) and resumes the caller with `error`.
    func fail(_ error: any Error) {
        if let call = pending { dbus_pending_call_cancel(call) }
        finish(.failure(error))
    }

    /// Task cancellation: cancel now if sent, or refuse to send later.
    func cancel() {
        cancelled = true
        if pending != nil || serial != nil { fail(CancellationError()) }
    }

    private func finish(_ result: Result<Message, any Error>) {
        if let call = pending {
            pending = nil
            dbus_pending_call_unref(call)
        }
        if let serial {
            self.serial = nil
            router?.wireReplies[serial] = nil
            router?.loop.removeTimer(of: self)
        }
        router?.replies[ObjectIdentifier(self)] = nil
        router = nil
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

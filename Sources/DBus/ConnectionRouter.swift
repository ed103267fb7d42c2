import CDBus
import Synchronization

/// A connection's owner-thread state: calls waiting for replies, signal subscriptions and
/// exported objects. Every method runs on the owner thread.
final class ConnectionRouter: @unchecked Sendable {
    // Thread safety: used only on the connection's owner thread (ConnectionLoop jobs, libdbus
    // callbacks), except `endpoint` and `loop`, which are immutable (and the loop thread-safe).
    let endpoint: LoopEndpoint
    var loop: ConnectionLoop { endpoint.loop }
    var replies: [ObjectIdentifier: PendingReply] = [:]
    /// The calls sent on a ``WireTransport`` that wait for their reply, by serial (libdbus
    /// matches the replies of its own connections).
    var wireReplies: [UInt32: PendingReply] = [:]
    /// The public connection, for handlers' context; weak so that releasing it closes it.
    weak var connection: Connection?
    /// Signal subscriptions.
    var routes: [ObjectIdentifier: SignalRoute] = [:]
    /// Well-known names used as a subscription's sender: their current owner, whether a
    /// NameOwnerChanged set it, and how many subscriptions use it.
    var trackedNames: [String: (owner: String?, fromSignal: Bool, users: Int)] = [:]
    /// Method handlers running as tasks whose reply has not been sent yet. Changed on the owner
    /// thread; read by `Connection.close()` from any thread.
    let handlersInFlight = Atomic<Int>(0)
    /// Set by `close()`: incoming calls are refused while handlers in flight finish.
    var closing = false

    init(endpoint: LoopEndpoint) {
        self.endpoint = endpoint
    }

    /// Fails everything in flight; the loop calls it once when the connection ends.
    func tearDown(_ error: DBusError) {
        for reply in Array(replies.values) { reply.fail(error) }
        replies = [:]
        endSignalRoutes(error)
    }

    /// Handles one incoming message; returns true when it was consumed.
    func receive(_ message: Message) -> Bool {
        let envelope = Envelope(message)
        switch envelope.type {
        case .methodCall:
            dispatchCall(envelope)
            return true
        case .signal:
            routeSignal(envelope)
            return true
        case .methodReturn, .error:
            // Only a WireTransport's replies come here: libdbus completes its own pending calls.
            guard let serial = message.replySerial, let reply = wireReplies.removeValue(forKey: serial) else {
                return false // the call was cancelled, timed out, or never made
            }
            reply.replied(message)
            return true
        case nil:
            return false
        }
    }

    /// Sends `message` without waiting for anything. Throws when the connection is closed.
    ///
    /// - Parameter markingNoReply: mark a method call NO_REPLY_EXPECTED first.
    func send(_ message: Message, markingNoReply: Bool = false) throws(DBusError) {
        do {
            if try endpoint.sendOnWire(message, markingNoReply: markingNoReply) { return }
        } catch {
            throw DBusError(converting: error)
        }
        guard let conn = endpoint.connection else {
            throw DBusError(.disconnected, "the connection is closed")
        }
        do {
            try message.withRaw { raw in
                // Only a message never sent may change: libdbus aborts on a locked one.
                if message.markSent(), markingNoReply, dbus_message_get_type(raw) == CDBUS_MESSAGE_TYPE_METHOD_CALL,
                   dbus_message_get_no_reply(raw) == 0 {
                    dbus_message_set_no_reply(raw, 1)
                }
                guard dbus_connection_send(conn, raw, nil) != 0 else {
                    throw DBusError(.noMemory, "out of memory sending a message")
                }
            }
        } catch {
            throw DBusError(converting: error)
        }
    }
}

import BrokerCore
import DBus
import Synchronization

/// Who is calling, by unique bus name, asked of the bus once per connection and kept until it
/// leaves: a unique name is never reused on a bus, so an entry cannot go stale. Services whose
/// calls come often (drags move 1,000 times a second; shares list and perform) keep one, and
/// resolve without a hop to an actor.
final class CallerCache: Sendable {
    private let entries = Mutex<[String: Caller]>([:])
    private let ownUID: UInt32

    /// A cache refusing callers of any uid but `ownUID`.
    init(ownUID: UInt32) {
        self.ownUID = ownUID
    }

    /// The caller, when it has called before, refused when of another uid; nil when the bus
    /// must be asked (``resolve(_:on:)``). Never suspends.
    /// - Throws: `FerryModelError` `.permissionDenied`.
    func known(_ call: MethodCall) throws -> Caller? {
        guard let cached = entries.withLock({ $0[call.sender.rawValue] }) else { return nil }
        try AppRegistry.checkSameUser(cached, ownUID: ownUID)
        return cached
    }

    /// The caller's unique name and credentials, refused when of another uid.
    /// - Throws: `FerryModelError` `.permissionDenied`; `DBusError` when the caller is gone.
    func resolve(_ call: MethodCall, on connection: Connection) async throws -> Caller {
        if let cached = try known(call) { return cached }
        let name = call.sender.rawValue
        let found = try await connection.credentials(of: call.sender)
        let caller = Caller(uniqueName: name, uid: found.uid, pid: found.pid)
        entries.withLock { $0[name] = caller }
        try AppRegistry.checkSameUser(caller, ownUID: ownUID)
        return caller
    }

    /// Forgets a connection that left the bus.
    func forget(_ uniqueName: String) {
        entries.withLock { $0[uniqueName] = nil }
    }
}

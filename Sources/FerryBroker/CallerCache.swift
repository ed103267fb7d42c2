import BrokerCore
import DBus
import Synchronization

/// Who is calling, by unique bus name, asked of the bus once per connection and kept until it
/// leaves: a unique name is never reused on a bus, so an entry cannot go stale. The broker keeps
/// one for all its services (drags move 1,000 times a second; shares list and perform), and a
/// known caller resolves without a hop to an actor or a round trip to the bus.
///
/// A connection that appears on the bus is asked about at once (``prefetch(_:on:)``), before it
/// calls: a process that connects to paste (`ferry paste`) then finds its credentials known, or on
/// their way, instead of waiting for a `GetConnectionCredentials` round trip inside its first call.
package final class CallerCache: Sendable {
    private enum Entry {
        case known(Caller)
        /// Asked of the bus ahead of the first call; the task files what it learns.
        case asking(Task<Caller, any Error>)
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let ownUID: UInt32

    /// A cache refusing callers of any uid but `ownUID`.
    package init(ownUID: UInt32) {
        self.ownUID = ownUID
    }

    /// The caller, when known, refused when of another uid; nil when the bus must be asked
    /// (``resolve(_:on:)``). Never suspends.
    /// - Throws: `FerryModelError` `.permissionDenied`.
    func known(_ call: MethodCall) throws -> Caller? {
        guard let cached = known(call.sender.rawValue) else { return nil }
        try AppRegistry.checkSameUser(cached, ownUID: ownUID)
        return cached
    }

    /// The credentials kept for `uniqueName`, if any (whatever its uid).
    func known(_ uniqueName: String) -> Caller? {
        guard case .known(let caller)? = entries.withLock({ $0[uniqueName] }) else { return nil }
        return caller
    }

    /// The caller's unique name and credentials, refused when of another uid: ``caller(_:on:)``
    /// checked.
    /// - Throws: `FerryModelError` `.permissionDenied`; `DBusError` when the caller is gone.
    func resolve(_ call: MethodCall, on connection: Connection) async throws -> Caller {
        let caller = try await caller(call, on: connection)
        try AppRegistry.checkSameUser(caller, ownUID: ownUID)
        return caller
    }

    /// The caller's unique name and credentials, whatever its uid (for methods that decide on
    /// another uid themselves): kept, or the answer to the question already asked, or asked of
    /// the bus now.
    /// - Throws: `DBusError` when the caller is gone.
    func caller(_ call: MethodCall, on connection: Connection) async throws -> Caller {
        switch entries.withLock({ $0[call.sender.rawValue] }) {
        case .known(let kept)?:
            return kept
        case .asking(let question)?:
            // A failed early question (the bus was busy, say) is asked once more below.
            if let answer = try? await question.value { return answer }
        case nil:
            break
        }
        let caller = try await Self.ask(call.sender, on: connection)
        entries.withLock { $0[caller.uniqueName] = .known(caller) }
        return caller
    }

    /// Asks the bus about a connection that has just appeared, before its first call, unless it
    /// is known or asked about already. Returns at once; the answer is filed when it comes,
    /// unless the connection has left by then (``forget(_:)`` came first).
    func prefetch(_ name: BusName, on connection: Connection) {
        let uniqueName = name.rawValue
        entries.withLock { table in
            guard table[uniqueName] == nil else { return }
            // On the connection's thread: the question goes out and its answer is filed without
            // waking a pool thread. (It cannot end before it is filed here: it needs this lock.)
            table[uniqueName] = .asking(Task(executorPreference: connection.taskExecutor) { [self] in
                let answer: Result<Caller, any Error>
                do { answer = .success(try await Self.ask(name, on: connection)) } catch { answer = .failure(error) }
                entries.withLock { table in
                    guard case .asking? = table[uniqueName] else { return }
                    table[uniqueName] = try? .known(answer.get())
                }
                return try answer.get()
            })
        }
    }

    /// Forgets a connection that left the bus.
    func forget(_ uniqueName: String) {
        entries.withLock { $0[uniqueName] = nil }
    }

    private static func ask(_ name: BusName, on connection: Connection) async throws -> Caller {
        let found = try await connection.credentials(of: name)
        return Caller(uniqueName: name.rawValue, uid: found.uid, pid: found.pid)
    }
}

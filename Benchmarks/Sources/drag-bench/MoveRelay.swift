import BenchReport
import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The floor of a Move with today's Swift D-Bus layer: a process of its own (this program run
/// as `drag-bench --serve-relay ADDRESS`, as ferryd is a process of its own) exporting a Move of
/// the same signature on its connection's thread that does nothing but pick the target by x
/// (left or right half), call that app's `Client1.DropUpdated` with an `info` shaped like
/// ferryd's, and answer with its proposal. The same 4 bus hops and 2 Swift-served calls as a
/// Move through ferryd, without ferryd's own work: what ferryd adds is the difference.
enum MoveRelay {
    static let name: BusName = "org.ferry.DragBenchRelay"
    static let interfaceName: InterfaceName = "org.ferry.DragBenchRelay1"
    static let path: ObjectPath = "/org/ferry/bench/Relay"

    /// The relay process: serves until its bus goes away or it is stopped.
    static func serverMain(address: String) async -> Int32 {
        do {
            let connection = try await Connection(address: address)
            try connection.export(interface(Targets()), at: path)
            _ = try await connection.requestName(name)
            while connection.isConnected { try await Task.sleep(for: .milliseconds(100)) }
            return 0
        } catch {
            note("relay: \(error)")
            return 1
        }
    }

    /// The apps and scenes Move relays to (left first), set by SetTargets.
    final class Targets: Sendable {
        let list = Mutex<[(name: BusName, scene: String)]>([])
    }

    static func interface(_ targets: Targets) -> Interface {
        Interface(interfaceName) {
            Method("SetTargets", in: ["targets": "a(ss)"]) { call in
                guard case .array(_, let list) = call.arguments[0] else { throw DBusError(.invalidArgs, "targets is a(ss)") }
                var parsed: [(name: BusName, scene: String)] = []
                for entry in list {
                    guard case .structure(let fields) = entry, fields.count == 2, case .string(let name) = fields[0],
                          case .string(let scene) = fields[1] else { throw DBusError(.invalidArgs, "targets is a(ss)") }
                    parsed.append((try BusName(name), scene))
                }
                targets.list.withLock { $0 = parsed }
                return []
            }
            Method("Move", in: ["location": "(dd)"], out: ["operation": "s", "precise": "b", "target": "s", "edge": "s"],
                   execution: .connectionThread) { call in
                guard case .structure(let fields) = call.arguments[0], fields.count == 2, case .double(let x) = fields[0] else {
                    throw DBusError(.invalidArgs, "location is (dd)")
                }
                let all = targets.list.withLock { $0 }
                guard all.count == 2 else { throw DBusError(.failed, "no targets set") }
                let target = all[x < 960 ? 0 : 1]
                let info: [String: DBusValue] = [
                    "location": call.arguments[0], "types": .array(of: .string, [.string("public.utf8-plain-text")]),
                    "items": .uint32(1), "pasteboard": .string("org.ferry.drag.1"), "allowsMove": .boolean(false),
                    "isLocal": .boolean(false),
                ]
                let reply = try await call.connection.call(
                    destination: target.name, path: DragApp.clientPath, interface: "org.ferry.Client1", member: "DropUpdated",
                    body: [.string("1"), .string(target.scene), info.dbusValue], timeout: .milliseconds(250))
                guard reply.count == 2, case .string(let operation) = reply[0] else {
                    throw DBusError(.invalidArgs, "DropUpdated replied \(reply)")
                }
                return [.string(operation), .boolean(false), .string(target.scene), .string("")]
            }
        }
    }

    /// Starts the relay process and waits until it owns its name; returns its pid and unique name.
    static func start(address: String, connection: Connection) async throws -> (pid: pid_t, name: BusName) {
        let pid = try Spawn.start([Spawn.ownPath, "--serve-relay", address], stdin: .null, stdout: .null)
        for _ in 0..<400 {
            if let owner = try await connection.owner(of: name) { return (pid, owner) }
            try await Task.sleep(for: .milliseconds(25))
        }
        Spawn.stop(pid, grace: 1)
        throw Spawn.Failure(description: "the relay never appeared")
    }

    /// D-Bus: the relay's SetTargets.
    static func setTargets(_ targets: [(name: BusName, scene: String)], on connection: Connection) async throws {
        let list = targets.map { DBusValue.structure([.string($0.name.rawValue), .string($0.scene)]) }
        _ = try await connection.call(destination: name, path: path, interface: interfaceName, member: "SetTargets",
                                      body: [.array(of: "(ss)", list)])
    }
}

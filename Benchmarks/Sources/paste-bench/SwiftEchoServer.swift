import BenchReport
import CDBusBench
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The C echo server's twin written on Ferry's Swift D-Bus layer: `Echo(ay) → ay` exported
/// through `Connection.export` with its handler on the connection thread, in a process of its
/// own (`paste-bench --serve-swift-echo ADDRESS`). Beside `EchoAnchor` it shows what the layer
/// costs per call on the server side, with nothing of ferryd's own work in the way. It answers
/// on the same path and interface as the C server, so the C client can call it too.
struct SwiftEchoServer {
    /// The server's bus name.
    static let name: BusName = "org.ferry.BenchSwiftEcho"
    static let path: ObjectPath = "/org/ferry/Bench"
    static let interface: InterfaceName = "org.ferry.Bench1"

    /// The server's process.
    let pid: pid_t
    let address: String

    /// `paste-bench --serve-swift-echo ADDRESS`: serves Echo until Quit; the exit status.
    static func serverMain(address: String) async -> Int32 {
        do {
            let connection = try await Connection(address: address)
            let (quit, quitting) = AsyncStream.makeStream(of: Void.self)
            try connection.export(Interface(interface) {
                Method("Echo", in: ["data": "ay"], out: ["data": "ay"], execution: .connectionThread) { call in
                    [.bytes(try call.argument(0, as: [UInt8].self))]
                }
                // The same as an async handler (a task per call), as ferryd's methods are.
                Method("EchoAsync", in: ["data": "ay"], out: ["data": "ay"], execution: .connectionThread) { call in
                    try await echoed(call)
                }
                Method("Quit", execution: .connectionThread) { _ in
                    quitting.yield()
                    return []
                }
            }, at: path)
            guard try await connection.requestName(name, flags: [.doNotQueue]) == .primaryOwner else {
                note("swift echo server: cannot own \(name)")
                return 1
            }
            for await _ in quit { break }
            await connection.close()
            return 0
        } catch {
            note("swift echo server: \(error)")
            return 1
        }
    }

    /// Echo's reply, from an async function that never suspends.
    static func echoed(_ call: MethodCall) async throws -> [DBusValue] {
        [.bytes(try call.argument(0, as: [UInt8].self))]
    }

    /// Starts the server and waits until it owns its name.
    init(address: String, connection: Connection) async throws {
        self.address = address
        pid = try Spawn.start([Spawn.ownPath, "--serve-swift-echo", address], stdin: .inherited, stdout: .inherited)
        for _ in 0..<400 {
            if try await connection.owner(of: Self.name) != nil { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        kill(pid, SIGTERM)
        Spawn.wait(pid)
        throw Spawn.Failure(description: "the Swift echo server never appeared")
    }

    /// One Echo (or `member`) of `argument` from `connection` (a Swift client).
    static func echo(_ connection: Connection, _ argument: [DBusValue], member: MemberName = "Echo") async throws {
        let reply = try await connection.call(destination: name, path: path, interface: interface, member: member,
                                              body: argument)
        guard case .bytes(let bytes)? = reply.first, case .bytes(let sent)? = argument.first,
              bytes.count == sent.count else {
            throw Spawn.Failure(description: "the Swift echo server gave the wrong reply")
        }
    }

    /// Quits the server and waits for it.
    func stop() {
        _ = cdb_quit(address, Self.name.rawValue)
        Spawn.wait(pid)
    }
}

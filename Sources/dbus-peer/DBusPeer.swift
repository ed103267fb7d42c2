import ArgumentParser
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// A small program on the Swift D-Bus layer: serves `org.ferry.Peer1`, or drives one as a client.
///
/// The tests use it as the "other process"; `make demo` uses it to show two processes talking.
@main
struct DBusPeer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dbus-peer",
        abstract: "Serve or call org.ferry.Peer1 over D-Bus (Ferry's D-Bus layer, end to end).",
        subcommands: [Serve.self, Demo.self])
}

struct BusOptions: ParsableArguments {
    @Option(help: "The bus address (default: $DBUS_SESSION_BUS_ADDRESS).")
    var bus: String?

    @Option(help: "The peer's well-known bus name.")
    var name: String = "org.ferry.Peer"

    func connect() async throws -> Connection {
        if let bus { return try await Connection(address: bus) }
        return try await Connection.session()
    }

    func busName() throws -> BusName {
        do { return try BusName(name) } catch { throw ValidationError("invalid bus name '\(name)'") }
    }
}

extension DBusPeer {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Own NAME and serve /org/ferry/Peer until Quit is called; log each call.")

        @OptionGroup var options: BusOptions

        @Flag(help: "Do not log calls.")
        var quiet = false

        func run() async throws {
            let name = try options.busName()
            let connection = try await options.connect()
            let (quitSignal, quitContinuation) = AsyncStream<Void>.makeStream()
            let quiet = self.quiet
            let interface = PeerInterface.make(
                log: { call in
                    guard !quiet else { return }
                    let who = try? await call.connection.credentials(of: call.sender)
                    let pid = who?.pid.map { "pid \($0)" } ?? "pid ?"
                    say("serve: \(call.member) from \(call.sender) (\(pid))")
                },
                quit: { quitContinuation.finish() })
            try connection.export(interface, at: PeerInterface.path)
            let reply = try await connection.requestName(name, flags: [.doNotQueue])
            guard reply == .primaryOwner else {
                throw ValidationError("cannot own \(name): \(reply)")
            }
            // Its stream ends when the bus connection does: a peer never outlives its bus.
            let nameChanges = try await connection.nameOwnerChanges(for: name)
            say("READY \(connection.uniqueName) owns \(name) (pid \(getpid()))")
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in quitSignal {} }
                group.addTask { do { for try await _ in nameChanges {} } catch {} }
                await group.next()
                nameChanges.cancel()
                quitContinuation.finish()
            }
            await connection.close()  // Quit's own reply goes out first.
        }
    }

    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Call a running peer: values, properties, a signal, fds both ways, an error.")

        @OptionGroup var options: BusOptions

        @Option(help: "Bytes to send and receive through file descriptors.")
        var fdBytes: UInt64 = 16 << 20

        func run() async throws {
            let peer = try options.busName()
            let connection = try await options.connect()
            defer { Task { await connection.close() } }
            func call(_ member: MemberName, _ body: [DBusValue] = [], interface: InterfaceName = PeerInterface.name)
                async throws -> [DBusValue]
            {
                try await connection.call(destination: peer, path: PeerInterface.path, interface: interface,
                                          member: member, body: body, timeout: .seconds(30))
            }
            say("demo: I am \(connection.uniqueName) (pid \(getpid())); calling \(peer)")

            let options = DBusValue.variantDictionary(["text": "héllo, wörld ✓", "count": .uint32(3), "ok": true])
            let echoed = try await call("Echo", [.variant(options)])
            say("demo: Echo(a{sv}) came back \(echoed[0] == .variant(options) ? "identical" : "DIFFERENT"): \(echoed[0])")
            say("demo: Add(2, 40) = \(try await call("Add", [.int64(2), .int64(40)])[0])")

            let changes = try await connection.subscribe(
                to: MatchRule(sender: peer, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                              path: PeerInterface.path))
            _ = try await call("Set", [.string(PeerInterface.name.rawValue), .string("Label"), .variant("from the demo")],
                               interface: "org.freedesktop.DBus.Properties")
            for try await signal in changes {
                say("demo: signal PropertiesChanged \(try signal.body[1])")
                break
            }
            let pings = try await connection.subscribe(
                to: MatchRule(sender: peer, interface: PeerInterface.name, member: "Pinged"))
            _ = try await call("Emit", ["ping"])
            for try await signal in pings {
                say("demo: signal Pinged(\(try signal.body[0]))")
                break
            }

            let fd = try await call("MakeFD", [.uint64(fdBytes)])[0].get(FileDescriptor.self)
            let (received, crc) = try fd.withRawValue { try PeerInterface.readToEnd($0) }
            say("demo: MakeFD(\(fdBytes)) returned an fd; read \(received) bytes from it, crc32 \(crc)")
            let memfd = try PeerInterface.makePatternFD(size: fdBytes)
            let answer = try await call("ReadFD", [.unixFD(memfd)])
            say("demo: ReadFD(memfd of \(fdBytes) bytes): the peer read \(answer[0]) bytes, crc32 \(answer[1])")

            do {
                _ = try await call("Fail", ["org.ferry.Error.NotFound", "no such item"])
            } catch let error as DBusError {
                say("demo: Fail answered the error \(error.name): \(error.message)")
            }
            _ = try await call("Quit")
            say("demo: done")
        }
    }
}

func say(_ line: String) {
    print(line)
    fflush(nil)
}

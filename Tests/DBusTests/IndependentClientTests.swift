import DBus
import FerryTestSupport
import Foundation
import FoundationXML
import Testing

/// Independent D-Bus implementations (gdbus, dbus-send, busctl, python-dbus) calling an object
/// exported by Ferry's Swift layer in another process, and getting the right answers and the
/// right error names.
@Suite("Interop: independent clients call the Swift layer")
struct IndependentClientTests {
    func withSwiftPeer(_ body: (RunningPeer, [String: String]) async throws -> Void) async throws {
        let peer = try await RunningPeer(.swift)
        defer { peer.process.stop() }
        try await body(peer, try PrivateBus.shared().environment())
    }

    func gdbus(_ peer: RunningPeer, _ env: [String: String], _ method: String, _ args: [String]) async throws
        -> ChildProcessResult
    {
        try await ChildProcess.run("gdbus", ["call", "--session", "--dest", peer.name.rawValue, "--object-path",
                                             "/org/ferry/Peer", "--method", method] + args, environment: env)
    }

    @Test("gdbus calls typed methods and sees named errors")
    func gdbusCalls() async throws {
        try await withSwiftPeer { peer, env in
            let add = try await gdbus(peer, env, "org.ferry.Peer1.Add", ["2", "40"])
            #expect(add.succeeded)
            #expect(add.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(int64 42,)")

            let join = try await gdbus(peer, env, "org.ferry.Peer1.Join", ["['a', 'ü', '🚢']"])
            #expect(join.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "('a|ü|🚢',)")

            let echo = try await gdbus(peer, env, "org.ferry.Peer1.Echo", ["<{'k': <[uint32 1, 2]>}>"])
            #expect(echo.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(<{'k': <[uint32 1, 2]>}>,)")

            let fail = try await gdbus(peer, env, "org.ferry.Peer1.Fail", ["org.ferry.Error.Unavailable", "the source quit"])
            #expect(!fail.succeeded)
            #expect(fail.stderr.contains("GDBus.Error:org.ferry.Error.Unavailable: the source quit"))

            let version = try await gdbus(peer, env, "org.freedesktop.DBus.Properties.Get", ["org.ferry.Peer1", "Version"])
            #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(<uint32 1>,)")
            let ping = try await gdbus(peer, env, "org.freedesktop.DBus.Peer.Ping", [])
            #expect(ping.succeeded)
        }
    }

    @Test("gdbus introspects the exported tree as valid XML with arguments, properties and signals")
    func gdbusIntrospects() async throws {
        try await withSwiftPeer { peer, env in
            let root = try await ChildProcess.run(
                "gdbus", ["introspect", "--session", "--dest", peer.name.rawValue, "--object-path", "/org/ferry", "--xml"],
                environment: env)
            #expect(root.stdout.contains("<node name=\"Peer\""), "the parent node lists its child")
            let xml = try await ChildProcess.run(
                "gdbus", ["introspect", "--session", "--dest", peer.name.rawValue, "--object-path", "/org/ferry/Peer", "--xml"],
                environment: env)
            #expect(xml.succeeded)
            let document = try XMLDocument(xmlString: xml.stdout)
            let methods = try document.nodes(forXPath: "//interface[@name='org.ferry.Peer1']/method/@name").map { $0.stringValue ?? "" }
            #expect(Set(methods).isSuperset(of: ["Echo", "Add", "Join", "Fail", "ReadFD", "MakeFD", "Emit", "Quit"]))
            let addArgs = try document.nodes(forXPath: "//method[@name='Add']/arg").compactMap { $0 as? XMLElement }
            #expect(addArgs.map { $0.attribute(forName: "type")?.stringValue } == ["x", "x", "x"])
            #expect(addArgs.map { $0.attribute(forName: "direction")?.stringValue } == ["in", "in", "out"])
            let version = try document.nodes(forXPath: "//property[@name='Version']").first as? XMLElement
            #expect(version?.attribute(forName: "access")?.stringValue == "read")
            #expect(try !document.nodes(forXPath: "//signal[@name='Pinged']/arg[@type='s']").isEmpty)
            for standard in ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"] {
                #expect(try !document.nodes(forXPath: "//interface[@name='\(standard)']").isEmpty, "\(standard)")
            }
        }
    }

    @Test("dbus-send gets InvalidArgs, UnknownMethod and UnknownObject by name")
    func dbusSendErrors() async throws {
        try await withSwiftPeer { peer, env in
            func send(_ path: String, _ member: String, _ args: [String]) async throws -> ChildProcessResult {
                try await ChildProcess.run("dbus-send", ["--session", "--print-reply", "--dest=\(peer.name.rawValue)", path, member] + args,
                                           environment: env)
            }
            let wrongTypes = try await send("/org/ferry/Peer", "org.ferry.Peer1.Add", ["string:two", "string:forty"])
            #expect(wrongTypes.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
            let missing = try await send("/org/ferry/Peer", "org.ferry.Peer1.Add", ["int64:2"])
            #expect(missing.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
            let unknownMethod = try await send("/org/ferry/Peer", "org.ferry.Peer1.Teleport", [])
            #expect(unknownMethod.stderr.contains("org.freedesktop.DBus.Error.UnknownMethod"))
            let unknownObject = try await send("/org/ferry/Nowhere", "org.ferry.Peer1.Add", ["int64:1", "int64:2"])
            #expect(unknownObject.stderr.contains("org.freedesktop.DBus.Error.UnknownObject"))
            let ok = try await send("/org/ferry/Peer", "org.ferry.Peer1.Add", ["int64:-5", "int64:3"])
            #expect(ok.stdout.contains("int64 -2"))
            #expect(peer.process.isRunning, "bad input never crashes the service")
        }
    }

    @Test("busctl calls a method and reads a property", .enabled(if: (try? ChildProcess.resolve("busctl")) != nil))
    func busctl() async throws {
        try await withSwiftPeer { peer, env in
            let address = try PrivateBus.shared().address
            let add = try await ChildProcess.run(
                "busctl", ["--address=\(address)", "call", peer.name.rawValue, "/org/ferry/Peer", "org.ferry.Peer1", "Add", "xx", "20", "22"],
                environment: env)
            #expect(add.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "x 42")
            let version = try await ChildProcess.run(
                "busctl", ["--address=\(address)", "get-property", peer.name.rawValue, "/org/ferry/Peer", "org.ferry.Peer1", "Version"],
                environment: env)
            #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "u 1")
        }
    }

    @Test("python-dbus calls with rich values, reads properties and receives a signal")
    func pythonClient() async throws {
        try await withSwiftPeer { peer, env in
            let script = """
                import dbus, sys
                from dbus.mainloop.glib import DBusGMainLoop
                from gi.repository import GLib
                DBusGMainLoop(set_as_default=True)
                bus = dbus.SessionBus()
                obj = bus.get_object(sys.argv[1], "/org/ferry/Peer")
                peer = dbus.Interface(obj, "org.ferry.Peer1")
                value = dbus.Dictionary({"n": dbus.Int16(-3), "list": dbus.Array([dbus.Byte(1), dbus.Byte(2)], signature="y"),
                                         "s": dbus.Struct((dbus.String("x"), dbus.Double(2.5)), signature="sd"),
                                         "empty": dbus.Array([], signature="o")}, signature="sv")
                back = peer.Echo(dbus.Dictionary(value, signature="sv", variant_level=1))
                assert back == value, (back, value)
                assert peer.Add(dbus.Int64(-2**63), dbus.Int64(2**63 - 1)) == -1
                try:
                    peer.Fail("org.ferry.Error.PermissionDenied", "not while in background")
                    raise SystemExit("no error")
                except dbus.DBusException as e:
                    assert e.get_dbus_name() == "org.ferry.Error.PermissionDenied", e.get_dbus_name()
                    assert e.get_dbus_message() == "not while in background"
                props = dbus.Interface(obj, "org.freedesktop.DBus.Properties")
                assert props.GetAll("org.ferry.Peer1") == {"Version": 1, "Label": "initial"}
                loop = GLib.MainLoop()
                got = []
                bus.add_signal_receiver(lambda text: (got.append(str(text)), loop.quit()), "Pinged", "org.ferry.Peer1", sys.argv[1])
                peer.Emit("from python")
                GLib.timeout_add(5000, loop.quit)
                loop.run()
                assert got == ["from python"], got
                print("OK")
                """
            let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, peer.name.rawValue], environment: env)
            #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "OK", "\(result.stderr)")
        }
    }
}

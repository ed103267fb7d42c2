import DBus
import FerryBroker
import FerryTestSupport
import Foundation
import Testing

/// A caller of another uid learns nothing through the standard interfaces either: `Properties`
/// and `Introspectable` refuse it, and a named pasteboard's signals, whose path carries its
/// name, never reach it. `Peer.Ping` stays open, and so does the general pasteboard's
/// `Changed` (a change count, no content). The bus admits every user here and the other user's
/// client is python-dbus run as nobody (setpriv: the test must run as root), as in
/// `ShareForeignUserTests`.
@Suite("ferryd: another user and the standard interfaces", .serialized)
struct ForeignUserAccessTests {
    typealias F = FerrydFixture

    static let script = #"""
        import dbus, sys
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        def attempt(name, path, interface, method, signature, args):
            try:
                bus.call_blocking("org.ferry.Broker", path, interface, method, signature, args, timeout=30)
                print(name, "OK")
            except dbus.DBusException as e:
                print(name, e.get_dbus_name())
            sys.stdout.flush()
        P = "org.freedesktop.DBus.Properties"
        I = "org.freedesktop.DBus.Introspectable"
        attempt("get-version", "/org/ferry/Broker", P, "Get", "ss", ["org.ferry.Broker1", "Version"])
        attempt("get-count", "/org/ferry/Pasteboard/general", P, "Get", "ss", ["org.ferry.Pasteboard1", "ChangeCount"])
        attempt("getall-named", "/org/ferry/Pasteboard/secretplans", P, "GetAll", "s", ["org.ferry.Pasteboard1"])
        attempt("getall-scenes", "/org/ferry/Scenes", P, "GetAll", "s", [""])
        attempt("set", "/org/ferry/Broker", P, "Set", "ssv", ["org.ferry.Broker1", "Version", dbus.UInt32(9)])
        attempt("introspect-root", "/", I, "Introspect", "", [])
        attempt("introspect-pasteboards", "/org/ferry/Pasteboard", I, "Introspect", "", [])
        attempt("introspect-general", "/org/ferry/Pasteboard/general", I, "Introspect", "", [])
        attempt("getall-continuity", "/org/ferry/Continuity", P, "GetAll", "s", ["org.ferry.Continuity1"])
        attempt("continuity-join", "/org/ferry/Continuity", "org.ferry.Continuity1", "Join", "", [])
        attempt("ping", "/org/ferry/Broker", "org.freedesktop.DBus.Peer", "Ping", "", [])
        loop = GLib.MainLoop()
        def heard(*args, **kw):
            print("signal", kw["path"], kw["member"])
            sys.stdout.flush()
            if kw["path"] == "/org/ferry/Pasteboard/general" and kw["member"] == "Changed":
                print("DONE")
                sys.stdout.flush()
                loop.quit()
        bus.add_signal_receiver(heard, sender_keyword="sender", path_keyword="path", member_keyword="member",
                                bus_name="org.ferry.Broker")
        bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", "", [])
        print("READY")
        sys.stdout.flush()
        GLib.timeout_add_seconds(40, loop.quit)
        loop.run()
        """#

    @Test("Properties and Introspectable refuse another uid; a named pasteboard's signals do not reach it",
          .enabled(if: getuid() == 0))
    func standardInterfacesRefuseAnotherUser() async throws {
        let bus = try PrivateBus.admittingEveryUser()
        defer { bus.stop() }
        let fixture = try FerrydFixture(bus: bus)
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let tool = try await fixture.connect()
        let named = try await F.call(tool, "Pasteboard", [.string("secretplans"), .variantDictionary([:])])[0]
            .get(ObjectPath.self)
        let ownChanges = try await F.changes(tool, at: named)

        let foreign = try await ServiceProcess("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", Self.script, bus.address,
        ], environment: bus.environment(), timeout: .seconds(60))
        defer { foreign.stop() }
        let answers = foreign.standardOutput.split(separator: "\n").map(String.init).prefix { $0 != "READY" }
        #expect(Array(answers) == [
            "get-version org.ferry.Error.PermissionDenied",
            "get-count org.ferry.Error.PermissionDenied",
            "getall-named org.ferry.Error.PermissionDenied",
            "getall-scenes org.ferry.Error.PermissionDenied",
            "set org.ferry.Error.PermissionDenied",
            "introspect-root org.ferry.Error.PermissionDenied",
            "introspect-pasteboards org.ferry.Error.PermissionDenied",
            "introspect-general org.ferry.Error.PermissionDenied",
            "getall-continuity org.ferry.Error.PermissionDenied",
            "continuity-join org.ferry.Error.PermissionDenied",
            "ping OK",
        ], "\(foreign.standardOutput)\n\(foreign.standardError)")

        // The named pasteboard changes first, then the general one: signals from one sender
        // arrive in order, so when the other user hears the general one it would have heard
        // the named one already.
        try await F.setItems(tool, [F.item([F.representation("public.utf8-plain-text", "plans")])], at: named)
        #expect(try await F.next(ownChanges) != nil, "the connection that opened the named pasteboard hears it change")
        try await F.setItems(tool, [F.item([F.representation("public.utf8-plain-text", "hello")])])
        _ = await eventually(.seconds(30)) { foreign.standardOutput.contains("DONE") }
        let heard = foreign.standardOutput.split(separator: "\n").filter { $0.hasPrefix("signal ") }
        #expect(heard.contains("signal /org/ferry/Pasteboard/general Changed"), "\(foreign.standardOutput)")
        #expect(!heard.contains { $0.contains("secretplans") }, "\(heard)")

        // The broker's own user still reads and introspects everything.
        let version = try await tool.call(destination: F.broker, path: F.path, interface: "org.freedesktop.DBus.Properties",
                                          member: "Get", body: [.string("org.ferry.Broker1"), .string("Version")])
        #expect(version[0].unwrappingVariants == .uint32(BrokerService.version))
        let xml = try await tool.call(destination: F.broker, path: "/org/ferry/Pasteboard",
                                      interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        #expect(try xml[0].get(String.self).contains("<node name=\"secretplans\"/>"))
        await tool.close(gracePeriod: .zero)
    }

    @Test("a scene session's PropertiesChanged names Title and UserInfo without their values; Get reads them")
    func sessionSignalsCarryNoContent() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"),
                                               configurations: [:])
        let session = try await SceneServiceTests.firstSession(app)
        let listener = try await fixture.connect()
        let changed = try await listener.subscribe(to: MatchRule(type: .signal, interface: "org.freedesktop.DBus.Properties",
                                                                 member: "PropertiesChanged",
                                                                 path: SceneBus.sessionPath(session)))
        try await SceneBus.update(app.connection, session, ["title": .string("Salary review"),
                                                            "userInfo": ["noteID": DBusValue.string("raise")].dbusValue])
        var changes = changed.makeAsyncIterator()
        let change = try #require(try await changes.next())
        let body = try change.body
        let values = try body[1].get(VariantDictionary.self)
        #expect(values["Title"] == nil && values["UserInfo"] == nil, "\(values)")
        #expect(try body[2].get([String].self) == ["Title", "UserInfo"])
        #expect(try await SceneBus.property(listener, session, "Title") == .string("Salary review"))
        changed.cancel()
        await listener.close(gracePeriod: .zero)
    }
}

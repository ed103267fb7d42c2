import DBus
import FerryTestSupport
import Foundation
import Testing

/// Bad input to the drag interfaces from independent clients (python-dbus, gdbus): named errors,
/// the daemon and the drag keep going.
@Suite("ferryd drags: bad input from python-dbus and gdbus", .serialized)
struct DragInputTests {
    /// Runs as python-dbus: argv = bus address, the persistent id of a connected scene, the path
    /// of a drag another connection began.
    static let script = #"""
        import dbus, sys
        bus = dbus.bus.BusConnection(sys.argv[1])
        scene, foreign = sys.argv[2], sys.argv[3]
        DEST, DRAG = "org.ferry.Broker", "/org/ferry/Drag"
        def manager(method, signature, args):
            return bus.call_blocking(DEST, DRAG, "org.ferry.DragManager1", method, signature, args, timeout=30)
        def session(path, method, signature="", args=()):
            return bus.call_blocking(DEST, path, "org.ferry.DragSession1", method, signature, list(args), timeout=30)
        def attempt(name, fn):
            try:
                fn()
                print(name, "OK")
            except dbus.DBusException as e:
                print(name, e.get_dbus_name(), e.get_dbus_message().replace("\n", " "))
            sys.stdout.flush()
        nan, inf = float("nan"), float("inf")
        attempt("unknownscene", lambda: manager("BeginDrag", "sa{sv}", ["no-such-scene", {}]))
        attempt("emptyscene", lambda: manager("BeginDrag", "sa{sv}", ["", {}]))
        attempt("unknownapp", lambda: manager("BeginDrag", "sa{sv}", ["", {"app": "org.example.nobody"}]))
        attempt("badwriter", lambda: manager("BeginDrag", "sa{sv}", [scene, {"items": "everyone"}]))
        attempt("badlocation", lambda: manager("BeginDrag", "sa{sv}", [scene, {"location": dbus.Struct((nan, 1.0), signature="dd")}]))
        attempt("locationtype", lambda: manager("BeginDrag", "sa{sv}", [scene, {"location": "here"}]))
        attempt("wrongsig", lambda: manager("BeginDrag", "s", [scene]))
        path, _ = manager("BeginDrag", "sa{sv}", [scene, {"items": "initiator"}])
        attempt("nan", lambda: session(path, "Move", "(dd)", [dbus.Struct((nan, 10.0), signature="dd")]))
        attempt("inf", lambda: session(path, "Move", "(dd)", [dbus.Struct((10.0, inf), signature="dd")]))
        attempt("huge", lambda: session(path, "Move", "(dd)", [dbus.Struct((1e300, 10.0), signature="dd")]))
        attempt("move", lambda: session(path, "Move", "(dd)", [dbus.Struct((300.0, 300.0), signature="dd")]))
        attempt("foreignmove", lambda: session(foreign, "Move", "(dd)", [dbus.Struct((300.0, 300.0), signature="dd")]))
        attempt("foreigndrop", lambda: session(foreign, "Drop"))
        attempt("foreigncancel", lambda: session(foreign, "Cancel"))
        attempt("cancel", lambda: session(path, "Cancel"))
        attempt("aftercancel", lambda: session(path, "Move", "(dd)", [dbus.Struct((1.0, 1.0), signature="dd")]))
        """#

    @Test("python-dbus: unknown scene NotFound, non-finite locations InvalidArgument, another initiator's drag PermissionDenied")
    func pythonBadInput() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (foreign, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", Self.script, stage.fixture.bus.address,
                                                                     stage.notesScene, foreign.rawValue],
                                                environment: stage.fixture.bus.environment(), timeout: .seconds(60))
        #expect(result.succeeded, "\(result.stderr)")
        var lines: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { lines[String(parts[0])] = String(parts[1]) }
        }
        func expect(_ name: String, _ error: String, _ fragment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
            let line = lines[name] ?? "(no line)"
            #expect(line.hasPrefix(error + " ") || line == error, "\(name): \(line)", sourceLocation: sourceLocation)
            if !fragment.isEmpty { #expect(line.contains(fragment), "\(name): \(line)", sourceLocation: sourceLocation) }
        }
        let invalid = "org.ferry.Error.InvalidArgument"
        expect("unknownscene", "org.ferry.Error.NotFound", "source_session")
        expect("emptyscene", invalid, "source_session")
        expect("unknownapp", "org.ferry.Error.NotFound", "options.app")
        expect("badwriter", invalid, "options.items")
        expect("badlocation", invalid, "options.location: a location needs finite coordinates")
        expect("locationtype", invalid, "options.location: expected a point (dd)")
        expect("wrongsig", "org.freedesktop.DBus.Error.InvalidArgs")
        expect("nan", invalid, "location: a location needs finite coordinates")
        expect("inf", invalid, "location")
        expect("huge", invalid, "location")
        expect("move", "OK")
        expect("foreignmove", "org.ferry.Error.PermissionDenied")
        expect("foreigndrop", "org.ferry.Error.PermissionDenied")
        expect("foreigncancel", "org.ferry.Error.PermissionDenied")
        expect("cancel", "OK")
        expect("aftercancel", "org.freedesktop.DBus.Error.UnknownObject")
        // The other drag is untouched and the daemon is up.
        #expect(try await DragBus.move(stage.tool, foreign, 1300, 400) == .init(operation: "copy", target: stage.galleryScene))
        try await DragBus.cancel(stage.tool, foreign)
        #expect(stage.daemon.isRunning)
    }

    @Test("gdbus: BeginDrag in GVariant text, an unknown scene named by its key path, LastDrag")
    func gdbusDrag() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        // gdbus connects anew for every call and leaves at once: its drag ends as cancel.
        func gdbus(_ path: String, _ method: String, _ args: [String]) async throws -> ChildProcessResult {
            try await ChildProcess.run("gdbus", ["call", "--address", stage.fixture.bus.address, "--dest", "org.ferry.Broker",
                                                 "--object-path", path, "--method", method] + args,
                                       environment: stage.fixture.bus.environment())
        }
        let begin = try await gdbus("/org/ferry/Drag", "org.ferry.DragManager1.BeginDrag",
                                    [stage.notesScene, "{'location': <(150.0, 150.0)>, 'allowsMove': <true>}"])
        #expect(begin.succeeded, "\(begin.stderr)")
        #expect(begin.stdout.hasPrefix("(objectpath '/org/ferry/Drag/1', objectpath '/org/ferry/Pasteboard/"), "\(begin.stdout)")
        let unknown = try await gdbus("/org/ferry/Drag", "org.ferry.DragManager1.BeginDrag", ["nope", "{}"])
        #expect(unknown.stderr.contains("org.ferry.Error.NotFound: source_session"), "\(unknown.stderr)")
        let last = try await gdbus("/org/ferry/Drag", "org.ferry.DragManager1.LastDrag", [])
        #expect(last.stdout.contains("'sourceApp': <'org.ferry.notes'>"), "\(last.stdout)")
        #expect(stage.daemon.isRunning)
    }
}

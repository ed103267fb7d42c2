import DBus
import FerryTestSupport
import Foundation
import Testing

/// Bad input to org.ferry.Sharing1: named errors with key paths, nothing half-done, the daemon
/// keeps going.
@Suite("ferryd shares: bad input", .serialized)
struct ShareInputTests {
    @Test("RegisterActivities from a connection without a registered app is PermissionDenied: register the app first")
    func unregisteredCaller() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let refused = await ShareBus.error { try await ShareBus.register(stage.tool, [ShareBus.append]) }
        #expect(refused.name == "org.ferry.Error.PermissionDenied")
        #expect(refused.message.contains("register the app first"))
    }

    @Test("RegisterActivities: each bad entry is InvalidArgument naming activities[i].key; the earlier registration stands")
    func badEntries() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", activities: [ShareBus.append])
        let good = ShareBus.activity("org.ferry.notes.ok", "OK", accepts: ["public.item"])
        func entry(_ entries: VariantDictionary) -> DBusValue { entries.dbusValue }
        let types: DBusValue = .array(of: .string, ["public.item"])
        let cases: [(String, [DBusValue], String)] = [
            ("missing title", [good, entry(["activityType": "org.ferry.notes.x", "acceptableTypes": types])],
             "activities[1].title"),
            ("reserved type", [ShareBus.activity("org.ferry.activity.mine", "Mine", accepts: ["public.item"])],
             "activities[0].activityType"),
            ("malformed type", [ShareBus.activity("not a type!", "Bad", accepts: ["public.item"])], "activities[0].activityType"),
            ("no acceptable types", [ShareBus.activity("org.ferry.notes.none", "None", accepts: [])], "activities[0].acceptableTypes"),
            ("bad acceptable type", [ShareBus.activity("org.ferry.notes.bad", "Bad", accepts: ["public.item", "no spaces allowed"])],
             "activities[0].acceptableTypes[1]"),
            ("bad category", [ShareBus.activity("org.ferry.notes.c", "C", accepts: ["public.item"], category: "send")],
             "activities[0].category"),
            ("two-line title", [ShareBus.activity("org.ferry.notes.t", "One\nTwo", accepts: ["public.item"])], "activities[0].title"),
            ("title of the wrong type", [entry(["activityType": "org.ferry.notes.w", "title": .uint32(7), "acceptableTypes": types])],
             "activities[0].title"),
            ("duplicate", [good, good], "activities[1].activityType"),
            ("65 activities", (0..<65).map { ShareBus.activity("org.ferry.notes.a\($0)", "A\($0)", accepts: ["public.item"]) },
             "activities"),
        ]
        for (name, activities, keyPath) in cases {
            let error = await ShareBus.error { try await notes.register(activities) }
            #expect(error.name == "org.ferry.Error.InvalidArgument", "\(name): \(error)")
            #expect(error.message.hasPrefix(keyPath + ":"), "\(name): \(error.message)")
        }
        // Nothing of the bad calls was kept: the first registration still lists.
        let share = try await ShareBus.share(stage.tool, [ShareBus.text])
        try await ShareBus.expectTypes(stage.tool, share.share,
                                       ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append"])
        // 64 is fine.
        try await notes.register((0..<64).map { ShareBus.activity("org.ferry.notes.a\($0)", "A\($0)", accepts: ["public.image"]) })
    }

    @Test("BeginShare: bad options are InvalidArgument naming the key")
    func badBeginOptions() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let cases: [(String, VariantDictionary, String)] = [
            ("empty scene", ["scene": ""], "options.scene"),
            ("scene of the wrong type", ["scene": .uint32(1)], "options.scene"),
            ("bad excluded type", ["excludedActivityTypes": .array(of: .string, ["org.ferry.activity.copy", "not a type"])],
             "options.excludedActivityTypes[1]"),
            ("excluded not an array", ["excludedActivityTypes": "org.ferry.activity.copy"], "options.excludedActivityTypes"),
            ("unknown interaction", ["interactions": .array(of: .string, ["copy", "paste"])], "options.interactions[1]"),
            ("no interaction", ["interactions": .array(of: .string, [])], "options.interactions"),
            ("interactions not an array", ["interactions": "copy"], "options.interactions"),
            ("interactions with a scene", ["scene": "a-scene", "interactions": .array(of: .string, ["copy"])], "options.interactions"),
        ]
        for (name, options, keyPath) in cases {
            let error = await ShareBus.error { _ = try await ShareBus.begin(stage.tool, options) }
            #expect(error.name == "org.ferry.Error.InvalidArgument", "\(name): \(error)")
            #expect(error.message.hasPrefix(keyPath + ":"), "\(name): \(error.message)")
        }
        // Unknown keys are ignored; failed calls used no share number.
        #expect(try await ShareBus.begin(stage.tool, ["future-option": .boolean(true)]).share == "1")
    }

    @Test("python-dbus: wrong signatures are refused by name and ferryd keeps serving")
    func pythonWrongSignatures() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let script = ShareBus.pythonPrelude + #"""

            attempt("begin-s", lambda: call("BeginShare", "s", ["x"]))
            attempt("register-as", lambda: call("RegisterActivities", "as", [["x"]]))
            attempt("perform-short", lambda: call("Perform", "ss", ["1", "org.ferry.activity.copy"]))
            attempt("list-unknown", lambda: call("ListActivities", "s", ["1"]))
            """#
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, stage.fixture.bus.address],
                                                environment: stage.fixture.bus.environment(), timeout: .seconds(60))
        #expect(result.succeeded, "\(result.stderr)")
        let lines = Set(result.stdout.split(separator: "\n").map(String.init))
        #expect(lines == [
            "begin-s org.freedesktop.DBus.Error.InvalidArgs",
            "register-as org.freedesktop.DBus.Error.InvalidArgs",
            "perform-short org.freedesktop.DBus.Error.InvalidArgs",
            "list-unknown org.ferry.Error.NotFound",
        ], "\(result.stdout)")
        #expect(try await ShareBus.begin(stage.tool).share == "1")
    }

    // A caller of another uid: ShareForeignUserTests.
}

import FerryModel
import Testing

/// The typed values the client library returns for the broker's app, scene and Handoff lists,
/// read from their wire dictionaries: what a good entry gives, and which key a bad one names.
@Suite("FerryModel: RegisteredApp, DesktopLayout, DesktopScene, ScenePasteResult, HandoffActivity from the wire")
struct DesktopLayoutTests {
    private func failure(_ read: () throws -> Void) -> FerryModelError? {
        #expect(throws: FerryModelError.self) { try read() }
        do { try read() } catch let error as FerryModelError { return error } catch {}
        return nil
    }

    private static let frame: WireValue = .dictionary(["x": .double(960), "y": .double(0), "width": .double(960), "height": .double(1080)])

    @Test("an app entry reads every key; missing app-id, a wrong type or an unknown state name the key")
    func apps() throws {
        let app = try RegisteredApp(wire: WireReader(["app-id": .string("org.ferry.notes"), "name": .string("Notes"),
                                                      "state": .string("foregroundInactive"), "scenes": .uint32(2), "pid": .uint32(4242),
                                                      "shows-scenes": .bool(true), "supports-multiple-scenes": .bool(true),
                                                      "unique-name": .string(":1.7")], path: "apps[0]"))
        #expect(app == RegisteredApp(appID: "org.ferry.notes", name: "Notes", activationState: .foregroundInactive, connectedScenes: 2,
                                     processID: 4242, showsScenes: true, supportsMultipleScenes: true))
        #expect(try RegisteredApp(wire: WireReader(["app-id": .string("a.b")])) == RegisteredApp(appID: "a.b"), "absent keys read as none")
        #expect(failure { _ = try RegisteredApp(wire: WireReader(["name": .string("x")], path: "apps[1]")) }?.keyPath == "apps[1].app-id")
        #expect(failure { _ = try RegisteredApp(wire: WireReader(["app-id": .string("a.b"), "scenes": .string("2")], path: "apps[1]")) }?
            .keyPath == "apps[1].scenes")
        let state = failure { _ = try RegisteredApp(wire: WireReader(["app-id": .string("a.b"), "state": .string("asleep")], path: "apps[1]")) }
        #expect(state?.keyPath == "apps[1].state" && state?.message.contains("asleep") == true)
    }

    @Test("the desktop's screens and zone; a screen without a frame, or a session with a bad frame, names the key")
    func desktop() throws {
        let layout = try DesktopLayout(wire: WireReader(["EdgeZone": .double(24), "Screens": .array([
            .dictionary(["index": .uint32(0), "frame": Self.frame]),
            .dictionary(["index": .uint32(1), "frame": Self.frame, "external": .bool(true)]),
        ])], path: "properties"))
        #expect(layout.edgeZone == 24)
        #expect(layout.screens == [DesktopScreen(index: 0, frame: Rect(x: 960, y: 0, width: 960, height: 1080)),
                                   DesktopScreen(index: 1, frame: Rect(x: 960, y: 0, width: 960, height: 1080), isExternal: true)])
        let noFrame = failure {
            _ = try DesktopLayout(wire: WireReader(["Screens": .array([.dictionary(["index": .uint32(0)])])], path: "properties"))
        }
        #expect(noFrame?.keyPath == "properties.Screens[0].frame")

        let session = try SceneSession(persistentIdentifier: "0F3A9C21-0000-4000-8000-000000000001", bundleIdentifier: "org.ferry.notes",
                                   configurationName: "Default", activationState: .background, title: "Groceries",
                                   frame: Rect(x: 960, y: 0, width: 960, height: 1080))
        var wire = try session.wireDictionary()
        wire["screen"] = .uint32(1)
        wire["stackIndex"] = .uint32(2)
        let scene = try DesktopScene(wire: WireReader(wire, path: "sessions[3]"))
        #expect(scene == DesktopScene(session: session, screen: 1, stackIndex: 2))
        wire["frame"] = .dictionary(["x": .string("left"), "y": .double(0), "width": .double(1), "height": .double(1)])
        #expect(failure { _ = try DesktopScene(wire: WireReader(wire, path: "sessions[3]")) }?.keyPath == "sessions[3].frame.x")
    }

    @Test("a paste result and a remote activity read their keys; absent ones are empty, wrong types named")
    func pasteAndHandoff() throws {
        let declined = try ScenePasteResult(wire: WireReader(["accepted": .bool(false), "configuration": .strings(["public.image"]),
                                                              "reason": .string("the pasteboard holds text")]))
        #expect(declined == ScenePasteResult(configuration: ["public.image"], reason: "the pasteboard holds text"))
        #expect(failure { _ = try ScenePasteResult(wire: WireReader(["accepted": .string("yes")], path: "result")) }?.keyPath
                == "result.accepted")

        let activity = try HandoffActivity(wire: WireReader([
            "activity": .string("laptop/7"), "device": .string("laptop"), "app": .string("org.ferry.notes"),
            "activityType": .string("org.ferry.notes.open-note"), "title": .string("Groceries"), "apps": .strings(["org.ferry.notes"]),
            "expirationDate": .int64(1_700_000_000_000_000),
        ]))
        #expect(activity == HandoffActivity(identifier: "laptop/7", device: "laptop", sourceApp: "org.ferry.notes",
                                           activityType: "org.ferry.notes.open-note", title: "Groceries", apps: ["org.ferry.notes"],
                                           expirationMicroseconds: 1_700_000_000_000_000))
        #expect(activity.targetContentIdentifier == nil)
        #expect(failure { _ = try HandoffActivity(wire: WireReader(["apps": .string("x")], path: "activities[0]")) }?.keyPath
                == "activities[0].apps")
    }
}

import DBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Shares end to end: a scene's items provided by its app, an app activity reading the items
/// during its call only, completions at the sharer and at the scene's app.
@Suite("ferryd shares: begin, perform, complete", .serialized)
struct ShareSessionTests {
    @Test("BeginShare with a scene: its app writes the items (ProvideActivityItems); the sharer sees them but cannot read them")
    func beginWithScene() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"), scenes: true,
                                        settings: .init(title: "Shopping", metadata: [["title": .string("List")]]),
                                        activities: [ShareBus.append])
        let scene = try await notes.scene()
        let (share, pasteboard) = try await ShareBus.begin(stage.tool, ["scene": .string(scene)])
        #expect(share == "1")
        #expect(pasteboard.rawValue == PasteboardName.objectPath("org.ferry.share.1"))
        let provide = try #require(notes.shareCalls.first)
        #expect(provide.member == "ProvideActivityItems")
        #expect(provide.string(0) == "1" && provide.string(1) == scene)
        #expect(provide.arguments[2].unwrappingVariants == .objectPath(pasteboard))
        #expect(try FerrydFixture.types(try #require(try await FerrydFixture.items(stage.tool, at: pasteboard).first))
                == ["public.utf8-plain-text"])
        let read = await ShareBus.error { _ = try await FerrydFixture.read(stage.tool, 0, "public.plain-text", at: pasteboard) }
        #expect(read.name == "org.ferry.Error.PermissionDenied")
        let written = await ShareBus.error {
            try await FerrydFixture.setItems(stage.tool, [ShareBus.text], at: pasteboard)
        }
        #expect(written.name == "org.ferry.Error.PermissionDenied")

        // The scene's app is the source: its own activity first; it hears title, metadata, source app.
        try await ShareBus.expectTypes(stage.tool, share, [
            "org.ferry.notes.append", "org.ferry.activity.copy", "org.ferry.activity.save-to-folder",
        ])
        let info = try #require(notes.shareCalls.first { $0.member == "CanPerformActivities" }).dictionary
        #expect(info["title"]?.unwrappingVariants == .string("Shopping"))
        #expect(info["sourceApp"]?.unwrappingVariants == .string("org.ferry.notes"))
        #expect(info["metadata"]?.unwrappingVariants == .array(of: "a{sv}", [(["title": .string("List")] as VariantDictionary).dbusValue]))
        #expect(info["itemTypes"]?.unwrappingVariants == .array(of: "as", [.array(of: .string, ["public.utf8-plain-text"])]))

        // EndShare: the scene's app hears the share dismissed; the share is gone.
        try await ShareBus.end(stage.tool, share)
        let calls = try await notes.waitForCalls { $0.contains { $0.member == "ShareCompleted" } }
        let completed = try #require(calls.first { $0.member == "ShareCompleted" })
        #expect(completed.string(0) == "1" && completed.string(1) == scene)
        #expect(completed.dictionary["completed"]?.unwrappingVariants == .boolean(false))
        #expect(completed.dictionary["activityType"]?.unwrappingVariants == .string(""))
        #expect(await ShareBus.error { try await ShareBus.end(stage.tool, share) }.name == "org.ferry.Error.NotFound")
        #expect(await ShareBus.error { _ = try await FerrydFixture.items(stage.tool, at: pasteboard) }.name != "")
    }

    @Test("BeginShare of the sharer's own items: its title and metadata reach the activity; with a scene they are refused")
    func describedItems() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"), scenes: true,
                                        activities: [ShareBus.append])
        let metadata: DBusValue = .array(of: "a{sv}", [(["title": .string("List"), "messageBody": .string("for Sunday")]
                                                        as VariantDictionary).dbusValue])
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text], ["title": .string("Shopping"), "metadata": metadata])
        try await ShareBus.expectTypes(stage.tool, share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append",
        ])
        let info = try #require(notes.shareCalls.first { $0.member == "CanPerformActivities" }).dictionary
        #expect(info["title"]?.unwrappingVariants == .string("Shopping"))
        #expect(info["metadata"]?.unwrappingVariants == metadata)

        let scene = try await notes.scene()
        for (options, keyPath) in [(["scene": .string(scene), "title": .string("x")], "options.title"),
                                   (["scene": .string(scene), "metadata": metadata], "options.metadata"),
                                   (["metadata": .array(of: .string, [.string("x")])], "options.metadata"),
                                   (["metadata": .array(of: "a{sv}", [(["title": .uint32(1)] as VariantDictionary).dbusValue])],
                                    "options.metadata[0].title"),
                                   (["title": .string(String(repeating: "t", count: 1025))], "options.title")]
            as [(VariantDictionary, String)] {
            let refused = await ShareBus.error { _ = try await ShareBus.begin(stage.tool, options) }
            #expect(refused.name.hasPrefix("org.ferry.Error.") && refused.message.contains(keyPath), "\(keyPath): \(refused)")
        }
    }

    @Test("BeginShare: an unknown scene and a scene with nothing to share are NotFound")
    func beginErrors() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"), scenes: true,
                                        settings: .init(items: []))
        let scene = try await notes.scene()
        let unknown = await ShareBus.error { _ = try await ShareBus.begin(stage.tool, ["scene": .string("no-such-scene")]) }
        #expect(unknown.name == "org.ferry.Error.NotFound")
        #expect(unknown.message.contains("options.scene"))
        let nothing = await ShareBus.error { _ = try await ShareBus.begin(stage.tool, ["scene": .string(scene)]) }
        #expect(nothing.name == "org.ferry.Error.NotFound")
        #expect(nothing.message.contains("nothing to share"))
        // The app asked for items hears the share end, as after every ProvideActivityItems (an app
        // that wrote items before a late or failed answer lets their promises go).
        let calls = try await notes.waitForCalls { $0.contains { $0.member == "ShareCompleted" } }
        let completed = try #require(calls.first { $0.member == "ShareCompleted" })
        #expect(completed.string(0) == "1" && completed.string(1) == scene)
        #expect(completed.dictionary["completed"]?.unwrappingVariants == .boolean(false))
        // The failed shares' pasteboards are gone; numbering goes on.
        #expect(await ShareBus.error { _ = try await FerrydFixture.items(stage.tool, at: try ObjectPath(PasteboardName.objectPath("org.ferry.share.1"))) }.name != "")
        #expect(try await ShareBus.begin(stage.tool).share == "2")
    }

    @Test("a scene's interactions, or the sharer's option: without share only copy is listed, without copy everything but copy")
    func interactions() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let gallery = try await stage.app("org.ferry.gallery", activities: [ShareBus.activity("org.ferry.gallery.any", "Any", accepts: ["public.item"])])
        // Items the sharer writes itself, copy only: nothing else listed, no app asked.
        let own = try await ShareBus.share(stage.tool, [ShareBus.text], ["interactions": .array(of: .string, ["copy"])])
        #expect(try await ShareBus.types(stage.tool, own.share) == ["org.ferry.activity.copy"])
        #expect(gallery.calls.filter { $0.member == "CanPerformActivities" }.isEmpty)
        let noCopy = try await ShareBus.share(stage.tool, [ShareBus.text], ["interactions": .array(of: .string, ["share"])])
        try await ShareBus.expectTypes(stage.tool, noCopy.share, ["org.ferry.activity.save-to-folder", "org.ferry.gallery.any"])

        let notes = try await stage.app("org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"), scenes: true,
                                        settings: .init(interactions: ["copy"]))
        let scene = try await notes.scene()
        let copyOnly = try await ShareBus.begin(stage.tool, ["scene": .string(scene)])
        #expect(try await ShareBus.types(stage.tool, copyOnly.share) == ["org.ferry.activity.copy"])
        let refused = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, copyOnly.share, "org.ferry.gallery.any") }
        #expect(refused.name == "org.ferry.Error.NotFound")
        notes.settings.withLock { $0.interactions = ["share"] }
        let shareOnly = try await ShareBus.begin(stage.tool, ["scene": .string(scene)])
        try await ShareBus.expectTypes(stage.tool, shareOnly.share, ["org.ferry.activity.save-to-folder", "org.ferry.gallery.any"])
    }

    @Test("perform an app activity: it reads the items during its call only; outsiders never; the sharer gets its completion")
    func performAppActivity() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", settings: .init(performDelay: .seconds(2)),  // room for two calls while it performs, on a loaded machine
                                        activities: [ShareBus.append])
        let outsider = try await stage.fixture.connect()
        defer { Task { await outsider.close(gracePeriod: .zero) } }
        let (share, pasteboard) = try await ShareBus.share(stage.tool, [ShareBus.text])
        #expect(await notes.tryRead("org.ferry.share.\(share)") == "org.ferry.Error.PermissionDenied")
        try await ShareBus.expectTypes(stage.tool, share, ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append"])
        let performing = Task { try await ShareBus.perform(stage.tool, share, "org.ferry.notes.append") }
        try await notes.waitForCalls { $0.contains { $0.member == "PerformActivity" } }
        // While Notes performs, an outsider still cannot read, and the sharer can no longer write.
        let outsiderRead = await ShareBus.error { _ = try await FerrydFixture.read(outsider, 0, "public.plain-text", at: pasteboard) }
        #expect(outsiderRead.name == "org.ferry.Error.PermissionDenied")
        let write = await ShareBus.error { try await FerrydFixture.setItems(stage.tool, [ShareBus.png], at: pasteboard) }
        #expect(write.name == "org.ferry.Error.PermissionDenied")
        let completion = try await performing.value
        #expect(completion["completed"]?.unwrappingVariants == .boolean(true))
        #expect(ShareBus.string(completion, "activityType") == "org.ferry.notes.append")
        #expect(ShareBus.string(completion, "message") == "performed: ok hello")
        #expect(completion["returnedItems"]?.unwrappingVariants
                == .array(of: "a{sv}", [(["note": .string("n1")] as VariantDictionary).dbusValue]))
        #expect(notes.probes == ["Read during PerformActivity: ok hello"])
        let call = try #require(notes.shareCalls.first { $0.member == "PerformActivity" })
        #expect(call.string(0) == share && call.string(1) == "org.ferry.notes.append")
        #expect(call.dictionary["items"]?.unwrappingVariants == .uint32(1))
        #expect(call.dictionary["timeLimit"]?.unwrappingVariants == .double(30))
        // The share has ended: a late read is refused, and the share is gone.
        let late = await notes.tryRead("org.ferry.share.\(share)")
        #expect(late.hasPrefix("org.") && !late.hasPrefix("ok"), "\(late)")
        #expect(await ShareBus.error { _ = try await ShareBus.list(stage.tool, share) }.name == "org.ferry.Error.NotFound")
    }

    @Test("perform on a shared scene: the scene's app hears ShareCompleted with the completion")
    func performOnScene() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let gallery = try await stage.app("org.ferry.gallery", manifest: try FerrydFixture.manifest("Gallery"), scenes: true,
                                          settings: .init(items: [ShareBus.text]))
        let notes = try await stage.app("org.ferry.notes", activities: [ShareBus.append])
        let scene = try await gallery.scene()
        let (share, _) = try await ShareBus.begin(stage.tool, ["scene": .string(scene)])
        // Performing without listing first is fine when the activity would be listed (Notes is
        // asked now; on a loaded machine it may miss its 250 ms: NotFound, the share stays, try again).
        var completion: VariantDictionary = [:]
        for attempt in 1...6 {
            do {
                completion = try await ShareBus.perform(stage.tool, share, "org.ferry.notes.append")
                break
            } catch let error as DBusError where error.name.rawValue == "org.ferry.Error.NotFound" && attempt < 6 {}
        }
        #expect(completion["completed"]?.unwrappingVariants == .boolean(true))
        #expect(notes.probes == ["Read during PerformActivity: ok hello"])
        let calls = try await gallery.waitForCalls { $0.contains { $0.member == "ShareCompleted" } }
        let completed = try #require(calls.first { $0.member == "ShareCompleted" })
        #expect(completed.string(1) == scene)
        #expect(completed.dictionary["completed"]?.unwrappingVariants == .boolean(true))
        #expect(completed.dictionary["activityType"]?.unwrappingVariants == .string("org.ferry.notes.append"))
        #expect(completed.dictionary["message"]?.unwrappingVariants == completion["message"]?.unwrappingVariants)
    }

    @Test("an activity that fails replies a completion with its error's name and text, not an error")
    func performFailure() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        _ = try await stage.app("org.ferry.notes", settings: .init(performFailure: "com.example.Notes.Error.Full"),
                                activities: [ShareBus.append])
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text])
        try await ShareBus.expectTypes(stage.tool, share, ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append"])
        let completion = try await ShareBus.perform(stage.tool, share, "org.ferry.notes.append")
        #expect(completion["completed"]?.unwrappingVariants == .boolean(false))
        #expect(ShareBus.string(completion, "errorName") == "com.example.Notes.Error.Full")
        #expect(ShareBus.string(completion, "error") == "the test app refuses to perform")
        #expect(ShareBus.string(completion, "activityType") == "org.ferry.notes.append")
    }

    @Test("the activity's app exiting mid-PerformActivity: the sharer's completion says Unavailable within 1 s")
    func performerExits() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", settings: .init(performDelay: .seconds(60)), activities: [ShareBus.append])
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text])
        try await ShareBus.expectTypes(stage.tool, share, ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append"])
        let performing = Task { () -> (VariantDictionary, ContinuousClock.Instant) in
            let completion = try await ShareBus.perform(stage.tool, share, "org.ferry.notes.append")
            return (completion, .now)
        }
        try await notes.waitForCalls { $0.contains { $0.member == "PerformActivity" } }
        let quit = ContinuousClock.now
        await notes.quit()
        let (completion, answered) = try await performing.value
        #expect(answered - quit < .seconds(1), "took \(answered - quit)")
        #expect(completion["completed"]?.unwrappingVariants == .boolean(false))
        #expect(ShareBus.string(completion, "errorName") == "org.ferry.Error.Unavailable")
        #expect(ShareBus.string(completion, "error").contains("org.ferry.notes went away"))
    }

    @Test("a built-in performs through ferryd: copy puts the shared items on the general pasteboard")
    func performBuiltIn() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text])
        // A bad option is an error reply, and the share stays.
        let bad = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share, "org.ferry.activity.save-to-folder", ["to": "relative/dir"]) }
        #expect(bad.name == "org.ferry.Error.InvalidArgument")
        #expect(try await ShareBus.types(stage.tool, share).first == "org.ferry.activity.copy")
        let completion = try await ShareBus.perform(stage.tool, share, "org.ferry.activity.copy")
        #expect(completion["completed"]?.unwrappingVariants == .boolean(true), "\(completion)")
        #expect(ShareBus.string(completion, "activityType") == "org.ferry.activity.copy")
        let general = try await FerrydFixture.items(stage.tool)
        #expect(general.count == 1)
        #expect(try FerrydFixture.types(try #require(general.first)) == ["public.utf8-plain-text"])
    }

    @Test("only the sharer may list, perform or end; unknown shares are NotFound; an unlisted activity is NotFound")
    func sharerOnly() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let other = try await stage.fixture.connect()
        defer { Task { await other.close(gracePeriod: .zero) } }
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text])
        #expect(await ShareBus.error { _ = try await ShareBus.list(other, share) }.name == "org.ferry.Error.PermissionDenied")
        #expect(await ShareBus.error { _ = try await ShareBus.perform(other, share, "org.ferry.activity.copy") }.name
                == "org.ferry.Error.PermissionDenied")
        #expect(await ShareBus.error { try await ShareBus.end(other, share) }.name == "org.ferry.Error.PermissionDenied")
        #expect(await ShareBus.error { _ = try await ShareBus.list(stage.tool, "99") }.name == "org.ferry.Error.NotFound")
        #expect(await ShareBus.error { _ = try await ShareBus.list(stage.tool, "x\u{7}y") }.name == "org.ferry.Error.NotFound")
        let unlisted = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share, "org.ferry.activity.open-in-new-scene") }
        #expect(unlisted.name == "org.ferry.Error.NotFound")
        let unknown = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share, "com.example.nothing") }
        #expect(unknown.name == "org.ferry.Error.NotFound")
        // Still running after all that.
        #expect(try await ShareBus.types(stage.tool, share) == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"])
    }
}

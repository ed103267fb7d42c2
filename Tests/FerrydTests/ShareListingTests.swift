import DBus
import FerryTestSupport
import Foundation
import Testing

/// Which activities a share lists, and in which order: ferryd on a private bus, apps as raw
/// connections exporting Client1 and registering activities, a tool's connection sharing.
@Suite("ferryd shares: listing activities", .serialized)
struct ShareListingTests {
    @Test("an image lists copy, save-to-folder and Gallery's add-to-album, not Notes' append; text the other way round")
    func conformance() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        _ = try await stage.galleryAndNotes()
        let image = try await ShareBus.share(stage.tool, [ShareBus.png])
        try await ShareBus.expectTypes(stage.tool, image.share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.gallery.add-to-album",
        ])
        let text = try await ShareBus.share(stage.tool, [ShareBus.text])
        var listed: [VariantDictionary] = []
        for _ in 0..<6 where listed.count != 3 { listed = try await ShareBus.list(stage.tool, text.share) }
        #expect(listed.map { ShareBus.string($0, "activityType") } == [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append",
        ])
        // Each entry says whose it is.
        let append = try #require(listed.last)
        #expect(ShareBus.string(append, "app") == "org.ferry.notes")
        #expect(ShareBus.string(append, "title") == "Append to Note")
        #expect(ShareBus.string(append, "category") == "share")
        #expect(append["builtIn"]?.unwrappingVariants == .boolean(false))
        #expect(listed.first?["builtIn"]?.unwrappingVariants == .boolean(true))
        #expect(ShareBus.string(try #require(listed.first), "app") == "")
    }

    @Test("a user activity lists open-in-new-scene for one item only, and counts for nothing else; text and image only copy and save")
    func userActivityAndMixedItems() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        _ = try await stage.galleryAndNotes()
        let onlyActivity = try await ShareBus.share(stage.tool, [try ShareBus.userActivity("org.ferry.notes.open-note")])
        #expect(try await ShareBus.types(stage.tool, onlyActivity.share) == ["org.ferry.activity.open-in-new-scene"])
        let note = FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "a note"),
                                       try DragBus.activityRepresentation("org.ferry.notes.open-note")])
        let one = try await ShareBus.share(stage.tool, [note])
        try await ShareBus.expectTypes(stage.tool, one.share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.activity.open-in-new-scene",
            "org.ferry.notes.append",
        ])
        let two = try await ShareBus.share(stage.tool, [note, note])
        try await ShareBus.expectTypes(stage.tool, two.share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.notes.append",
        ])
        let mixed = try await ShareBus.share(stage.tool, [ShareBus.png, ShareBus.text])
        #expect(try await ShareBus.types(stage.tool, mixed.share) == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"])
        let empty = try await ShareBus.begin(stage.tool)
        #expect(try await ShareBus.list(stage.tool, empty.share).isEmpty)
    }

    @Test("excluded activity types are neither listed nor performed")
    func exclusion() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let (gallery, _) = try await stage.galleryAndNotes()
        let share = try await ShareBus.share(stage.tool, [ShareBus.png], [
            "excludedActivityTypes": .array(of: .string, ["org.ferry.activity.copy", "org.ferry.gallery.add-to-album"]),
        ])
        #expect(try await ShareBus.types(stage.tool, share.share) == ["org.ferry.activity.save-to-folder"])
        let refused = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share.share, "org.ferry.gallery.add-to-album") }
        #expect(refused.name == "org.ferry.Error.NotFound")
        #expect(!gallery.shareCalls.contains { $0.member == "PerformActivity" })
    }

    @Test("order: the sharing app's own activities first, then the built-ins, then other apps by app id, then title")
    func order() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let any = ["public.item"]
        _ = try await stage.app("org.ferry.zeta", activities: [ShareBus.activity("org.ferry.zeta.b", "B", accepts: any)])
        _ = try await stage.app("org.ferry.alpha", activities: [
            ShareBus.activity("org.ferry.alpha.zoom", "Zoom", accepts: any),
            ShareBus.activity("org.ferry.alpha.add", "Add", accepts: any),
        ])
        let sharer = try await stage.app("org.ferry.middle", activities: [
            ShareBus.activity("org.ferry.middle.y", "Yank", accepts: any),
            ShareBus.activity("org.ferry.middle.x", "Xerox", accepts: any),
        ])
        let share = try await ShareBus.share(sharer.connection, [ShareBus.png])
        try await ShareBus.expectTypes(sharer.connection, share.share, [
            "org.ferry.middle.x", "org.ferry.middle.y",
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder",
            "org.ferry.alpha.add", "org.ferry.alpha.zoom", "org.ferry.zeta.b",
        ])
        // A tool has no own app: the built-ins lead.
        let fromTool = try await ShareBus.share(stage.tool, [ShareBus.png])
        #expect(try await ShareBus.types(stage.tool, fromTool.share).prefix(3) == [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.alpha.add",
        ])
    }

    @Test("maximumItemCount: an activity taking one item is not listed for two")
    func maximumItemCount() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        _ = try await stage.app("org.ferry.gallery", activities: [
            ShareBus.activity("org.ferry.gallery.wallpaper", "Set Wallpaper", accepts: ["public.image"], maximum: 1),
        ])
        let one = try await ShareBus.share(stage.tool, [ShareBus.png])
        try await ShareBus.expectTypes(stage.tool, one.share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.gallery.wallpaper",
        ])
        let two = try await ShareBus.share(stage.tool, [ShareBus.png, ShareBus.png])
        #expect(try await !ShareBus.types(stage.tool, two.share).contains("org.ferry.gallery.wallpaper"))
    }

    @Test("CanPerformActivities: a refusal or a subset is honoured; an app slower than 250 ms is left out, the list comes anyway")
    func canPerformAnswers() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let any = ["public.item"]
        let refusing = try await stage.app("org.ferry.refuser", settings: .init(able: []),
                                           activities: [ShareBus.activity("org.ferry.refuser.r", "R", accepts: any)])
        _ = try await stage.app("org.ferry.picky", settings: .init(able: ["org.ferry.picky.yes", "org.ferry.other.sneaky"]), activities: [
            ShareBus.activity("org.ferry.picky.yes", "Yes", accepts: any),
            ShareBus.activity("org.ferry.picky.no", "No", accepts: any),
        ])
        let slow = try await stage.app("org.ferry.slow", settings: .init(canPerformDelay: .seconds(2)),
                                       activities: [ShareBus.activity("org.ferry.slow.s", "S", accepts: any)])
        let share = try await ShareBus.share(stage.tool, [ShareBus.text])
        let started = ContinuousClock.now
        _ = try await ShareBus.types(stage.tool, share.share)
        let took = ContinuousClock.now - started
        #expect(took < .milliseconds(900), "listing took \(took)")
        try await ShareBus.expectTypes(stage.tool, share.share,
                                       ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.picky.yes"])
        // Each app was asked once, about its own matching activities, with the items' description.
        let asked = try #require(refusing.shareCalls.first { $0.member == "CanPerformActivities" })
        #expect(asked.string(0) == share.share)
        #expect(asked.arguments[1].unwrappingVariants == .array(of: .string, ["org.ferry.refuser.r"]))
        let info = asked.dictionary
        #expect(info["pasteboard"]?.unwrappingVariants == .string("org.ferry.share.\(share.share)"))
        #expect(info["items"]?.unwrappingVariants == .uint32(1))
        #expect(info["types"]?.unwrappingVariants == .array(of: .string, ["public.utf8-plain-text"]))
        #expect(info["sourceApp"]?.unwrappingVariants == .string(""))
        #expect(!slow.shareCalls.filter { $0.member == "CanPerformActivities" }.isEmpty)
        // Refused activities cannot be performed either.
        let refused = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share.share, "org.ferry.picky.no") }
        #expect(refused.name == "org.ferry.Error.NotFound")
    }

    @Test("an app asked CanPerformActivities may see the items' metadata but not read them")
    func canPerformSeesMetadataOnly() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let notes = try await stage.app("org.ferry.notes", settings: .init(probeDuringCanPerform: true),
                                        activities: [ShareBus.append])
        let outsider = try await stage.fixture.connect()
        defer { Task { await outsider.close(gracePeriod: .zero) } }
        let share = try await ShareBus.share(stage.tool, [ShareBus.text])
        let pasteboard = "org.ferry.share.\(share.share)"
        // Before anyone lists, Notes is no party.
        #expect(await notes.tryItems(pasteboard) == "org.ferry.Error.PermissionDenied")
        _ = try await ShareBus.list(stage.tool, share.share)
        #expect(notes.probes == ["Items during CanPerformActivities: ok 1",
                                 "Read during CanPerformActivities: org.ferry.Error.PermissionDenied"])
        let read = await ShareBus.error { _ = try await FerrydFixture.read(outsider, 0, "public.plain-text", at: share.pasteboard) }
        #expect(read.name == "org.ferry.Error.PermissionDenied")
        let items = await ShareBus.error { _ = try await FerrydFixture.items(outsider, at: share.pasteboard) }
        #expect(items.name == "org.ferry.Error.PermissionDenied")
    }

    @Test("an app that unregisters or goes away takes its activities with it")
    func activitiesGoWithTheApp() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let (gallery, notes) = try await stage.galleryAndNotes()
        _ = try await FerrydFixture.call(gallery.connection, "UnregisterApp")
        let image = try await ShareBus.share(stage.tool, [ShareBus.png])
        #expect(try await !ShareBus.types(stage.tool, image.share).contains("org.ferry.gallery.add-to-album"))
        await notes.quit()
        let text = try await ShareBus.share(stage.tool, [ShareBus.text])
        #expect(try await eventually(.seconds(30)) { try await !ShareBus.types(stage.tool, text.share).contains("org.ferry.notes.append") })
        // Registering again ([] removes): activities are replaced.
        _ = try await FerrydFixture.call(gallery.connection, "RegisterApp", [
            .string("org.ferry.gallery"), .bytes(FakeShareApp.manifest("org.ferry.gallery")),
            .objectPath(FakeShareApp.clientPath), .variantDictionary([:]),
        ])
        try await gallery.register([ShareBus.activity("org.ferry.gallery.print", "Print", accepts: ["public.image"])])
        let again = try await ShareBus.share(stage.tool, [ShareBus.png])
        try await ShareBus.expectTypes(stage.tool, again.share, [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.gallery.print",
        ])
        try await gallery.register([])
        #expect(try await ShareBus.types(stage.tool, again.share).last == "org.ferry.activity.save-to-folder")
    }

    @Test("copy and save-to-folder act for the sharer: another app's ownApp representations do not make them listed")
    func ownAppRepresentations() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let own = FerrydFixture.item([FerrydFixture.representation("public.png", [0x89, 0x50, 0x4E, 0x47], visibility: "ownApp")])
        let gallery = try await stage.app("org.ferry.gallery", manifest: try FerrydFixture.manifest("Gallery"), scenes: true,
                                          settings: .init(items: [own]))
        let scene = try await gallery.scene()
        // A tool may not have Gallery's own bytes: nothing it could copy or save.
        let foreign = try await ShareBus.begin(stage.tool, ["scene": .string(scene)])
        #expect(try await ShareBus.types(stage.tool, foreign.share) == [])
        // Gallery sharing its own scene may: both listed, and copy performs.
        let mine = try await ShareBus.begin(gallery.connection, ["scene": .string(scene)])
        #expect(try await ShareBus.types(gallery.connection, mine.share) == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"])
        let copied = try await ShareBus.perform(gallery.connection, mine.share, "org.ferry.activity.copy")
        #expect(copied["completed"]?.unwrappingVariants == .boolean(true), "\(copied)")
    }
}

import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Sharing between processes through the real ferryd, with the library on every end: a tool
/// shares items or an app's scene, lists, performs an app's activity that reads the items, and
/// the shared scene's delegate hears the completion.
@Suite("Ferry: sharing between apps through the real ferryd")
struct ShareEndToEndTests {
    @Test("listing by conformance: a PNG gets the built-ins and add-to-album; text gets append; canPerform false hides")
    func listingByConformance() async throws {
        try await ShareStage.with { s in
            let photo = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(100), as: .png, name: "Lake")])
            #expect(photo.pasteboardName == "org.ferry.share.\(photo.id)")
            let listed = try await photo.activities()
            // No source app (a tool shares its own items): built-ins first, then apps by id.
            #expect(listed == [
                ListedActivity(type: .copy, title: "Copy", category: .action, app: nil),
                ListedActivity(type: .saveToFolder, title: "Save to Folder", category: .action, app: nil),
                ListedActivity(type: ShareStage.addToAlbum, title: "Add to Album", category: .action, app: ShareStage.albumID),
            ])
            // The album app was asked about both image activities, and said no to "never".
            #expect(s.albumEvents.starting("can ").sorted() == [
                "can \(ShareStage.addToAlbum) share=\(photo.id) items=1 providers=0",
                "can \(ShareStage.neverAlbum) share=\(photo.id) items=1 providers=0",
            ])
            #expect(s.notesEvents.starting("can ").isEmpty)
            // An activity not listed cannot be performed; the share goes on.
            await #expect { try await photo.perform(ShareStage.neverAlbum) } throws: { ($0 as? FerryError)?.code == .notFound }
            await #expect { try await photo.perform(ShareStage.append) } throws: { ($0 as? FerryError)?.code == .notFound }
            try await photo.end()
            await #expect { try await photo.activities() } throws: { ($0 as? FerryError)?.code == .notFound }

            let text = try await s.tool.beginShare([ShareStage.text("hello"), ShareStage.text("world")])
            #expect(try await text.activities().map(\.type) == [.copy, .saveToFolder, ShareStage.append])
            try await text.end()
        }
    }

    @Test("exclusion: excluded activity types are neither listed nor performed")
    func exclusion() async throws {
        try await ShareStage.with { s in
            let share = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(100), as: .png)],
                                                    options: ShareOptions(excludedActivityTypes: [.copy, ShareStage.addToAlbum]))
            #expect(try await share.activities().map(\.type) == [.saveToFolder])
            await #expect { try await share.perform(ShareStage.addToAlbum) } throws: { ($0 as? FerryError)?.code == .notFound }
            #expect(s.albumEvents.starting("perform").isEmpty)
            try await share.end()
            // A malformed excluded type never reaches the broker.
            await #expect {
                try await s.tool.beginShare([ShareStage.text("x")], options: ShareOptions(excludedActivityTypes: ["not a type"]))
            } throws: { ($0 as? FerryError)?.code == .invalidArgument }
        }
    }

    @Test("perform with transfer: the album app reads the tool's 3 MiB PNG; the completion carries its returned items")
    func performTransfersIntoAnotherProcess() async throws {
        try await ShareStage.with { s in
            let bytes = pngLikeBytes(3 << 20, seed: 11)
            let share = try await s.tool.beginShare([ShareStage.item(bytes, as: .png, name: "Lake")])
            _ = try await share.activities()
            let completion = try await share.perform(ShareStage.addToAlbum)
            #expect(completion == ShareCompletion(completed: true, activityType: ShareStage.addToAlbum,
                                                  returnedItems: [["size": String(bytes.count), "type": "public.png"]],
                                                  message: "read 1 item(s)"))
            #expect(firstDifference(s.albumEvents.bytes(readBy: ShareStage.addToAlbum) ?? Data(), bytes) == nil)
            #expect(s.albumEvents.starting("perform") == [
                "perform \(ShareStage.addToAlbum) share=\(share.id) items=1 title=- metadata=- source=- types=[\"public.png\"]",
            ])
            // The share is over.
            await #expect { try await share.activities() } throws: { ($0 as? FerryError)?.code == .notFound }
            await #expect { try await share.end() } throws: { ($0 as? FerryError)?.code == .notFound }
        }
    }

    @Test("perform without listing first: the broker asks the app then and performs")
    func performWithoutListing() async throws {
        try await ShareStage.with { s in
            let share = try await s.tool.beginShare([ShareStage.text("hello")])
            let completion = try await share.perform(ShareStage.append)
            #expect(completion.completed)
            #expect(completion.returnedItems == [["size": "5", "type": "public.utf8-plain-text"]])
            #expect(s.notesEvents.bytes(readBy: ShareStage.append) == Data("hello".utf8))
        }
    }

    @Test("an activity that throws: the sharer's completion names the error; a declined one is not completed")
    func failingActivities() async throws {
        try await ShareStage.with(albumBehaviour: .fail(FerryError(.permissionDenied, "albums are read-only")),
                                  appendBehaviour: .fail(AlbumFullError())) { s in
            let photo = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            let failed = try await photo.perform(ShareStage.addToAlbum)
            #expect(failed.completed == false)
            #expect(failed.activityType == ShareStage.addToAlbum)
            #expect(failed.errorName == "org.ferry.Error.PermissionDenied")
            #expect(failed.error?.contains("albums are read-only") == true)
            let text = try await s.tool.beginShare([ShareStage.text("x")])
            let plain = try await text.perform(ShareStage.append)
            #expect(plain.completed == false)
            #expect(plain.errorName == "org.freedesktop.DBus.Error.Failed")
            #expect(plain.error?.contains("the album is full") == true)
        }
        try await ShareStage.with(albumBehaviour: .fail(FerryError(.bus, "the album is full", dbusErrorName: "org.example.Error.AlbumFull")),
                                  appendBehaviour: .fail(FerryError(.bus, "no reply", dbusErrorName: "org.freedesktop.DBus.Error.NoReply"))) { s in
            // An app's own error name travels; the bus's own names do not (they would mean "went away").
            let photo = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            let own = try await photo.perform(ShareStage.addToAlbum)
            #expect(own.errorName == "org.example.Error.AlbumFull")
            #expect(own.error == "the album is full")
            let text = try await s.tool.beginShare([ShareStage.text("x")])
            let bus = try await text.perform(ShareStage.append)
            #expect(bus.errorName == "org.ferry.Error.Unavailable")
            #expect(bus.error == "no reply")
        }
        try await ShareStage.with(albumBehaviour: .decline) { s in
            let photo = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            let declined = try await photo.perform(ShareStage.addToAlbum)
            #expect(declined == ShareCompletion(completed: false, activityType: ShareStage.addToAlbum, message: "declined"))
        }
    }

    @Test("sharing a scene: its app provides the note; its own activity comes first; ShareCompleted reaches the scene delegate")
    func sharingAScene() async throws {
        try await ShareStage.with { s in
            let share = try await s.tool.beginShare(scene: s.notesScene)
            #expect(s.notesEvents.starting("provide") == ["provide \(s.notesScene)"])
            let items = try await share.pasteboard.items
            #expect(items.count == 1)
            #expect(try await share.activities().map(\.type) == [ShareStage.append, .copy, .saveToFolder])
            let completion = try await share.perform(ShareStage.append)
            #expect(completion.completed)
            #expect(s.notesEvents.starting("perform") == [
                "perform \(ShareStage.append) share=\(share.id) items=1 title=Groceries metadata=Groceries note "
                    + "source=\(ShareStage.notesID) types=[\"public.utf8-plain-text\"]",
            ])
            let n = s.notesScene
            try await DragStage.eventually("the scene's completion") { !s.notesEvents.starting("completed").isEmpty }
            #expect(s.notesEvents.starting("completed") == ["completed \(n) share=\(share.id) \(ShareStage.append) true 1"])
        }
    }

    @Test("a scene's photo goes to another app: the source serves its promised 2 MiB; a dismissed share reaches the delegate too")
    func scenePhotoToAnotherApp() async throws {
        let bytes = pngLikeBytes(2 << 20, seed: 5)
        var configuration = ActivityItemsConfiguration(itemProviders: [ShareStage.item(bytes, as: .png, name: "Lake")])
        configuration.title = "Lake"
        try await ShareStage.with(notesConfiguration: configuration) { s in
            let share = try await s.tool.beginShare(scene: s.notesScene)
            // Large bytes are promised by the notes app, not held by the broker.
            let items = try await share.pasteboard.items
            #expect(items.first?.promisedTypes == [.png])
            #expect(try await share.activities().map(\.type) == [.copy, .saveToFolder, ShareStage.addToAlbum])
            let completion = try await share.perform(ShareStage.addToAlbum)
            #expect(completion.completed)
            #expect(firstDifference(s.albumEvents.bytes(readBy: ShareStage.addToAlbum) ?? Data(), bytes) == nil)
            let n = s.notesScene
            try await DragStage.eventually("the completion") { s.notesEvents.starting("completed").count == 1 }
            #expect(s.notesEvents.starting("completed") == ["completed \(n) share=\(share.id) \(ShareStage.addToAlbum) true 1"])

            let dismissed = try await s.tool.beginShare(scene: s.notesScene)
            try await dismissed.end()
            try await DragStage.eventually("the dismissal") { s.notesEvents.starting("completed").count == 2 }
            #expect(s.notesEvents.starting("completed").last == "completed \(n) share=\(dismissed.id) - false 0")
        }
    }

    @Test("a scene with nothing to share: beginShare(scene:) is NotFound; an unknown scene too")
    func nothingToShare() async throws {
        try await ShareStage.with(notesConfiguration: nil) { s in
            await #expect { try await s.tool.beginShare(scene: s.notesScene) } throws: { ($0 as? FerryError)?.code == .notFound }
            await #expect { try await s.tool.beginShare(scene: s.albumScene) } throws: { ($0 as? FerryError)?.code == .notFound }
            await #expect { try await s.tool.beginShare(scene: "no-such-scene") } throws: { ($0 as? FerryError)?.code == .notFound }
            await #expect { try await s.tool.beginShare([]) } throws: { ($0 as? FerryError)?.code == .invalidArgument }
        }
    }

    @Test("Scene.share: the app shares its own note; copy-only items offer only Copy, which lands on the general pasteboard")
    func sceneSharesItself() async throws {
        try await ShareStage.with(notesConfiguration: ShareStage.noteConfiguration("copied note", interactions: .copy)) { s in
            let scene = try #require(s.notes.scene(for: s.notesScene))
            let share = try await scene.share()
            #expect(try await share.activities().map(\.type) == [.copy])
            #expect(s.notesEvents.starting("can ").isEmpty)  // the broker itself knows: no app is asked
            await #expect { try await share.perform(ShareStage.append) } throws: { ($0 as? FerryError)?.code == .notFound }
            let completion = try await share.perform(.copy)
            #expect(completion.completed)
            #expect(completion.activityType == .copy)
            #expect(try await s.tool.general.string == "copied note")
            #expect(s.notesEvents.starting("completed") == ["completed \(s.notesScene) share=\(share.id) \(ActivityType.copy) true 0"])
        }
        try await ShareStage.with(notesConfiguration: ShareStage.noteConfiguration(interactions: .share)) { s in
            let scene = try #require(s.notes.scene(for: s.notesScene))
            let share = try await scene.share()
            // Its own app's activity first (the sharer's registered app is the source); no Copy.
            #expect(try await share.activities().map(\.type) == [ShareStage.append, .saveToFolder])
            try await share.end()
            #expect(s.notesEvents.starting("completed") == ["completed \(s.notesScene) share=\(share.id) - false 0"])
        }
        // The configuration's title and metadata travel with the items the app writes itself.
        try await ShareStage.with { s in
            let scene = try #require(s.notes.scene(for: s.notesScene))
            let share = try await scene.share()
            #expect(try await share.perform(ShareStage.append).completed)
            #expect(s.notesEvents.starting("perform") == [
                "perform \(ShareStage.append) share=\(share.id) items=1 title=Groceries metadata=Groceries note "
                    + "source=\(ShareStage.notesID) types=[\"public.utf8-plain-text\"]",
            ])
        }
    }

    @Test("a broker restart: the apps register their activities again by themselves")
    func reRegistersActivities() async throws {
        try await ShareStage.with { s in
            let daemon = try #require(s.fixture.daemon)
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()
            let second = try await ServiceProcess.ferryd(on: s.fixture.bus, stateDir: s.fixture.stateDir)
            defer { second.stop() }
            try await DragStage.eventually("the album app's activities asked again") {
                s.albumEvents.starting("activities asked").count == 2
            }
            var listed: [ActivityType] = []
            _ = try await eventually(.seconds(30)) {
                let share = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
                listed = try await share.activities().map(\.type)
                try await share.end()
                return listed.contains(ShareStage.addToAlbum)
            }
            #expect(listed == [.copy, .saveToFolder, ShareStage.addToAlbum])
        }
    }

    @Test("the activity's app goes away while it performs: the sharer's completion is Unavailable, promptly")
    func activityAppGoesAway() async throws {
        try await ShareStage.with(albumBehaviour: .hang(.seconds(20))) { s in
            let share = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            let performing = Task { try await share.perform(ShareStage.addToAlbum) }
            try await DragStage.eventually("the album app performing") { !s.albumEvents.starting("perform").isEmpty }
            let closed = ContinuousClock.now
            await s.albumClient.connection.close(gracePeriod: .zero)  // as a process that exits: no grace
            let closing = ContinuousClock.now - closed
            let completion = try await performing.value
            let waited = ContinuousClock.now - closed
            #expect(completion.completed == false)
            #expect(completion.activityType == ShareStage.addToAlbum)
            #expect(completion.errorName == "org.ferry.Error.Unavailable")
            #expect(waited < .seconds(3), "the sharer waited \(waited), closing took \(closing)")
        }
    }

    @Test("a perform past the broker's time limit: the sharer's completion is Timeout, and the app's perform is cancelled")
    func performPastTheTimeLimit() async throws {
        try await ShareStage.with(albumBehaviour: .hang(.seconds(60)), ferrydArguments: ["--share-perform-timeout", "1"]) { s in
            let share = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            let started = ContinuousClock.now
            let completion = try await share.perform(ShareStage.addToAlbum)
            #expect(completion.completed == false)
            #expect(completion.errorName == "org.ferry.Error.Timeout")
            #expect(ContinuousClock.now - started < .seconds(10))
            try await DragStage.eventually("the album's perform cancelled") {
                s.albumEvents.starting("cancelled") == ["cancelled \(ShareStage.addToAlbum)"]
            }
        }
    }

    @Test("Scene.share: an end() while its perform runs fails and leaves the share to the activity; the delegate hears the real completion once")
    func endWhilePerforming() async throws {
        let bytes = pngLikeBytes(2 << 20, seed: 3)
        let configuration = ActivityItemsConfiguration(itemProviders: [ShareStage.item(bytes, as: .png, name: "Lake")])
        try await ShareStage.with(albumBehaviour: .hang(.seconds(5)), notesConfiguration: configuration) { s in
            let scene = try #require(s.notes.scene(for: s.notesScene))
            let share = try await scene.share()
            #expect(await s.notesClient.hasPendingPromises, "the 2 MiB photo is promised by the notes app")
            let performing = Task { try await share.perform(ShareStage.addToAlbum) }
            try await DragStage.eventually("the album app performing") { !s.albumEvents.starting("perform").isEmpty }
            await #expect { try await share.end() } throws: { ($0 as? FerryError)?.code == .notFound }
            #expect(s.notesEvents.starting("completed").isEmpty, "no dismissal while the activity performs")
            #expect(await s.notesClient.hasPendingPromises, "the promises stay while the activity may read them")
            let completion = try await performing.value
            #expect(completion.completed && completion.message == "woke up")
            #expect(s.notesEvents.starting("completed") == ["completed \(s.notesScene) share=\(share.id) \(ShareStage.addToAlbum) true 0"])
            #expect(await !s.notesClient.hasPendingPromises)
        }
    }

    @Test("Scene.share: a perform after the broker ended the share (idle) is NotFound, lets the promises go and tells the delegate")
    func performAfterTheBrokerEndedIt() async throws {
        let bytes = pngLikeBytes(2 << 20, seed: 4)
        let configuration = ActivityItemsConfiguration(itemProviders: [ShareStage.item(bytes, as: .png, name: "Lake")])
        try await ShareStage.with(notesConfiguration: configuration) { s in
            // A ferryd that ends shares after 3 s without a perform.
            let daemon = try #require(s.fixture.daemon)
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()
            let second = try await ServiceProcess.ferryd(on: s.fixture.bus, stateDir: s.fixture.stateDir, ["--share-idle-timeout", "3"])
            defer { second.stop() }
            try await DragStage.eventually("the notes app registered again") { s.notesEvents.starting("activities asked").count == 2 }
            let scene = try #require(s.notes.scene(for: s.notesScene))
            let share = try await scene.share()
            #expect(await s.notesClient.hasPendingPromises, "the 2 MiB photo is promised by the notes app")
            try await DragStage.eventually("the broker ending the idle share") {
                do { _ = try await share.pasteboard.items; return false } catch { return (error as? FerryError)?.code == .notFound }
            }
            await #expect { try await share.perform(.copy) } throws: { ($0 as? FerryError)?.code == .notFound }
            #expect(await !s.notesClient.hasPendingPromises)
            #expect(s.notesEvents.starting("completed") == ["completed \(s.notesScene) share=\(share.id) - false 0"])
        }
    }

    @Test("a scene whose activity items' title holds NUL: the share fails and the source app keeps no promise for it")
    func unsendableTitle() async throws {
        var configuration = ActivityItemsConfiguration(itemProviders: [ShareStage.item(pngLikeBytes(2 << 20, seed: 6), as: .png)])
        configuration.title = "Lake\u{0}"
        try await ShareStage.with(notesConfiguration: configuration) { s in
            await #expect(throws: FerryError.self) { try await s.tool.beginShare(scene: s.notesScene) }
            #expect(s.notesEvents.starting("provide") == ["provide \(s.notesScene)"])
            #expect(await !s.notesClient.hasPendingPromises)
        }
    }
}

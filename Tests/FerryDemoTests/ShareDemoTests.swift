import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Sharing between real `ferry-demo` processes through the real `ferryd` on a private bus, the
/// test process being the sharer (as `ferry share` is): it begins a share of a scene (the scene's
/// app provides its activity items) or of its own items, lists the activities and performs one.
@Suite("ferry-demo sharing end to end")
struct ShareDemoTests {
    static let lake = TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/lake.png")
    static let beachPNG = TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/Renditions/beach.jpg/beach.png")
    static let builtIns: [ActivityType] = [.copy, .saveToFolder, .openInNewScene]

    @Test("Gallery's shown photo lists add-to-album first, the built-ins, then Notes' append (its caption is text); a PNG without text does not list append; a note lists append")
    func listing() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            let viewer = try await h.openViewer(gallery, "lake.png")
            let editor = try await h.openEditor(notes, "groceries")

            try await h.withShareClient { client in
                let share = try await client.beginShare(scene: viewer)
                let listed = try await share.activities()
                #expect(listed.map(\.type) == [DemoHarness.addToAlbum] + Self.builtIns + [DemoHarness.appendToNote], "\(listed)")
                let album = try #require(listed.first)
                #expect(album.title == "Add to Album" && album.category == .action && album.app == "org.ferry.gallery")
                #expect(listed.dropFirst().prefix(3).allSatisfy { $0.isBuiltIn })
                let append = try #require(listed.last)
                #expect(append.title == "Append to Note" && append.category == .share && append.app == "org.ferry.notes", "\(append)")
                // The sharer sees the share pasteboard's metadata: what a drag of the photo carries, and its caption.
                let items = try await client.pasteboard(named: share.pasteboardName).items
                #expect(items.map(\.contentTypes) == [[.png, .jpeg, .utf8PlainText, .userActivity]], "\(items)")
                let provided = try await gallery.event("share-provided") { $0.session == viewer }
                #expect(provided["photo"] == "lake.png" && provided["items"] == "1" && provided["configuration"] == "Viewer"
                        && provided["types"] == "public.png,public.jpeg,public.utf8-plain-text,org.ferry.user-activity", "\(provided)")
                try await share.end()
                // The sheet dismissed: Gallery's scene hears a completion without an activity.
                let completed = try await gallery.event("share-completed") { $0.session == viewer }
                #expect(completed["share"] == share.id && completed["completed"] == nil && completed["activityType"] == nil, "\(completed)")

                // Excluded types are not listed.
                let excluding = try await client.beginShare(scene: viewer, options: ShareOptions(excludedActivityTypes: [DemoHarness.addToAlbum, .copy]))
                #expect(try await excluding.activities().map(\.type) == [.saveToFolder, .openInNewScene, DemoHarness.appendToNote])
                try await excluding.end()

                // The same photo's bytes without a caption (a PNG file the test process shares): no text, no append.
                let bare = try await client.beginShare([DemoHarness.imageItem(try Data(contentsOf: Self.lake), type: .png, name: "lake")])
                let forBare = try await bare.activities()
                #expect(forBare.map(\.type) == [.copy, .saveToFolder, DemoHarness.addToAlbum], "a picture is not text: \(forBare)")
                try await bare.end()

                // A note: Notes' own append first, then the built-ins; not Gallery's album.
                let note = try await client.beginShare(scene: editor)
                let forNote = try await note.activities()
                #expect(forNote.map(\.type) == [DemoHarness.appendToNote] + Self.builtIns, "\(forNote)")
                #expect(forNote.first?.category == .share && forNote.first?.app == "org.ferry.notes")
                let noteItems = try await client.pasteboard(named: note.pasteboardName).items
                #expect(noteItems.map(\.contentTypes) == [[.utf8PlainText, .userActivity]], "\(noteItems)")
                try await note.end()
                let noted = try await notes.event("share-provided") { $0.session == editor }
                #expect(noted["note"] == "groceries" && noted["configuration"] == "Editor", "\(noted)")
            }
            // Notes' list has no selection: nothing to share.
            await #expect(throws: FerryError.self) {
                try await h.withShareClient { client in _ = try await client.beginShare(scene: apps.list) }
            }
            let empty = try await notes.event("share-provided") { $0.session == apps.list }
            #expect(empty["items"] == "0", "\(empty)")
        }
    }

    @Test("text shared to Notes' append lands in another process: the note Shared, then the front-most Editor's note")
    func textToNotes() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            _ = try await notes.settled()

            try await h.withShareClient { client in
                // No Editor: a note "Shared" is made for it.
                let first = try await client.beginShare([DemoHarness.textItem("oat milk")])
                let listed = try await first.activities()
                #expect(listed.map(\.type) == Self.builtIns.filter { $0 != .openInNewScene } + [DemoHarness.appendToNote], "\(listed)")
                let done = try await first.perform(DemoHarness.appendToNote)
                #expect(done.completed && done.activityType == DemoHarness.appendToNote && done.errorName == nil, "\(done)")
                #expect(done.returnedItems == [["note": "Shared"]])
                #expect(h.note("Shared") == "oat milk\n")
                let began = try await notes.event("activity-began") { $0["share"] == first.id }
                #expect(began["activityType"] == "org.ferry.notes.append" && began["items"] == "1"
                        && began["types"] == "public.utf8-plain-text" && began["from"] == nil, "\(began)")
                let performed = try await notes.event("activity-performed") { $0["share"] == first.id }
                #expect(performed["note"] == "Shared" && performed["created"] != nil && performed["bytes"] == "8"
                        && performed["scene"] == nil, "\(performed)")

                // Two Editors: the one opened last is in front and gets the text.
                let groceries = try await h.openEditor(notes, "groceries")
                let meeting = try await h.openEditor(notes, "meeting")
                let meetingBefore = try #require(h.note("meeting"))
                let second = try await client.beginShare([DemoHarness.textItem("call Ana\n")])
                let toMeeting = try await second.perform(DemoHarness.appendToNote)
                #expect(toMeeting.completed && toMeeting.returnedItems == [["note": "meeting"]], "\(toMeeting)")
                #expect(h.note("meeting") == meetingBefore + (meetingBefore.hasSuffix("\n") ? "" : "\n") + "call Ana\n")
                let intoMeeting = try await notes.event("activity-performed") { $0["share"] == second.id }
                #expect(intoMeeting["note"] == "meeting" && intoMeeting["scene"] == meeting && intoMeeting["created"] == nil, "\(intoMeeting)")

                // groceries brought back to the front: now it gets the text.
                let activeBefore = notes.all("state") { $0.session == groceries && $0["state"] == "foregroundActive" }.count
                #expect(try await h.openEditor(notes, "groceries") == groceries, "its Editor comes back")
                #expect(await eventually {
                    notes.all("state") { $0.session == groceries && $0["state"] == "foregroundActive" }.count > activeBefore
                }, "groceries' Editor became foregroundActive")
                let groceriesBefore = try #require(h.note("groceries"))
                let third = try await client.beginShare([DemoHarness.textItem("eggs")])
                let toGroceries = try await third.perform(DemoHarness.appendToNote)
                #expect(toGroceries.returnedItems == [["note": "groceries"]], "\(toGroceries)")
                #expect(h.note("groceries")?.hasSuffix("eggs\n") == true && h.note("groceries")!.count > groceriesBefore.count)
                #expect(h.note("Shared") == "oat milk\n", "the Shared note kept what it had")
            }
        }
    }

    @Test("a photo shared to Gallery's add-to-album: its own shown photo joins the album, another image becomes a photo in it")
    func photoToAlbum() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let gallery = apps.gallery
            let viewer = try await h.openViewer(gallery, "lake.png")
            try await h.withShareClient { client in
                let own = try await client.beginShare(scene: viewer)
                let done = try await own.perform(DemoHarness.addToAlbum)
                #expect(done.completed && done.activityType == DemoHarness.addToAlbum, "\(done)")
                #expect(done.returnedItems == [["album": "Shared", "photo": "lake.png"]], "\(done)")
                #expect(h.album() == "lake.png\n")
                #expect(try h.photos() == ["beach.jpg", "lake.png"], "the same bytes: no new photo")
                let completed = try await gallery.event("share-completed") { $0.session == viewer }
                #expect(completed["share"] == own.id && completed["activityType"] == "org.ferry.gallery.add-to-album"
                        && completed["completed"] != nil && completed["returned"] == "album:Shared;photo:lake.png", "\(completed)")
                let began = try await gallery.event("activity-began") { $0["share"] == own.id }
                #expect(began["from"] == "org.ferry.gallery"
                        && began["types"] == "public.png,public.jpeg,public.utf8-plain-text,org.ferry.user-activity", "\(began)")

                // Another app's image (the test process): a new photo, added to the album.
                let png = try Data(contentsOf: Self.beachPNG)
                let foreign = try await client.beginShare([DemoHarness.imageItem(png, type: .png, name: "sunset")])
                let listed = try await foreign.activities()
                #expect(listed.map(\.type) == [.copy, .saveToFolder, DemoHarness.addToAlbum], "\(listed)")
                let added = try await foreign.perform(DemoHarness.addToAlbum)
                #expect(added.completed && added.returnedItems == [["album": "Shared", "photo": "sunset.png"]], "\(added)")
                #expect(added.message?.contains("2 photos") == true, "\(added)")
                #expect(try h.photos() == ["beach.jpg", "lake.png", "sunset.png"])
                let kept = h.stateDirectory("Gallery").appendingPathComponent("photos/sunset.png")
                #expect(try Data(contentsOf: kept) == png)
                #expect(h.album() == "lake.png\nsunset.png\n")
                let performed = try await gallery.event("activity-performed") { $0["share"] == foreign.id }
                #expect(performed["album"] == "Shared" && performed["photos"] == "sunset.png" && performed["new"] == "sunset.png"
                        && performed["count"] == "2", "\(performed)")
            }
            #expect(apps.notes.all("activity-began").isEmpty, "Notes was never asked to perform")
        }
    }

    @Test("Gallery's shown photo to Notes' append: the front-most Editor's note gains the caption's line and the photo as an attachment")
    func photoToNote() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            _ = try await h.openEditor(notes, "meeting")
            let editor = try await h.openEditor(notes, "groceries")
            let viewer = try await h.openViewer(gallery, "lake.png")
            let before = try #require(h.note("groceries"))
            let done = try await h.withShareClient { client in
                let share = try await client.beginShare(scene: viewer)
                #expect(try await share.activities().contains { $0.type == DemoHarness.appendToNote })
                return (id: share.id, completion: try await share.perform(DemoHarness.appendToNote))
            }
            let completion = done.completion
            #expect(completion.completed && completion.activityType == DemoHarness.appendToNote && completion.errorName == nil, "\(completion)")
            #expect(completion.returnedItems == [["note": "groceries", "attachment": "lake.png"]], "\(completion)")
            #expect(completion.message?.hasSuffix(", attached lake.png") == true, "\(completion)")
            #expect(h.note("groceries") == before + (before.hasSuffix("\n") ? "" : "\n") + "lake.png\n[image: lake.png]\n")
            #expect(h.note("meeting")?.contains("lake.png") == false, "only the front-most Editor's note")
            let attachments = h.stateDirectory("Notes").appendingPathComponent("attachments/groceries")
            #expect(try FileManager.default.contentsOfDirectory(atPath: attachments.path) == ["lake.png"])
            #expect(try Data(contentsOf: attachments.appendingPathComponent("lake.png")) == Data(contentsOf: Self.lake), "the original's bytes")

            let began = try await notes.event("activity-began") { $0["share"] == done.id }
            #expect(began["from"] == "org.ferry.gallery" && began["items"] == "1"
                    && began["types"] == "public.png,public.jpeg,public.utf8-plain-text,org.ferry.user-activity", "\(began)")
            let performed = try await notes.event("activity-performed") { $0["share"] == done.id }
            #expect(performed["note"] == "groceries" && performed["scene"] == editor && performed["attachments"] == "lake.png"
                    && performed["types"] == "public.utf8-plain-text,public.png" && performed["created"] == nil, "\(performed)")
            let completed = try await gallery.event("share-completed") { $0.session == viewer }
            #expect(completed["share"] == done.id && completed["activityType"] == "org.ferry.notes.append" && completed["completed"] != nil
                    && completed["returned"] == "attachment:lake.png;note:groceries", "\(completed)")
            #expect(try h.photos() == ["beach.jpg", "lake.png"], "Gallery keeps its photos as they were")
        }
    }

    @Test("Gallery's shown photo saved to a folder: the original's bytes as <name>.png; Gallery hears the completion")
    func photoToFolder() async throws {
        try await DemoHarness.with { h in
            let gallery = try await h.startDemo("Gallery")
            defer { gallery.process.stop() }
            _ = try await gallery.settled()
            let viewer = try await h.openViewer(gallery, "lake.png")
            let folder = h.appState.appendingPathComponent("saved-\(UUID().uuidString.prefix(6))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let done = try await h.withShareClient { client in
                try await client.beginShare(scene: viewer).perform(.saveToFolder, folder: folder.path)
            }
            #expect(done.completed, "\(done)")
            let path = folder.appendingPathComponent("lake.png").path
            #expect(done.returnedItems == [["path": path]], "\(done)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: Self.lake))
            let completed = try await gallery.event("share-completed") { $0.session == viewer }
            #expect(completed["activityType"] == "org.ferry.activity.save-to-folder" && completed["completed"] != nil
                    && completed["returned"] == "path:\(path)", "\(completed)")
        }
    }

    @Test("the activity's app killed mid-perform: the sharer's completion fails with org.ferry.Error.Unavailable, at once")
    func activityAppKilled() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo("Notes", ["--perform-delay", "60"])
            defer { notes.process.stop() }
            _ = try await notes.settled()
            try await h.withShareClient { client in
                let share = try await client.beginShare([DemoHarness.textItem("never arrives")])
                let performing = Task { try await share.perform(DemoHarness.appendToNote) }
                _ = try await notes.event("activity-began", timeout: .seconds(15)) { $0["share"] == share.id }
                let killed = ContinuousClock.now
                await notes.kill()
                let completion = try await performing.value
                #expect(ContinuousClock.now - killed < .seconds(3), "the sharer heard it soon, not after 30 s")
                #expect(!completion.completed && completion.activityType == DemoHarness.appendToNote, "\(completion)")
                #expect(completion.errorName == "org.ferry.Error.Unavailable", "\(completion)")
                #expect(completion.error?.contains("org.ferry.notes") == true, "\(completion)")
                // The share is over.
                await #expect(throws: FerryError.self) { try await share.activities() }
            }
            #expect(h.note("Shared") == nil, "nothing was appended")
            #expect(notes.all("activity-performed").isEmpty)
        }
    }

    @Test("an activity that fails (Notes cannot write the note): completed false with the app's error name and reason")
    func activityFails() async throws {
        try await DemoHarness.with { h in
            // A library made beforehand whose note "Shared" cannot be written: its file is a folder.
            let notesFolder = h.stateDirectory("Notes").appendingPathComponent("notes")
            try FileManager.default.createDirectory(at: notesFolder.appendingPathComponent("Shared.txt"), withIntermediateDirectories: true)
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            _ = try await notes.settled()
            let completion = try await h.withShareClient { client in
                try await client.beginShare([DemoHarness.textItem("lost")]).perform(DemoHarness.appendToNote)
            }
            #expect(!completion.completed && completion.activityType == DemoHarness.appendToNote, "\(completion)")
            #expect(completion.errorName == "org.ferry.notes.Error.Failed", "\(completion)")
            #expect(completion.error?.contains("Shared.txt") == true, "\(completion)")
            let failed = try await notes.event("activity-failed")
            #expect(failed["activityType"] == "org.ferry.notes.append" && failed["message"]?.contains("Shared.txt") == true, "\(failed)")
            #expect(notes.all("activity-performed").isEmpty)
        }
    }
}

import DBus
import FerryTestSupport
import Foundation
import Testing

/// How shares end without an activity: EndShare, the sharer going away, the idle timeout — the
/// shared scene's app hears ShareCompleted (dismissed) each time.
@Suite("ferryd shares: ending without an activity", .serialized)
struct ShareEndingTests {
    /// Notes with one scene whose items are shared by a tool of its own connection.
    static func sharedScene(_ stage: ShareStage, sharer: Connection) async throws -> (notes: FakeShareApp, scene: String, share: String) {
        let notes = try await stage.app("org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"), scenes: true)
        let scene = try await notes.scene()
        let (share, _) = try await ShareBus.begin(sharer, ["scene": .string(scene)])
        return (notes, scene, share)
    }

    /// The ShareCompleted call Notes got, once it came.
    static func completion(_ notes: FakeShareApp, timeout: Duration = .seconds(10)) async throws -> FakeShareApp.Call {
        let calls = try await notes.waitForCalls(timeout: timeout) { $0.contains { $0.member == "ShareCompleted" } }
        return try #require(calls.first { $0.member == "ShareCompleted" })
    }

    @Test("the sharer going away ends its share: the scene's app hears it dismissed at once")
    func sharerGone() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let sharer = try await stage.fixture.connect()
        let (notes, scene, share) = try await Self.sharedScene(stage, sharer: sharer)
        let gone = ContinuousClock.now
        await sharer.close(gracePeriod: .zero)
        let completed = try await Self.completion(notes, timeout: .seconds(5))
        #expect(completed.at - gone < .seconds(1), "took \(completed.at - gone)")
        #expect(completed.string(0) == share && completed.string(1) == scene)
        #expect(completed.dictionary["completed"]?.unwrappingVariants == .boolean(false))
        #expect(completed.dictionary["activityType"]?.unwrappingVariants == .string(""))
        #expect(await notes.tryItems("org.ferry.share.\(share)") != "ok 1")
    }

    @Test("a share not performed within the idle timeout ends dismissed")
    func idleTimeout() async throws {
        let stage = try await ShareStage.start(["--share-idle-timeout", "1"])
        defer { stage.stop() }
        let (notes, _, share) = try await Self.sharedScene(stage, sharer: stage.tool)
        let began = ContinuousClock.now
        let completed = try await Self.completion(notes, timeout: .seconds(10))
        #expect(completed.at - began > .milliseconds(700) && completed.at - began < .seconds(4), "after \(completed.at - began)")
        #expect(completed.dictionary["completed"]?.unwrappingVariants == .boolean(false))
        #expect(ShareBus.string(completed.dictionary, "message").contains("not performed within 1 s"))
        #expect(await ShareBus.error { _ = try await ShareBus.list(stage.tool, share) }.name == "org.ferry.Error.NotFound")
    }

    @Test("the shared scene's app going away ends the share; the sharer's next call is NotFound")
    func sourceGone() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let (notes, _, share) = try await Self.sharedScene(stage, sharer: stage.tool)
        await notes.quit()
        #expect(await eventually(.seconds(30)) {
            await ShareBus.error { _ = try await ShareBus.list(stage.tool, share) }.name == "org.ferry.Error.NotFound"
        })
    }

    /// An app whose CanPerformActivities never answers in time: a Perform of its activity (not
    /// listed before) asks it, waits 250 ms and fails NotFound — the share running meanwhile.
    static func slowApp(_ stage: ShareStage) async throws -> FakeShareApp {
        try await stage.app("org.ferry.slow", settings: .init(canPerformDelay: .seconds(2)),
                            activities: [ShareBus.activity("org.ferry.slow.s", "S", accepts: ["public.item"])])
    }

    @Test("a sharer that leaves while a Perform it made fails (NotFound) still ends its share")
    func sharerGoneDuringFailedPerform() async throws {
        let stage = try await ShareStage.start()
        defer { stage.stop() }
        let slow = try await Self.slowApp(stage)
        let sharer = try await stage.fixture.connect()
        let (share, _) = try await ShareBus.share(sharer, [ShareBus.text])
        let performing = Task { await ShareBus.error { _ = try await ShareBus.perform(sharer, share, "org.ferry.slow.s") } }
        try await slow.waitForCalls { $0.contains { $0.member == "CanPerformActivities" } }
        await sharer.close(gracePeriod: .zero)
        _ = await performing.value
        // The app asked may see the items' metadata while the share runs; once it ends, the pasteboard is gone.
        #expect(await eventually(.seconds(5)) {
            await slow.tryItems("org.ferry.share.\(share)") != "ok 1"
        }, "the share outlived its sharer")
    }

    @Test("the idle timeout still ends a share whose deadline passed while a failing Perform ran")
    func idleTimeoutDuringFailedPerform() async throws {
        let stage = try await ShareStage.start(["--share-idle-timeout", "1"])
        defer { stage.stop() }
        _ = try await Self.slowApp(stage)
        let (share, _) = try await ShareBus.share(stage.tool, [ShareBus.text])
        let began = ContinuousClock.now
        // Perform after Perform (each fails NotFound after 250 ms) across the deadline, so the
        // idle watch finds the share performing when the deadline comes.
        while ContinuousClock.now - began < .seconds(2) {
            let failed = await ShareBus.error { _ = try await ShareBus.perform(stage.tool, share, "org.ferry.slow.s") }
            #expect(failed.name == "org.ferry.Error.NotFound")
            if !failed.message.contains("can perform now") { break }  // ended already
        }
        #expect(await eventually(.seconds(5)) {
            await ShareBus.error { _ = try await ShareBus.list(stage.tool, share) }.name == "org.ferry.Error.NotFound"
        }, "the share outlived its idle timeout")
    }
}

import DBus
import FerryTestSupport
import Foundation
import Testing

/// The external display (`ferryd --external-display`): a screen of its own for scenes of the
/// external-display role, which take no drops, pastes or drags (Apple's non-interactive external
/// display).
@Suite("ferryd: the external display is its own screen and non-interactive")
struct ExternalDisplayTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let role = SceneRoleTests.externalDisplay

    /// Scenes1.Screens.
    static func screens(_ connection: Connection) async throws -> [VariantDictionary] {
        let value = try await connection.call(destination: F.broker, path: S.path, interface: "org.freedesktop.DBus.Properties",
                                              member: "Get", body: [.string(S.interface.rawValue), .string("Screens")],
                                              timeout: .seconds(10))[0].unwrappingVariants
        return try value.get([VariantDictionary].self)
    }

    @Test("an external-display scene fills the external display and stays there; drags over it are forbidden without asking its app; Paste and BeginDrag on it are NotInteractive")
    func nonInteractive() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--external-display", "1280x720"])
        defer { daemon.stop() }
        let notes = try await FakeDragApp.start(fixture, "org.ferry.notes", manifestBytes: try SceneRoleTests.notesWithPresenter())
        let window = try await notes.scene()
        try await notes.setFrame(window, 100, 100, 600, 600)
        let tool = try await fixture.connect()

        let screens = try await Self.screens(tool)
        #expect(screens.count == 2)
        #expect(try screens[0].value(forKey: "external", as: Bool.self) == false)
        #expect(try screens[1].value(forKey: "external", as: Bool.self))
        #expect(try S.frame(screens[1]) == [1920, 0, 1280, 720])

        let presenter = try await S.activate(tool, app: "org.ferry.notes", ["role": .string(Self.role)])
        let session = try #require(try await S.session(tool, presenter))
        #expect(try S.frame(session) == [1920, 0, 1280, 720], "it fills the external display")
        #expect(try session.value(forKey: "screen", as: UInt32.self) == 1)
        _ = try? await notes.setFrame(presenter, 0, 0, 300, 300)
        #expect(try S.frame(try #require(try await S.session(tool, presenter))) == [1920, 0, 1280, 720], "its frame does not change")
        // An application scene moved onto the external display lands on screen 0.
        try await notes.setFrame(window, 2400, 100, 600, 600)
        let moved = try #require(try await S.session(tool, window))
        #expect(try moved.value(forKey: "screen", as: UInt32.self) == 0)
        #expect(try S.frame(moved) == [1320, 100, 600, 600], "\(moved)")
        try await notes.setFrame(window, 100, 100, 600, 600)

        // A drag over it: forbidden, no edge zone, and its app hears nothing; the drop is refused.
        let (drag, _) = try await DragBus.begin(tool, scene: window)
        let over = try await DragBus.move(tool, drag, 2500, 300)
        #expect(over == DragBus.Proposal(operation: "forbidden", target: presenter), "\(over)")
        let atEdge = try await DragBus.move(tool, drag, 1925, 300)
        #expect(atEdge == DragBus.Proposal(operation: "forbidden", target: presenter), "no edge zone there: \(atEdge)")
        let outcome = try await DragBus.drop(tool, drag)
        #expect(DragBus.string(outcome, "operation") == "forbidden")
        #expect(DragBus.string(outcome, "reason").contains("on the external display, which takes no drops"), "\(outcome)")
        let heard = notes.calls.filter { $0.scene == presenter && ["DropEntered", "DropUpdated", "DropExited", "PerformDrop"].contains($0.member) }
        #expect(heard.isEmpty, "\(heard)")

        // Paste into it, and a drag from it, are refused by name.
        let paste = await F.failure { _ = try await S.call(tool, "Paste", [.string(presenter), .string("general"), .variantDictionary([:])]) }
        #expect(paste?.name == "org.ferry.Error.NotInteractive", "\(String(describing: paste))")
        #expect(await DragBus.errorName { _ = try await DragBus.begin(tool, scene: presenter) } == "org.ferry.Error.NotInteractive")

        // No application scene goes to the external display.
        let onto = await F.failure { _ = try await S.activate(tool, app: "org.ferry.notes", ["screen": .uint32(1)]) }
        #expect(onto?.name == "org.ferry.Error.InvalidArgument" && onto?.message.hasPrefix("options.screen:") == true,
                "\(String(describing: onto))")
        await tool.close()
        await notes.quit()
    }

    @Test("without an external display an external-display scene is Unavailable, and Screens marks no screen external")
    func noExternalDisplay() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let notes = try await FakeDragApp.start(fixture, "org.ferry.notes", manifestBytes: try SceneRoleTests.notesWithPresenter())
        _ = try await notes.scene()
        let tool = try await fixture.connect()
        let screens = try await Self.screens(tool)
        #expect(try screens.map { try $0.value(forKey: "external", as: Bool.self) } == [false])
        let failure = await F.failure { _ = try await S.activate(tool, app: "org.ferry.notes", ["role": .string(Self.role)]) }
        #expect(failure?.name == "org.ferry.Error.Unavailable", "\(String(describing: failure))")
        #expect(try await S.sessions(tool, app: "org.ferry.notes").count == 1, "nothing left behind")
        await tool.close()
        await notes.quit()
    }
}

import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// `org.ferry.Client1.PerformPaste`: the scene's paste configuration decides from the
/// pasteboard's metadata; an accepted paste runs `paste(itemProviders:)`, which reads as a user
/// action.
@Suite("Ferry: paste into a scene (PerformPaste)")
struct ScenePasteTests {
    static func result(_ reply: [DBusValue]) throws -> [String: DBusValue] {
        try #require(reply.first).get([String: DBusValue].self).mapValues(\.unwrappingVariants)
    }

    @Test("accepted: paste(itemProviders:) runs, reads as a user action at the change count; the result names what was read")
    func accepted() async throws {
        try await SceneFixture.with(pasteConfiguration: PasteConfiguration(acceptableTypes: [.plainText])) { f in
            f.broker.state.withLock { s in
                s.items = [[(type: "public.utf8-plain-text", bytes: Array("hello".utf8))],
                           [(type: "public.png", bytes: [0x89, 0x50, 0x4E, 0x47])]]
                s.changeCount = 42
            }
            let session = try f.broker.newSession()
            let id = session.persistentIdentifier
            try await f.broker.connect(session)
            let result = try Self.result(try await f.broker.callClient(
                "PerformPaste", [.string(id), .string("general"), [String: DBusValue]().dbusValue]))
            #expect(result["accepted"] == .boolean(true))
            #expect(result["configuration"] == .array(of: .string, [.string("public.plain-text")]))
            #expect(result["types"] == .array(of: .string, [.string("public.utf8-plain-text")]))
            #expect(result["message"] == .string("pasted 1 text(s)"))
            #expect(result["reason"] == nil)
            #expect(f.events.all.last == "paste \(id) hello")
            let reads = f.broker.state.withLock { $0.reads }
            #expect(reads.count == 1)
            #expect(reads.first?.options["user-action"]?.unwrappingVariants == .boolean(true))
            #expect(reads.first?.options["change-count"]?.unwrappingVariants == .uint64(42))
        }
    }

    @Test("declined by the configuration: no paste runs and nothing is read; the reason says why")
    func declined() async throws {
        try await SceneFixture.with(pasteConfiguration: PasteConfiguration(acceptableTypes: [.plainText])) { f in
            f.broker.state.withLock { $0.items = [[(type: "public.png", bytes: [0x89, 0x50, 0x4E, 0x47])]] }
            let session = try f.broker.newSession()
            try await f.broker.connect(session)
            let result = try Self.result(try await f.broker.callClient(
                "PerformPaste", [.string(session.persistentIdentifier), .string("general"), [String: DBusValue]().dbusValue]))
            #expect(result["accepted"] == .boolean(false))
            #expect(result["configuration"] == .array(of: .string, [.string("public.plain-text")]))
            guard case .string(let reason)? = result["reason"] else { Issue.record("no reason"); return }
            #expect(reason.contains("public.plain-text") && reason.contains("public.png"))
            #expect(result["types"] == nil)
            #expect(f.broker.state.withLock { $0.reads }.isEmpty)
            #expect(!f.events.all.contains { $0.hasPrefix("paste") })
        }
    }

    @Test("a scene without a paste configuration accepts nothing; an unknown scene or pasteboard is NotFound")
    func noConfiguration() async throws {
        try await SceneFixture.with { f in
            f.broker.state.withLock { $0.items = [[(type: "public.utf8-plain-text", bytes: Array("x".utf8))]] }
            let session = try f.broker.newSession()
            try await f.broker.connect(session)
            let result = try Self.result(try await f.broker.callClient(
                "PerformPaste", [.string(session.persistentIdentifier), .string("general"), [String: DBusValue]().dbusValue]))
            #expect(result["accepted"] == .boolean(false))
            #expect(result["configuration"] == .array(of: .string, []))
            #expect(result["reason"] == .string("the scene accepts nothing to paste"))
            await #expect {
                try await f.broker.callClient("PerformPaste", [.string("gone"), .string("general"), [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.NotFound" }
            // A pasteboard that does not exist is NotFound (not created); a bad name is InvalidArgument.
            await #expect {
                try await f.broker.callClient("PerformPaste", [.string(session.persistentIdentifier), .string("missing"),
                                                               [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.NotFound" }
            await #expect {
                try await f.broker.callClient("PerformPaste", [.string(session.persistentIdentifier), .string("no/slashes"),
                                                               [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
        }
    }
}

import DBus
import FerryTestSupport
import Foundation
import Testing

/// Apps register with the running daemon from their own connections; registrations die with them.
@Suite("ferryd: app registration (org.ferry.Broker1)")
struct AppRegistrationTests {
    static func listApps(_ connection: Connection) async throws -> [String: VariantDictionary] {
        let reply = try await FerrydFixture.call(connection, "ListApps")
        let apps = try reply[0].get([VariantDictionary].self)
        return Dictionary(uniqueKeysWithValues: try apps.map { (try $0.value(forKey: "app-id", as: String.self), $0) })
    }

    @Test("two apps register, ListApps describes both, closing a connection unregisters its app")
    func registerListAndDisconnect() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let watcher = try await fixture.connect()
        let registered = try await watcher.subscribe(
            to: MatchRule(sender: FerrydFixture.broker, interface: FerrydFixture.interface, member: "AppRegistered"))
        let unregistered = try await watcher.subscribe(
            to: MatchRule(sender: FerrydFixture.broker, interface: FerrydFixture.interface, member: "AppUnregistered"))
        let notes = try await fixture.connect(), gallery = try await fixture.connect()
        try await FerrydFixture.register(notes, "org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"),
                                         clientPath: "/org/ferry/Client/notes")
        try await FerrydFixture.register(gallery, "org.ferry.gallery", manifest: try FerrydFixture.manifest("Gallery"))

        var seen: [String: String] = [:]
        for try await signal in registered {
            seen[try signal.body[0].get(String.self)] = try signal.body[1].get(String.self)
            if seen.count == 2 { break }
        }
        #expect(seen == ["org.ferry.notes": notes.uniqueName.rawValue, "org.ferry.gallery": gallery.uniqueName.rawValue])

        let apps = try await Self.listApps(watcher)
        #expect(apps.keys.sorted() == ["org.ferry.gallery", "org.ferry.notes"])
        let note = try #require(apps["org.ferry.notes"])
        #expect(try note.value(forKey: "unique-name", as: String.self) == notes.uniqueName.rawValue)
        #expect(try note.value(forKey: "pid", as: UInt32.self) == UInt32(getpid()))
        #expect(try note.value(forKey: "uid", as: UInt32.self) == getuid())
        #expect(try note.value(forKey: "client-path", as: ObjectPath.self) == "/org/ferry/Client/notes")
        #expect(try note.value(forKey: "activity-types", as: [String].self) == ["org.ferry.notes.open-note"])
        #expect(try note.value(forKey: "supports-multiple-scenes", as: Bool.self))
        #expect(try note.value(forKey: "document-types", as: [String].self).contains("org.ferry.notes.note"))
        let photo = try #require(apps["org.ferry.gallery"])
        #expect(try photo.value(forKey: "unique-name", as: String.self) == gallery.uniqueName.rawValue)
        #expect(try photo.value(forKey: "activity-types", as: [String].self) == ["org.ferry.gallery.view-photo"])
        #expect(try photo.value(forKey: "document-types", as: [String].self).contains("public.image"))

        let closedAt = ContinuousClock.now
        await gallery.close()
        for try await signal in unregistered {
            #expect(try signal.body[0].get(String.self) == "org.ferry.gallery")
            break
        }
        #expect(try await Self.listApps(watcher).keys.sorted() == ["org.ferry.notes"])
        #expect(ContinuousClock.now - closedAt < .seconds(1))

        // The same connection may register its app again; UnregisterApp then removes it.
        try await FerrydFixture.register(notes, "org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"))
        _ = try await FerrydFixture.call(notes, "UnregisterApp")
        #expect(try await Self.listApps(watcher).isEmpty)
        #expect(daemon.standardError.contains("ferryd: registered org.ferry.notes pid=\(getpid()) sender=\(notes.uniqueName.rawValue)\n"),
                "\(daemon.standardError)")
        await notes.close()
        await watcher.close()
    }

    @Test("TypeDeclarations lists the registered apps' declared types (not system types), and keeps them after the app leaves")
    func typeDeclarations() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let watcher = try await fixture.connect()
        func declarations() async throws -> [String: VariantDictionary] {
            let reply = try await FerrydFixture.call(watcher, "TypeDeclarations")
            let list = try reply[0].get([VariantDictionary].self)
            return Dictionary(uniqueKeysWithValues: try list.map { (try $0.value(forKey: "identifier", as: String.self), $0) })
        }
        #expect(try await declarations().isEmpty)

        let notes = try await fixture.connect(), gallery = try await fixture.connect()
        try await FerrydFixture.register(notes, "org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"))
        try await FerrydFixture.register(gallery, "org.ferry.gallery", manifest: try FerrydFixture.manifest("Gallery"))
        let listed = try await declarations()
        // Gallery imports org.webmproject.webp, a system type: apps cannot change those, so it is not listed.
        #expect(listed.keys.sorted() == ["org.ferry.notes.note"])
        let note = try #require(listed["org.ferry.notes.note"])
        #expect(try note.value(forKey: "exported", as: Bool.self))
        #expect(try note.value(forKey: "conformsTo", as: [String].self) == ["public.plain-text"])
        #expect(try note.value(forKey: "filenameExtensions", as: [String].self) == ["ferrynote"])
        #expect(try note.value(forKey: "mimeTypes", as: [String].self) == ["application/x-ferry-note"])
        #expect(try note.value(forKey: "description", as: String.self) == "Ferry Note")

        // The broker's database keeps them (its conformance checks too) after the app is gone.
        await notes.close()
        #expect(try await eventually { try await Self.listApps(watcher)["org.ferry.notes"] == nil })
        #expect(try await declarations().keys.sorted() == ["org.ferry.notes.note"])
        await gallery.close()
        await watcher.close()
    }
}

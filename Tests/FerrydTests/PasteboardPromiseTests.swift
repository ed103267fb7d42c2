import DBus
import FerryTestSupport
import Foundation
import Testing

/// Promised representations: a test-side app serves them through org.ferry.Client1; the bytes go
/// from it straight to the reader.
@Suite("ferryd: promised representations and the paste policy")
struct PasteboardPromiseTests {
    typealias F = FerrydFixture

    /// An app connection exporting org.ferry.Client1 at /org/ferry/Client that serves `contents`
    /// by type, and counts the calls it got.
    static func app(_ fixture: FerrydFixture, _ appID: String, manifest: String,
                    serving contents: [String: [UInt8]]) async throws -> Connection {
        let connection = try await fixture.connect()
        let client = Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(1) })
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                   out: ["size": "t"]) { call in
                let (_, type, fd) = try call.arguments(String.self, String.self, FileDescriptor.self)
                if type == "public.tiff" {
                    // A source that fails half-way: some bytes, then an error reply.
                    try fd.write(all: [UInt8](repeating: 1, count: 1000))
                    fd.close()
                    throw DBusError(ErrorName("org.ferry.Error.Unavailable"), "the disk went away")
                }
                guard let bytes = contents[type] else { throw DBusError(ErrorName("org.ferry.Error.NotFound"), "no \(type)") }
                try fd.write(all: bytes)
                fd.close()
                return [.uint64(UInt64(bytes.count))]
            }
        }
        try connection.export(client, at: "/org/ferry/Client")
        try await F.register(connection, appID, manifest: try F.manifest(manifest))
        return connection
    }

    @Test("a promised read streams from the app through a pipe (a small quick one comes inline); FinishTransfer; Fulfill; the app vanishes → Unavailable")
    func promisedRead() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let served = F.pattern(300_000, seed: 11)
        let notes = try await Self.app(fixture, "org.ferry.notes", manifest: "Notes", serving: [
            "public.utf8-plain-text": Array("write to ada@example.org".utf8), "public.png": served,
        ])
        let reader = try await fixture.connect()
        let (_, ids) = try await F.setItems(notes, [
            F.item([F.promised("public.utf8-plain-text", estimatedSize: 24), F.representation("public.html", "<p>held</p>")]),
            F.item([F.promised("public.png"), F.promised("public.rtf"), F.promised("public.jpeg")]),
            F.item([F.promised("public.tiff", estimatedSize: 5000)]),
        ])
        let items = try await F.items(reader)
        let first = try F.representations(items[0])
        #expect(try first[0].value(forKey: "promised", as: Bool.self))
        #expect(try first[1].value(forKey: "promised", as: Bool.self) == false)

        // Estimated below 16 KiB and written at once: the broker reads it and answers inline.
        let inline = try await F.read(reader, 0, "public.text")
        #expect(inline.deliveredType == "public.utf8-plain-text" && inline.size == 24 && inline.transfer.isEmpty)
        #expect(inline.isInline)
        #expect(try await inline.bytes() == Array("write to ada@example.org".utf8))
        let fd: VariantDictionary = ["fd": .boolean(true)]
        let text = try await F.read(reader, 0, "public.text", fd)
        #expect(text.deliveredType == "public.utf8-plain-text" && text.size == 24 && !text.transfer.isEmpty)
        #expect(try await text.bytes() == Array("write to ada@example.org".utf8))
        #expect(try await F.pasteboard(reader, "FinishTransfer", [.string(text.transfer)]) == [.uint64(24)])
        let foreign = await F.failure { _ = try await F.pasteboard(notes, "FinishTransfer", [.string(text.transfer)]) }
        #expect(foreign?.name == "org.ferry.Error.NotFound", "only the reader may finish its transfer")

        let png = try await F.read(reader, 1, "public.image")
        #expect(png.size == -1, "the source did not estimate it")
        #expect(try await png.bytes() == served)
        #expect(try await F.pasteboard(reader, "FinishTransfer", [.string(png.transfer)]) == [.uint64(300_000)])

        let detected = try await F.pasteboard(reader, "DetectPatterns", [.array(element: .string, elements: ["emailAddress", "number"])])
        #expect(try detected[0].get([[String]].self) == [["emailAddress"], [], []], "the promised text is fetched, not exposed")

        let failedAtOnce = await F.failure { _ = try await F.read(reader, 2, "public.image") }
        #expect(failedAtOnce?.name == "org.ferry.Error.Unavailable", "a small promise's failure fails the read itself")
        let failing = try await F.read(reader, 2, "public.image", fd)
        #expect(try await failing.bytes().count == 1000)
        let broken = await F.failure { _ = try await F.pasteboard(reader, "FinishTransfer", [.string(failing.transfer)]) }
        #expect(broken?.name == "org.ferry.Error.Unavailable", "the reader learns the source failed")

        // Only the owner may fulfil; afterwards the broker holds the bytes.
        let stolen = await F.failure {
            _ = try await F.pasteboard(reader, "Fulfill", [.string(ids[1]), .string("public.rtf"), .variant(.bytes([1]))])
        }
        #expect(stolen?.name == "org.ferry.Error.PermissionDenied")
        _ = try await F.pasteboard(notes, "Fulfill", [.string(ids[1]), .string("public.rtf"), .variant(.bytes(Array("{\\rtf1}".utf8)))])
        let jpeg = F.pattern(100_000, seed: 8)
        _ = try await F.pasteboard(notes, "Fulfill", [.string(ids[1]), .string("public.jpeg"), .variant(.unixFD(try F.file(jpeg)))])
        let handed = try F.representations(try await F.items(reader)[1])
        #expect(try handed.map { try $0.value(forKey: "promised", as: Bool.self) } == [true, false, false])
        #expect(try handed[2].value(forKey: "estimatedSize", as: Int64.self) == 100_000)

        await notes.close()
        // The dead promise is gone (the item keeps what was handed over).
        #expect(await eventually {
            await F.failure { _ = try await F.read(reader, 1, "public.png") }?.name == "org.ferry.Error.NotFound"
        })
        #expect(try F.types(try await F.items(reader)[1]) == ["public.rtf", "public.jpeg"])
        #expect(try await F.read(reader, 1, "public.rtf").bytes() == Array("{\\rtf1}".utf8), "fulfilled bytes stay")
        #expect(try await F.read(reader, 1, "public.jpeg").bytes() == jpeg)
        #expect(try await F.read(reader, 0, "public.html").bytes() == Array("<p>held</p>".utf8), "held bytes stay")
        let noApp = await F.failure { try await F.setItems(reader, [F.item([F.promised("public.png")])]) }
        #expect(noApp?.name == "org.ferry.Error.PermissionDenied", "only registered apps may promise")
        #expect(daemon.isRunning)
        await reader.close()
    }

    @Test("UnregisterApp drops the app's promises while its connection stays")
    func unregisterDropsPromises() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let notes = try await Self.app(fixture, "org.ferry.notes", manifest: "Notes", serving: ["public.png": [1, 2, 3]])
        let reader = try await fixture.connect()
        try await F.setItems(notes, [F.item([F.promised("public.png"), F.representation("public.utf8-plain-text", "kept")])])
        #expect(try await F.read(reader, 0, "public.png").bytes() == [1, 2, 3])
        _ = try await F.call(notes, "UnregisterApp")
        let gone = await F.failure { _ = try await F.read(reader, 0, "public.png") }
        #expect(gone?.name == "org.ferry.Error.NotFound")
        #expect(try F.types(try await F.items(reader)[0]) == ["public.utf8-plain-text"])
        #expect(try await F.read(reader, 0, "public.text").bytes() == Array("kept".utf8))
        await notes.close()
        await reader.close()
    }

    @Test("policy: an app needs a user action unless the policy file allows it; every paste is logged")
    func policyAndLog() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let policy = fixture.stateDir.deletingLastPathComponent().appendingPathComponent("policy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: policy) }
        let daemon = try await fixture.start(["--policy", policy.path])
        defer { daemon.stop() }
        let cli = try await fixture.connect()
        let gallery = try await fixture.connect()
        try await F.register(gallery, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        try await F.setItems(cli, [F.item([F.representation("public.utf8-plain-text", "policy")])])

        #expect(try await F.read(cli, 0, "public.text").size == 6, "the CLI may paste")
        let denied = await F.failure { _ = try await F.read(gallery, 0, "public.text") }
        #expect(denied?.name == "org.ferry.Error.PermissionDenied")
        #expect(try await F.read(gallery, 0, "public.text", ["user-action": .boolean(true)]).size == 6)

        try "# test policy\nallow org.ferry.gallery\ndeny unregistered\n".write(to: policy, atomically: true, encoding: .utf8)
        #expect(try await F.read(gallery, 0, "public.text").size == 6, "the policy file allows the app")
        let cliDenied = await F.failure { _ = try await F.read(cli, 0, "public.text") }
        #expect(cliDenied?.name == "org.ferry.Error.PermissionDenied")

        let log = try await F.call(cli, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        #expect(log.count == 3, "three allowed pastes, refusals are not pastes")
        #expect(try log.map { try $0["app-id"].map { try $0.get(String.self) } } == ["org.ferry.gallery", "org.ferry.gallery", nil])
        #expect(try log[2].value(forKey: "unique-name", as: String.self) == cli.uniqueName.rawValue)
        #expect(try log[0].value(forKey: "type", as: String.self) == "public.utf8-plain-text")
        #expect(try log[0].value(forKey: "pasteboard", as: String.self) == "general")
        #expect(try log[0].value(forKey: "item", as: UInt32.self) == 0)
        #expect(try log[0].value(forKey: "pid", as: Int32.self) == getpid())
        let stamp = try log[0].value(forKey: "timestamp", as: Int64.self)
        #expect(abs(Double(stamp) / 1_000_000 - Date().timeIntervalSince1970) < 60)
        #expect(try await F.call(cli, "PasteLog", [.uint32(1)])[0].get([VariantDictionary].self).count == 1)
        await cli.close()
        await gallery.close()
    }
}

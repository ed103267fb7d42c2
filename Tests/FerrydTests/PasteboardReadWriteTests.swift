import DBus
import FerryTestSupport
import Foundation
import Testing

/// Writing items and reading them back through the real daemon: inline bytes, fds, byte ranges,
/// supertypes, several items, and the inline/fd crossover.
@Suite("ferryd: pasteboard write and read (org.ferry.Pasteboard1)")
struct PasteboardReadWriteTests {
    typealias F = FerrydFixture

    @Test("two items: metadata, a supertype read says what it delivered, small bytes inline, 40 KiB as a sealed memfd")
    func writeAndReadInline() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let png = F.pattern(40_000)
        let (count, ids) = try await F.setItems(client, [
            F.item([F.representation("public.utf8-plain-text", "hello ferry"), F.representation("public.html", "<b>hello</b>")],
                   ["suggestedName": .string("greeting")]),
            F.item([F.representation("public.png", png), F.representation("public.jpeg", [0xFF, 0xD8, 0xFF])]),
        ])
        #expect(count == 1)
        #expect(ids.count == 2 && Set(ids).count == 2)

        let items = try await F.items(client)
        #expect(try items.map { try $0.value(forKey: "id", as: String.self) } == ids)
        #expect(try F.types(items[0]) == ["public.utf8-plain-text", "public.html"])
        #expect(try F.types(items[1]) == ["public.png", "public.jpeg"])
        #expect(try items[0].value(forKey: "suggestedName", as: String.self) == "greeting")
        #expect(try items[0].value(forKey: "localOnly", as: Bool.self) == false)
        let pngInfo = try F.representations(items[1])[0]
        #expect(try pngInfo.value(forKey: "estimatedSize", as: Int64.self) == 40_000)
        #expect(try pngInfo.value(forKey: "promised", as: Bool.self) == false)
        #expect(items[0]["sourceAppID"] == nil, "the CLI is no app")

        let text = try await F.read(client, 0, "public.plain-text")
        #expect(text.deliveredType == "public.utf8-plain-text")
        #expect(text.isInline)
        #expect(try await text.bytes() == Array("hello ferry".utf8))
        #expect(text.size == 11 && text.transfer.isEmpty)

        let image = try await F.read(client, 1, "public.image")
        #expect(image.deliveredType == "public.png", "the highest-fidelity conforming representation")
        #expect(!image.isInline, "40 KiB is above the 16 KiB crossover")
        #expect(image.descriptor?.seals != nil, "held bytes travel as a sealed memfd")
        #expect(try await image.bytes() == png)
        #expect(image.size == 40_000)

        let jpeg = try await F.read(client, 1, "public.jpeg")
        #expect(jpeg.deliveredType == "public.jpeg")
        #expect(try await jpeg.bytes() == [0xFF, 0xD8, 0xFF])
        let asFD = try await F.read(client, 0, "public.html", ["fd": .boolean(true)])
        #expect(!asFD.isInline)
        #expect(try await asFD.bytes() == Array("<b>hello</b>".utf8))

        let none = await F.failure { _ = try await F.read(client, 0, "public.image") }
        #expect(none?.name == "org.ferry.Error.NotFound")
        #expect(none?.message.contains("public.utf8-plain-text, public.html") == true, "names the types the item has")
        let missing = await F.failure { _ = try await F.read(client, 2, "public.data") }
        #expect(missing?.name == "org.ferry.Error.NotFound")
        let changed = await F.failure { _ = try await F.read(client, 0, "public.text", ["change-count": .uint64(0)]) }
        #expect(changed?.name == "org.ferry.Error.NotFound")
        #expect(changed?.message.contains("the pasteboard changed") == true)
        #expect(try await F.read(client, 0, "public.text", ["change-count": .uint64(1)]).size == 11)
        await client.close()
    }

    @Test("fds: a 1 MiB file, byte ranges of one shared fd, a pipe of 20 KiB; blobs come back as files")
    func descriptorsAndRanges() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let whole = F.pattern(3 << 20, seed: 9)
        let shared = try F.file(whole)
        let (pipeRead, pipeWrite) = try FileDescriptor.pipe(bufferSize: 1 << 20)
        let piped = F.pattern(20_000, seed: 77)
        try pipeWrite.write(all: piped)
        pipeWrite.close()
        let mebibyte = try F.file(F.pattern(1 << 20, seed: 1))

        try await F.setItems(client, [
            F.item([
                F.representation("public.png", fd: shared, offset: 0, length: 1 << 20),
                F.representation("public.jpeg", fd: shared, offset: 1 << 20, length: 20_000),
                F.representation("public.tiff", fd: shared, offset: 2 << 20),
                F.representation("public.utf8-plain-text", fd: pipeRead),
            ]),
            F.item([F.representation("com.adobe.pdf", fd: mebibyte)]),
        ])
        let sizes = try F.representations(try await F.items(client)[0]).map { try $0.value(forKey: "estimatedSize", as: Int64.self) }
        #expect(sizes == [1 << 20, 20_000, 1 << 20, 20_000])

        let png = try await F.read(client, 0, "public.png")
        #expect(try await png.bytes() == Array(whole[0..<(1 << 20)]))
        #expect(png.descriptor?.seals == nil, "a blob is handed out as its read-only file")
        #expect(try await F.read(client, 0, "public.jpeg").bytes() == Array(whole[(1 << 20)..<((1 << 20) + 20_000)]))
        #expect(try await F.read(client, 0, "public.tiff").bytes() == Array(whole[(2 << 20)...]))
        #expect(try await F.read(client, 0, "public.text").bytes() == piped)
        let pdf = try await F.read(client, 1, "public.data")
        #expect(pdf.deliveredType == "com.adobe.pdf" && pdf.size == 1 << 20)
        #expect(try await pdf.bytes() == F.pattern(1 << 20, seed: 1))
        await client.close()
    }

    @Test("DetectPatterns looks at each item's text without a paste: nothing is logged")
    func detectPatterns() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        try await F.setItems(client, [
            F.item([F.representation("public.html", "<a href=x>link</a>"), F.representation("public.utf8-plain-text", "https://swift.org/about")]),
            F.item([F.representation("public.utf8-plain-text", "42")]),
            F.item([F.representation("public.png", [0x89, 0x50])]),
            F.item([F.representation("public.url", "mailto:ada@example.org")]),
        ])
        let patterns: [DBusValue] = ["probableWebURL", "number", "emailAddress"]
        let detected = try await F.pasteboard(client, "DetectPatterns", [.array(element: .string, elements: patterns)])
        #expect(try detected[0].get([[String]].self) == [["probableWebURL"], ["number"], [], ["emailAddress"]])
        #expect(try await F.call(client, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self).isEmpty)
        await client.close()
    }

    @Test("ChangeCount, PropertiesChanged and Changed on write and clear")
    func changeSignals() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect(), watcher = try await fixture.connect()
        let changed = try await F.changes(watcher)
        let properties = try await watcher.subscribe(to: MatchRule(
            sender: F.broker, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: F.general))

        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "one")])])
        #expect(try await F.next(changed)?.body == [.uint64(1)])
        let update = try #require(try await F.next(properties))
        #expect(try update.body[0].get(String.self) == "org.ferry.Pasteboard1")
        #expect(try update.body[1].get(VariantDictionary.self)["ChangeCount"] == .uint64(1))

        let cleared = try await F.pasteboard(client, "Clear")
        #expect(cleared == [.uint64(2)])
        #expect(try await F.next(changed)?.body == [.uint64(2)])
        #expect(try await F.items(client).isEmpty)
        let property = try await client.call(destination: F.broker, path: F.general, interface: "org.freedesktop.DBus.Properties",
                                             member: "GetAll", body: ["org.ferry.Pasteboard1"], timeout: .seconds(10))
        let all = try property[0].get(VariantDictionary.self)
        #expect(all["ChangeCount"] == .uint64(2) && all["Name"] == .string("general") && all["Version"] == .uint32(5))
        await client.close()
        await watcher.close()
    }

    @Test("a 64 MiB fd write that stalls half-way does not hold up other calls")
    func bigWriteDoesNotBlock() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let writer = try await fixture.connect(), other = try await fixture.connect()
        let (pipeRead, pipeWrite) = try FileDescriptor.pipe(bufferSize: 1 << 20)
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        let resume = DispatchSemaphore(value: 0)
        // Writes 32 MiB, waits until the other calls were answered, then writes 32 MiB more.
        let feeder = Thread {
            for index in 0..<64 {
                if index == 32 { _ = resume.wait(timeout: .now() + 20) }
                try? pipeWrite.write(all: chunk)
            }
            pipeWrite.close()
        }
        feeder.start()
        async let write = F.setItems(writer, [F.item([F.representation("public.data", fd: pipeRead)])], timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        // While the copy waits for the second half, other calls are served (if they were not, they
        // would time out here: the feeder only continues afterwards).
        for _ in 0..<5 {
            #expect(try await other.call(destination: F.broker, path: F.general, interface: F.pasteboardInterface,
                                         member: "Items", timeout: .seconds(5))[0] == .array(element: "a{sv}", elements: []))
            _ = try await other.call(destination: F.broker, path: F.path, interface: F.interface, member: "ListPasteboards",
                                     timeout: .seconds(5))
        }
        resume.signal()
        let (count, _) = try await write
        #expect(count == 1)
        let read = try await F.read(other, 0, "public.data")
        #expect(read.size == 64 << 20)
        await writer.close()
        await other.close()
    }
}

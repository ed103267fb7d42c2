import Foundation
import FerryModel
import FerryTestSupport
import Synchronization
import Testing

@Suite struct ItemProviderTests {
    let png = Data([0x89, 0x50, 0x4E, 0x47])
    let jpeg = Data([0xFF, 0xD8, 0xFF])
    var payloads: URL { TestPaths.fixtures.appendingPathComponent("Payloads") }

    @Test func representationsKeepRegistrationOrderAndTheFirstDuplicate() {
        var item = ItemProvider()
        let first = item.registerDataRepresentation(for: .png, data: png)
        let second = item.registerDataRepresentation(for: .jpeg, data: jpeg)
        let duplicate = item.registerDataRepresentation(for: .png, data: Data([1, 2, 3]))
        #expect(first && second)
        #expect(!duplicate, "a duplicate type is ignored")
        #expect(item.registeredContentTypes == [.png, .jpeg])
        #expect(item.representations[0].estimatedSize == 4)
    }

    @Test func loadDataPicksTheFirstConformingRepresentation() async throws {
        // Needs the real type database (public.png and public.jpeg conform to public.image).
        var item = ItemProvider()
        item.registerDataRepresentation(for: .utf8PlainText, data: Data("caption".utf8))
        item.registerDataRepresentation(for: .png, data: png)
        item.registerDataRepresentation(for: .jpeg, data: jpeg)
        let loaded = try await item.loadData(for: .image)
        #expect(loaded.contentType == .png)
        #expect(loaded.data == png)
        #expect(item.registeredContentTypes(conformingTo: .image) == [.png, .jpeg])
        #expect(item.hasRepresentationConforming(to: .image))
        #expect(!item.hasRepresentationConforming(to: .pdf))
        let exact = try await item.loadData(for: .jpeg)
        #expect(exact.contentType == .jpeg && exact.data == jpeg)
    }

    @Test func missingTypeIsNotFound() async throws {
        var item = ItemProvider()
        item.registerDataRepresentation(for: .png, data: png)
        let error = await #expect(throws: FerryModelError.self) { try await item.loadData(for: .pdf) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("public.png") == true)
    }

    @Test func ownAppRepresentationsAreHiddenFromOtherApps() {
        var item = ItemProvider()
        item.registerDataRepresentation(for: .rtf, visibility: .ownApp, data: Data("{\\rtf1 n}".utf8))
        item.registerDataRepresentation(for: .utf8PlainText, data: Data("n".utf8))
        #expect(item.representations(visibleTo: true).map(\.contentType.identifier) == ["public.rtf", "public.utf8-plain-text"])
        #expect(item.representations(visibleTo: false).map(\.contentType) == [.utf8PlainText])
        #expect(item.visible(toOwnApp: false).registeredContentTypes == [.utf8PlainText])
        #expect(item.metadata(visibleTo: false).contentTypes == [.utf8PlainText])
    }

    @Test func loaderReportsProgress() async throws {
        var item = ItemProvider()
        item.registerDataRepresentation(for: .png, estimatedSize: 300) { progress in
            progress.totalUnitCount = 300
            for step in 1...3 { progress.completedUnitCount = Int64(step * 100) }
            return Data(count: 300)
        }
        let seen = Mutex<[Int64]>([])
        let progress = ItemProvider.Progress { completed, _ in seen.withLock { $0.append(completed) } }
        let loaded = try await item.loadData(for: .png, progress: progress)
        #expect(loaded.data.count == 300)
        #expect(seen.withLock { $0 }.starts(with: [0, 100, 200, 300]))
        #expect(progress.fractionCompleted == 1)
        #expect(item.representations[0].estimatedSize == 300)
    }

    @Test func cancellingTheTaskCancelsTheLoad() async throws {
        var item = ItemProvider()
        item.registerDataRepresentation(for: .png) { progress in
            while !progress.isCancelled { try await Task.sleep(for: .milliseconds(5)) }
            return Data()
        }
        let loading = Task { try await item.loadData(for: .png) }
        try await Task.sleep(for: .milliseconds(30))
        loading.cancel()
        let error = await #expect(throws: FerryModelError.self) { try await loading.value }
        #expect(error?.code == .cancelled)
    }

    @Test func cancellingTheProgressCancelsTheLoad() async throws {
        var item = ItemProvider()
        let progress = ItemProvider.Progress()
        item.registerDataRepresentation(for: .png) { p in
            p.cancel()   // e.g. the user pressed Stop while the loader ran
            return Data([1])
        }
        let error = await #expect(throws: FerryModelError.self) { try await item.loadData(for: .png, progress: progress) }
        #expect(error?.code == .cancelled)
        #expect(progress.isCancelled)
    }

    @Test func loaderErrorsPropagate() async throws {
        struct DiskOnFire: Error {}
        var item = ItemProvider()
        item.registerDataRepresentation(for: .png) { _ in throw DiskOnFire() }
        item.registerDataRepresentation(for: .pdf) { _ in throw FerryModelError(.permissionDenied, "no") }
        let error = await #expect(throws: FerryModelError.self) { try await item.loadData(for: .png) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("DiskOnFire") == true)
        let passed = await #expect(throws: FerryModelError.self) { try await item.loadData(for: .pdf) }
        #expect(passed?.code == .permissionDenied)
    }

    @Test func dataAskedForAsAFileIsATemporaryFileDeletedAfterTheBody() async throws {
        // The ".txt" extension needs the real type database.
        var item = ItemProvider()
        item.suggestedName = "Groceries"
        item.registerDataRepresentation(for: .utf8PlainText, data: Data("milk".utf8))
        let url = try await item.loadFile(for: .plainText) { file async throws -> URL in
            #expect(!file.isInPlace)
            #expect(file.contentType == .utf8PlainText)
            #expect(file.url.lastPathComponent == "Groceries.txt")
            #expect(try String(contentsOf: file.url, encoding: .utf8) == "milk")
            return file.url
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
    }

    @Test func temporaryFileIsDeletedWhenTheBodyThrows() async throws {
        struct Stop: Error {}
        var item = ItemProvider()
        item.registerDataRepresentation(for: .png, data: png)
        let seen = Mutex<URL?>(nil)
        await #expect(throws: Stop.self) {
            try await item.loadFile(for: .png) { file in
                seen.withLock { $0 = file.url }
                throw Stop()
            }
        }
        let url = try #require(seen.withLock { $0 })
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func fileAskedForAsDataReadsTheFile() async throws {
        let item = try ItemProvider(contentsOf: payloads.appendingPathComponent("sample.png"))
        #expect(item.registeredContentTypes == [.png])
        #expect(item.suggestedName == "sample")
        let loaded = try await item.loadData(for: .png)
        #expect(loaded.data == (try Data(contentsOf: payloads.appendingPathComponent("sample.png"))))
        #expect(item.representations[0].estimatedSize == Int64(loaded.data.count))
    }

    @Test func fileAskedForAsAFileIsACopyUnlessOpenedInPlace() async throws {
        let source = payloads.appendingPathComponent("sample.pdf")
        let copied = try ItemProvider(contentsOf: source)
        let copyURL = try await copied.loadFile(for: .pdf) { file in
            #expect(file.url != source && !file.isInPlace)
            #expect(FileManager.default.contentsEqual(atPath: file.url.path, andPath: source.path))
            return file.url
        }
        #expect(!FileManager.default.fileExists(atPath: copyURL.path))

        let inPlace = try ItemProvider(contentsOf: source, openInPlace: true)
        #expect(inPlace.registeredContentTypesForOpenInPlace == [.pdf])
        try await inPlace.loadFile(for: .pdf) { file in
            #expect(file.url == source && file.isInPlace)
        }
        #expect(FileManager.default.fileExists(atPath: source.path), "an in-place file is never deleted")
    }

    @Test func folderLoadsAsAFileOrAsAZipArchive() async throws {
        let tree = payloads.appendingPathComponent("tree")
        let item = try ItemProvider(contentsOf: tree)
        #expect(item.registeredContentTypes == [.folder])
        #expect(item.canLoad(as: .folder))
        try await item.loadFile(for: .folder) { file in
            #expect(FileManager.default.fileExists(atPath: file.url.appendingPathComponent("docs/nested/deep.txt").path))
        }
        let loaded = try await item.loadData(for: .folder)
        #expect(loaded.contentType == .folder)
        let entries = try ZipReader.entries(loaded.data)
        #expect(entries.map(\.name) == ["tree/", "tree/README.txt", "tree/docs/", "tree/docs/nested/",
                                         "tree/docs/nested/deep.txt", "tree/docs/note.txt", "tree/docs/picture.png"])
        for entry in entries where !entry.name.hasSuffix("/") {
            let path = tree.deletingLastPathComponent().appendingPathComponent(entry.name)
            #expect(entry.data == (try Data(contentsOf: path)), "\(entry.name)")
        }
        #expect(try await item.loadData(for: .folder).data == loaded.data, "the same folder gives the same bytes")
    }

    @Test func stringRegistersTextVariantsAndReadsBack() async throws {
        let text = "Grüße 日本 🚢"
        let item = try ItemProvider(object: text)
        #expect(item.registeredContentTypes.map(\.identifier)
                == ["public.utf8-plain-text", "public.utf16-external-plain-text", "public.plain-text"])
        #expect(item.canLoadObject(ofClass: String.self))
        #expect(try await item.loadObject(ofClass: String.self) == text)
        let utf16 = try await item.loadData(for: ContentType("public.utf16-external-plain-text")!)
        #expect(utf16.data.starts(with: [0xFF, 0xFE]))
        #expect(try String.object(itemProviderData: utf16.data, contentType: utf16.contentType) == text)
    }

    @Test func urlsRegisterTheirTypesAndFilesTheirContents() async throws {
        let web = try ItemProvider(object: URL(string: "https://example.org/ferry")!)
        #expect(web.registeredContentTypes == [.url, .utf8PlainText])
        #expect(try await web.loadObject(ofClass: URL.self) == URL(string: "https://example.org/ferry"))

        let file = try ItemProvider(object: payloads.appendingPathComponent("sample.jpg"))
        #expect(file.registeredContentTypes == [.fileURL, .jpeg])
        #expect(try await file.loadData(for: .jpeg).data.starts(with: [0xFF, 0xD8]))
    }

    @Test func htmlHasAPlainTextFallback() async throws {
        let item = try ItemProvider(object: HTMLText(html: "<p>Fish &amp; <b>chips</b></p>"))
        #expect(item.registeredContentTypes == [.html, .utf8PlainText])
        #expect(try await item.loadObject(ofClass: String.self) == "Fish & chips")
    }

    @Test func userActivityTravelsAsARepresentation() async throws {
        var activity = try UserActivity(activityType: "org.ferry.notes.open-note")
        activity.userInfo = ["noteID": "notes/groceries"]
        var item = try ItemProvider(object: activity)
        try item.registerObject("Groceries")
        #expect(item.registeredContentTypes.first == .userActivity)
        #expect(try await item.loadUserActivity() == activity)
        #expect(try await item.loadObject(ofClass: UserActivity.self) == activity)
    }

    @Test func imagesLoadAsImageItems() async throws {
        // Needs the real type database (public.gif conforms to public.image).
        let item = try ItemProvider(contentsOf: payloads.appendingPathComponent("sample.gif"))
        #expect(item.canLoadObject(ofClass: ImageItem.self))
        let image = try await item.loadObject(ofClass: ImageItem.self)
        #expect(image.data.starts(with: Array("GIF89a".utf8)))
    }
}

/// Reads a stored (uncompressed) zip archive through its central directory, checking each CRC.
enum ZipReader {
    struct Entry { var name: String; var data: Data }

    static func entries(_ zip: Data) throws -> [Entry] {
        let bytes = [UInt8](zip)
        func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
        let end = bytes.count - 22
        try #require(end >= 0 && u32(end) == 0x0605_4B50, "end of central directory")
        var p = u32(end + 16)
        var out: [Entry] = []
        for _ in 0..<u16(end + 10) {
            try #require(u32(p) == 0x0201_4B50, "central directory header")
            let crc = UInt32(u32(p + 16)), size = u32(p + 20), nameLength = u16(p + 28), local = u32(p + 42)
            let name = String(decoding: bytes[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self)
            try #require(u32(local) == 0x0403_4B50 && u16(local + 8) == 0, "stored local header")
            let start = local + 30 + u16(local + 26) + u16(local + 28)
            let data = Data(bytes[start..<(start + size)])
            #expect(crc32(data) == crc, "\(name) CRC")
            out.append(Entry(name: name, data: data))
            p += 46 + nameLength + u16(p + 30) + u16(p + 32)
        }
        return out
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Writes past the bus's 16 descriptors per message, and promises that outlive a change.
@Suite("Ferry: large writes and promise lifetime")
struct LargeWriteTests {
    static func dataItems(_ count: Int, size: Int) -> [ItemProvider] {
        (0..<count).map { index in
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .png, data: pngLikeBytes(size, seed: UInt8(index)))
            return provider
        }
    }

    @Test("20 items of 100 KiB (more than 16 descriptors) all arrive; 18 of 2 MiB are TooLarge for an unregistered client")
    func beyondSixteenDescriptors() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            try await writer.general.setItemProviders(Self.dataItems(20, size: 100 * 1024))
            #expect(try await reader.general.numberOfItems == 20)
            for index in [0, 15, 16, 19] {
                #expect(try await reader.general.data(forType: .png, item: index) == pngLikeBytes(100 * 1024, seed: UInt8(index)))
            }
            let error = await #expect(throws: FerryError.self) {
                try await writer.general.setItemProviders(Self.dataItems(18, size: 2 << 20))
            }
            #expect(error?.code == .tooLarge)
            #expect(try await reader.general.numberOfItems == 20)
            await writer.close()
            await reader.close()
        }
    }

    @Test("a registered client writing 18 files of 2 MiB promises the last two and serves them from the files")
    func registeredOverflowIsPromised() async throws {
        try await ClientFixture.with { fixture in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-files-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var providers: [ItemProvider] = []
            for index in 0..<18 {
                let url = folder.appendingPathComponent("image\(index).png")
                try pngLikeBytes(2 << 20, seed: UInt8(index)).write(to: url)
                providers.append(try ItemProvider(contentsOf: url))
            }
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            try await writer.general.setItemProviders(providers)
            let items = try await reader.general.items
            #expect(items.map { !$0.promisedTypes.isEmpty } == Array(repeating: false, count: 16) + [true, true])
            #expect(items[17].metadata.suggestedName == "image17")
            let read = try await reader.general.read(item: 17, type: .image)
            #expect(read.transfer != nil)
            #expect(Data(try await read.bytes()) == pngLikeBytes(2 << 20, seed: 17))
            #expect(try await reader.general.data(forType: .png, item: 3) == pngLikeBytes(2 << 20, seed: 3))
            await writer.close()
            await reader.close()
        }
    }

    @Test("a promised item replaced by another client and restored from history is still served by its writer")
    func promiseSurvivesInHistory() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), other = try await fixture.client()
            let counter = CallCounter()
            try await writer.general.setItemProviders([PromiseTests.lazyText("from history", counter: counter)])
            try await other.general.setString("replacement")
            try await Task.sleep(for: .milliseconds(300))  // the writer sees Changed and reconciles
            try await other.general.restoreHistory(0)
            #expect(try await other.general.string == "from history")
            #expect(counter.value == 1)
            await writer.close()
            await other.close()
        }
    }

    @Test("`ferry copy --lazy` serves on demand, and on SIGTERM hands its data over before it exits")
    func lazyCopyFlushesOnSigterm() async throws {
        try await ClientFixture.with { fixture in
            let reader = try await fixture.client()
            let changes = try await reader.general.changes()
            let copy = try RunningProcess(try BuiltProducts.executable("ferry"),
                                          ["copy", "--lazy", "--text", "lazy words", "--bus", fixture.bus.address],
                                          environment: fixture.bus.environment())
            defer { copy.kill() }
            var iterator = changes.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(try await reader.general.items.first?.promisedTypes.isEmpty == false)
            #expect(try await reader.general.string == "lazy words")
            copy.send(SIGTERM)
            #expect(await copy.waitForExit(timeout: .seconds(15)) == 0, "handed over: exits 0, as documented")
            #expect(try await reader.general.items.first?.promisedTypes.isEmpty == true)
            #expect(try await reader.general.string == "lazy words")
            await reader.close()
        }
    }
}

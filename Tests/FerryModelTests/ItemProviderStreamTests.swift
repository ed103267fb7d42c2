import FerryModel
import Foundation
import Testing

@Suite("ItemProvider: streamed representations")
struct ItemProviderStreamTests {
    /// A writer that writes `bytes` into the descriptor in small pieces and closes it.
    static func writer(_ bytes: [UInt8], claim: UInt64? = nil) -> @Sendable (Int32) async throws -> UInt64 {
        { descriptor in
            defer { close(descriptor) }
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + 1000)
                let n = bytes[offset..<end].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard n > 0 else { throw CocoaError(.fileWriteUnknown) }
                offset += n
            }
            return claim ?? UInt64(bytes.count)
        }
    }

    @Test("loadData collects what the writer streams, larger than a pipe holds")
    func loadData() async throws {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var provider = ItemProvider()
        provider.registerStreamRepresentation(for: .png, writer: Self.writer(bytes))
        let loaded = try await provider.loadData(for: .image)
        #expect(loaded.contentType == .png)
        #expect([UInt8](loaded.data) == bytes)
    }

    @Test("loadFile writes the stream straight into the file")
    func loadFile() async throws {
        let bytes = Array("streamed into a file".utf8)
        var provider = ItemProvider()
        provider.registerStreamRepresentation(for: .utf8PlainText, writer: Self.writer(bytes))
        let read = try await provider.loadFile(for: .plainText) { file in try Data(contentsOf: file.url) }
        #expect([UInt8](read) == bytes)
    }

    @Test("a writer whose count differs from what it wrote is a named error, not short data")
    func miscount() async throws {
        var provider = ItemProvider()
        provider.registerStreamRepresentation(for: .png, writer: Self.writer([1, 2, 3], claim: 4))
        await #expect(throws: FerryModelError.self) { _ = try await provider.loadData(for: .png) }
    }
}

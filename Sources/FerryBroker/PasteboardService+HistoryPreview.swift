#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import BrokerCore
import DBus
import FerryModel

extension PasteboardService {
    /// How many bytes of a text representation a history preview reads.
    static let previewTextLimit = 4 * 1024
    /// How many bytes of an image a history preview reads for its header.
    static let previewHeaderLimit = 64 * 1024
    /// The longest preview, in characters (the CLI cuts it further to the terminal's width).
    static let previewCharacterLimit = 200

    /// What `History` adds to a held item's metadata: `preview` (the first non-blank line of
    /// its best plain-text representation up to any NUL, trimmed, at most 200 characters) or, for an image,
    /// `pixelWidth` and `pixelHeight` from its header. Only held bytes are read: a promised
    /// representation is never fetched, nothing is logged, no bytes leave the broker.
    nonisolated func historyPreview(of item: StoredItem, for caller: PasteboardCaller) -> VariantDictionary {
        let visible = caller.visibleRepresentations(of: item).filter(\.isHeld)
        var entries: VariantDictionary = [:]
        if let text = visible.first(where: { $0.contentType.conforms(to: .plainText) }),
           let bytes = heldPrefix(of: text, of: item, limit: Self.previewTextLimit) {
            let decoded = Self.decodeText(bytes, type: text.contentType)
            // A D-Bus string cannot hold U+0000: text ends there, as C strings do.
            let line = decoded.prefix(while: { $0 != "\0" }).split(whereSeparator: \.isNewline)
                .map { $0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed() }
                .first(where: { !$0.isEmpty }) ?? []
            entries["preview"] = .string(String(line.prefix(Self.previewCharacterLimit)))
        }
        if let image = visible.first(where: { $0.contentType.conforms(to: .image) }),
           let bytes = heldPrefix(of: image, of: item, limit: Self.previewHeaderLimit),
           let dimensions = ImageDimensions(header: bytes) {
            entries["pixelWidth"] = .uint32(UInt32(clamping: dimensions.width))
            entries["pixelHeight"] = .uint32(UInt32(clamping: dimensions.height))
        }
        return entries
    }

    /// The first `limit` bytes of a held representation, or nil when they cannot be had.
    private nonisolated func heldPrefix(of representation: StoredRepresentation, of item: StoredItem,
                                        limit: Int) -> [UInt8]? {
        switch try? source(of: representation, of: item, volatile: nil) {
        case .bytes(let data)?:
            return [UInt8](data.prefix(limit))
        case .file(let raw, _)?:
            let descriptor = FileDescriptor(taking: raw)
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = buffer.withUnsafeMutableBytes { pread(raw, $0.baseAddress, $0.count, 0) }
            withExtendedLifetime(descriptor) {}
            return count >= 0 ? Array(buffer.prefix(count)) : nil
        case .promised?, nil:
            return nil
        }
    }
}

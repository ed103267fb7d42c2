#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a dragged item looks like under the pointer (Apple's `UIDragItem.previewProvider` /
/// `UIDragPreview`): a short title, a small PNG image, or both.
///
/// The preview is the one thing of an item's content a drop target may see before it performs
/// the drop, so it is bounded so that it cannot carry a representation in disguise: the title is
/// one line of at most ``titleLimit`` characters, the image a PNG of at most ``imageLimit``
/// bytes and ``dimensionLimit`` pixels a side whose chunks are pixels only (no text, no
/// private chunks, nothing after its end).
///
/// Wire (docs/wire.md is the general rule): an `a{sv}` with `title` (s) and `image` (ay), each
/// optional; an empty dictionary is no preview.
public struct DragPreview: Sendable, Hashable {
    /// The most characters a title has.
    public static let titleLimit = 200
    /// The most bytes a preview image has (256 KiB).
    public static let imageLimit = 256 * 1024
    /// The most pixels a preview image has on a side.
    public static let dimensionLimit = 1024
    /// The chunks a preview image may have: the critical ones and those that only say how to
    /// show the pixels.
    static let allowedChunks: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "bKGD", "pHYs",
    ]

    /// The title shown with the item, nil for none.
    public let title: String?
    /// The PNG image shown for the item, nil for none.
    public let image: Data?

    /// Makes a preview, checked.
    /// - Parameters:
    ///   - title: one line, at most ``titleLimit`` characters; nil or empty for none.
    ///   - image: PNG bytes, at most ``imageLimit``; nil for none.
    /// - Throws: `FerryModelError` `.invalidArgument` (a title with control characters, an image
    ///   that is not a PNG or carries more than pixels, a preview with neither), `.tooLarge` (a
    ///   longer title, a larger image); the key path is `title` or `image`.
    public init(title: String? = nil, image: Data? = nil) throws(FerryModelError) {
        let title = title.flatMap { $0.isEmpty ? nil : $0 }
        guard title != nil || image != nil else {
            throw FerryModelError(.invalidArgument, "a preview needs a title or an image")
        }
        if let title { try Self.validateTitle(title) }
        if let image { try Self.validateImage(image) }
        self.title = title
        self.image = image
    }

    /// Checks a title: one line of printable characters, at most ``titleLimit``.
    /// - Throws: `FerryModelError` `.invalidArgument` or `.tooLarge` at `title`.
    public static func validateTitle(_ title: String) throws(FerryModelError) {
        guard title.count <= titleLimit else {
            throw FerryModelError(.tooLarge, "a preview's title has at most \(titleLimit) characters (this one \(title.count))",
                                  keyPath: "title")
        }
        // Format characters include the bidirectional controls that make text read other than
        // it is; the zero-width joiner alone is kept (emoji sequences need it).
        guard !title.unicodeScalars.contains(where: { scalar in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            case .format: scalar != "\u{200D}"
            default: false
            }
        }) else {
            throw FerryModelError(.invalidArgument, "a preview's title is one line without control characters", keyPath: "title")
        }
    }

    /// Checks an image: a PNG (signature, IHDR first with 1…``dimensionLimit`` pixels a side,
    /// whole chunks of the allowed kinds only, IEND last) of at most ``imageLimit`` bytes.
    /// - Throws: `FerryModelError` `.tooLarge` or `.invalidArgument` at `image`.
    public static func validateImage(_ image: Data) throws(FerryModelError) {
        func refuse(_ why: String) -> FerryModelError {
            FerryModelError(.invalidArgument, "a preview image must be a PNG: \(why)", keyPath: "image")
        }
        guard image.count <= imageLimit else {
            throw FerryModelError(.tooLarge, "a preview image has at most \(imageLimit / 1024) KiB (this one \(image.count) bytes)",
                                  keyPath: "image")
        }
        let chunks: [PNGChunks.Chunk]
        do {
            chunks = try PNGChunks([UInt8](image)).chunks
        } catch {
            throw refuse(error.description)
        }
        for (index, chunk) in chunks.enumerated() {
            guard allowedChunks.contains(chunk.type) else {
                throw refuse("chunk \"\(chunk.type.printableLine(limit: 8))\" is not allowed (a preview carries pixels only)")
            }
            if index == 0 {
                guard chunk.type == "IHDR", chunk.body.count == 13 else { throw refuse("the first chunk is not IHDR") }
                let width = PNGChunks.bigEndian(chunk.body.prefix(4)), height = PNGChunks.bigEndian(chunk.body.dropFirst(4).prefix(4))
                guard (1...dimensionLimit).contains(width), (1...dimensionLimit).contains(height) else {
                    throw refuse("\(width)×\(height) pixels; a preview has 1 to \(dimensionLimit) a side")
                }
            } else if chunk.type == "IHDR" {
                throw refuse("it has a second IHDR chunk")
            }
        }
    }
}

extension DragPreview: WireCodable {
    /// The preview as `a{sv}`: `title` (s), `image` (ay).
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [:]
        if let title { out["title"] = .string(title) }
        if let image { out["image"] = .bytes(image) }
        return out
    }

    /// Reads and checks a preview.
    /// - Throws: `FerryModelError` as ``init(title:image:)``, naming the key.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        try self.init(title: try wire.string("title"), image: try wire.bytes("image"))
    }
}

extension DragPreview {
    /// The most image bytes one drag's previews have in all (1 MiB): four full-size images.
    public static let dragImageLimit = 1 << 20

    /// Reads a drag's previews in item order (`aa{sv}`, one per item from the first; an empty
    /// dictionary is an item without a preview) and checks that their images stay within
    /// ``dragImageLimit`` together.
    /// - Parameter readers: the dictionaries, each naming its key path (`previews[1]`).
    /// - Throws: `FerryModelError` naming the element (`previews[1].image`), `.tooLarge` for
    ///   more than ``dragImageLimit`` in all.
    public static func list(_ readers: [WireReader]) throws(FerryModelError) -> [DragPreview?] {
        var previews: [DragPreview?] = []
        var imageBytes = 0
        for reader in readers {
            guard reader.contains("title") || reader.contains("image") else {
                previews.append(nil)
                continue
            }
            do {
                let preview = try DragPreview(title: try reader.string("title"), image: try reader.bytes("image"))
                imageBytes += preview.image?.count ?? 0
                previews.append(preview)
            } catch let error as FerryModelError {
                throw error.keyPath?.hasPrefix(reader.path) == true ? error : error.nested(under: reader.path)
            } catch {
                throw FerryModelError(.invalidArgument, "\(error)", keyPath: reader.path)
            }
        }
        guard imageBytes <= dragImageLimit else {
            throw FerryModelError(.tooLarge, "a drag's preview images have at most \(dragImageLimit / 1024) KiB in all "
                                  + "(these \(imageBytes) bytes)", keyPath: readers.first.map { String($0.path.prefix { $0 != "[" }) })
        }
        return previews
    }

    /// A drag's previews as `aa{sv}` elements, one per item (an item without one is empty).
    public static func wireList(_ previews: [DragPreview?]) -> [[String: WireValue]] {
        previews.map { preview in (try? preview?.wireDictionary()) ?? [:] }
    }
}

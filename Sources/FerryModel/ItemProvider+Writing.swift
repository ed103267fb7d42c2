#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value that can put itself into an item provider as one or more representations, highest
/// fidelity first (Apple's `NSItemProviderWriting`).
public protocol ItemProviderWriting: Sendable {
    /// The representations of this value, highest fidelity first.
    /// - Throws: `FerryModelError` when the value cannot be serialized (e.g. an invalid user activity).
    func itemProviderRepresentations(visibility: ItemProvider.Visibility) throws -> [ItemProvider.Representation]
}

extension ItemProvider {
    /// An item provider holding one object's representations (Apple's `init(object:)`).
    /// - Throws: what the object's ``ItemProviderWriting/itemProviderRepresentations(visibility:)`` throws.
    public init(object: some ItemProviderWriting, visibility: Visibility = .all) throws {
        self.init()
        try registerObject(object, visibility: visibility)
    }

    /// Adds an object's representations in its fidelity order; types already registered keep their
    /// first registration.
    /// - Throws: what the object's ``ItemProviderWriting/itemProviderRepresentations(visibility:)`` throws.
    public mutating func registerObject(_ object: some ItemProviderWriting, visibility: Visibility = .all) throws {
        for representation in try object.itemProviderRepresentations(visibility: visibility) {
            register(representation)
        }
    }
}

extension String: ItemProviderWriting {
    /// `public.utf8-plain-text` (UTF-8), `public.utf16-external-plain-text` (UTF-16LE with a byte
    /// order mark), `public.plain-text` (UTF-8).
    public func itemProviderRepresentations(visibility: ItemProvider.Visibility) throws -> [ItemProvider.Representation] {
        var utf16 = Data([0xFF, 0xFE])
        for unit in self.utf16 { utf16.append(UInt8(unit & 0xFF)); utf16.append(UInt8(unit >> 8)) }
        var out = [ItemProvider.Representation(contentType: .utf8PlainText, visibility: visibility, source: .data(Data(utf8)))]
        if let external = ContentType("public.utf16-external-plain-text") {
            out.append(.init(contentType: external, visibility: visibility, source: .data(utf16)))
        }
        out.append(.init(contentType: .plainText, visibility: visibility, source: .data(Data(utf8))))
        return out
    }
}

extension URL: ItemProviderWriting {
    /// A web URL: `public.url` then `public.utf8-plain-text`, both the absolute string in UTF-8.
    /// A file URL: `public.file-url` (the absolute string), then the file itself as a file
    /// representation of its type (from its extension; a folder is `public.folder`).
    public func itemProviderRepresentations(visibility: ItemProvider.Visibility) throws -> [ItemProvider.Representation] {
        let text = Data(absoluteString.utf8)
        guard isFileURL else {
            return [
                .init(contentType: .url, visibility: visibility, source: .data(text)),
                .init(contentType: .utf8PlainText, visibility: visibility, source: .data(text)),
            ]
        }
        var out = [ItemProvider.Representation(contentType: .fileURL, visibility: visibility, source: .data(text))]
        var isDirectory = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            let type = isDirectory ? ContentType.folder : ItemProvider.contentType(forFileAt: self)
            out.append(.init(contentType: type, visibility: visibility, source: .file(self, openInPlace: false)))
        }
        return out
    }
}

extension UserActivity: ItemProviderWriting {
    /// One representation, ``ContentType/userActivity``: the ``archivedData()`` bytes.
    /// - Throws: what ``validate()`` throws.
    public func itemProviderRepresentations(visibility: ItemProvider.Visibility) throws -> [ItemProvider.Representation] {
        [.init(contentType: .userActivity, visibility: visibility, source: .data(try archivedData()))]
    }
}

/// Rich text as HTML with a plain-text fallback (Apple registers attributed strings this way).
public struct HTMLText: ItemProviderWriting, Hashable {
    /// The HTML source.
    public var html: String
    /// The plain-text fallback.
    public var plainText: String

    /// Makes HTML text; without `plainText`, the fallback is the HTML with its tags removed and the
    /// five predefined entities decoded.
    public init(html: String, plainText: String? = nil) {
        self.html = html
        self.plainText = plainText ?? HTMLText.strippingTags(html)
    }

    /// `public.html` (UTF-8), then `public.utf8-plain-text`.
    public func itemProviderRepresentations(visibility: ItemProvider.Visibility) throws -> [ItemProvider.Representation] {
        [
            .init(contentType: .html, visibility: visibility, source: .data(Data(html.utf8))),
            .init(contentType: .utf8PlainText, visibility: visibility, source: .data(Data(plainText.utf8))),
        ]
    }

    static func strippingTags(_ html: String) -> String {
        var out = ""
        var inTag = false
        for character in html {
            if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { out.append(character) }
        }
        let entities = [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&apos;", "'"), ("&amp;", "&")]
        for (entity, replacement) in entities { out = out.replacing(entity, with: replacement) }
        let trimmed = out.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
        return String(trimmed)
    }
}

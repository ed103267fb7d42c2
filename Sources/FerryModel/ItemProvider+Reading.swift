#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value that can be made from an item provider's representation (Apple's `NSItemProviderReading`).
/// A paste configuration can be built from these types (``PasteConfiguration/init(forAccepting:)``).
public protocol ItemProviderReading: Sendable {
    /// The types this value can be read from, most preferred first.
    static var readableContentTypes: [ContentType] { get }
    /// Makes the value from a representation's bytes.
    /// - Parameters:
    ///   - data: the bytes.
    ///   - contentType: the registered type they came from (conforms to one of ``readableContentTypes``).
    /// - Throws: `FerryModelError` `.invalidArgument` when the bytes are not a valid value.
    static func object(itemProviderData data: Data, contentType: ContentType) throws -> Self
}

extension ItemProvider {
    /// Whether some representation conforms to one of `objectType`'s readable types.
    public func canLoadObject<T: ItemProviderReading>(ofClass objectType: T.Type) -> Bool {
        T.readableContentTypes.contains { hasRepresentationConforming(to: $0) }
    }

    /// Loads a value from the first representation, in fidelity order, that conforms to one of
    /// `objectType`'s readable types.
    /// - Throws: `FerryModelError` `.notFound` when none conforms, what ``loadData(for:progress:)``
    ///   throws, and `.invalidArgument` when the bytes do not make a value.
    public func loadObject<T: ItemProviderReading>(ofClass objectType: T.Type, progress: Progress = Progress()) async throws -> T {
        guard let representation = representations.first(where: { r in
            T.readableContentTypes.contains { r.contentType.conforms(to: $0) }
        }) else {
            throw FerryModelError(.notFound, "no representation can be read as \(T.self)")
        }
        let loaded = try await loadData(for: representation.contentType, progress: progress)
        return try T.object(itemProviderData: loaded.data, contentType: loaded.contentType)
    }
}

extension String: ItemProviderReading {
    /// `public.plain-text` (and so every text encoding type conforming to it).
    public static var readableContentTypes: [ContentType] { [.plainText] }

    /// Decodes UTF-16 for `public.utf16-external-plain-text` (byte order mark honoured, big-endian
    /// without one) and `public.utf16-plain-text` (little-endian), UTF-8 otherwise (a UTF-8 byte order
    /// mark is dropped).
    public static func object(itemProviderData data: Data, contentType: ContentType) throws -> String {
        let bytes = [UInt8](data)
        switch contentType.identifier {
        case "public.utf16-external-plain-text":
            if bytes.starts(with: [0xFF, 0xFE]) { return try utf16(bytes.dropFirst(2), littleEndian: true) }
            if bytes.starts(with: [0xFE, 0xFF]) { return try utf16(bytes.dropFirst(2), littleEndian: false) }
            return try utf16(bytes[...], littleEndian: false)
        case "public.utf16-plain-text":
            return try utf16(bytes[...], littleEndian: true)
        default:
            let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
            guard let text = String(validating: body, as: UTF8.self) else {
                throw FerryModelError.invalid("\(contentType.identifier) bytes are not valid UTF-8")
            }
            return text
        }
    }

    private static func utf16(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) throws -> String {
        guard bytes.count % 2 == 0 else { throw FerryModelError.invalid("UTF-16 text has an odd number of bytes") }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let a = UInt16(bytes[index]), b = UInt16(bytes[index + 1])
            units.append(littleEndian ? a | b << 8 : a << 8 | b)
            index += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw FerryModelError.invalid("bytes are not valid UTF-16")
        }
        return text
    }
}

extension URL: ItemProviderReading {
    /// `public.url` (so `public.file-url` too).
    public static var readableContentTypes: [ContentType] { [.url] }

    /// Parses the UTF-8 absolute URL string.
    public static func object(itemProviderData data: Data, contentType: ContentType) throws -> URL {
        guard let text = String(validating: data, as: UTF8.self),
              let url = URL(string: String(text.filter { !$0.isNewline })), url.scheme != nil
        else {
            throw FerryModelError.invalid("\(contentType.identifier) bytes are not an absolute URL")
        }
        return url
    }
}

extension UserActivity: ItemProviderReading {
    /// ``ContentType/userActivity``.
    public static var readableContentTypes: [ContentType] { [.userActivity] }

    /// Reads ``UserActivity/archivedData()`` bytes.
    public static func object(itemProviderData data: Data, contentType: ContentType) throws -> UserActivity {
        try UserActivity(archivedData: data)
    }
}

/// Image bytes in their own format, read from any representation conforming to `public.image`.
/// Ferry does not decode images; this carries the encoded bytes and their type.
public struct ImageItem: ItemProviderReading, Hashable {
    /// The encoded image (PNG, JPEG, …).
    public var data: Data
    /// Its type.
    public var contentType: ContentType

    /// Wraps encoded image bytes.
    public init(data: Data, contentType: ContentType) {
        self.data = data
        self.contentType = contentType
    }

    /// `public.image`.
    public static var readableContentTypes: [ContentType] { [.image] }

    /// Keeps the bytes as they are.
    public static func object(itemProviderData data: Data, contentType: ContentType) throws -> ImageItem {
        ImageItem(data: data, contentType: contentType)
    }
}

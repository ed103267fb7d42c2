// PROVISIONAL SURFACE — the types work replaces the internals; the public names below are the
// contract other FerryModel files compile against. Do not ship this comment.

/// A uniform type identifier with UTType semantics (`public.png`, `dyn.…`).
public struct ContentType: Sendable, Hashable, CustomStringConvertible {
    /// The type's identifier, e.g. `public.utf8-plain-text`.
    public let identifier: String

    /// The declared or dynamic type with this identifier, or nil when no such type is known.
    public init?(_ identifier: String) {
        guard ContentType.isValidIdentifier(identifier) else { return nil }
        self.identifier = identifier
    }

    init(uncheckedIdentifier identifier: String) { self.identifier = identifier }

    /// Whether `identifier` is syntactically a type identifier (reverse-DNS characters).
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        !identifier.isEmpty && identifier.utf8.count <= 255
            && identifier.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
            }
    }

    /// Reflexive, transitive conformance.
    public func conforms(to other: ContentType) -> Bool { self == other || other == .item }

    /// The type's preferred filename extension, without the dot.
    public var preferredFilenameExtension: String? { nil }
    /// The type's preferred MIME type.
    public var preferredMIMEType: String? { nil }

    public var description: String { identifier }

    public static let item = ContentType(uncheckedIdentifier: "public.item")
    public static let content = ContentType(uncheckedIdentifier: "public.content")
    public static let data = ContentType(uncheckedIdentifier: "public.data")
    public static let text = ContentType(uncheckedIdentifier: "public.text")
    public static let plainText = ContentType(uncheckedIdentifier: "public.plain-text")
    public static let utf8PlainText = ContentType(uncheckedIdentifier: "public.utf8-plain-text")
    public static let html = ContentType(uncheckedIdentifier: "public.html")
    public static let rtf = ContentType(uncheckedIdentifier: "public.rtf")
    public static let url = ContentType(uncheckedIdentifier: "public.url")
    public static let fileURL = ContentType(uncheckedIdentifier: "public.file-url")
    public static let image = ContentType(uncheckedIdentifier: "public.image")
    public static let png = ContentType(uncheckedIdentifier: "public.png")
    public static let jpeg = ContentType(uncheckedIdentifier: "public.jpeg")
    public static let pdf = ContentType(uncheckedIdentifier: "com.adobe.pdf")
    public static let directory = ContentType(uncheckedIdentifier: "public.directory")
    public static let folder = ContentType(uncheckedIdentifier: "public.folder")
    /// A serialized `UserActivity` carried as a representation of an item.
    public static let userActivity = ContentType(uncheckedIdentifier: "org.ferry.user-activity")
}

/// A type declared by an app's Info.plist (`UTExportedTypeDeclarations` / `UTImportedTypeDeclarations`).
public struct TypeDeclaration: Sendable, Hashable {
    public var identifier: String
    public var conformsTo: [String]
    public var filenameExtensions: [String]
    public var mimeTypes: [String]
    public var description: String?
    public var referenceURL: String?

    public init(identifier: String, conformsTo: [String], filenameExtensions: [String] = [], mimeTypes: [String] = [],
                description: String? = nil, referenceURL: String? = nil) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.filenameExtensions = filenameExtensions
        self.mimeTypes = mimeTypes
        self.description = description
        self.referenceURL = referenceURL
    }
}

/// A uniform type identifier with `UTType` semantics: `public.png`, `com.adobe.pdf`,
/// `org.freedesktop.mime.text.x-python3`, or a dynamic `dyn.…` type for a tag nothing declares.
///
/// A value is just its identifier; everything else (conformance, tags, description) is answered
/// by `TypeDatabase.shared`. Use the database's methods directly to query another database.
public struct ContentType: Sendable, Hashable, CustomStringConvertible {
    /// The type's identifier, e.g. `public.utf8-plain-text`.
    public let identifier: String

    /// The declared or dynamic type with this identifier (matched case-insensitively), or nil when
    /// the identifier is invalid or no such type is known.
    public init?(_ identifier: String) {
        guard let type = TypeDatabase.shared.type(withIdentifier: identifier) else { return nil }
        self = type
    }

    /// The type with this identifier whether or not this process has a declaration for it, as
    /// `UTType(importedAs:)` gives one: the declared or dynamic type when known, otherwise a type
    /// that is just its identifier (another app's exported type; it conforms only to itself).
    /// Nil only when `identifier` is not syntactically valid (``isValidIdentifier(_:)``).
    public init?(importedAs identifier: String) {
        guard Self.isValidIdentifier(identifier) else { return nil }
        self = ContentType(identifier) ?? ContentType(uncheckedIdentifier: identifier)
    }

    init(uncheckedIdentifier identifier: String) { self.identifier = identifier }

    /// Whether `identifier` is syntactically a type identifier: 1–255 bytes of ASCII letters,
    /// digits, `.`, `-` and `_`.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        !identifier.isEmpty && identifier.utf8.count <= 255
            && identifier.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
            }
    }

    /// The preferred type with a tag, conforming to `supertype`; a dynamic type when no declared
    /// type qualifies; nil when `tag` is not a valid tag of `tagClass`.
    public init?(tag: String, tagClass: TagClass, conformingTo supertype: ContentType?) {
        guard let type = TypeDatabase.shared.type(tag: tag, tagClass: tagClass, conformingTo: supertype) else { return nil }
        self = type
    }

    /// The preferred type for a filename extension (no dot; case-insensitive), conforming to
    /// `supertype` (`public.data` by default). Unknown extensions give a dynamic type.
    public init?(filenameExtension: String, conformingTo supertype: ContentType = .data) {
        self.init(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)
    }

    /// The preferred type for a MIME type (case-insensitive; aliases resolve to their canonical
    /// type), conforming to `supertype` (`public.data` by default). Unknown MIME types give a
    /// dynamic type.
    public init?(mimeType: String, conformingTo supertype: ContentType = .data) {
        self.init(tag: mimeType, tagClass: .mimeType, conformingTo: supertype)
    }

    /// Every type carrying `tag`, preferred first (see `TypeDatabase.types(tag:tagClass:conformingTo:)`).
    public static func types(tag: String, tagClass: TagClass, conformingTo supertype: ContentType?) -> [ContentType] {
        TypeDatabase.shared.types(tag: tag, tagClass: tagClass, conformingTo: supertype)
    }

    /// Whether this type conforms to `other`: reflexive and transitive over multiple parents;
    /// every type conforms to `public.item`.
    public func conforms(to other: ContentType) -> Bool { TypeDatabase.shared.conforms(self, to: other) }

    /// Whether this type conforms to `other` and is not `other`.
    public func isSubtype(of other: ContentType) -> Bool { self != other && conforms(to: other) }

    /// Whether `other` conforms to this type and is not this type.
    public func isSupertype(of other: ContentType) -> Bool { self != other && other.conforms(to: self) }

    /// Every type this type conforms to, excluding itself.
    public var supertypes: Set<ContentType> { TypeDatabase.shared.supertypes(of: self) }

    /// The type's tags by class, preferred first.
    public var tags: [TagClass: [String]] { TypeDatabase.shared.tags(of: self) }

    /// The type's preferred filename extension, without the dot.
    public var preferredFilenameExtension: String? { tags[.filenameExtension]?.first }

    /// The filename extensions to name a file of this type with, preferred first: its own, else
    /// those of its most specific supertype that has some (`public.utf8-plain-text` has none of
    /// its own; `public.plain-text` gives `txt`); empty when no supertype has any.
    public var inheritedFilenameExtensions: [String] {
        if let own = tags[.filenameExtension], !own.isEmpty { return own }
        let tagged = supertypes.filter { $0 != self && !($0.tags[.filenameExtension] ?? []).isEmpty }
            .sorted { $0.identifier < $1.identifier }
        let mostSpecific = tagged.first { candidate in tagged.allSatisfy { candidate.conforms(to: $0) } } ?? tagged.first
        return mostSpecific?.tags[.filenameExtension] ?? []
    }

    /// The type's preferred MIME type.
    public var preferredMIMEType: String? { tags[.mimeType]?.first }

    /// Whether the type is declared (system table, shared-mime-info, or an app). Never true for a
    /// dynamic type.
    public var isDeclared: Bool { TypeDatabase.shared.isDeclared(self) }

    /// Whether the type is dynamic (a `dyn.` identifier standing for an undeclared tag).
    public var isDynamic: Bool { DynamicTypeCode.hasPrefix(identifier) }

    /// Whether the type is in the reserved `public.` domain.
    public var isPublicType: Bool { identifier.utf8.count > 7 && identifier.fastLowercased.hasPrefix("public.") }

    /// A human-readable description (English) of a declared type; nil for dynamic types.
    public var localizedDescription: String? { TypeDatabase.shared.localizedDescription(of: self) }

    /// The identifier.
    public var description: String { identifier }
}

extension ContentType {
    /// `public.item`: the root of the physical hierarchy; every type conforms to it.
    public static let item = ContentType(uncheckedIdentifier: "public.item")
    /// `public.content`: the root of the content hierarchy (abstract).
    public static let content = ContentType(uncheckedIdentifier: "public.content")
    /// `public.composite-content`: content mixing several kinds, such as PDF.
    public static let compositeContent = ContentType(uncheckedIdentifier: "public.composite-content")
    /// `public.data`: any byte stream.
    public static let data = ContentType(uncheckedIdentifier: "public.data")
    /// `public.directory`: a folder-like item.
    public static let directory = ContentType(uncheckedIdentifier: "public.directory")
    /// `public.folder`: a folder (`inode/directory`).
    public static let folder = ContentType(uncheckedIdentifier: "public.folder")
    /// `public.archive`: an archive of files.
    public static let archive = ContentType(uncheckedIdentifier: "public.archive")
    /// `public.text`: text of any kind.
    public static let text = ContentType(uncheckedIdentifier: "public.text")
    /// `public.plain-text`: text with no markup (`text/plain`).
    public static let plainText = ContentType(uncheckedIdentifier: "public.plain-text")
    /// `public.utf8-plain-text`: plain text in UTF-8.
    public static let utf8PlainText = ContentType(uncheckedIdentifier: "public.utf8-plain-text")
    /// `public.utf16-plain-text`: plain text in UTF-16.
    public static let utf16PlainText = ContentType(uncheckedIdentifier: "public.utf16-plain-text")
    /// `public.delimited-values-text`: rows of delimited values.
    public static let delimitedText = ContentType(uncheckedIdentifier: "public.delimited-values-text")
    /// `public.comma-separated-values-text`: CSV.
    public static let commaSeparatedText = ContentType(uncheckedIdentifier: "public.comma-separated-values-text")
    /// `public.tab-separated-values-text`: TSV.
    public static let tabSeparatedText = ContentType(uncheckedIdentifier: "public.tab-separated-values-text")
    /// `public.html`: HTML.
    public static let html = ContentType(uncheckedIdentifier: "public.html")
    /// `public.rtf`: rich text.
    public static let rtf = ContentType(uncheckedIdentifier: "public.rtf")
    /// `public.xml`: XML.
    public static let xml = ContentType(uncheckedIdentifier: "public.xml")
    /// `com.apple.property-list`: a property list in any format.
    public static let propertyList = ContentType(uncheckedIdentifier: "com.apple.property-list")
    /// `com.apple.xml-property-list`: an XML property list.
    public static let xmlPropertyList = ContentType(uncheckedIdentifier: "com.apple.xml-property-list")
    /// `com.apple.binary-property-list`: a binary property list (`bplist00`).
    public static let binaryPropertyList = ContentType(uncheckedIdentifier: "com.apple.binary-property-list")
    /// `public.json`: JSON.
    public static let json = ContentType(uncheckedIdentifier: "public.json")
    /// `public.source-code`: program source.
    public static let sourceCode = ContentType(uncheckedIdentifier: "public.source-code")
    /// `public.script`: a script.
    public static let script = ContentType(uncheckedIdentifier: "public.script")
    /// `public.python-script`: a Python script.
    public static let pythonScript = ContentType(uncheckedIdentifier: "public.python-script")
    /// `public.vcard`: contact cards.
    public static let vCard = ContentType(uncheckedIdentifier: "public.vcard")
    /// `public.calendar-event`: a calendar event (abstract).
    public static let calendarEvent = ContentType(uncheckedIdentifier: "public.calendar-event")
    /// `com.apple.ical.ics`: an iCalendar file (`text/calendar`).
    public static let ics = ContentType(uncheckedIdentifier: "com.apple.ical.ics")
    /// `public.url`: a URL.
    public static let url = ContentType(uncheckedIdentifier: "public.url")
    /// `public.file-url`: a `file:` URL.
    public static let fileURL = ContentType(uncheckedIdentifier: "public.file-url")
    /// `org.freedesktop.mime.text.uri-list`: `text/uri-list` (RFC 2483), how file managers copy
    /// files; see ``URIList``.
    public static let uriList = ContentType(uncheckedIdentifier: "org.freedesktop.mime.text.uri-list")
    /// `public.image`: images of any kind.
    public static let image = ContentType(uncheckedIdentifier: "public.image")
    /// `public.png`: PNG.
    public static let png = ContentType(uncheckedIdentifier: "public.png")
    /// `public.jpeg`: JPEG.
    public static let jpeg = ContentType(uncheckedIdentifier: "public.jpeg")
    /// `com.compuserve.gif`: GIF.
    public static let gif = ContentType(uncheckedIdentifier: "com.compuserve.gif")
    /// `public.tiff`: TIFF.
    public static let tiff = ContentType(uncheckedIdentifier: "public.tiff")
    /// `public.heic`: HEIC.
    public static let heic = ContentType(uncheckedIdentifier: "public.heic")
    /// `public.svg-image`: SVG.
    public static let svg = ContentType(uncheckedIdentifier: "public.svg-image")
    /// `com.adobe.pdf`: PDF.
    public static let pdf = ContentType(uncheckedIdentifier: "com.adobe.pdf")
    /// `public.audiovisual-content`: audio or video.
    public static let audiovisualContent = ContentType(uncheckedIdentifier: "public.audiovisual-content")
    /// `public.audio`: audio of any kind.
    public static let audio = ContentType(uncheckedIdentifier: "public.audio")
    /// `public.movie`: movies (video with or without audio).
    public static let movie = ContentType(uncheckedIdentifier: "public.movie")
    /// `public.video`: video without audio.
    public static let video = ContentType(uncheckedIdentifier: "public.video")
    /// `public.mp3`: MP3 audio.
    public static let mp3 = ContentType(uncheckedIdentifier: "public.mp3")
    /// `public.mpeg-4`: MPEG-4 movie.
    public static let mpeg4Movie = ContentType(uncheckedIdentifier: "public.mpeg-4")
    /// `public.zip-archive`: ZIP.
    public static let zip = ContentType(uncheckedIdentifier: "public.zip-archive")
    /// `org.gnu.gnu-zip-archive`: gzip.
    public static let gzip = ContentType(uncheckedIdentifier: "org.gnu.gnu-zip-archive")
    /// A serialized `UserActivity` carried as a representation of an item (`org.ferry.user-activity`).
    public static let userActivity = ContentType(uncheckedIdentifier: "org.ferry.user-activity")
}

import FerryModel
import FerryTerminal

/// Reads a `--type` value: a type identifier (`public.png`), a MIME type (`image/png`, anything
/// with a slash; an unknown one gives a dynamic type, as `ferry type info --mime` does), or one of
/// wl-clipboard's generic words, `text` (public.plain-text: text in any encoding) and `image`
/// (public.image).
/// - Throws: `CLIFailure` (status 2) for an invalid or unknown identifier or an invalid MIME type.
func resolveTypeArgument(_ text: String) throws -> ContentType {
    if let generic = GenericTypeWord(rawValue: text.lowercased()) { return generic.contentType }
    if text.contains("/") {
        let declared = ContentType.types(tag: text, tagClass: .mimeType, conformingTo: nil).first { $0.isDeclared }
        guard let type = declared ?? ContentType(mimeType: text) else { throw CLIFailure("invalid MIME type '\(text)'") }
        return type
    }
    return try lookUpType(text)
}

/// The generic words wl-paste takes for a type (`wl-paste -t text`): a top-level kind of content
/// rather than one format.
enum GenericTypeWord: String, CaseIterable {
    case text
    case image

    /// The type the word stands for when reading or testing: any text, any image.
    var contentType: ContentType {
        switch self {
        case .text: .plainText
        case .image: .image
        }
    }
}

/// What a `--type` given to a command that writes data (`copy`, `share`, `copy --rep`) asks for:
/// one exact type, or content sniffed from the data that must conform to a kind.
enum WrittenType {
    /// Label the data with this type.
    case exact(ContentType)
    /// Type the data by its name and content, as without `--type`, and refuse it unless the type
    /// found conforms to this one (`-t image` on a text file is a mistake, not an image).
    case sniffed(conformingTo: ContentType)

    /// Reads `text` as `resolveTypeArgument` does, except the generic words: `text` labels the
    /// data public.utf8-plain-text (what wl-copy -t text offers), `image` sniffs which image it is.
    /// - Throws: `CLIFailure` (status 2) as `resolveTypeArgument` does.
    init(argument text: String) throws {
        switch GenericTypeWord(rawValue: text.lowercased()) {
        case .text: self = .exact(.utf8PlainText)
        case .image: self = .sniffed(conformingTo: .image)
        case nil: self = .exact(try resolveTypeArgument(text))
        }
    }

    /// The type to label the data with, nil when it is to be sniffed.
    var exact: ContentType? {
        if case .exact(let type) = self { type } else { nil }
    }

    /// Checks a sniffed type against the kind asked for.
    /// - Parameter source: how the data is named in the error ("'cat.txt'", "standard input").
    /// - Throws: `CLIFailure` (status 64) when the data is not of that kind.
    func check(_ sniffed: ContentType?, of source: String) throws {
        guard case .sniffed(let kind) = self else { return }
        let found = sniffed ?? .data
        guard found.conforms(to: kind) else {
            throw CLIFailure(.usage, "\(source) is not \(kind == .image ? "an image" : typeName(kind)) (its content is \(typeName(found)))")
        }
    }
}

/// How a type is shown to a person: its identifier, except a dynamic type (`dyn.…`, made for a
/// tag nothing declares), shown by the MIME type (else the filename extension) it came from.
func typeName(_ type: ContentType) -> String {
    guard type.isDynamic else { return type.identifier }
    return type.preferredMIMEType ?? type.tags[.filenameExtension]?.first.map { "." + $0 } ?? type.identifier
}

/// `text` with every dynamic type identifier in it (`dyn.…`, as the broker's and the library's
/// messages name types) shown as ``typeName(_:)`` shows it: by the MIME type or extension it
/// came from. A `dyn.` word that is no known dynamic type stays as it is.
func withReadableTypes(_ text: String) -> String {
    guard text.contains("dyn.") else { return text }
    var result = ""
    var rest = Substring(text)
    while let start = rest.firstRange(of: "dyn.") {
        let before = rest[..<start.lowerBound]
        result += before
        let word = rest[start.lowerBound...].prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
        let atWordStart = before.last.map { !($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") } ?? true
        if atWordStart, let type = ContentType(String(word)), type.isDynamic {
            result += typeName(type)
        } else {
            result += word
        }
        rest = rest[word.endIndex...]
    }
    return result + rest
}

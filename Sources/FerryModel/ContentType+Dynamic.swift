import FerryText

/// The reversible encoding of dynamic type identifiers.
///
/// A dynamic type stands for a tag no declared type claims. Its identifier is `dyn.` followed by
/// the RFC 4648 base-32 encoding — lower-case alphabet `a`–`z`, `2`–`7`, no padding — of the UTF-8
/// canonical string `CLASS=TAG:PARENTS`, where
/// - `CLASS` is `e` for filename extensions, `m` for MIME types, or another tag class's own
///   identifier;
/// - `TAG` is the tag, lower case for the two standard classes (they match case-insensitively);
/// - `PARENTS` is the comma-separated list of identifiers the type conforms to (may be empty).
///
/// For example the extension `xyz` conforming to `public.data` is `e=xyz:public.data`, so
/// `dyn.mu6xq6l2hjyhkytmnfrs4zdborqq`. Only the canonical encoding of a string decodes, so every
/// dynamic type has exactly one identifier.
struct DynamicTypeCode: Sendable, Hashable {
    var tagClass: ContentType.TagClass
    var tag: String
    var conformsTo: [String]

    static let prefix = "dyn."

    /// Whether `identifier` starts with `dyn.`, in any case. Compares in place: every type lookup
    /// asks it, a paste's among them.
    static func hasPrefix(_ identifier: String) -> Bool {
        var bytes = identifier.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next(), byte | 0x20 == expected | 0x20 else { return false }
        }
        return true
    }

    /// The identifier, or nil when it would not be a valid identifier (too long).
    var identifier: String? {
        let classCode: String = switch tagClass {
        case .filenameExtension: "e"
        case .mimeType: "m"
        default: tagClass.rawValue
        }
        let canonical = classCode + "=" + tag + ":" + conformsTo.joined(separator: ",")
        let id = Self.prefix + DynamicTypeText.base32(Array(canonical.utf8))
        return ContentType.isValidIdentifier(id) ? id : nil
    }

    /// Decodes a `dyn.` identifier; nil unless it is the canonical encoding of a valid triple.
    init?(identifier: String) {
        guard Self.hasPrefix(identifier), let bytes = DynamicTypeText.unbase32(identifier.utf8.dropFirst(4).map { $0 | 0x20 }),
              let text = String(validating: bytes, as: UTF8.self),
              let equals = text.firstIndex(of: "="), let colon = text.lastIndex(of: ":"), equals < colon
        else { return nil }
        let classCode = String(text[..<equals])
        let tagClass: ContentType.TagClass = switch classCode {
        case "e": .filenameExtension
        case "m": .mimeType
        default: ContentType.TagClass(rawValue: classCode)
        }
        guard tagClass == .filenameExtension || tagClass == .mimeType || ContentType.isValidIdentifier(classCode) else { return nil }
        let tag = String(text[text.index(after: equals)..<colon])
        let parents = text[text.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let normalized = tagClass.normalize(tag), normalized == tag,
              parents.allSatisfy(ContentType.isValidIdentifier) || (parents == [""])
        else { return nil }
        self.tagClass = tagClass
        self.tag = tag
        self.conformsTo = parents == [""] ? [] : parents
        guard self.identifier == identifier.fastLowercased else { return nil }
    }

    init(tagClass: ContentType.TagClass, tag: String, conformsTo: [String]) {
        self.tagClass = tagClass
        self.tag = tag
        self.conformsTo = conformsTo
    }
}

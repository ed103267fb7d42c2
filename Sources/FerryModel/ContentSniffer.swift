/// What content sniffing found: the type by name, the type by content, and the verdict.
public struct SniffResult: Sendable, Hashable {
    /// Which rule decided the verdict.
    public enum Rule: String, Sendable, Hashable, CaseIterable {
        /// Only the name was available (no data).
        case name
        /// Only the content was available (no name, or a name that says nothing).
        case content
        /// Name and content gave the same type.
        case agree
        /// The name gives a more specific type the content conforms to (`.docx` over ZIP bytes), or
        /// the extension also names a type conforming to the content's (an XML `.plist`).
        case nameRefines = "name-refines"
        /// The content gives a more specific type the name conforms to (UTF-8 text in a `.txt`).
        case contentRefines = "content-refines"
        /// Both are text; text formats are told apart by name (CSV that sniffs as plain text).
        case textByName = "text-by-name"
        /// They disagree and the content matched a signature with certainty (PNG bytes in `x.txt`).
        case contentOverrides = "content-overrides"
        /// They disagree and the content match was uncertain: the name wins.
        case nameOverrides = "name-overrides"
    }

    /// The verdict.
    public var type: ContentType
    /// The type the filename suggests, if a filename was given and it suggests one.
    public var byName: ContentType?
    /// The type the bytes suggest, if there were bytes.
    public var byContent: ContentType?
    /// Whether the content match was certain (a magic signature or clearly text).
    public var isContentCertain: Bool
    /// The rule that chose `type`.
    public var rule: Rule
}

extension ContentType {
    /// The type of some bytes, by content and by name, using `TypeDatabase.shared`
    /// (see `TypeDatabase.sniff(data:filename:)` for the rules).
    public static func sniff(data: some Collection<UInt8>, filename: String?) -> SniffResult {
        TypeDatabase.shared.sniff(data: data, filename: filename)
    }
}

extension TypeDatabase {
    /// Sniffs the type of `data` (its first few KiB suffice), named `filename` (a name or path).
    ///
    /// - By content: a UTF-16 or UTF-8 byte-order mark gives `public.utf16-plain-text` /
    ///   `public.utf8-plain-text`, `bplist0` a binary property list; otherwise GIO's magic rules (`g_content_type_guess` with data
    ///   only); text GIO calls `text/plain` is `public.utf8-plain-text` when it is valid UTF-8.
    /// - By name: the declared type of the extension, or GIO's glob match when that is more
    ///   specific (`a.tar.gz`) or there is no extension (`Makefile`); an unknown extension gives a
    ///   dynamic type.
    /// - Verdict (`SniffResult.Rule`): equal → that type; when one conforms to the other the more
    ///   specific wins; when a declared type with the file's extension conforms to the content's
    ///   type, that type (an XML `.plist` is `com.apple.xml-property-list`); when both are text
    ///   the name wins (text formats are told apart by name);
    ///   otherwise a certain content match wins (a PNG named `x.txt` is a PNG) and an uncertain
    ///   one loses to the name.
    public func sniff(data: some Collection<UInt8>, filename: String?) -> SniffResult {
        let bytes = Array(data.prefix(64 * 1024))
        let byName = filename.flatMap(typeByName)
        guard !bytes.isEmpty else {
            return SniffResult(type: byName ?? .data, byName: byName, byContent: nil, isContentCertain: false, rule: .name)
        }
        let (byContent, certain) = typeByContent(bytes)
        guard let name = byName else {
            return SniffResult(type: byContent, byName: nil, byContent: byContent, isContentCertain: certain, rule: .content)
        }
        func verdict(_ type: ContentType, _ rule: SniffResult.Rule) -> SniffResult {
            SniffResult(type: type, byName: name, byContent: byContent, isContentCertain: certain, rule: rule)
        }
        if name == byContent { return verdict(name, .agree) }
        if conforms(byContent, to: name) { return verdict(byContent, .contentRefines) }
        if conforms(name, to: byContent) { return verdict(name, .nameRefines) }
        if let ext = Self.filenameExtension(of: filename),
           let both = types(tag: ext, tagClass: .filenameExtension, conformingTo: byContent).first, isDeclared(both) {
            return verdict(both, .nameRefines)
        }
        if conforms(byContent, to: .text), conforms(name, to: .text) { return verdict(name, .textByName) }
        return certain ? verdict(byContent, .contentOverrides) : verdict(name, .nameOverrides)
    }

    /// The last path component of `filename`.
    static func baseName(_ filename: String) -> String {
        filename.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? filename
    }

    /// The extension of a file name (`png` for `/a/b.png`); nil for none or a leading-dot name.
    static func filenameExtension(of filename: String?) -> String? {
        guard let filename else { return nil }
        let base = baseName(filename)
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex, base.index(after: dot) != base.endIndex else { return nil }
        return String(base[base.index(after: dot)...])
    }

    /// The type a filename suggests, or nil when it suggests none.
    func typeByName(_ filename: String) -> ContentType? {
        let base = Self.baseName(filename)
        guard !base.isEmpty else { return nil }
        var byExtension: ContentType?
        var dynamic: ContentType?
        if let ext = Self.filenameExtension(of: base) {
            let found = types(tag: ext, tagClass: .filenameExtension)
            byExtension = found.first { !$0.isDynamicIdentifier }
            if byExtension == nil { dynamic = type(tag: ext, tagClass: .filenameExtension, conformingTo: .data) }
        }
        let glob = GIOContentTypes.guess(filename: base, data: nil)
        if glob.mimeType != "application/octet-stream", let byGlob = types(tag: glob.mimeType, tagClass: .mimeType).first,
           !byGlob.isDynamicIdentifier, byExtension.map({ conforms(byGlob, to: $0) }) ?? true {
            return byGlob
        }
        return byExtension ?? dynamic
    }

    /// The type of the bytes and whether the match was certain.
    func typeByContent(_ bytes: [UInt8]) -> (ContentType, Bool) {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) { return (.utf16PlainText, true) }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8PlainText, true) }
        if bytes.starts(with: Array("bplist0".utf8)) {
            return (.binaryPropertyList, true)
        }
        let guess = GIOContentTypes.guess(filename: nil, data: bytes)
        if guess.mimeType == "text/plain" {
            return (Self.isUTF8Text(bytes) ? .utf8PlainText : .plainText, guess.isCertain)
        }
        if guess.mimeType == "application/octet-stream" { return (.data, false) }
        let type = types(tag: guess.mimeType, tagClass: .mimeType).first ?? .data
        return (type, guess.isCertain)
    }

    /// Whether the bytes are UTF-8 text without NULs (a sequence cut at the end is allowed).
    static func isUTF8Text(_ bytes: [UInt8]) -> Bool {
        guard !bytes.contains(0) else { return false }
        for cut in 0...min(3, bytes.count - 1) where String(validating: bytes.dropLast(cut), as: UTF8.self) != nil {
            return true
        }
        return false
    }
}

extension ContentType {
    var isDynamicIdentifier: Bool { DynamicTypeCode.hasPrefix(identifier) }
}

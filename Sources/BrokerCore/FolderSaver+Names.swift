/// File names: what an item's suggested name becomes in a folder.
extension FolderSaver {
    /// The base name and extension for a file: the cleaned suggested name (``cleanName(_:)``),
    /// and the preferred extension unless the name already ends with one of `filenameExtensions`
    /// (then that ending is the extension, as written). The base is cut so that a numbered name
    /// ("base 1000.ext") still fits in 255 bytes.
    /// - Parameters:
    ///   - suggestedName: the item's suggested name, nil when none.
    ///   - filenameExtensions: the type's extensions, preferred first; invalid ones are ignored.
    package static func fileName(suggestedName: String?, filenameExtensions: [String]) -> (base: String, extension: String?) {
        let extensions = filenameExtensions.filter(isUsableExtension)
        var base = clean(suggestedName ?? "")
        var ext = extensions.first
        let scalars = base.unicodeScalars
        if let own = extensions.first(where: { ext in
            let length = ext.unicodeScalars.count + 1
            return scalars.count > length && String(String.UnicodeScalarView(scalars.suffix(length))).lowercased() == "." + ext.lowercased()
        }) {
            ext = String(String.UnicodeScalarView(scalars.suffix(own.unicodeScalars.count)))
            base = trimmed(String(String.UnicodeScalarView(scalars.dropLast(own.unicodeScalars.count + 1))))
        }
        let room = nameMax - " \(maximumAttempts)".utf8.count - (ext.map { $0.utf8.count + 1 } ?? 0)
        base = trimmed(truncated(base, to: min(maximumNameLength, room)))
        return (base.isEmpty ? defaultName : base, ext)
    }

    /// A suggested name made safe as one file name in a folder: no `/`, NUL or control
    /// characters (nor the invisible ones that reorder text), no leading dots or spaces, no
    /// trailing spaces, at most ``maximumNameLength`` bytes; "Item" when nothing is left.
    /// - Parameter name: the name asked for; nil: "Item".
    package static func cleanName(_ name: String?) -> String {
        let cleaned = trimmed(truncated(clean(name ?? ""), to: maximumNameLength))
        return cleaned.isEmpty ? defaultName : cleaned
    }

    /// `name` without the characters a file name must not have, and without leading dots and
    /// white space or trailing white space (no length limit).
    static func clean(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: name.unicodeScalars.filter { !isRemoved($0) })
        return trimmed(String(scalars))
    }

    /// Without leading dots and white space, and without trailing white space.
    static func trimmed(_ name: String) -> String {
        let scalars = name.unicodeScalars
        let start = scalars.firstIndex { $0 != "." && !$0.properties.isWhitespace } ?? scalars.endIndex
        var end = scalars.endIndex
        while end > start, scalars[scalars.index(before: end)].properties.isWhitespace { end = scalars.index(before: end) }
        return String(scalars[start..<end])
    }

    /// At most `limit` UTF-8 bytes of `name`, never cutting a character in two.
    static func truncated(_ name: String, to limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var kept = "", count = 0
        for character in name {
            let size = character.utf8.count
            guard count + size <= limit else { break }
            kept.append(character)
            count += size
        }
        if kept.isEmpty {  // one huge character (a base with hundreds of marks): keep its first scalars
            var scalars = String.UnicodeScalarView()
            for scalar in name.unicodeScalars {
                guard count + String(scalar).utf8.count <= limit else { break }
                scalars.append(scalar)
                count += String(scalar).utf8.count
            }
            kept = String(scalars)
        }
        return kept
    }

    /// `/`, control characters (C0, DEL, C1) and the bidirectional formatting characters that
    /// would show a name in another order than it has ("photo\u{202E}gnp.exe").
    static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2F, 0x00...0x1F, 0x7F...0x9F: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// An extension fit to end a file name: non-empty, at most 127 bytes, nothing ``clean(_:)``
    /// would change, no dot at its start.
    static func isUsableExtension(_ ext: String) -> Bool {
        !ext.isEmpty && ext.utf8.count <= 127 && clean(ext) == ext && !ext.unicodeScalars.contains { $0.properties.isWhitespace }
    }
}

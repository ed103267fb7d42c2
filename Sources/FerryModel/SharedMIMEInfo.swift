/// The freedesktop shared-mime-info database, as the type database consumes it: the registered
/// MIME types, their aliases, their direct parents (`sub-class-of`) and their filename globs.
///
/// `load()` reads the database installed on this machine (the list of types through GIO, the
/// `subclasses`, `aliases`, `types` and `globs2` files of every XDG data directory); tests build
/// one from explicit inputs with `init(types:aliases:subclasses:globs:)` or `parse(…)`.
public struct SharedMIMEInfo: Sendable {
    /// One line of `globs2`: a weighted filename pattern for a MIME type.
    public struct Glob: Sendable, Hashable {
        /// The weight, 0–100; a higher weight wins (50 is the default).
        public var weight: Int
        /// The MIME type the pattern names.
        public var mimeType: String
        /// The pattern, e.g. `*.png` or `Makefile`.
        public var pattern: String
        /// Whether the pattern matches case-sensitively (the `cs` flag).
        public var isCaseSensitive: Bool

        /// A glob.
        public init(weight: Int = 50, mimeType: String, pattern: String, isCaseSensitive: Bool = false) {
            self.weight = weight
            self.mimeType = mimeType
            self.pattern = pattern
            self.isCaseSensitive = isCaseSensitive
        }

        /// The filename extension when the pattern is a plain `*.ext` (no other wildcards), else nil.
        public var filenameExtension: String? {
            let bytes = pattern.utf8
            guard bytes.count > 2, bytes.starts(with: "*.".utf8) else { return nil }
            let ext = bytes.dropFirst(2)
            guard !ext.contains(where: { $0 == 0x2A || $0 == 0x3F || $0 == 0x5B || $0 == 0x5D }) else { return nil }
            return String(decoding: ext, as: UTF8.self)
        }
    }

    /// Registered MIME types, canonical spelling (mixed case as in the `types` file).
    public var types: [String]
    /// Alias → canonical MIME type.
    public var aliases: [String: String]
    /// Direct parents: (child, parent) pairs in file order.
    public var subclasses: [(child: String, parent: String)]
    /// Filename globs, highest weight first.
    public var globs: [Glob]
    /// Whether descriptions of these types may be asked of GIO (true for the machine's database).
    public var describesWithGIO: Bool

    /// A database from explicit inputs.
    public init(types: [String], aliases: [String: String] = [:], subclasses: [(child: String, parent: String)] = [],
                globs: [Glob] = [], describesWithGIO: Bool = false) {
        self.types = types
        self.aliases = aliases
        self.subclasses = subclasses
        self.globs = globs
        self.describesWithGIO = describesWithGIO
    }

    /// An empty database (no MIME types at all).
    public static let empty = SharedMIMEInfo(types: [])

    /// Parses the text of the `types`, `aliases`, `subclasses` and `globs2` files.
    public static func parse(types: String, aliases: String = "", subclasses: String = "", globs2: String = "") -> SharedMIMEInfo {
        var info = SharedMIMEInfo(types: [])
        info.absorb(types: Array(types.utf8), aliases: Array(aliases.utf8), subclasses: Array(subclasses.utf8),
                    globs2: Array(globs2.utf8))
        return info
    }

    /// Adds the contents of one MIME directory's files; earlier directories take precedence.
    mutating func absorb(types typesFile: [UInt8], aliases aliasesFile: [UInt8], subclasses subclassesFile: [UInt8],
                         globs2 globsFile: [UInt8]) {
        var seen = Set(types.map(\.fastLowercased))
        Self.forEachLine(typesFile) { line in
            let type = String(decoding: line, as: UTF8.self)
            if seen.insert(type.fastLowercased).inserted { types.append(type) }
        }
        Self.forEachLine(aliasesFile) { line in
            guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return }
            let alias = String(decoding: line[..<space], as: UTF8.self)
            if aliases[alias] == nil { aliases[alias] = String(decoding: line[(space + 1)...], as: UTF8.self) }
        }
        Self.forEachLine(subclassesFile) { line in
            guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return }
            subclasses.append((child: String(decoding: line[..<space], as: UTF8.self),
                               parent: String(decoding: line[(space + 1)...], as: UTF8.self)))
        }
        var added: [Glob] = []
        Self.forEachLine(globsFile) { line in
            // weight:mime-type:glob[:flags[:…]]
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count >= 3, !fields[2].isEmpty, let weight = Int(String(decoding: fields[0], as: UTF8.self)) else { return }
            let caseSensitive = fields.count > 3
                && fields[3].split(separator: UInt8(ascii: ",")).contains { $0.elementsEqual("cs".utf8) }
            added.append(Glob(weight: weight, mimeType: String(decoding: fields[1], as: UTF8.self),
                              pattern: String(decoding: fields[2], as: UTF8.self), isCaseSensitive: caseSensitive))
        }
        // Keep the merged list ordered by weight (stable, so file order breaks ties).
        if !added.isEmpty {
            let merged = globs + added
            if zip(merged, merged.dropFirst()).allSatisfy({ $0.weight >= $1.weight }) {
                globs = merged
            } else {
                globs = merged.enumerated().sorted { a, b in
                    a.element.weight != b.element.weight ? a.element.weight > b.element.weight : a.offset < b.offset
                }.map(\.element)
            }
        }
    }

    /// Calls `body` with each non-empty, non-comment line of a file.
    static func forEachLine(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.first != UInt8(ascii: "#") {
            body(line)
        }
    }
}

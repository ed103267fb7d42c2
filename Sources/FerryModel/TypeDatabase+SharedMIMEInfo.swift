extension TypeDatabase {
    /// The identifier Ferry gives a MIME type that has no system type of its own:
    /// `org.freedesktop.mime.` + media type + `.` + subtype, in lower case, with every character
    /// other than `a`–`z`, `0`–`9`, `-` and `.` written as `_` and two hex digits
    /// (`+` → `_2b`, `_` → `_5f`). So `text/x-python3` is `org.freedesktop.mime.text.x-python3`
    /// and `application/atom+xml` is `org.freedesktop.mime.application.atom_2bxml`. The mapping is
    /// deterministic and reversible (`mimeType(fromDerivedIdentifier:)`).
    public static func derivedIdentifier(forMIMEType mimeType: String) -> String {
        var out = Array("org.freedesktop.mime.".utf8)
        out.reserveCapacity(out.count + mimeType.utf8.count + 8)
        for byte in mimeType.fastLowercased.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                out.append(byte)
            case UInt8(ascii: "/"):
                out.append(UInt8(ascii: "."))
            default:
                out.append(UInt8(ascii: "_"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The (lower-case) MIME type a `derivedIdentifier(forMIMEType:)` identifier stands for, or nil
    /// when `identifier` is not of that form.
    public static func mimeType(fromDerivedIdentifier identifier: String) -> String? {
        let prefix = "org.freedesktop.mime."
        guard identifier.hasPrefix(prefix) else { return nil }
        let body = Array(identifier.utf8.dropFirst(prefix.utf8.count))
        guard let slash = body.firstIndex(of: UInt8(ascii: ".")), slash > 0 else { return nil }
        var bytes = Array(body[..<slash]) + [UInt8(ascii: "/")]
        var i = slash + 1
        while i < body.count {
            if body[i] == UInt8(ascii: "_") {
                guard i + 2 < body.count, let v = UInt8(String(decoding: body[(i + 1)...(i + 2)], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(v)
                i += 3
            } else {
                bytes.append(body[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The base records: the system table, then one record per shared-mime-info type that no
    /// system type claims. A MIME type a system type claims adds its globs and aliases to that
    /// system type. Ranks: system tags 0, shared-mime-info canonical names 1, aliases 2, globs
    /// `1 + (100 - weight)`.
    static func baseRecords(includingSystemTypes: Bool, mime info: SharedMIMEInfo) -> [TypeRecord] {
        var records = includingSystemTypes ? systemTypes.map { TypeRecord($0, origin: .system, rank: 0) } : []
        var systemOwner: [String: Int] = [:]
        for (i, record) in records.enumerated() {
            for mime in record.mimeTypes where systemOwner[mime.value.fastLowercased] == nil {
                systemOwner[mime.value.fastLowercased] = i
            }
        }

        var canonicalOf: [String: String] = [:]
        var aliasesOf: [String: [String]] = [:]
        for (alias, canonical) in info.aliases.sorted(by: { $0.key < $1.key }) {
            canonicalOf[alias.fastLowercased] = canonical.fastLowercased
            aliasesOf[canonical.fastLowercased, default: []].append(alias)
        }
        var parentsOf: [String: [String]] = [:]
        for pair in info.subclasses { parentsOf[pair.child.fastLowercased, default: []].append(pair.parent.fastLowercased) }
        var globsOf: [String: [SharedMIMEInfo.Glob]] = [:]
        for glob in info.globs where glob.filenameExtension != nil { globsOf[glob.mimeType.fastLowercased, default: []].append(glob) }

        // Pass 1: the identifier of every registered type.
        var identifierOf: [String: String] = [:]
        identifierOf.reserveCapacity(info.types.count)
        for mime in info.types {
            let lower = mime.fastLowercased
            identifierOf[lower] = systemOwner[lower].map { records[$0].identifier } ?? derivedIdentifier(forMIMEType: lower)
        }
        func identifier(of mime: String) -> String? {
            let lower = mime.fastLowercased
            return identifierOf[canonicalOf[lower] ?? lower] ?? systemOwner[lower].map { records[$0].identifier }
        }

        // Pass 2: records.
        let systemCount = records.count
        for mime in info.types {
            let lower = mime.fastLowercased
            var tags = [RankedTag(value: mime, rank: 1)]
            for alias in aliasesOf[lower] ?? [] {
                if let owner = systemOwner[alias.fastLowercased], records[owner].identifier != identifierOf[lower] { continue }
                tags.append(RankedTag(value: alias, rank: 2))
            }
            let extensions = (globsOf[lower] ?? []).compactMap { glob in
                glob.filenameExtension.map { RankedTag(value: $0, rank: 1 + (100 - glob.weight), isCaseSensitive: glob.isCaseSensitive) }
            }
            if let owner = systemOwner[lower], owner < systemCount {
                records[owner].mimeTypes += tags
                records[owner].extensions += extensions
                continue
            }
            var parents = (parentsOf[lower] ?? []).compactMap(identifier(of:))
            for implicit in implicitParents(of: lower) where !parents.contains(implicit) { parents.append(implicit) }
            var record = TypeRecord(TypeDeclaration(identifier: identifierOf[lower]!, conformsTo: parents),
                                    origin: .sharedMIMEInfo, rank: 1)
            record.mimeTypes = tags
            record.extensions = extensions
            record.gioName = info.describesWithGIO ? lower : nil
            records.append(record)
        }
        return records
    }

    /// The parents every MIME type of a media type gets: `text/*` → `public.plain-text`,
    /// `image/*` → `public.image`, `audio/*` → `public.audio`, `video/*` → `public.movie`,
    /// other `inode/*` → `public.item`, everything else → `public.data` (GIO's rule that every
    /// non-inode type is an `application/octet-stream`).
    static func implicitParents(of mime: String) -> [String] {
        func media(_ prefix: String) -> Bool { mime.utf8.starts(with: prefix.utf8) }
        if media("text/") { return mime == "text/plain" ? ["public.data"] : ["public.plain-text"] }
        if media("image/") { return ["public.image"] }
        if media("audio/") { return ["public.audio"] }
        if media("video/") { return ["public.movie"] }
        if media("inode/") { return mime == "inode/directory" ? ["public.folder"] : ["public.item"] }
        return mime == "application/octet-stream" ? ["public.item"] : ["public.data"]
    }
}

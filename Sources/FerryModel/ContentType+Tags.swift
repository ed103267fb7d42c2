extension ContentType {
    /// A kind of tag that names a type outside the type system: a filename extension or a MIME type.
    public struct TagClass: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The tag class identifier, e.g. `public.filename-extension`.
        public var rawValue: String

        /// A tag class by its identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Filename extensions, without the dot (`png`). Matched case-insensitively.
        public static let filenameExtension = TagClass(rawValue: "public.filename-extension")
        /// MIME types (`image/png`). Matched case-insensitively.
        public static let mimeType = TagClass(rawValue: "public.mime-type")

        /// The tag class identifier.
        public var description: String { rawValue }

        /// The canonical form of `tag` in this class, or nil when it is not a valid tag.
        ///
        /// A filename extension is non-empty, at most 127 bytes, has no leading dot, no `/`, no
        /// white space or control characters; it is lower-cased. A MIME type is `type/subtype`
        /// with RFC 2045 token characters, optionally followed by `;name=value` parameters; it is
        /// lower-cased with white space around `;` and `=` removed. Tags of other classes must be
        /// non-empty without control characters and are kept as they are.
        public func normalize(_ tag: String) -> String? {
            if let fast = asciiFastPath(tag) { return fast }
            guard !tag.isEmpty, tag.utf8.count <= 127,
                  !tag.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { return nil }
            switch self {
            case .filenameExtension:
                guard !tag.hasPrefix("."), !tag.contains("/"), !tag.unicodeScalars.contains(where: \.properties.isWhitespace)
                else { return nil }
                return tag.lowercased()
            case .mimeType:
                return Self.normalizeMIMEType(tag)
            default:
                return tag
            }
        }

        /// The canonical form of a common all-ASCII tag without parameters, computed on bytes;
        /// nil means "take the general path" (not necessarily invalid).
        private func asciiFastPath(_ tag: String) -> String? {
            let isExtension = self == .filenameExtension
            guard isExtension || self == .mimeType else { return nil }
            var slashes = 0, count = 0
            var hasUpper = false
            var first: UInt8 = 0, last: UInt8 = 0
            for c in tag.utf8 {
                guard c > 0x20, c < 0x7F else { return nil }
                if isExtension {
                    guard c != UInt8(ascii: "/") else { return nil }
                } else if c == UInt8(ascii: "/") {
                    slashes += 1
                } else if Self.isTokenSpecial(c) {
                    return nil
                }
                hasUpper = hasUpper || (c >= 0x41 && c <= 0x5A)
                if count == 0 { first = c }
                last = c
                count += 1
            }
            guard count > 0, count <= 127, first != UInt8(ascii: isExtension ? "." : "/"),
                  isExtension || (slashes == 1 && last != UInt8(ascii: "/"))
            else { return nil }
            return hasUpper ? String(decoding: tag.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self) : tag
        }

        /// RFC 2045 `tspecials` as a bit mask over ASCII (bit `c` set for a special `c`).
        private static let tokenSpecialMask: (low: UInt64, high: UInt64) = "()<>@,;:\\\"/[]?=".utf8.reduce((0, 0)) { mask, c in
            c < 64 ? (mask.0 | 1 << UInt64(c), mask.1) : (mask.0, mask.1 | 1 << UInt64(c - 64))
        }

        @inline(__always)
        private static func isTokenSpecial(_ c: UInt8) -> Bool {
            c < 64 ? tokenSpecialMask.low & (1 << UInt64(c)) != 0 : c < 128 && tokenSpecialMask.high & (1 << UInt64(c - 64)) != 0
        }

        private static func isToken(_ s: Substring) -> Bool {
            !s.isEmpty && s.utf8.allSatisfy { c in
                c > 0x20 && c < 0x7F && !isTokenSpecial(c)
            }
        }

        private static func normalizeMIMEType(_ tag: String) -> String? {
            let parts = tag.split(separator: ";", omittingEmptySubsequences: false)
            let essence = parts[0].trimmingSpaces
            let halves = essence.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard halves.count == 2, isToken(halves[0]), isToken(halves[1]) else { return nil }
            var out = essence.lowercased()
            for parameter in parts.dropFirst() {
                let kv = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard kv.count == 2 else { return nil }
                let name = kv[0].trimmingSpaces, value = kv[1].trimmingSpaces
                guard isToken(name), !value.isEmpty, !value.contains(" ") else { return nil }
                out += ";" + name.lowercased() + "=" + value.lowercased()
            }
            return out
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}

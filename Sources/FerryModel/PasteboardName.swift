/// Pasteboard names and the object paths the broker serves them at.
///
/// A name is `general` or 1–128 ASCII letters, digits, `.`, `_` and `-`, starting with a letter
/// or digit. On the bus the pasteboard lives at `/org/ferry/Pasteboard/<element>`, where every
/// byte of the name outside `[A-Za-z0-9]` becomes `_` and two lowercase hex digits, so the
/// mapping is one to one (`my.board` → `my_2eboard`, `a_b` → `a_5fb`).
public enum PasteboardName {
    /// The general pasteboard's name.
    public static let general = "general"
    /// The object path under which every pasteboard lives.
    public static let pathPrefix = "/org/ferry/Pasteboard"

    /// Checks a name.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the problem.
    public static func validate(_ name: String) throws {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw FerryModelError(.invalidArgument, "a pasteboard name must not be empty") }
        guard bytes.count <= 128 else {
            throw FerryModelError(.invalidArgument, "a pasteboard name has at most 128 characters")
        }
        guard isAlphanumeric(bytes[0]), bytes.allSatisfy({ isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else {
            throw FerryModelError(.invalidArgument,
                                  "bad pasteboard name \"\(name)\": use letters, digits, '.', '_' and '-', starting with a letter or digit")
        }
    }

    /// The object path of the pasteboard `name` (which must be valid).
    public static func objectPath(_ name: String) -> String {
        var element = ""
        for byte in name.utf8 {
            if isAlphanumeric(byte) {
                element.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                element += "_" + String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
            }
        }
        return pathPrefix + "/" + element
    }

    /// The name whose object path is `path`, nil when `path` is not a pasteboard's.
    public static func name(fromObjectPath path: String) -> String? {
        guard path.hasPrefix(pathPrefix + "/") else { return nil }
        var bytes: [UInt8] = []
        var rest = Array(path.utf8.dropFirst(pathPrefix.utf8.count + 1))[...]
        while let byte = rest.popFirst() {
            if isAlphanumeric(byte) { bytes.append(byte); continue }
            guard byte == 0x5F, rest.count >= 2,
                  let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            rest = rest.dropFirst(2)
            bytes.append(value)
        }
        let name = String(decoding: bytes, as: UTF8.self)
        guard (try? validate(name)) != nil, objectPath(name) == path else { return nil }
        return name
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A)
    }
}

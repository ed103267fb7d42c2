/// Pasteboard names and the object paths the broker serves them at.
///
/// A name is `general` or 1–128 ASCII letters, digits, `.`, `_` and `-`, starting with a letter
/// or digit. On the bus the pasteboard lives at `/org/ferry/Pasteboard/<element>`, where every
/// byte of the name outside `[A-Za-z0-9]` becomes `_` and two lowercase hex digits, so the
/// mapping is one to one (`my.board` → `my_2eboard`, `a_b` → `a_5fb`).
public enum PasteboardName {
    /// The general pasteboard's name.
    public static let general = "general"
    /// The named pasteboard that holds the desktop's primary selection (what was last selected,
    /// pasted with the middle button): ferry-bridge keeps it, `ferry copy/paste --primary` use it.
    public static let primary = "primary"
    /// The object path under which every pasteboard lives.
    public static let pathPrefix = "/org/ferry/Pasteboard"
    /// Names starting with this are the broker's own pasteboards (drag pasteboards,
    /// `org.ferry.drag.<n>`): nobody else may create one.
    public static let reservedPrefix = "org.ferry."

    /// Whether `name` is reserved for the broker's own pasteboards (starts with ``reservedPrefix``).
    public static func isReserved(_ name: String) -> Bool {
        name.hasPrefix(reservedPrefix)
    }

    /// Checks a name.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the problem.
    public static func validate(_ name: String) throws {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw FerryModelError(.invalidArgument, "a pasteboard name must not be empty") }
        guard bytes.count <= 128 else {
            throw FerryModelError(.invalidArgument, "a pasteboard name has at most 128 characters")
        }
        guard ObjectPathElement.isAlphanumeric(bytes[0]), bytes.allSatisfy({ ObjectPathElement.isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else {
            throw FerryModelError(.invalidArgument,
                                  "bad pasteboard name \"\(name)\": use letters, digits, '.', '_' and '-', starting with a letter or digit")
        }
    }

    /// The object path of the pasteboard `name` (which must be valid).
    public static func objectPath(_ name: String) -> String {
        pathPrefix + "/" + ObjectPathElement.escape(name)
    }

    /// The name whose object path is `path`, nil when `path` is not a pasteboard's.
    public static func name(fromObjectPath path: String) -> String? {
        guard path.hasPrefix(pathPrefix + "/"),
              let name = ObjectPathElement.unescape(Substring(path.utf8.dropFirst(pathPrefix.utf8.count + 1))),
              (try? validate(name)) != nil else { return nil }
        return name
    }
}

/// A validated D-Bus object path, such as `/org/ferry/Broker`.
///
/// A path is `/`, or `/` followed by elements of `[A-Za-z0-9_]+` separated by single `/`, with
/// no trailing `/`.
public struct ObjectPath: DBusText {
    /// The path as text.
    public let rawValue: String

    /// Validates `rawValue` as an object path.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidObjectPath` when it breaks the
    ///   rules.
    public init(_ rawValue: String) throws {
        if let why = Self.problem(in: rawValue) {
            let shown = rawValue.debugDescription.dropFirst().dropLast()
            throw DBusError(.invalidObjectPath, "invalid object path '\(shown)': \(why)")
        }
        self.rawValue = rawValue
    }

    /// Wraps a path libdbus has already validated.
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// The root path `/`.
    public static let root = ObjectPath(unchecked: "/")

    /// The path's elements: `[]` for `/`, `["org", "ferry"]` for `/org/ferry`.
    public var elements: [String] {
        rawValue.split(separator: "/").map(String.init)
    }

    /// The path with `element` appended.
    ///
    /// - Throws: `org.ferry.DBus.Error.InvalidObjectPath` when `element` is not
    ///   `[A-Za-z0-9_]+`.
    public func appending(_ element: String) throws -> ObjectPath {
        guard !element.utf8.contains(0x2F) else {
            throw DBusError(.invalidObjectPath, "path element '\(element)' contains '/'")
        }
        return try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The parent path; nil for `/`.
    public var parent: ObjectPath? {
        guard rawValue != "/" else { return nil }
        let slash = rawValue.utf8.lastIndex(of: 0x2F)!
        let prefix = String(rawValue[..<slash])
        return ObjectPath(unchecked: prefix.isEmpty ? "/" : prefix)
    }

    /// True when `self` is `other` or lies beneath it.
    public func isDescendant(of other: ObjectPath) -> Bool {
        if other.rawValue == "/" || other == self { return true }
        return rawValue.hasPrefix(other.rawValue + "/")
    }

    static func problem(in path: String) -> String? {
        let bytes = Array(path.utf8)
        guard bytes.first == 0x2F else { return "must start with '/'" }
        if bytes.count == 1 { return nil }
        guard bytes.last != 0x2F else { return "must not end with '/'" }
        var previousSlash = false
        for b in bytes {
            if b == 0x2F {
                if previousSlash { return "empty element ('//')" }
                previousSlash = true
            } else {
                previousSlash = false
                let ok = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                    || (b >= 0x30 && b <= 0x39) || b == 0x5F
                if !ok { return "only [A-Za-z0-9_] are allowed in an element" }
            }
        }
        return nil
    }
}

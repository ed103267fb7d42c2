/// The D-Bus specification's rules for names, shared by the validated name types.
enum NameRules {
    /// The maximum length in bytes of any bus, interface, member or error name.
    static let maximumLength = 255

    static func isLetterOrUnderscore(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    static func fail(_ kind: String, _ name: String, _ why: String) -> DBusError {
        DBusError(.invalidName, "invalid \(kind) '\(name.debugDescription.dropFirst().dropLast())': \(why)")
    }

    /// Interface and error names: two or more elements of `[A-Za-z_][A-Za-z0-9_]*`.
    static func checkDotted(_ name: String, kind: String) throws {
        // The UTF-8 view is walked in place: these checks run for every name literal evaluated.
        let bytes = name.utf8
        guard !bytes.isEmpty else { throw fail(kind, name, "empty") }
        guard bytes.count <= maximumLength else {
            throw fail(kind, name, "longer than \(maximumLength) bytes")
        }
        var elements = 0
        var elementStart = true
        for b in bytes {
            if b == 0x2E {  // '.'
                if elementStart { throw fail(kind, name, "empty element") }
                elementStart = true
                continue
            }
            if elementStart {
                guard isLetterOrUnderscore(b) else {
                    throw fail(kind, name, "an element must start with a letter or '_'")
                }
                elements += 1
                elementStart = false
            } else if !(isLetterOrUnderscore(b) || isDigit(b)) {
                throw fail(kind, name, "only [A-Za-z0-9_] are allowed in an element")
            }
        }
        if elementStart { throw fail(kind, name, "ends with '.'") }
        guard elements >= 2 else { throw fail(kind, name, "needs at least two elements") }
    }

    /// Member names: one element of `[A-Za-z_][A-Za-z0-9_]*`.
    static func checkMember(_ name: String) throws {
        let bytes = name.utf8
        guard let first = bytes.first else { throw fail("member name", name, "empty") }
        guard bytes.count <= maximumLength else {
            throw fail("member name", name, "longer than \(maximumLength) bytes")
        }
        guard isLetterOrUnderscore(first) else {
            throw fail("member name", name, "must start with a letter or '_'")
        }
        for b in bytes where !(isLetterOrUnderscore(b) || isDigit(b)) {
            throw fail("member name", name, "only [A-Za-z0-9_] are allowed")
        }
    }

    /// Bus names: unique (`:1.42`) or well-known (`org.example.App`); elements of
    /// `[A-Za-z0-9_-]`, at least two, well-known elements not starting with a digit.
    static func checkBusName(_ name: String) throws {
        let kind = "bus name"
        var bytes = Substring(name).utf8
        guard !bytes.isEmpty else { throw fail(kind, name, "empty") }
        guard bytes.count <= maximumLength else {
            throw fail(kind, name, "longer than \(maximumLength) bytes")
        }
        let unique = bytes.first == 0x3A  // ':'
        if unique { bytes = bytes.dropFirst() }
        var elements = 0
        var elementStart = true
        for b in bytes {
            if b == 0x2E {
                if elementStart { throw fail(kind, name, "empty element") }
                elementStart = true
                continue
            }
            let allowed = isLetterOrUnderscore(b) || isDigit(b) || b == 0x2D  // '-'
            guard allowed else { throw fail(kind, name, "only [A-Za-z0-9_-] are allowed") }
            if elementStart {
                if !unique && isDigit(b) {
                    throw fail(kind, name, "an element of a well-known name cannot start with a digit")
                }
                elements += 1
                elementStart = false
            }
        }
        if elementStart { throw fail(kind, name, "ends with '.'") }
        guard elements >= 2 else { throw fail(kind, name, "needs at least two elements") }
    }
}

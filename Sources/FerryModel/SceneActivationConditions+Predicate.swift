/// A predicate over a scene's target content identifier: the small, regex-free subset of
/// NSPredicate that Apple recommends for activation conditions.
///
/// Format grammar (keywords case-insensitive):
/// ```
/// predicate  := or
/// or         := and (("OR" | "||") and)*
/// and        := unary (("AND" | "&&") unary)*
/// unary      := ("NOT" | "!") unary | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := "SELF" op modifier? string | string ("==" | "!=") "SELF" | "SELF" "IN" "{" string ("," string)* "}"
/// op         := "==" | "=" | "!=" | "<>" | "BEGINSWITH" | "ENDSWITH" | "CONTAINS"
/// modifier   := "[c]"                       (case-insensitive)
/// string     := '…' | "…"                   (backslash escapes \\ \' \" \n \t)
/// ```
/// `MATCHES` and `LIKE` (regular expressions, wildcards), key paths other than `SELF`, numbers,
/// variables and the `[d]` modifier are rejected.
public indirect enum ActivationPredicate: Sendable, Hashable, CustomStringConvertible {
    /// How a comparison compares.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// Equal strings (`==`).
        case equal = "=="
        /// Different strings (`!=`).
        case notEqual = "!="
        /// A prefix (`BEGINSWITH`).
        case beginsWith = "BEGINSWITH"
        /// A suffix (`ENDSWITH`).
        case endsWith = "ENDSWITH"
        /// A substring (`CONTAINS`).
        case contains = "CONTAINS"
    }

    /// Always true (`TRUEPREDICATE`).
    case truePredicate
    /// Always false (`FALSEPREDICATE`).
    case falsePredicate
    /// `SELF <operator> 'value'`, optionally case-insensitive (`[c]`).
    case comparison(Operator, String, caseInsensitive: Bool)
    /// `SELF IN {'a', 'b'}`.
    case oneOf([String])
    /// `NOT p`.
    case not(ActivationPredicate)
    /// `p AND q AND …`.
    case and([ActivationPredicate])
    /// `p OR q OR …`.
    case or([ActivationPredicate])

    /// `SELF == 'value'`.
    public static func equals(_ value: String) -> ActivationPredicate { .comparison(.equal, value, caseInsensitive: false) }
    /// `SELF BEGINSWITH 'prefix'`.
    public static func beginsWith(_ prefix: String) -> ActivationPredicate { .comparison(.beginsWith, prefix, caseInsensitive: false) }

    /// At most this many `NOT`s and parentheses enclose any part of a predicate: parsing,
    /// evaluating and formatting recurse once per level, and a predicate comes from the bus.
    public static let maximumDepth = 64

    /// Parses an NSPredicate format string of the supported subset.
    /// - Throws: `FerryModelError` `.invalidArgument` saying what is unsupported or malformed and at
    ///   which character offset, or that it nests deeper than ``maximumDepth``.
    public init(format: String) throws {
        // The two defaults, which most scenes keep, as `format` writes them: no lexing (a listing
        // of 1000 sessions parsed 2000 of them).
        switch format {
        case "TRUEPREDICATE": self = .truePredicate; return
        case "FALSEPREDICATE": self = .falsePredicate; return
        default: break
        }
        var parser = ActivationPredicateParser(format)
        self = try parser.parseAll()
    }

    /// Whether the target content identifier satisfies the predicate. A nil identifier fails every
    /// comparison (so `NOT SELF == 'x'` holds for it).
    public func evaluate(_ identifier: String?) -> Bool {
        switch self {
        case .truePredicate: return true
        case .falsePredicate: return false
        case .not(let p): return !p.evaluate(identifier)
        case .and(let ps): return ps.allSatisfy { $0.evaluate(identifier) }
        case .or(let ps): return ps.contains { $0.evaluate(identifier) }
        case .oneOf(let values):
            guard let identifier else { return false }
            return values.contains(identifier)
        case .comparison(let op, let value, let caseInsensitive):
            guard let identifier else { return false }
            let lhs = caseInsensitive ? identifier.lowercased() : identifier
            let rhs = caseInsensitive ? value.lowercased() : value
            switch op {
            case .equal: return lhs == rhs
            case .notEqual: return lhs != rhs
            case .beginsWith: return lhs.hasPrefix(rhs)
            case .endsWith: return lhs.hasSuffix(rhs)
            case .contains: return rhs.isEmpty || lhs.contains(rhs)
            }
        }
    }

    /// The predicate in NSPredicate format, e.g. `SELF BEGINSWITH "notes/"`; it parses back to an equal predicate.
    public var predicateFormat: String { format(nested: false) }

    /// The ``predicateFormat``.
    public var description: String { predicateFormat }

    private func format(nested: Bool) -> String {
        switch self {
        case .truePredicate: return "TRUEPREDICATE"
        case .falsePredicate: return "FALSEPREDICATE"
        case .comparison(let op, let value, let ci):
            return "SELF \(op.rawValue)\(ci ? "[c]" : "") \(ActivationPredicate.quote(value))"
        case .oneOf(let values):
            return "SELF IN {" + values.map(ActivationPredicate.quote).joined(separator: ", ") + "}"
        case .not(let p): return "NOT " + p.format(nested: true)
        case .and(let ps):
            let text = ps.map { $0.format(nested: true) }.joined(separator: " AND ")
            return nested ? "(\(text))" : text
        case .or(let ps):
            let text = ps.map { $0.format(nested: true) }.joined(separator: " OR ")
            return nested ? "(\(text))" : text
        }
    }

    static func quote(_ value: String) -> String {
        var out = "\""
        for c in value {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(c)
            }
        }
        return out + "\""
    }
}

/// A recursive-descent parser for ``ActivationPredicate`` format strings.
struct ActivationPredicateParser {
    private enum Token: Equatable {
        case word(String)       // identifiers and keywords, as written
        case string(String)
        case symbol(String)     // == = != <> && || ! ( ) { } , [c]
        case end
    }

    private var tokens: [(token: Token, offset: Int)] = []
    private var index = 0
    /// How many `NOT`s and parentheses enclose the current token.
    private var depth = 0
    private let source: String
    private var lexError: FerryModelError?

    init(_ source: String) {
        self.source = source
        do { tokens = try ActivationPredicateParser.lex(source) } catch let e as FerryModelError { lexError = e } catch {}
    }

    mutating func parseAll() throws -> ActivationPredicate {
        if let lexError { throw lexError }
        let predicate = try parseOr()
        guard case .end = current else { throw fail("unexpected \(describe(current))") }
        return predicate
    }

    private var current: Token { tokens[index].token }
    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func fail(_ message: String) -> FerryModelError {
        FerryModelError.invalid("\(message) at offset \(tokens[index].offset) in predicate \"\(source)\"")
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .word(let w): "'\(w)'"
        case .string(let s): "string \(ActivationPredicate.quote(s))"
        case .symbol(let s): "'\(s)'"
        case .end: "end of predicate"
        }
    }

    private func isKeyword(_ token: Token, _ keyword: String) -> Bool {
        if case .word(let w) = token { return w.uppercased() == keyword }
        return false
    }

    private mutating func parseOr() throws -> ActivationPredicate {
        var parts = [try parseAnd()]
        while isKeyword(current, "OR") || current == .symbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws -> ActivationPredicate {
        var parts = [try parseUnary()]
        while isKeyword(current, "AND") || current == .symbol("&&") {
            advance()
            parts.append(try parseUnary())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseUnary() throws -> ActivationPredicate {
        let nests = isKeyword(current, "NOT") || current == .symbol("!") || current == .symbol("(")
        if nests {
            guard depth < ActivationPredicate.maximumDepth else {
                throw fail("nested too deeply (at most \(ActivationPredicate.maximumDepth) NOTs and parentheses)")
            }
            depth += 1
        }
        defer { if nests { depth -= 1 } }
        if isKeyword(current, "NOT") || current == .symbol("!") {
            advance()
            return .not(try parseUnary())
        }
        if current == .symbol("(") {
            advance()
            let inner = try parseOr()
            guard current == .symbol(")") else { throw fail("expected ')', found \(describe(current))") }
            advance()
            return inner
        }
        if isKeyword(current, "TRUEPREDICATE") { advance(); return .truePredicate }
        if isKeyword(current, "FALSEPREDICATE") { advance(); return .falsePredicate }
        return try parseComparison()
    }

    private mutating func parseComparison() throws -> ActivationPredicate {
        switch current {
        case .word(let w) where w.uppercased() == "SELF":
            advance()
            let (op, ci) = try parseOperator()
            if op == nil {   // IN
                return .oneOf(try parseSet())
            }
            if case .word(let w) = current, w.hasPrefix("$") { throw fail("variables are not supported") }
            guard case .string(let value) = current else {
                throw fail("expected a quoted string after the operator, found \(describe(current))")
            }
            advance()
            return .comparison(op!, value, caseInsensitive: ci)
        case .string(let value):
            advance()
            let (op, ci) = try parseOperator()
            guard let op, op == .equal || op == .notEqual else {
                throw fail("only == and != may have the string on the left")
            }
            guard isKeyword(current, "SELF") else { throw fail("expected SELF, found \(describe(current))") }
            advance()
            return .comparison(op, value, caseInsensitive: ci)
        case .word(let w):
            if w.hasPrefix("$") { throw fail("variables are not supported") }
            throw fail("only SELF (the target content identifier) can be compared, found '\(w)'")
        default:
            throw fail("expected a comparison, found \(describe(current))")
        }
    }

    /// The operator and its `[c]` flag; a nil operator means `IN`.
    private mutating func parseOperator() throws -> (ActivationPredicate.Operator?, Bool) {
        let op: ActivationPredicate.Operator?
        switch current {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .word(let w):
            switch w.uppercased() {
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "IN": op = nil
            case "MATCHES", "LIKE":
                throw fail("\(w.uppercased()) is not supported: activation conditions take no regular expressions or wildcards")
            default: throw fail("unsupported operator '\(w)'")
            }
        case .symbol(let s) where ["<", ">", "<=", ">=", "=<", "=>"].contains(s):
            throw fail("ordering comparisons ('\(s)') are not supported")
        default: throw fail("expected an operator, found \(describe(current))")
        }
        advance()
        var caseInsensitive = false
        if case .symbol(let s) = current, s.hasPrefix("[") {
            guard s == "[c]" else { throw fail("only the [c] modifier is supported, found '\(s)'") }
            guard op != nil else { throw fail("IN takes no modifier") }
            caseInsensitive = true
            advance()
        }
        return (op, caseInsensitive)
    }

    private mutating func parseSet() throws -> [String] {
        guard current == .symbol("{") else { throw fail("expected '{' after IN, found \(describe(current))") }
        advance()
        var values: [String] = []
        while true {
            guard case .string(let value) = current else { throw fail("expected a quoted string in the set, found \(describe(current))") }
            values.append(value)
            advance()
            if current == .symbol(",") { advance(); continue }
            guard current == .symbol("}") else { throw fail("expected ',' or '}', found \(describe(current))") }
            advance()
            return values
        }
    }

    private static func lex(_ source: String) throws -> [(token: Token, offset: Int)] {
        let chars = Array(source)
        var out: [(token: Token, offset: Int)] = []
        var i = 0
        func error(_ message: String, _ at: Int) -> FerryModelError {
            FerryModelError.invalid("\(message) at offset \(at) in predicate \"\(source)\"")
        }
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace { i += 1; continue }
            let start = i
            if c == "'" || c == "\"" {
                var value = ""
                i += 1
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == c { closed = true; i += 1; break }
                    if d == "\\" {
                        guard i + 1 < chars.count else { break }
                        let e = chars[i + 1]
                        switch e {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "\\", "'", "\"": value.append(e)
                        default: throw error("unsupported escape '\\\(e)'", i)
                        }
                        i += 2
                        continue
                    }
                    value.append(d)
                    i += 1
                }
                guard closed else { throw error("unterminated string", start) }
                out.append((.string(value), start))
            } else if c.isLetter || c == "_" || c == "$" || c == "@" || c == "#" {
                var word = String(c)
                i += 1
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" || chars[i] == "." {
                    word.append(chars[i]); i += 1
                }
                out.append((.word(word), start))
            } else if c == "[" {
                var text = "["
                i += 1
                while i < chars.count, chars[i] != "]" { text.append(chars[i]); i += 1 }
                guard i < chars.count else { throw error("unterminated modifier", start) }
                text.append("]"); i += 1
                out.append((.symbol(text.lowercased()), start))
            } else if c.isNumber {
                throw error("numbers are not supported", start)
            } else {
                let two = i + 1 < chars.count ? String(chars[i...i + 1]) : ""
                if ["==", "!=", "<>", "&&", "||", "<=", ">=", "=<", "=>"].contains(two) {
                    out.append((.symbol(two), start)); i += 2
                } else if "=!(){},<>".contains(c) {
                    out.append((.symbol(String(c)), start)); i += 1
                } else {
                    throw error("unexpected character '\(c)'", start)
                }
            }
        }
        out.append((.end, chars.count))
        return out
    }
}

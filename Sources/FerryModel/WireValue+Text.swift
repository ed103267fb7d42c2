/// GVariant text format (as `gdbus call` prints it), pretty-printed: one dictionary entry per
/// line, keys sorted, every number annotated with its type. Used for golden files and debugging.
extension WireValue: CustomStringConvertible {
    /// The value on one line, e.g. `<int64 7>` or `{'a': <'b'>}`.
    public var description: String { render(indent: nil) }

    /// The value pretty-printed over several lines with two-space indentation.
    public var prettyText: String { render(indent: "") }

    /// A dictionary pretty-printed as `a{sv}` (the shape of every model value).
    public static func prettyText(_ dictionary: [String: WireValue]) -> String {
        WireValue.dictionary(dictionary).render(indent: "")
    }

    private func render(indent: String?) -> String {
        switch self {
        case .bool(let v): return v ? "true" : "false"
        case .int32(let v): return "int32 \(v)"
        case .int64(let v): return "int64 \(v)"
        case .uint32(let v): return "uint32 \(v)"
        case .uint64(let v): return "uint64 \(v)"
        case .double(let v): return v.isFinite ? "\(v)" : (v.isNaN ? "nan" : (v > 0 ? "inf" : "-inf"))
        case .string(let v): return WireValue.quote(v)
        case .bytes(let v):
            if v.isEmpty { return "@ay []" }
            let hex = v.map { b in "0x" + String(b >> 4, radix: 16) + String(b & 0xF, radix: 16) }
            return "[byte " + hex.joined(separator: ", ") + "]"
        case .strings(let v):
            if v.isEmpty { return "@as []" }
            return "[" + v.map(WireValue.quote).joined(separator: ", ") + "]"
        case .array(let v):
            if v.isEmpty { return "@av []" }
            guard let indent else { return "[" + v.map { "<\($0.render(indent: nil))>" }.joined(separator: ", ") + "]" }
            let inner = indent + "  "
            return "[\n" + v.map { inner + "<\($0.render(indent: inner))>" }.joined(separator: ",\n") + "\n\(indent)]"
        case .dictionary(let d):
            if d.isEmpty { return "@a{sv} {}" }
            let keys = d.keys.sorted()
            guard let indent else {
                return "{" + keys.map { "\(WireValue.quote($0)): <\(d[$0]!.render(indent: nil))>" }.joined(separator: ", ") + "}"
            }
            let inner = indent + "  "
            return "{\n" + keys.map { "\(inner)\(WireValue.quote($0)): <\(d[$0]!.render(indent: inner))>" }
                .joined(separator: ",\n") + "\n\(indent)}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "'"
        for scalar in s.unicodeScalars {
            switch scalar {
            case "'": out += "\\'"
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "'"
    }
}

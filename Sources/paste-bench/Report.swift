#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in microseconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

/// A set of timings (or rates) with percentiles.
struct Samples {
    var values: [Double] = []

    mutating func append(_ value: Double) { values.append(value) }
    mutating func append(contentsOf other: [Double]) { values += other }

    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
        return sorted[index]
    }

    var median: Double { percentile(50) }
}

/// One goal: the ratio (or the value itself) must stay at or under / at or over a bound.
struct Goal {
    enum Kind { case ratioAtMost, ratioAtLeast, valueAtMost }
    var kind: Kind
    var bound: Double
    var label: String? = nil

    static func ratio(atMost bound: Double) -> Goal { Goal(kind: .ratioAtMost, bound: bound) }
    static func ratio(atLeast bound: Double) -> Goal { Goal(kind: .ratioAtLeast, bound: bound) }
    static func value(atMost bound: Double, _ label: String) -> Goal { Goal(kind: .valueAtMost, bound: bound, label: label) }

    var text: String {
        switch kind {
        case .ratioAtMost: return "≤ \(shortNumber(bound))×"
        case .ratioAtLeast: return "≥ \(shortNumber(bound))×"
        case .valueAtMost: return label ?? "≤ \(shortNumber(bound))"
        }
    }

    func met(value: Double, ratio: Double?) -> Bool? {
        switch kind {
        case .ratioAtMost: return ratio.map { $0 <= bound }
        case .ratioAtLeast: return ratio.map { $0 >= bound }
        case .valueAtMost: return value <= bound
        }
    }
}

/// Prints one JSON line in the shape scripts/bench-table.py reads.
func report(_ bench: String, _ metric: String, value: Double, unit: String, anchor: String? = nil,
            anchorValue: Double? = nil, goal: Goal? = nil) {
    let ratio = anchorValue.flatMap { $0 > 0 ? value / $0 : nil }
    var fields = [
        "\"bench\":\(quoted(bench))", "\"metric\":\(quoted(metric))", "\"value\":\(rounded(value))",
        "\"unit\":\(quoted(unit))", "\"anchor\":\(anchor.map(quoted) ?? "null")",
        "\"anchor_value\":\(anchorValue.map(rounded) ?? "null")", "\"ratio\":\(ratio.map(rounded) ?? "null")",
    ]
    fields.append("\"goal\":\(goal.map { quoted($0.text) } ?? "null")")
    let met = goal?.met(value: value, ratio: ratio)
    fields.append("\"met\":\(met.map { $0 ? "true" : "false" } ?? "null")")
    print("{" + fields.joined(separator: ",") + "}")
    fflush(nil)
}

/// A note for the log (stderr): the table script passes non-JSON lines through to stderr anyway.
func note(_ text: String) {
    let line = Array("paste-bench: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func rounded(_ x: Double) -> String { String(Double(Int((x * 1000).rounded())) / 1000) }

func shortNumber(_ x: Double) -> String {
    x == x.rounded() ? String(Int(x)) : String(x)
}

#if canImport(Glibc)
import Glibc
#endif

// What every benchmark executable prints: one JSON line per figure, in the shape
// scripts/bench-table.py turns into BENCHMARKS.md's table, with medians and ratios to an anchor.

/// Monotonic time in microseconds.
public func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

/// A set of timings (or rates) with percentiles.
public struct Samples: Sendable {
    /// The samples, in the order they were taken.
    public var values: [Double] = []

    /// An empty set.
    public init() {}

    /// Adds one sample.
    public mutating func append(_ value: Double) { values.append(value) }
    /// Adds several samples.
    public mutating func append(contentsOf other: [Double]) { values += other }

    /// The `p`th percentile (nearest rank), 0 when empty.
    public func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
        return sorted[index]
    }

    /// The median.
    public var median: Double { percentile(50) }
}

/// One goal: the ratio (or the value itself) must stay at or under / at or over a bound, or a
/// goal stated in words whose verdict the benchmark decides itself.
public struct Goal: Sendable {
    enum Kind: Sendable { case ratioAtMost(Double), ratioAtLeast(Double), valueAtMost(Double), described(Bool?) }
    var kind: Kind
    /// The goal as the table shows it.
    public var text: String

    /// The ratio to the anchor must be at most `bound`.
    public static func ratio(atMost bound: Double) -> Goal { Goal(kind: .ratioAtMost(bound), text: "≤ \(shortNumber(bound))×") }
    /// The ratio to the anchor must be at least `bound`.
    public static func ratio(atLeast bound: Double) -> Goal { Goal(kind: .ratioAtLeast(bound), text: "≥ \(shortNumber(bound))×") }
    /// The value itself must be at most `bound`; `label` is how the table states it.
    public static func value(atMost bound: Double, _ label: String) -> Goal { Goal(kind: .valueAtMost(bound), text: label) }
    /// A goal in words (`O(1): ≤ anchor`), met or not as the benchmark judged.
    public static func described(_ text: String, met: Bool?) -> Goal { Goal(kind: .described(met), text: text) }

    func met(value: Double, ratio: Double?) -> Bool? {
        switch kind {
        case .ratioAtMost(let bound): return ratio.map { $0 <= bound }
        case .ratioAtLeast(let bound): return ratio.map { $0 >= bound }
        case .valueAtMost(let bound): return value <= bound
        case .described(let met): return met
        }
    }
}

/// Prints one JSON line in the shape scripts/bench-table.py reads.
public func report(_ bench: String, _ metric: String, value: Double, unit: String, anchor: String? = nil,
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

/// `text` as a JSON string.
public func quoted(_ text: String) -> String {
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

/// `x` with at most three decimals, for JSON.
public func rounded(_ x: Double) -> String { String(Double(Int((x * 1000).rounded())) / 1000) }

/// `x` without a trailing `.0`.
public func shortNumber(_ x: Double) -> String {
    x == x.rounded() ? String(Int(x)) : String(x)
}

/// The running benchmark's name (its executable's file name).
public var benchProgram: String { String(Spawn.ownPath.split(separator: "/").last ?? "bench") }

/// A note for the log (stderr), prefixed with the benchmark's name: the table script passes
/// non-JSON lines through anyway.
public func note(_ text: String) {
    let line = Array("\(benchProgram): \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

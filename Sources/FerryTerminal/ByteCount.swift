/// A size in bytes as a person writes it on a command line: a decimal number, optionally followed
/// by K, M or G in either case (binary units: 1K is 1024 bytes), as `--disk-budget 512M`.
public struct ByteCount: CustomStringConvertible, Sendable, Hashable {
    /// The number of bytes.
    public let bytes: Int64

    /// A count of `bytes`.
    public init(_ bytes: Int64) { self.bytes = bytes }

    /// Reads `512M`, `4g`, `1000`; nil for anything else (a sign, a fraction, an overflow).
    public init?(_ text: String) {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last?.uppercased().first, let factor = units[last] {
            unit = factor
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let number = Int64(digits),
              number <= Int64.max / unit else { return nil }
        bytes = number * unit
    }

    /// The largest unit that divides it evenly: `4G`, `256M`, `1000`.
    public var description: String {
        for (suffix, unit) in [("G", Int64(1) << 30), ("M", 1 << 20), ("K", 1 << 10)] where bytes != 0 && bytes % unit == 0 {
            return "\(bytes / unit)\(suffix)"
        }
        return "\(bytes)"
    }
}

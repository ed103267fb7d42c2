#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PropertyListValue {
    /// The key that marks a date inside a property-list dictionary on the wire:
    /// `{"$date": <int64 microseconds since 1970-01-01T00:00:00Z>}`.
    public static let wireDateKey = "$date"

    /// The value on the wire: string `s`, integer `x`, real `d`, boolean `b`, data `ay`, array `av`,
    /// dictionary `a{sv}`, date `a{sv}` `{"$date": x}` (microseconds since the Unix epoch, rounded
    /// to the nearest microsecond).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path of a dictionary that uses
    ///   the reserved key `$date`, or of nesting deeper than ``WireValue/maximumDepth``.
    public func wireValue() throws -> WireValue {
        try wireValue(at: "", depth: 0)
    }

    private func wireValue(at path: String, depth: Int) throws -> WireValue {
        switch self {
        case .string(let v): return .string(v)
        case .integer(let v): return .int64(v)
        case .real(let v): return .double(v)
        case .boolean(let v): return .bool(v)
        case .data(let v): return .bytes(v)
        case .date(let v): return .dictionary([PropertyListValue.wireDateKey: .int64(PropertyListValue.microseconds(v))])
        case .array(let vs):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            return .array(try vs.enumerated().map { try $0.element.wireValue(at: KeyPath.index(path, $0.offset), depth: depth + 1) })
        case .dictionary(let d):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            var out: [String: WireValue] = [:]
            for (key, value) in d {
                let at = KeyPath.join(path, key)
                if key == PropertyListValue.wireDateKey {
                    throw FerryModelError.invalid("the key \"$date\" is reserved for dates on the wire", at: at)
                }
                out[key] = try value.wireValue(at: at, depth: depth + 1)
            }
            return .dictionary(out)
        }
    }

    /// Reads a property-list value from the wire (see ``wireValue()``). Any integer width that fits
    /// in `Int64` is an integer; `as` is an array of strings.
    /// - Parameter keyPath: where the value is, for error messages.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path of a malformed date
    ///   dictionary, an unsigned integer above `Int64.max`, or nesting that is too deep.
    public init(wireValue: WireValue, keyPath: String = "") throws {
        self = try PropertyListValue.read(wireValue, at: keyPath, depth: 0)
    }

    private static func read(_ value: WireValue, at path: String, depth: Int) throws -> PropertyListValue {
        switch value {
        case .string(let v): return .string(v)
        case .bool(let v): return .boolean(v)
        case .double(let v): return .real(v)
        case .bytes(let v): return .data(v)
        case .int32, .int64, .uint32, .uint64:
            guard let n = value.integerValue else {
                throw FerryModelError.invalid("\(value) does not fit a signed 64-bit integer", at: path.isEmpty ? nil : path)
            }
            return .integer(n)
        case .strings(let ss): return .array(ss.map { .string($0) })
        case .array(let vs):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            return .array(try vs.enumerated().map { try read($0.element, at: KeyPath.index(path, $0.offset), depth: depth + 1) })
        case .dictionary(let d):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            if let marker = d[wireDateKey] {
                let at = KeyPath.join(path, wireDateKey)
                guard d.count == 1, let micros = marker.integerValue else {
                    throw FerryModelError.invalid("a date must be exactly {\"$date\": <int64 microseconds>}", at: at)
                }
                return .date(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            }
            var out: [String: PropertyListValue] = [:]
            for (key, element) in d { out[key] = try read(element, at: KeyPath.join(path, key), depth: depth + 1) }
            return .dictionary(out)
        }
    }

    /// Microseconds since the Unix epoch, rounded to the nearest and clamped to `Int64`.
    static func microseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite else { return 0 }
        return Int64(exactly: value) ?? (value < 0 ? .min : .max)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A property-list value: the value set of `NSUserActivity.userInfo` and of Info.plist files.
///
/// Apple's userInfo also admits `NSNull`, `NSSet`, `NSURL` and `NSUUID`; Ferry maps them when
/// converting from Swift values (``init(converting:)``): a `URL` becomes its absolute string, a
/// `UUID` its `uuidString`, a `Set` an array (in unspecified order). `NSNull` has no equivalent and
/// is rejected, as is every other non-plist value.
public enum PropertyListValue: Sendable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`: signed 64-bit. Unsigned values above `Int64.max` are rejected.
    case integer(Int64)
    /// `<real>`: a double.
    case real(Double)
    /// `<true/>` / `<false/>`.
    case boolean(Bool)
    /// `<date>`: an instant.
    case date(Date)
    /// `<data>`: bytes.
    case data(Data)
    /// `<array>`.
    case array([PropertyListValue])
    /// `<dict>`: string keys.
    case dictionary([String: PropertyListValue])

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The integer, if this is an integer.
    public var integerValue: Int64? { if case .integer(let v) = self { v } else { nil } }
    /// The number as a double, if this is a real or an integer.
    public var realValue: Double? {
        switch self {
        case .real(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }
    /// The boolean, if this is a boolean.
    public var booleanValue: Bool? { if case .boolean(let v) = self { v } else { nil } }
    /// The date, if this is a date.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The bytes, if this is data.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The elements, if this is an array.
    public var arrayValue: [PropertyListValue]? { if case .array(let v) = self { v } else { nil } }
    /// The entries, if this is a dictionary.
    public var dictionaryValue: [String: PropertyListValue]? { if case .dictionary(let v) = self { v } else { nil } }

    /// A name for the value's kind, as used in error messages: `string`, `integer`, `dictionary`, ….
    public var kindName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .boolean: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// Converts a Swift value into a property-list value.
    ///
    /// Accepted: `PropertyListValue`, `String`, `Substring`, every fixed-width integer that fits in
    /// `Int64`, `Double`, `Float`, `Bool`, `Date`, `Data`, `URL` (its absolute string), `UUID` (its
    /// `uuidString`), arrays and sets of accepted values, and dictionaries with `String` keys.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path of the first value that is
    ///   not a property-list value (e.g. `owner.avatar: a Foo is not a property-list value`).
    public init(converting value: Any) throws {
        self = try PropertyListValue.convert(value, at: "")
    }

    /// Converts a `[String: Any]` dictionary, as `userInfo` is written in Apple code.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key of the first non-plist value.
    public static func dictionary(converting values: [String: Any]) throws -> [String: PropertyListValue] {
        var out: [String: PropertyListValue] = [:]
        for (key, value) in values { out[key] = try convert(value, at: key) }
        return out
    }

    private static func convert(_ value: Any, at path: String) throws -> PropertyListValue {
        switch value {
        case let v as PropertyListValue: return v
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Bool: return .boolean(v)
        case let v as Int: return .integer(Int64(v))
        case let v as Int8: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int32: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as UInt8: return .integer(Int64(v))
        case let v as UInt16: return .integer(Int64(v))
        case let v as UInt32: return .integer(Int64(v))
        case let v as UInt: return try unsigned(UInt64(v), at: path)
        case let v as UInt64: return try unsigned(v, at: path)
        case let v as Double: return .real(v)
        case let v as Float: return .real(Double(v))
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as URL: return .string(v.absoluteString)
        case let v as UUID: return .string(v.uuidString)
        case let v as [Any]:
            return .array(try v.enumerated().map { try convert($0.element, at: KeyPath.index(path, $0.offset)) })
        case let v as Set<AnyHashable>:
            return .array(try v.map { try convert($0.base, at: path) })
        case let v as [String: Any]:
            var out: [String: PropertyListValue] = [:]
            for (key, element) in v { out[key] = try convert(element, at: KeyPath.join(path, key)) }
            return .dictionary(out)
        case let v as [AnyHashable: Any]:
            var out: [String: PropertyListValue] = [:]
            for (key, element) in v {
                guard let key = key.base as? String else {
                    throw FerryModelError.invalid("dictionary key \(key) is a \(type(of: key.base)), not a string",
                                                  at: path.isEmpty ? nil : path)
                }
                out[key] = try convert(element, at: KeyPath.join(path, key))
            }
            return .dictionary(out)
        default:
            let described = Mirror(reflecting: value).displayStyle == .optional ? "nil" : "a \(type(of: value))"
            throw FerryModelError.invalid("\(described) is not a property-list value", at: path.isEmpty ? nil : path)
        }
    }

    private static func unsigned(_ v: UInt64, at path: String) throws -> PropertyListValue {
        guard let signed = Int64(exactly: v) else {
            throw FerryModelError.invalid("\(v) does not fit a signed 64-bit property-list integer",
                                          at: path.isEmpty ? nil : path)
        }
        return .integer(signed)
    }
}

extension PropertyListValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    /// An array literal.
    public init(arrayLiteral elements: PropertyListValue...) { self = .array(elements) }
    /// A dictionary literal; a repeated key keeps the last value.
    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

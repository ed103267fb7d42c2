import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Conversions between the model's `WireValue` and D-Bus values, and the small decoding helpers
/// the client uses on replies.
enum WireBridge {
    /// A D-Bus value as a `WireValue`; nil for what the model has no case for (fds, structs).
    static func wire(_ value: DBusValue) -> WireValue? {
        switch value.unwrappingVariants {
        case .boolean(let v): return .bool(v)
        case .byte(let v): return .uint32(UInt32(v))
        case .int16(let v): return .int32(Int32(v))
        case .uint16(let v): return .uint32(UInt32(v))
        case .int32(let v): return .int32(v)
        case .uint32(let v): return .uint32(v)
        case .int64(let v): return .int64(v)
        case .uint64(let v): return .uint64(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .objectPath(let v): return .string(v.rawValue)
        case .signature(let v): return .string(v.rawValue)
        case .bytes(let v): return .bytes(Data(v))
        case .array(let element, let elements):
            if element == .string { return .strings(elements.compactMap { if case .string(let s) = $0 { s } else { nil } }) }
            return .array(elements.compactMap(wire))
        case .dictionary(_, _, let entries):
            return .dictionary(dictionary(entries))
        case .unixFD, .structure, .variant:
            return nil
        }
    }

    /// An `a{sv}` (or any string-keyed dictionary) as a wire dictionary.
    static func dictionary(_ value: DBusValue) -> [String: WireValue]? {
        guard case .dictionary(_, _, let entries) = value.unwrappingVariants else { return nil }
        return dictionary(entries)
    }

    private static func dictionary(_ entries: [DBusDictionaryEntry]) -> [String: WireValue] {
        var out: [String: WireValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key.unwrappingVariants, let value = wire(entry.value) else { continue }
            out[key] = value
        }
        return out
    }

    /// A `WireValue` as a D-Bus value (`av` elements are variants, `a{sv}` values too).
    static func dbus(_ value: WireValue) -> DBusValue {
        switch value {
        case .bool(let v): return .boolean(v)
        case .int32(let v): return .int32(v)
        case .int64(let v): return .int64(v)
        case .uint32(let v): return .uint32(v)
        case .uint64(let v): return .uint64(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .bytes(let v): return .bytes(Array(v))
        case .strings(let v): return .array(of: .string, v.map(DBusValue.string))
        case .array(let v): return .array(of: .variant, v.map { .variant(dbus($0)) })
        case .dictionary(let v): return dbus(v)
        }
    }

    /// A wire dictionary as an `a{sv}` value.
    static func dbus(_ dictionary: [String: WireValue]) -> DBusValue {
        var out: [String: DBusValue] = [:]
        for (key, value) in dictionary { out[key] = dbus(value) }
        return out.dbusValue
    }

    /// The elements of an `aa{sv}` / `av of a{sv}` reply value as dictionaries of D-Bus values.
    static func dictionaries(_ value: DBusValue) throws -> [[String: DBusValue]] {
        guard case .array(_, let elements) = value.unwrappingVariants else {
            throw DBusError(.invalidArgs, "expected an array of dictionaries, found '\(value.signature)'")
        }
        return try elements.map { try [String: DBusValue](dbusValue: $0.unwrappingVariants) }
    }

    /// A content type from an identifier the broker sent: the declared type when this process
    /// knows it, else the identifier as it is (conforming only to itself and `public.item`).
    static func contentType(_ identifier: String) throws -> ContentType {
        try ItemProvider.RepresentationInfo(wireDictionary: ["type": .string(identifier)]).contentType
    }

    /// A date from microseconds since 1970.
    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// Microseconds since 1970 for a date.
    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }
}

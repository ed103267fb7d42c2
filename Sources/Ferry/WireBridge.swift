import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The small decoding helpers the client uses on replies (wire values and D-Bus values convert
/// through `FerryBus`).
enum WireBridge {
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PropertyListValue {
    /// How a property list is written out.
    public enum Format: String, Sendable, Hashable {
        /// Apple's XML property list (`<?xml …?><plist version="1.0">`).
        case xml
        /// Apple's binary property list (`bplist00`).
        case binary
    }

    /// Parses a property list: XML, binary (`bplist00`) or OpenStep text, detected from the bytes.
    ///
    /// Uses FoundationEssentials' `PropertyListDecoder`. One loss: a `<real>` with an integral value
    /// (`2.0`) is read back as `.integer(2)`, because the decoder cannot tell the two apart.
    /// The bytes are first checked against ``PropertyListLimits`` (depth, values, expanded bytes,
    /// no cycles), so a hostile list is refused in time linear in its size.
    /// - Throws: `FerryModelError` `.invalidArgument` ("not a property list: …") when the bytes do
    ///   not parse or pass a bound.
    public init(propertyListData data: Data) throws {
        try PropertyListLimits.check(data)
        do {
            self = try PropertyListDecoder().decode(PlistNode.self, from: data).value
        } catch let error as FerryModelError {
            throw error
        } catch {
            throw FerryModelError.invalid("not a property list: \(PropertyListValue.reason(error))")
        }
    }

    /// Serializes the value as a property list.
    /// - Parameter format: `.xml` or `.binary`.
    /// - Throws: `FerryModelError` `.invalidArgument` when the encoder refuses the value.
    public func propertyListData(format: Format = .binary) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format == .xml ? .xml : .binary
        do {
            return try encoder.encode(PlistNode(self))
        } catch {
            throw FerryModelError.invalid("cannot write a property list: \(PropertyListValue.reason(error))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            if let cocoa = context.underlyingError as? CocoaError,
               let text = cocoa.userInfo["NSDebugDescription"] as? String {
                return text
            }
            return context.debugDescription
        default:
            return String(describing: error)
        }
    }
}

/// Bridges `PropertyListValue` to the Codable property-list coders of FoundationEssentials.
struct PlistNode: Codable {
    var value: PropertyListValue

    init(_ value: PropertyListValue) { self.value = value }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var out: [String: PropertyListValue] = [:]
            for key in keyed.allKeys { out[key.stringValue] = try keyed.decode(PlistNode.self, forKey: key).value }
            value = .dictionary(out)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var out: [PropertyListValue] = []
            while !unkeyed.isAtEnd { out.append(try unkeyed.decode(PlistNode.self).value) }
            value = .array(out)
            return
        }
        let single = try decoder.singleValueContainer()
        if let v = try? single.decode(Bool.self) { value = .boolean(v) }
        else if let v = try? single.decode(Int64.self) { value = .integer(v) }
        else if let v = try? single.decode(Double.self) { value = .real(v) }
        else if let v = try? single.decode(Date.self) { value = .date(v) }
        else if let v = try? single.decode(Data.self) { value = .data(v) }
        else { value = .string(try single.decode(String.self)) }
    }

    func encode(to encoder: any Encoder) throws {
        switch value {
        case .dictionary(let entries):
            var keyed = encoder.container(keyedBy: Key.self)
            for key in entries.keys.sorted() { try keyed.encode(PlistNode(entries[key]!), forKey: Key(stringValue: key)) }
        case .array(let elements):
            var unkeyed = encoder.unkeyedContainer()
            for element in elements { try unkeyed.encode(PlistNode(element)) }
        case .string(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        case .integer(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        case .real(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        case .boolean(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        case .date(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        case .data(let v): var c = encoder.singleValueContainer(); try c.encode(v)
        }
    }
}

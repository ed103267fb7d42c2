#if canImport(FoundationEssentials)
import FerrySystem
import FoundationEssentials
#else
import Foundation
#endif

/// A representable type the Swift wire codec marshals and reads straight from the message
/// bytes for its declared signature, with no `DBusValue` in between: the typed path of
/// `Message.methodCall(…arguments:)`, `Message.methodReturn(replyingTo:values:)` and
/// `Message.arguments(as:)`.
///
/// Each type's wire form is written here once. Types without a conformance (a `FileDescriptor`,
/// which only libdbus can attach, or a type of another module) go through `DBusValue` and the
/// value codec instead, so every representable type still works on the typed calls.
protocol WireCodable: DBusRepresentable {
    /// Reads one value at `reader`'s position (aligning first). The message was validated by
    /// libdbus against its signature, which the caller checked is `dbusSignature`.
    static func read(from reader: inout WireReader) throws -> Self
    /// Writes `self` at `writer`'s position (aligning first).
    ///
    /// - Throws: `DBusError` when the value cannot go on the wire (a string with NUL, an array
    ///   over the limit), before anything reaches libdbus.
    func write(to writer: inout WireWriter) throws
    /// The wire alignment of the type (of its first byte).
    static var wireAlignment: Int { get }
    /// About how many bytes `write` takes, for the buffer's first size (it grows as needed).
    var wireLengthHint: Int { get }
    /// Whether this is an `ay` over `Message.wireWriterLimit`, which libdbus appends in fewer
    /// copies (as a top-level value).
    var isLargeByteArray: Bool { get }
}

extension WireCodable {
    var wireLengthHint: Int { 8 }
    var isLargeByteArray: Bool { false }
}

/// The fixed-width integers, written and read in the message's byte order as they are.
protocol WireInteger: WireCodable, FixedWidthInteger {}

extension WireInteger {
    static func read(from reader: inout WireReader) throws -> Self { try reader.fixed(Self.self) }
    func write(to writer: inout WireWriter) { writer.fixed(self) }
    static var wireAlignment: Int { MemoryLayout<Self>.size }
}

extension UInt8: WireInteger {}
extension Int16: WireInteger {}
extension UInt16: WireInteger {}
extension Int32: WireInteger {}
extension UInt32: WireInteger {}
extension Int64: WireInteger {}
extension UInt64: WireInteger {}

extension Int: WireCodable {
    static func read(from reader: inout WireReader) throws -> Int { Int(try reader.fixed(Int64.self)) }
    func write(to writer: inout WireWriter) { writer.fixed(Int64(self)) }
    static var wireAlignment: Int { 8 }
}

extension UInt: WireCodable {
    static func read(from reader: inout WireReader) throws -> UInt { UInt(try reader.fixed(UInt64.self)) }
    func write(to writer: inout WireWriter) { writer.fixed(UInt64(self)) }
    static var wireAlignment: Int { 8 }
}

extension Bool: WireCodable {
    static func read(from reader: inout WireReader) throws -> Bool { try reader.boolean() }
    func write(to writer: inout WireWriter) { writer.fixed(UInt32(self ? 1 : 0)) }
    static var wireAlignment: Int { 4 }
}

extension Double: WireCodable {
    static func read(from reader: inout WireReader) throws -> Double {
        Double(bitPattern: try reader.fixed(UInt64.self))
    }
    func write(to writer: inout WireWriter) { writer.fixed(bitPattern) }
    static var wireAlignment: Int { 8 }
}

extension String: WireCodable {
    static func read(from reader: inout WireReader) throws -> String { try reader.string() }
    func write(to writer: inout WireWriter) throws {
        // A Swift String is always valid UTF-8, so only NUL needs a check.
        guard !utf8.contains(0) else { throw DBusError.invalidValue("string contains NUL") }
        writer.string(self)
    }
    static var wireAlignment: Int { 4 }
}

extension ObjectPath: WireCodable {
    static func read(from reader: inout WireReader) throws -> ObjectPath {
        try reader.objectPath()
    }
    /// An `ObjectPath` is checked when it is made.
    func write(to writer: inout WireWriter) { writer.string(rawValue) }
    static var wireAlignment: Int { 4 }
}

extension Signature: WireCodable {
    static func read(from reader: inout WireReader) throws -> Signature {
        Signature(unchecked: try reader.signature())
    }
    /// A `Signature` is checked when it is made.
    func write(to writer: inout WireWriter) { writer.signature(rawValue) }
    static var wireAlignment: Int { 1 }
}

extension DBusValue: WireCodable {
    /// Reads a `v`: the value inside it (as `init(dbusValue:)` unwraps one variant).
    static func read(from reader: inout WireReader) throws -> DBusValue {
        try reader.enter()
        defer { reader.leave() }
        return try reader.value(try reader.variantType())
    }

    /// Writes `self` in a variant, after the checks `Message`'s value path makes.
    ///
    /// - Throws: `WireWriter.NeedsLibdbus` when it holds a unix fd; `DBusError` when it fails
    ///   validation.
    func write(to writer: inout WireWriter) throws {
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            // Every value of a fixed-width type is valid: no validation walk.
            let node = try BodyValidator.node(of: self)
            writer.signature(of: [node])
            writer.append(self, node)
            return
        default: break
        }
        var validator = BodyValidator()
        let nodes = try validator.check(body: [.variant(self)], headerLength: 0)
        guard validator.unixFDs == 0 else { throw WireWriter.NeedsLibdbus() }
        writer.append(.variant(self), nodes[0])
    }

    static var wireAlignment: Int { 1 }
}

extension Array: WireCodable where Element: WireCodable {
    /// Reads an array; an `ay` in one copy.
    static func read(from reader: inout WireReader) throws -> [Element] {
        let end = try reader.arrayEnd(alignment: Element.wireAlignment)
        if Element.self == UInt8.self {
            return unsafeBitCast([UInt8](reader.rawBytes(to: end)), to: [Element].self)
        }
        var elements: [Element] = []
        while reader.position < end { elements.append(try Element.read(from: &reader)) }
        try reader.expectEnd(end)
        return elements
    }

    /// Writes an array; an `ay` in one copy.
    func write(to writer: inout WireWriter) throws {
        let array = writer.startArray(elementAlignment: Element.wireAlignment)
        if Element.self == UInt8.self {
            unsafeBitCast(self, to: [UInt8].self).withUnsafeBytes { writer.raw($0) }
        } else {
            for element in self { try element.write(to: &writer) }
        }
        try writer.endCheckedArray(array)
    }

    static var wireAlignment: Int { 4 }

    var wireLengthHint: Int {
        if Element.self == UInt8.self { return 4 + count }
        return reduce(8) { $0 + $1.wireLengthHint }
    }

    var isLargeByteArray: Bool { Element.self == UInt8.self && count > Message.wireWriterLimit }
}

extension Data: WireCodable {
    static func read(from reader: inout WireReader) throws -> Data {
        let end = try reader.arrayEnd(alignment: 1)
        return Data(reader.rawBytes(to: end))
    }

    func write(to writer: inout WireWriter) throws {
        let array = writer.startArray(elementAlignment: 1)
        withUnsafeBytes { writer.raw($0) }
        try writer.endCheckedArray(array)
    }

    static var wireAlignment: Int { 4 }

    var isLargeByteArray: Bool { count > Message.wireWriterLimit }
}

extension Dictionary: WireCodable where Key: WireCodable & DBusBasicRepresentable, Value: WireCodable {
    /// Reads an `a{kv}`; a repeated key keeps its last value (as `init(dbusValue:)`).
    static func read(from reader: inout WireReader) throws -> [Key: Value] {
        if Key.self == String.self, Value.self == DBusValue.self {
            // An `a{sv}`, the commonest: read concretely, not through generic dictionary code
            // (this runs behind an existential, unspecialized).
            return unsafeBitCast(try readVariantDictionary(from: &reader), to: [Key: Value].self)
        }
        let end = try reader.arrayEnd(alignment: 8)
        var result: [Key: Value] = [:]
        while reader.position < end {
            try reader.align(8)
            let key = try Key.read(from: &reader)
            result[key] = try Value.read(from: &reader)
        }
        try reader.expectEnd(end)
        return result
    }

    private static func readVariantDictionary(from reader: inout WireReader) throws -> [String: DBusValue] {
        let end = try reader.arrayEnd(alignment: 8)
        var result: [String: DBusValue] = [:]
        while reader.position < end {
            try reader.align(8)
            let key = try reader.string()
            result[key] = try DBusValue.read(from: &reader)
        }
        try reader.expectEnd(end)
        return result
    }

    /// Writes an `a{kv}` with its entries sorted by key, as `dbusValue` orders them.
    func write(to writer: inout WireWriter) throws {
        guard !isEmpty else {
            // Nothing to sort (an empty `a{sv}` of options is common).
            let array = writer.startArray(elementAlignment: 8)
            return try writer.endCheckedArray(array)
        }
        let ordered: [(key: Key, value: Value)]
        if Key.self == String.self {
            // Strings sort as themselves: no sort key to make.
            ordered = sorted { ($0.key as! String) < ($1.key as! String) }
        } else {
            ordered = map { (DBusValue.sortKey($0.key.dbusValue), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let array = writer.startArray(elementAlignment: 8)
        for (key, value) in ordered {
            writer.align(8)
            try key.write(to: &writer)
            try value.write(to: &writer)
        }
        try writer.endCheckedArray(array)
    }

    static var wireAlignment: Int { 4 }
}

extension WireWriter {
    /// Thrown by a typed value the Swift marshaller cannot write (one holding a unix fd): the
    /// message is then built from `DBusValue`s by libdbus.
    struct NeedsLibdbus: Error {}
}

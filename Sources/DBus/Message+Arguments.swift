#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Message {
    /// The body converted to the given types, in order.
    ///
    /// ```swift
    /// let (name, flags) = try call.arguments(as: String.self, UInt32.self)
    /// ```
    ///
    /// Values are read straight from the message's bytes for these types, with no `DBusValue` in
    /// between, unless the message carries unix fds (libdbus hands those out) or a type has no
    /// wire form of its own (see `WireCodable`), which are read as `DBusValue`s and converted.
    ///
    /// Inlinable, so it is specialized where it is called: unspecialized, it looked up the
    /// metadata of the tuple of results and of each type in the runtime's caches on every call.
    ///
    /// - Throws: `InvalidArgs` naming the expected and actual signatures when the body does not
    ///   have exactly these types.
    @inlinable
    public func arguments<each T: DBusRepresentable>(as types: repeat (each T).Type) throws
        -> (repeat each T)
    {
        var expected = ""
        for type in repeat each types { expected += type.dbusSignature.rawValue }
        let actual = signature
        guard actual.rawValue == expected else {
            throw DBusError.typeMismatch(expected: expected, actual: actual, context: "the arguments")
        }
        do {
            // libdbus's message is copied out first: not for types that would end in `DBusValue`.
            var allTyped = true
            if !isWireMessage {
                for type in repeat each types {
                    if !Self.hasWireForm(type) { allTyped = false }
                }
            }
            if allTyped, let typed = try withBodyReader({ reader in (repeat try Self.read(each types, from: &reader)) }) {
                return typed
            }
        } catch is NoWireForm {
            // A type without a wire form of its own: all of them through `DBusValue` below.
        }
        let values = try body
        var index = 0
        func next<U: DBusRepresentable>(_ type: U.Type) throws -> U {
            defer { index += 1 }
            return try U(dbusValue: values[index])
        }
        return (repeat try next(each types))
    }

    /// Whether the message is Ferry's own bytes, not libdbus's.
    @usableFromInline
    var isWireMessage: Bool { wire != nil }

    /// Whether `U` has a wire form of its own.
    @usableFromInline
    static func hasWireForm<U: DBusRepresentable>(_ type: U.Type) -> Bool { type is any WireCodable.Type }

    /// One value read by its type's wire form.
    /// - Throws: `NoWireForm` when `U` has none (before reading anything), or what the read throws.
    @usableFromInline
    static func read<U: DBusRepresentable>(_ type: U.Type, from reader: inout WireReader) throws -> U {
        guard let codable = U.self as? any WireCodable.Type else { throw NoWireForm() }
        return try read(codable, as: U.self, from: &reader)
    }

    /// `C.read`, its value given as `U`, the same type (one cast fewer than `as! U` from the
    /// existential).
    private static func read<C: WireCodable, U>(_ codable: C.Type, as type: U.Type, from reader: inout WireReader) throws -> U {
        unsafeBitCast(try C.read(from: &reader), to: U.self)
    }

    /// A type without a wire form of its own was met: the body goes through `DBusValue`.
    @usableFromInline
    struct NoWireForm: Error {
        @usableFromInline init() {}
    }

    /// A method call whose arguments are marshalled straight from these Swift values for their
    /// types' signatures, with no `DBusValue` in between (see `arguments(as:)` for the types
    /// that take this path; the others, and values holding unix fds, go through `DBusValue`).
    ///
    /// ```swift
    /// let call = try Message.methodCall(destination: name, path: path, interface: nil, member: "Read",
    ///                                   arguments: UInt32(0), "public.utf8-plain-text", options)
    /// ```
    ///
    /// - Parameters: as for `methodCall(destination:path:interface:member:body:noReplyExpected:)`.
    /// - Throws: `DBusError` when a value fails validation (a string with NUL, an array or
    ///   message over the limits).
    public static func methodCall<each T: DBusRepresentable>(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: repeat each T, noReplyExpected: Bool = false
    ) throws -> Message {
        try build(WireWriter.Header(kind: .methodCall, flags: noReplyExpected ? WireWriter.noReplyExpected : 0,
                                    path: path.rawValue, interface: interface?.rawValue, member: member.rawValue,
                                    destination: destination?.rawValue),
                  values: repeat each arguments)
    }

    /// A successful reply to `call` whose values are marshalled straight from these Swift
    /// values, as `methodCall(destination:path:interface:member:arguments:noReplyExpected:)`
    /// does.
    ///
    /// - Throws: `DBusError` when a value fails validation.
    public static func methodReturn<each T: DBusRepresentable>(replyingTo call: Message, values: repeat each T)
        throws -> Message
    {
        let (serial, sender) = try call.replyAddress()
        return try build(WireWriter.Header(kind: .methodReturn, flags: WireWriter.noReplyExpected,
                                           replySerial: serial, destination: sender),
                         values: repeat each values)
    }

    /// Builds a message from typed values: marshalled here when every value has a wire form
    /// and holds no unix fd, else from their `DBusValue`s like `build(_:body:marshaller:)`.
    static func build<each T: DBusRepresentable>(_ header: WireWriter.Header, values: repeat each T,
                                                 marshaller: Marshaller = .automatic) throws -> Message {
        var signature = ""
        var typed = marshaller != .libdbus
        // Cast once each: the writer takes them from here.
        var codables: [any WireCodable] = []
        var length = 0
        for value in repeat each values {
            signature += type(of: value).dbusSignature.rawValue
            if typed, let codable = value as? any WireCodable, !codable.isLargeByteArray {
                codables.append(codable)
                length += codable.wireLengthHint
            } else {
                typed = false
            }
        }
        if typed {
            var header = header
            header.serial = nextSerial()
            // Checks the length and nesting; the values' own checks are their `write`s. Each
            // value's signature is one complete type, so one of up to 32 characters is within
            // both limits (nesting needs a character a level) and needs no parse.
            if signature.utf8.count > 32 { _ = try SignatureParser.parse(signature) }
            do {
                return Message(try WireWriter.message(
                    header, signature: signature, capacity: headerLengthBound(header) + length,
                    bigEndian: marshaller == .swiftBigEndian,
                    body: { writer in
                        for codable in codables { try codable.write(to: &writer) }
                    }))
            } catch is WireWriter.NeedsLibdbus {
                // A variant holding a unix fd: libdbus attaches it below.
            }
        }
        var body: [DBusValue] = []
        for value in repeat each values { body.append(value.dbusValue) }
        return try build(header, body: body, marshaller: marshaller == .swiftBigEndian ? .swift : marshaller)
    }
}

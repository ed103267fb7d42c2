import CDBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A D-Bus message: a method call, a method return, an error or a signal.
///
/// Build one with the factory functions (`methodCall`, `methodReturn`, `error`, `signal`), which
/// validate the body before libdbus sees it; read headers through the properties and the body
/// through `body`. A message is not changed after it is built.
public final class Message: @unchecked Sendable {
    // Safe to share: libdbus locks a message once it has been sent, and this class exposes no
    // mutation after construction (the factories append the body before returning it). Header
    // getters fill libdbus's lazy field cache, so this class's own reads go through `access`.
    let raw: OpaquePointer

    /// Serializes this class's reads of `raw` (libdbus header reads update a cache).
    private let access = Mutex(())

    /// Takes ownership of one reference to `raw`.
    init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { dbus_message_unref(raw) }

    /// Runs `body` with the libdbus message while holding this message's read lock.
    func withRaw<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try access.withLock { _ in try body(raw) }
    }

    /// The four kinds of message.
    public enum Kind: Sendable, Hashable {
        /// A method call.
        case methodCall
        /// A successful reply to a method call.
        case methodReturn
        /// An error reply to a method call.
        case error
        /// A signal.
        case signal
    }
}

// MARK: - Building

extension Message {
    /// A method call.
    ///
    /// - Parameters:
    ///   - destination: the bus name to deliver to; nil on a peer-to-peer connection.
    ///   - path: the object to call.
    ///   - interface: the interface of the method; nil leaves it to the receiver.
    ///   - member: the method name.
    ///   - body: the arguments.
    ///   - noReplyExpected: tells the receiver not to reply.
    /// - Throws: `DBusError` when a value fails validation (see `DBusError`).
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [DBusValue] = [], noReplyExpected: Bool = false
    ) throws -> Message {
        // The body first, then the header fields (see `appendBody`).
        let message = try adopt(dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_CALL))
        if noReplyExpected { dbus_message_set_no_reply(message.raw, 1) }
        try message.appendBody(body, headerText: textLength(destination?.rawValue, path.rawValue,
                                                            interface?.rawValue, member.rawValue))
        try message.setField(dbus_message_set_path(message.raw, path.rawValue))
        try message.setField(dbus_message_set_member(message.raw, member.rawValue))
        if let interface { try message.setField(dbus_message_set_interface(message.raw, interface.rawValue)) }
        if let destination { try message.setField(dbus_message_set_destination(message.raw, destination.rawValue)) }
        return message
    }

    /// A successful reply to `call`.
    ///
    /// - Throws: `DBusError` when a value fails validation.
    public static func methodReturn(replyingTo call: Message, body: [DBusValue] = []) throws -> Message {
        // What dbus_message_new_method_return makes, with the body before the header fields
        // (see `appendBody`).
        let serial = dbus_message_get_serial(call.raw)
        guard serial != 0 else { throw DBusError(.failed, "cannot reply to a message that was never sent") }
        let message = try adopt(dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN))
        dbus_message_set_no_reply(message.raw, 1)
        try message.appendBody(body, headerText: call.senderLength)
        try message.setField(dbus_message_set_reply_serial(message.raw, serial))
        if let sender = dbus_message_get_sender(call.raw) {
            try message.setField(dbus_message_set_destination(message.raw, sender))
        }
        return message
    }

    /// An error reply to `call` carrying `name` and, as its single string argument, `message`.
    ///
    /// NUL characters in `message` are replaced with U+FFFD rather than rejected, so an error
    /// reply can always be built.
    public static func error(replyingTo call: Message, name: ErrorName, message text: String) throws
        -> Message
    {
        let message = try adopt(dbus_message_new_error(call.raw, name.rawValue, nil))
        let clean = text.utf8.contains(0) ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
        try message.appendBody([.string(clean)], headerText: call.senderLength + name.rawValue.utf8.count)
        return message
    }

    /// An error reply to `call` made from `error`.
    public static func error(replyingTo call: Message, _ error: DBusError) throws -> Message {
        try self.error(replyingTo: call, name: error.name, message: error.message)
    }

    /// A signal, broadcast unless `destination` is given.
    ///
    /// - Throws: `DBusError` when a value fails validation.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [DBusValue] = [],
        destination: BusName? = nil
    ) throws -> Message {
        // The body first, then the header fields (see `appendBody`).
        let message = try adopt(dbus_message_new(CDBUS_MESSAGE_TYPE_SIGNAL))
        dbus_message_set_no_reply(message.raw, 1)
        try message.appendBody(body, headerText: textLength(path.rawValue, interface.rawValue, member.rawValue,
                                                            destination?.rawValue))
        try message.setField(dbus_message_set_path(message.raw, path.rawValue))
        try message.setField(dbus_message_set_interface(message.raw, interface.rawValue))
        try message.setField(dbus_message_set_member(message.raw, member.rawValue))
        if let destination { try message.setField(dbus_message_set_destination(message.raw, destination.rawValue)) }
        return message
    }

    /// Parses a marshalled message (the D-Bus wire format), validating it fully.
    ///
    /// Unix fds are not part of the bytes, so bytes of a message that carried fds are
    /// rejected (libdbus reports the fds missing).
    ///
    /// - Throws: `DBusError` (from libdbus, typically `InvalidArgs`) on malformed bytes.
    public convenience init(wireBytes: [UInt8]) throws {
        guard wireBytes.count >= 16 else {
            throw DBusError(.invalidArgs, "malformed message: \(wireBytes.count) bytes is shorter than a header")
        }
        guard wireBytes.count <= BodyValidator.maximumMessageLength else {
            throw DBusError.limitsExceeded("message of \(wireBytes.count) bytes")
        }
        let raw = try DBusError.check { error in
            wireBytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    dbus_message_demarshal($0.baseAddress, Int32($0.count), error)
                }
            }
        }
        guard let raw else { throw DBusError(.invalidArgs, "malformed message") }
        self.init(taking: raw)
    }

    /// The message in the D-Bus wire format (without any unix fds).
    ///
    /// A message that was never sent has no serial; its bytes get serial 1.
    public func wireBytes() throws -> [UInt8] {
        try withRaw { try Self.marshal($0) }
    }

    private static func marshal(_ raw: OpaquePointer) throws -> [UInt8] {
        var source = raw
        var copy: OpaquePointer? = nil
        if dbus_message_get_serial(raw) == 0 {
            guard let c = dbus_message_copy(raw) else { throw DBusError(.noMemory, "out of memory") }
            dbus_message_set_serial(c, 1)
            copy = c
            source = c
        }
        defer { if let copy { dbus_message_unref(copy) } }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(source, &pointer, &length) != 0, let pointer else {
            throw DBusError(.noMemory, "out of memory")
        }
        defer { dbus_free(pointer) }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
    }

    private static func adopt(_ raw: OpaquePointer?) throws -> Message {
        guard let raw else { throw DBusError(.noMemory, "libdbus could not allocate a message") }
        return Message(taking: raw)
    }

    /// Validates `values` and appends them. Only the factories call it, once, before they set
    /// any header field but the flags: libdbus rewrites the header's signature field after each
    /// top-level value, walking every field before it, so on a full header (path, interface,
    /// member, destination) a body of four values cost 3–4 times one of a single value.
    ///
    /// - Parameter headerText: the total length of the header's strings (path, interface,
    ///   member, destination, sender, error name), which the factory knows: reading them back
    ///   from libdbus would make it re-parse the header it just built.
    func appendBody(_ values: [DBusValue], headerText: Int) throws {
        guard !values.isEmpty else { return }
        var validator = BodyValidator()
        let nodes = try validator.check(body: values, headerLength: Self.headerLengthBound(text: headerText))
        try MessageWriter.append(values, nodes: nodes, to: raw)
    }

    /// Throws when libdbus could not set a header field (it only fails for memory).
    private func setField(_ done: dbus_bool_t) throws {
        guard done != 0 else { throw DBusError(.noMemory, "libdbus is out of memory") }
    }

    /// An upper bound of the header's marshalled length, given the total length of its strings:
    /// fixed part, reply serial, unix fds, signature (≤ 255), and padding for each of the six
    /// string fields.
    private static func headerLengthBound(text: Int) -> Int {
        16 + 16 + 16 + 8 + 255 + 8 + 6 * 16 + text
    }

    /// The length of the sender's name (the destination of a reply to this message).
    private var senderLength: Int {
        withRaw { raw in dbus_message_get_sender(raw).map { strlen($0) } ?? 0 }
    }
}

/// The total UTF-8 length of up to four optional header strings.
private func textLength(_ a: String?, _ b: String?, _ c: String?, _ d: String?) -> Int {
    (a?.utf8.count ?? 0) + (b?.utf8.count ?? 0) + (c?.utf8.count ?? 0) + (d?.utf8.count ?? 0)
}

// MARK: - Reading

extension Message {
    /// The kind of message.
    public var kind: Kind {
        switch withRaw({ dbus_message_get_type($0) }) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: return .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: return .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: return .error
        default: return .signal
        }
    }

    /// The object path: set on method calls and signals.
    public var path: ObjectPath? { text(dbus_message_get_path).map(ObjectPath.init(unchecked:)) }

    /// The interface: set on signals, optional on method calls.
    public var interface: InterfaceName? {
        text(dbus_message_get_interface).map(InterfaceName.init(unchecked:))
    }

    /// The method or signal name.
    public var member: MemberName? {
        text(dbus_message_get_member).map(MemberName.init(unchecked:))
    }

    /// The unique name of the sending connection (set by the bus).
    public var sender: BusName? {
        text(dbus_message_get_sender).map(BusName.init(unchecked:))
    }

    /// The bus name the message is addressed to, if any.
    public var destination: BusName? {
        text(dbus_message_get_destination).map(BusName.init(unchecked:))
    }

    /// The serial number, assigned when the message is sent; 0 before.
    public var serial: UInt32 { withRaw { dbus_message_get_serial($0) } }

    /// For replies, the serial of the call they answer.
    public var replySerial: UInt32? {
        let value = withRaw { dbus_message_get_reply_serial($0) }
        return value == 0 ? nil : value
    }

    /// For error replies, the error name.
    public var errorName: ErrorName? {
        text(dbus_message_get_error_name).map(ErrorName.init(unchecked:))
    }

    /// The body's signature (empty when there is no body).
    public var signature: Signature {
        text(dbus_message_get_signature).map(Signature.init(unchecked:)) ?? .empty
    }

    /// True when the sender of a method call asked for no reply.
    public var noReplyExpected: Bool { withRaw { dbus_message_get_no_reply($0) } != 0 }

    /// The body's values, in order. Each read of a `h` gives a new owned `FileDescriptor`.
    ///
    /// - Throws: `DBusError` when the body cannot be read (for example an `h` in a message
    ///   parsed from bytes, which carries no fds).
    public var body: [DBusValue] {
        get throws { try withRaw { try MessageReader.readBody(of: $0) } }
    }

    /// A header string read under the lock.
    private func text(_ getter: (OpaquePointer?) -> UnsafePointer<CChar>?) -> String? {
        withRaw { getter($0).map { String(cString: $0) } }
    }

    /// For an error reply, the error it carries: its name and first string argument.
    public var error: DBusError? {
        guard kind == .error, let name = errorName else { return nil }
        var text = ""
        if case .string(let s)? = try? body.first { text = s }
        return DBusError(name, text)
    }
}

extension Message: CustomStringConvertible {
    /// A one-line summary: kind, serial, addresses, member and signature.
    public var description: String {
        var parts = ["\(kind)", "serial=\(serial)"]
        if let replySerial { parts.append("reply_serial=\(replySerial)") }
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature='\(signature)'")
        return parts.joined(separator: " ")
    }
}

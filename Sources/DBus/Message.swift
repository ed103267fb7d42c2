import CDBus
import FerrySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A D-Bus message: a method call, a method return, an error or a signal.
///
/// Build one with the factory functions (`methodCall`, `methodReturn`, `error`, `signal`), which
/// validate the body and marshal it; read headers through the properties and the body through
/// `body`. A message is not changed after it is built.
///
/// A message is held in one of two forms: its wire bytes and unix fds (``WireMessage``: every
/// message built here, and every message a ``WireTransport`` receives), or a libdbus message
/// (received on a libdbus connection, or built by libdbus: large byte arrays). A libdbus
/// connection that sends a message of the first form gets a libdbus copy, made once.
public final class Message: @unchecked Sendable {
    // Safe to share: `wire` is immutable; the libdbus form is made and read under `access`
    // (libdbus header reads update a cache), and libdbus locks a message once it has been sent.
    /// The bytes and fds; nil for a message libdbus made.
    let wire: WireMessage?

    /// The libdbus form: given, or made from `wire` when a libdbus connection first needs it.
    /// Read and set only under `access`.
    private var raw: OpaquePointer?
    /// Serializes this class's uses of `raw`.
    private let access = Mutex(())

    /// Built by this library's factories (not received or parsed); such a message may change
    /// until it is first sent.
    private let built: Bool
    private let sent = Atomic<Bool>(false)

    /// Takes ownership of one reference to `raw`.
    init(taking raw: OpaquePointer, built: Bool = false) {
        wire = nil
        self.raw = raw
        self.built = built
    }

    /// A message of wire bytes (built here, or received and parsed).
    init(_ wire: WireMessage) {
        self.wire = wire
        raw = nil
        built = wire.built
    }

    /// Notes a send; true the first time for a message built here, which may then still change
    /// (libdbus locks its copy when it sends it).
    func markSent() -> Bool {
        built && !sent.exchange(true, ordering: .acquiringAndReleasing)
    }

    deinit {
        if let raw { dbus_message_unref(raw) }
    }

    /// Runs `body` with the libdbus form while holding this message's read lock, making that form
    /// first if need be.
    /// - Throws: `DBusError` when libdbus cannot hold it (out of memory), or what `body` throws.
    func withRaw<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        try access.withLock { _ in
            if raw == nil, let wire { raw = try Self.libdbusMessage(of: wire) }
            guard let raw else { throw DBusError(.failed, "a message with neither form") }
            return try body(raw)
        }
    }

    /// Runs `body` with the libdbus form of a message that has one from the start (received from
    /// libdbus); nil for one of wire bytes.
    func withLibdbus<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R? {
        guard wire == nil else { return nil }
        return try access.withLock { _ -> R? in
            guard let raw else { return nil }
            return try body(raw)
        }
    }

    /// The message as wire bytes and fds, for a ``WireTransport``: its own, or made from the
    /// libdbus form (marshalled; read and written again when it holds unix fds, which libdbus
    /// does not marshal).
    func wireForm() throws -> WireMessage {
        if let wire { return wire }
        guard try withRaw({ dbus_message_contains_unix_fds($0) != 0 }) else {
            return try WireMessage(parsing: try wireBytes(), fds: [])
        }
        var header = WireWriter.Header(
            kind: kind, flags: noReplyExpected ? WireWriter.noReplyExpected : 0, serial: serial,
            path: path?.rawValue, interface: interface?.rawValue, member: member?.rawValue,
            errorName: errorName?.rawValue, replySerial: replySerial, destination: destination?.rawValue)
        let body = try self.body
        var validator = BodyValidator()
        let bound = Self.headerLengthBound(header)
        let nodes = try validator.check(body: body, headerLength: bound)
        header.unixFDs = validator.unixFDs
        return try WireWriter.message(header, body: body, nodes: nodes, capacity: bound + validator.offset)
    }

    /// libdbus's copy of `wire`: parsed from its bytes, or, for one with unix fds (which
    /// libdbus parses only with the fds it received itself), appended value by value.
    private static func libdbusMessage(of wire: WireMessage) throws -> OpaquePointer {
        guard !wire.fds.isEmpty else {
            let raw = try wire.bytes.withUnsafeBytes(demarshal)
            guard let raw else { throw DBusError(.failed, "libdbus rejected a message this library marshalled") }
            return raw
        }
        let body = try wire.body()
        var validator = BodyValidator()
        return try appended(wire.fields.header, body: body, nodes: try validator.check(body: body, headerLength: 0))
    }

    /// A libdbus message of `header` and `body` (validated: `nodes` are its types), appended
    /// through libdbus's iterators: the body first, then the header fields.
    private static func appended(_ header: WireWriter.Header, body: [DBusValue], nodes: [TypeNode]) throws
        -> OpaquePointer {
        guard let raw = dbus_message_new(header.kind.code) else {
            throw DBusError(.noMemory, "libdbus could not allocate a message")
        }
        do {
            if !body.isEmpty { try MessageWriter.append(body, nodes: nodes, to: raw) }
            try setHeader(header, of: raw)
            return raw
        } catch {
            dbus_message_unref(raw)
            throw error
        }
    }

    /// Sets `header`'s fields on a libdbus message (after its body: libdbus rewrites the
    /// signature field after each top-level value, walking every field before it).
    private static func setHeader(_ header: WireWriter.Header, of raw: OpaquePointer) throws {
        if header.flags & WireWriter.noReplyExpected != 0 { dbus_message_set_no_reply(raw, 1) }
        var set = true
        if let path = header.path { set = set && dbus_message_set_path(raw, path) != 0 }
        if let interface = header.interface { set = set && dbus_message_set_interface(raw, interface) != 0 }
        if let member = header.member { set = set && dbus_message_set_member(raw, member) != 0 }
        if let name = header.errorName { set = set && dbus_message_set_error_name(raw, name) != 0 }
        if let serial = header.replySerial { set = set && dbus_message_set_reply_serial(raw, serial) != 0 }
        if let destination = header.destination { set = set && dbus_message_set_destination(raw, destination) != 0 }
        guard set else { throw DBusError(.noMemory, "libdbus is out of memory") }
        dbus_message_set_serial(raw, header.serial)
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

        /// The libdbus (and wire) type code.
        var code: Int32 {
            switch self {
            case .methodCall: CDBUS_MESSAGE_TYPE_METHOD_CALL
            case .methodReturn: CDBUS_MESSAGE_TYPE_METHOD_RETURN
            case .error: CDBUS_MESSAGE_TYPE_ERROR
            case .signal: CDBUS_MESSAGE_TYPE_SIGNAL
            }
        }
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
        try build(WireWriter.Header(kind: .methodCall,
                                    flags: noReplyExpected ? WireWriter.noReplyExpected : 0,
                                    path: path.rawValue, interface: interface?.rawValue, member: member.rawValue,
                                    destination: destination?.rawValue), body: body)
    }

    /// A successful reply to `call`.
    ///
    /// - Throws: `DBusError` when a value fails validation.
    public static func methodReturn(replyingTo call: Message, body: [DBusValue] = []) throws -> Message {
        let (serial, sender) = try call.replyAddress()
        return try build(WireWriter.Header(kind: .methodReturn, flags: WireWriter.noReplyExpected,
                                           replySerial: serial, destination: sender), body: body)
    }

    /// An error reply to `call` carrying `name` and, as its single string argument, `message`.
    ///
    /// NUL characters in `message` are replaced with U+FFFD rather than rejected, so an error
    /// reply can always be built.
    public static func error(replyingTo call: Message, name: ErrorName, message text: String) throws
        -> Message
    {
        let (serial, sender) = try call.replyAddress()
        let clean = text.utf8.contains(0) ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
        return try build(WireWriter.Header(kind: .error, flags: WireWriter.noReplyExpected,
                                           errorName: name.rawValue, replySerial: serial, destination: sender),
                         body: [.string(clean)])
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
        try build(WireWriter.Header(kind: .signal, flags: WireWriter.noReplyExpected,
                                    path: path.rawValue, interface: interface.rawValue, member: member.rawValue,
                                    destination: destination?.rawValue), body: body)
    }

    /// The serial and sender of a call, which a reply to it is addressed by.
    func replyAddress() throws -> (UInt32, String?) {
        guard serial != 0, !built else {
            throw DBusError(.failed, "cannot reply to a message that was never received")
        }
        return (serial, sender?.rawValue)
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
        guard let raw = try wireBytes.withUnsafeBytes(Self.demarshal) else {
            throw DBusError(.invalidArgs, "malformed message")
        }
        self.init(taking: raw)
    }

    /// The message in the D-Bus wire format (without any unix fds).
    public func wireBytes() throws -> [UInt8] {
        if let wire { return wire.bytes }
        return try withRaw { raw in
            var pointer: UnsafeMutablePointer<CChar>? = nil
            var length: Int32 = 0
            guard dbus_message_marshal(raw, &pointer, &length) != 0, let pointer else {
                throw DBusError(.noMemory, "out of memory")
            }
            defer { dbus_free(pointer) }
            return Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        }
    }

    /// Builds a message: validates the body, then marshals it here (see `WireWriter`) unless it
    /// carries byte arrays of more than `wireWriterLimit` bytes in all and no unix fds: libdbus
    /// appends those.
    static func build(_ header: WireWriter.Header, body: [DBusValue],
                      marshaller: Marshaller = .automatic) throws -> Message {
        var header = header
        header.serial = nextSerial()
        var validator = BodyValidator()
        let headerBound = headerLengthBound(header)
        let nodes = try validator.check(body: body, headerLength: headerBound)
        header.unixFDs = validator.unixFDs
        let small = validator.byteArrayLength <= wireWriterLimit
        if validator.unixFDs > 0 || (marshaller == .automatic ? small : marshaller != .libdbus) {
            return Message(try WireWriter.message(header, body: body, nodes: nodes, capacity: headerBound + validator.offset,
                                                  bigEndian: marshaller == .swiftBigEndian))
        }
        return Message(taking: try appended(header, body: body, nodes: nodes), built: true)
    }

    /// Who marshals a message's body; tests pin one to compare them (and the readers, on a
    /// message in the byte order this machine does not use).
    enum Marshaller { case automatic, swift, swiftBigEndian, libdbus }

    /// The most bytes of `ay` values a body marshalled in Swift carries (64 KiB): parsing copies
    /// the message twice, which on large byte arrays costs more than libdbus's appending (one
    /// copy). Other values cost libdbus far more to append than to parse, however many.
    static let wireWriterLimit = 64 * 1024

    /// The serial of the next message built here.
    ///
    /// Taken at build time from the upper half of the serial space, so the messages libdbus
    /// numbers itself as it sends them (from 1 up: `Hello`, match rules, `Peer` replies) never
    /// share one with these; it keeps a serial it finds set.
    static func nextSerial() -> UInt32 {
        0x8000_0000 | (serials.wrappingAdd(1, ordering: .relaxed).newValue & 0x7FFF_FFFF)
    }

    private static let serials = Atomic<UInt32>(0)

    static func demarshal(_ bytes: UnsafeRawBufferPointer) throws -> OpaquePointer? {
        try DBusError.check { error in
            dbus_message_demarshal(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), error)
        }
    }

    /// An upper bound of the header's marshalled length: fixed part, reply serial, unix fds,
    /// signature (≤ 255), and padding for each of the six string fields.
    static func headerLengthBound(_ header: WireWriter.Header) -> Int {
        16 + 16 + 16 + 8 + 255 + 8 + 6 * 16 + WireWriter.textLength(header)
    }
}

// MARK: - Reading

extension Message {
    /// The kind of message.
    public var kind: Kind {
        if let wire { return wire.fields.header.kind }
        return withLibdbus { Kind(code: dbus_message_get_type($0)) ?? .signal } ?? .signal
    }

    /// The object path: set on method calls and signals.
    public var path: ObjectPath? {
        (wire.map { $0.fields.header.path } ?? libdbusText(dbus_message_get_path)).map(ObjectPath.init(unchecked:))
    }

    /// The interface: set on signals, optional on method calls.
    public var interface: InterfaceName? {
        (wire.map { $0.fields.header.interface } ?? libdbusText(dbus_message_get_interface)).map(InterfaceName.init(unchecked:))
    }

    /// The method or signal name.
    public var member: MemberName? {
        (wire.map { $0.fields.header.member } ?? libdbusText(dbus_message_get_member)).map(MemberName.init(unchecked:))
    }

    /// The unique name of the sending connection (set by the bus).
    public var sender: BusName? {
        (wire.map { $0.fields.sender } ?? libdbusText(dbus_message_get_sender)).map(BusName.init(unchecked:))
    }

    /// The bus name the message is addressed to, if any.
    public var destination: BusName? {
        (wire.map { $0.fields.header.destination } ?? libdbusText(dbus_message_get_destination)).map(BusName.init(unchecked:))
    }

    /// The serial number: given when the message is built, or by the sender of one received.
    public var serial: UInt32 {
        wire?.fields.header.serial ?? withLibdbus { dbus_message_get_serial($0) } ?? 0
    }

    /// For replies, the serial of the call they answer.
    public var replySerial: UInt32? {
        if let wire { return wire.fields.header.replySerial }
        let value = withLibdbus { dbus_message_get_reply_serial($0) } ?? 0
        return value == 0 ? nil : value
    }

    /// For error replies, the error name.
    public var errorName: ErrorName? {
        (wire.map { $0.fields.header.errorName } ?? libdbusText(dbus_message_get_error_name)).map(ErrorName.init(unchecked:))
    }

    /// The body's signature (empty when there is no body).
    public var signature: Signature {
        (wire?.fields.signature ?? libdbusText(dbus_message_get_signature)).map(Signature.init(unchecked:)) ?? .empty
    }

    /// True when the sender of a method call asked for no reply.
    public var noReplyExpected: Bool {
        if let wire { return wire.fields.header.flags & WireWriter.noReplyExpected != 0 }
        return withLibdbus { dbus_message_get_no_reply($0) != 0 } ?? false
    }

    /// The body's values, in order. Each read of a `h` gives a new owned `FileDescriptor`.
    ///
    /// - Throws: `DBusError` when the body cannot be read (for example an `h` in a message
    ///   parsed from bytes, which carries no fds).
    public var body: [DBusValue] {
        get throws {
            if let wire { return try wire.body() }
            return try withRaw { raw in try WireReader.readBody(of: raw) ?? MessageReader.readBody(of: raw) }
        }
    }

    /// A header string of a message libdbus made, read under the lock.
    private func libdbusText(_ getter: (OpaquePointer?) -> UnsafePointer<CChar>?) -> String? {
        withLibdbus { getter($0).map { String(cString: $0) } } ?? nil
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

import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// A private libdbus connection and the broker calls a paste and a copy make, each blocking (this
/// process does nothing else meanwhile): `Broker1.Pasteboard`, `Pasteboard1.Read` and
/// `Pasteboard1.FinishTransfer` (here), `Pasteboard1.SetItems` (`BrokerLink+Writing`), with the
/// arguments, options and time limits the full CLI's client library uses. Method calls leave auto-start on, so the bus activates ferryd when it is not running.
struct BrokerLink {
    private let connection: OpaquePointer

    private static let broker = "org.ferry.Broker"

    /// Connects to `address` and says Hello; nil when the bus cannot be reached.
    init?(address: UnsafePointer<CChar>) {
        var error = cdbus_error_init()
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else { return nil }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            return nil
        }
        self.connection = connection
    }

    /// Closes the connection.
    func close() {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    /// What one Read delivered. D-Bus: the reply of `org.ferry.Pasteboard1.Read`.
    struct Read {
        /// Where the bytes are.
        enum Content {
            /// The bytes themselves, inside the reply message (a reference the caller gives back
            /// with ``release()``). Not copied into an array: the front's first array of
            /// bytes costs it a metadata instantiation (tens of µs, BENCHMARKS.md P6).
            case bytes(UnsafeRawBufferPointer, reply: OpaquePointer)
            /// A descriptor to read to end of file (owned).
            case stream(Int32)

            /// Releases the reply or closes the descriptor.
            func release() {
                switch self {
                case .bytes(_, let reply): dbus_message_unref(reply)
                case .stream(let fd): _ = Glibc.close(fd)
                }
            }
        }
        /// -1 when the source has not said.
        var size: Int64
        var content: Content
        /// Empty unless the bytes are promised: then the id to confirm with `finishTransfer`.
        var transfer: String
    }

    /// How a Read ended.
    enum ReadResult {
        /// The broker delivered (and logged the paste).
        case delivered(Read)
        /// The broker answered with an error, or the call could not be made: nothing was pasted,
        /// so the full CLI may ask again and explain.
        case refused
        /// The broker may have delivered without the answer arriving (no reply in time), the
        /// broker cannot be started (asking again would start it again), or it answered in a
        /// shape the full CLI rejects too: report this, do not ask again.
        case failed(FrontFailure)
    }

    /// How a call ended.
    enum Answer<Value> {
        /// The broker answered.
        case answered(Value)
        /// The broker answered with an error, or in a shape the front does not take (nothing
        /// changed): the full CLI may ask again, or the front may report this failure, as the
        /// full CLI would.
        case refused(FrontFailure)
        /// As `ReadResult.failed`: report this, do not ask again.
        case failed(FrontFailure)
    }

    /// The object path of the pasteboard `name`. A paste never creates one (`create` false: one
    /// that does not exist is refused, and the full CLI reports `NotFound`); a copy does, as the
    /// full CLI's `copy` asks for it.
    ///
    /// D-Bus: `org.ferry.Broker1.Pasteboard`.
    func pasteboardPath(_ name: String, create: Bool) -> Answer<String> {
        let reply = call(path: "/org/ferry/Broker", interface: "org.ferry.Broker1", member: "Pasteboard",
                         timeoutMilliseconds: 30_000) { iter in
            Self.append(name, to: &iter) && Self.appendOptions(to: &iter) { create || Self.appendBool("create", false, to: &$0) }
        }
        switch reply {
        case nil:
            return .refused(FrontFailure(status: 1, message: "out of memory"))
        case .error(let name, let message)?:
            return Self.answer(toError: name, message)
        case .message(let message)?:
            defer { dbus_message_unref(message) }
            var iter = DBusMessageIter()
            guard dbus_message_has_signature(message, "o") != 0, dbus_message_iter_init(message, &iter) != 0,
                  let path = Self.string(at: &iter) else {
                return .refused(FrontFailure(busErrorName: "org.ferry.Error.Bus", message: "Broker1.Pasteboard answered without an object path"))
            }
            return .answered(path)
        }
    }

    /// An error reply: refused, except the replies `reportedHere` names.
    static func answer<Value>(toError name: String, _ message: String) -> Answer<Value> {
        if let failure = reportedHere(name, message) { return .failed(failure) }
        return .refused(FrontFailure(busErrorName: name, message: message))
    }

    /// The error replies the front reports itself, as the full CLI would, instead of handing the
    /// paste over: no reply in time (the broker may yet have done it, and asking again would wait
    /// as long again) and a broker the bus cannot start (asking again would start it again).
    static func reportedHere(_ name: String, _ message: String) -> FrontFailure? {
        switch name {
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
             "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
             _ where name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            return FrontFailure(busErrorName: name, message: message)
        default:
            return nil
        }
    }

    /// Reads item `item` of the pasteboard at `path` in `type`, with no options (no user action,
    /// no fd preference, no change count), as `ferry paste` does.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Read`.
    func read(path: String, item: UInt32, type: String) -> ReadResult {
        let reply = call(path: path, interface: "org.ferry.Pasteboard1", member: "Read", timeoutMilliseconds: 90_000) { iter in
            var index = item
            return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &index) != 0
                && Self.append(type, to: &iter) && Self.appendEmptyOptions(to: &iter)
        }
        switch reply {
        case nil:
            return .refused
        case .error(let name, let message)?:
            return Self.reportedHere(name, message).map { .failed($0) } ?? .refused
        case .message(let message)?:
            defer { dbus_message_unref(message) }
            return Self.decodeRead(message)
        }
    }

    /// Waits until the source of a promised read finished; the number of bytes it wrote.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.FinishTransfer`.
    func finishTransfer(path: String, transfer: String) -> Result<UInt64, FrontFailure> {
        let reply = call(path: path, interface: "org.ferry.Pasteboard1", member: "FinishTransfer",
                         timeoutMilliseconds: 90_000) { iter in Self.append(transfer, to: &iter) }
        switch reply {
        case nil:
            return .failure(FrontFailure(status: 1, message: "out of memory"))
        case .error(let name, let message)?:
            return .failure(FrontFailure(busErrorName: name, message: message))
        case .message(let message)?:
            defer { dbus_message_unref(message) }
            var iter = DBusMessageIter()
            guard dbus_message_has_signature(message, "t") != 0, dbus_message_iter_init(message, &iter) != 0 else {
                return .failure(FrontFailure(status: 1, message: "FinishTransfer answered with an unexpected signature"))
            }
            var written: UInt64 = 0
            dbus_message_iter_get_basic(&iter, &written)
            return .success(written)
        }
    }

    // MARK: - Messages

    enum Reply {
        case message(OpaquePointer)
        case error(name: String, message: String)
    }

    /// Sends a method call to the broker and waits for its reply; nil when the call could not be
    /// built (out of memory).
    func call(path: String, interface: String, member: String, timeoutMilliseconds: Int32,
                      arguments: (inout DBusMessageIter) -> Bool) -> Reply? {
        guard let message = dbus_message_new_method_call(Self.broker, path, interface, member) else { return nil }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        guard arguments(&iter) else { return nil }
        var error = cdbus_error_init()
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, timeoutMilliseconds, &error) else {
            let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            return .error(name: name, message: error.message.map { String(cString: $0) } ?? "")
        }
        return .message(reply)
    }

    /// The Read reply `sxvs` as the client library decodes it, with its messages for a bad shape.
    private static func decodeRead(_ message: OpaquePointer) -> ReadResult {
        let unexpected = ReadResult.failed(FrontFailure(status: 1, message: "Pasteboard1.Read answered with an unexpected signature"))
        var iter = DBusMessageIter()
        // The delivered type is only checked, never kept: no Swift string is made of it (the
        // front's first native string freed costs a metadata instantiation too).
        var delivered: UnsafePointer<CChar>?
        guard dbus_message_has_signature(message, "sxvs") != 0, dbus_message_iter_init(message, &iter) != 0 else { return unexpected }
        dbus_message_iter_get_basic(&iter, &delivered)
        guard let delivered, dbus_message_iter_next(&iter) != 0 else { return unexpected }
        var size: Int64 = 0
        dbus_message_iter_get_basic(&iter, &size)
        guard dbus_message_iter_next(&iter) != 0 else { return unexpected }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &variant)
        var content: Read.Content?
        switch dbus_message_iter_get_arg_type(&variant) {
        case CDBUS_TYPE_ARRAY where dbus_message_iter_get_element_type(&variant) == CDBUS_TYPE_BYTE:
            var array = DBusMessageIter()
            dbus_message_iter_recurse(&variant, &array)
            var bytes: UnsafePointer<UInt8>?
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&array, &bytes, &count)
            let length = bytes == nil ? 0 : max(Int(count), 0)
            dbus_message_ref(message)
            content = .bytes(UnsafeRawBufferPointer(start: length > 0 ? bytes : nil, count: length), reply: message)
        case CDBUS_TYPE_UNIX_FD:
            var fd: Int32 = -1
            dbus_message_iter_get_basic(&variant, &fd)
            content = .stream(fd)
        default:
            content = nil
        }
        guard let content else {
            return .failed(FrontFailure(status: 1, message: "Pasteboard1.Read answered neither bytes nor a descriptor"))
        }
        guard dbus_message_iter_next(&iter) != 0, let transfer = string(at: &iter) else {
            content.release()
            return unexpected
        }
        guard isValidTypeIdentifier(UnsafeRawBufferPointer(start: delivered, count: strlen(delivered))) else {
            content.release()
            return .failed(FrontFailure(status: 1, message: "Pasteboard1.Read delivered a malformed type \"\(String(cString: delivered))\""))
        }
        if case .stream(let fd) = content, fd < 0 {
            return .failed(FrontFailure(status: 1, message: "the broker sent a closed descriptor"))
        }
        return .delivered(Read(size: size, content: content, transfer: transfer))
    }

    /// `ContentType.isValidIdentifier`: 1–255 bytes of ASCII letters, digits, `.`, `-` and `_`.
    static func isValidTypeIdentifier(_ identifier: UnsafeRawBufferPointer) -> Bool {
        !identifier.isEmpty && identifier.count <= 255
            && identifier.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
            }
    }

    /// The string or object path at `iter`.
    static func string(at iter: inout DBusMessageIter) -> String? {
        var chars: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &chars)
        return chars.map { String(cString: $0) }
    }

    /// Appends a string (valid UTF-8 without NUL: a Swift string from the command line, checked
    /// by `PlainPaste` or `PlainCopy`, or one the broker sent).
    static func append(_ text: String, to iter: inout DBusMessageIter) -> Bool {
        text.withCString { chars in
            var pointer: UnsafePointer<CChar>? = chars
            return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_STRING, &pointer) != 0
        }
    }

    /// Appends an empty `a{sv}`.
    static func appendEmptyOptions(to iter: inout DBusMessageIter) -> Bool {
        appendOptions(to: &iter) { _ in true }
    }

    /// Appends an `a{sv}` whose entries `entries` writes.
    static func appendOptions(to iter: inout DBusMessageIter, _ entries: (inout DBusMessageIter) -> Bool) -> Bool {
        var dictionary = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "{sv}", &dictionary) != 0,
              entries(&dictionary) else { return false }
        return dbus_message_iter_close_container(&iter, &dictionary) != 0
    }

    /// Appends `{key: <value>}` to an open `a{sv}`.
    static func appendBool(_ key: String, _ value: Bool, to dictionary: inout DBusMessageIter) -> Bool {
        appendEntry(key, signature: "b", to: &dictionary) { variant in
            var boolean: dbus_bool_t = value ? 1 : 0
            return dbus_message_iter_append_basic(&variant, CDBUS_TYPE_BOOLEAN, &boolean) != 0
        }
    }

    /// Appends one `{sv}` entry whose variant holds `signature`, written by `value`.
    static func appendEntry(_ key: String, signature: String, to dictionary: inout DBusMessageIter,
                            _ value: (inout DBusMessageIter) -> Bool) -> Bool {
        var entry = DBusMessageIter()
        var variant = DBusMessageIter()
        return dbus_message_iter_open_container(&dictionary, CDBUS_TYPE_DICT_ENTRY, nil, &entry) != 0
            && append(key, to: &entry)
            && dbus_message_iter_open_container(&entry, CDBUS_TYPE_VARIANT, signature, &variant) != 0
            && value(&variant)
            && dbus_message_iter_close_container(&entry, &variant) != 0
            && dbus_message_iter_close_container(&dictionary, &entry) != 0
    }
}

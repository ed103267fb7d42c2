import DesktopClipboard
import CXCB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One property value as `GetProperty` returned it.
struct PropertyValue {
    /// The property's type atom (`None` when the property does not exist).
    var type: UInt32
    /// 8, 16 or 32.
    var format: UInt8
    /// The bytes read (for format 32, four bytes per item in host order).
    var bytes: [UInt8]
    /// How many bytes remain after these.
    var bytesAfter: UInt32

    /// The value as 32-bit items (atoms, integers); empty unless the format is 32.
    var items32: [UInt32] {
        guard format == 32 else { return [] }
        return bytes.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) }
        }
    }
}

/// The xcb connection and the few requests the clipboard needs, with atom names cached.
///
/// Confined to one thread at a time: the initializer's, then the display thread's. Every call
/// into libxcb of the module goes through here.
final class X11Connection {
    let connection: OpaquePointer
    /// The root window of the default screen.
    let root: UInt32
    /// The first event code of XFixes.
    let xfixesFirstEvent: UInt8
    /// The largest request the server accepts, in bytes (BIG-REQUESTS included).
    let maximumRequestBytes: Int
    private var atomsByName: [String: UInt32] = [:]
    private var namesByAtom: [UInt32: String] = [:]

    /// Connects to `display` (nil: `$DISPLAY`) and checks XFixes (version 5 asked, 1 needed).
    init(display: String?) throws(DesktopClipboardError) {
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(display, &screenNumber) else {
            throw DesktopClipboardError(.unavailable, "cannot connect to the X display")
        }
        let shown = display ?? "$DISPLAY"
        if xcb_connection_has_error(connection) != 0 {
            xcb_disconnect(connection)
            throw DesktopClipboardError(.unavailable, "cannot connect to the X display \(shown)")
        }
        var screens = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<max(0, Int(screenNumber)) where screens.rem > 1 { xcb_screen_next(&screens) }
        guard let screen = screens.data else {
            xcb_disconnect(connection)
            throw DesktopClipboardError(.unavailable, "the X display \(shown) has no screen")
        }
        guard let xfixes = cxcb_xfixes_data(connection), xfixes.pointee.present != 0 else {
            xcb_disconnect(connection)
            throw DesktopClipboardError(.unavailable, "the X display \(shown) has no XFixes extension")
        }
        // XFixes requires the version handshake before any other request of it.
        let version = xcb_xfixes_query_version_reply(connection, xcb_xfixes_query_version(connection, 5, 0), nil)
        guard let version, version.pointee.major_version >= 1 else {
            free(version)
            xcb_disconnect(connection)
            throw DesktopClipboardError(.unavailable, "the X display \(shown) has no usable XFixes (version 1 or later)")
        }
        free(version)
        self.connection = connection
        self.root = screen.pointee.root
        self.xfixesFirstEvent = xfixes.pointee.first_event
        self.maximumRequestBytes = Int(xcb_get_maximum_request_length(connection)) * 4
    }

    /// Whether the connection broke (the server went away, or a protocol error closed it).
    var isBroken: Bool { xcb_connection_has_error(connection) != 0 }

    /// The socket to poll.
    var fileDescriptor: Int32 { xcb_get_file_descriptor(connection) }

    func flush() { _ = xcb_flush(connection) }

    func disconnect() { xcb_disconnect(connection) }

    /// The next event already read or readable without blocking; the caller frees it.
    func pollEvent() -> UnsafeMutablePointer<xcb_generic_event_t>? { xcb_poll_for_event(connection) }

    /// Waits for the next event (start-up only, before anything else can arrive).
    func waitEvent() -> UnsafeMutablePointer<xcb_generic_event_t>? { xcb_wait_for_event(connection) }

    // MARK: Atoms

    /// The atoms of `names`, interned in one round trip for those not cached; 0 on failure.
    func atoms(_ names: [String]) -> [UInt32] {
        let missing = Array(Set(names.filter { atomsByName[$0] == nil }))
        let cookies = missing.map { name in
            name.withCString { xcb_intern_atom(connection, 0, UInt16(strlen($0)), $0) }
        }
        for (name, cookie) in zip(missing, cookies) {
            guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { continue }
            atomsByName[name] = reply.pointee.atom
            namesByAtom[reply.pointee.atom] = name
            free(reply)
        }
        return names.map { atomsByName[$0] ?? 0 }
    }

    func atom(_ name: String) -> UInt32 { atoms([name])[0] }

    /// The names of `atoms`, fetched in one round trip for those not cached; nil when unknown.
    func names(of atoms: [UInt32]) -> [String?] {
        let missing = Array(Set(atoms.filter { $0 != 0 && namesByAtom[$0] == nil }))
        let cookies = missing.map { xcb_get_atom_name(connection, $0) }
        for (atom, cookie) in zip(missing, cookies) {
            guard let reply = xcb_get_atom_name_reply(connection, cookie, nil) else { continue }
            let length = Int(xcb_get_atom_name_name_length(reply))
            let name = xcb_get_atom_name_name(reply).withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
            namesByAtom[atom] = name
            atomsByName[name] = atom
            free(reply)
        }
        return atoms.map { namesByAtom[$0] }
    }

    // MARK: Windows and properties

    /// A 1×1 InputOnly window that receives property changes: the end point of every transfer.
    func createWindow() -> UInt32 {
        let window = xcb_generate_id(connection)
        var mask = CXCB_EVENT_MASK_PROPERTY_CHANGE
        xcb_create_window(connection, 0, window, root, -1, -1, 1, 1, 0, CXCB_WINDOW_CLASS_INPUT_ONLY,
                          0, CXCB_CW_EVENT_MASK, &mask)
        return window
    }

    func destroyWindow(_ window: UInt32) { xcb_destroy_window(connection, window) }

    /// Selects (or stops) property-change events on another client's window.
    func watchProperties(of window: UInt32, _ on: Bool) {
        var mask = on ? CXCB_EVENT_MASK_PROPERTY_CHANGE : CXCB_EVENT_MASK_NO_EVENT
        xcb_change_window_attributes(connection, window, CXCB_CW_EVENT_MASK, &mask)
    }

    /// Reads up to `maxBytes` of a property from `offsetBytes` (a multiple of 4); nil when the
    /// connection broke.
    func property(_ property: UInt32, of window: UInt32, offsetBytes: Int = 0, maxBytes: Int,
                  delete: Bool = false) -> PropertyValue? {
        let cookie = xcb_get_property(connection, delete ? 1 : 0, window, property, CXCB_ATOM_ANY,
                                      UInt32(offsetBytes / 4), UInt32((maxBytes + 3) / 4))
        guard let reply = xcb_get_property_reply(connection, cookie, nil) else { return nil }
        defer { free(reply) }
        let count = Int(xcb_get_property_value_length(reply))
        let value = xcb_get_property_value(reply)
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0, let value { memcpy(buffer.baseAddress!, value, count) }
            initialized = count
        }
        return PropertyValue(type: reply.pointee.type, format: reply.pointee.format, bytes: bytes,
                             bytesAfter: reply.pointee.bytes_after)
    }

    /// Replaces (or appends to) a property with `bytes` in `format` (8 or 32).
    func setProperty(_ property: UInt32, of window: UInt32, type: UInt32, format: UInt8,
                     bytes: UnsafeRawBufferPointer, append: Bool = false) {
        let unit = Int(format / 8)
        xcb_change_property(connection, append ? CXCB_PROP_MODE_APPEND : CXCB_PROP_MODE_REPLACE,
                            window, property, type, format, UInt32(bytes.count / unit), bytes.baseAddress)
    }

    func setProperty(_ property: UInt32, of window: UInt32, type: UInt32, items: [UInt32]) {
        items.withUnsafeBytes { setProperty(property, of: window, type: type, format: 32, bytes: $0) }
    }

    /// What `setProperty(_:of:type:from:at:count:)` did.
    enum FileSend {
        /// The whole request went out.
        case sent
        /// The file ended before `count` bytes: the request was completed with zeros, so the
        /// connection stays in step, and the transfer must be abandoned.
        case fileShrank
        /// The socket failed: the connection is gone.
        case broken
    }

    /// Sets `property` of `window` (mode Replace, format 8) to `count` bytes of `file` from
    /// `offset`, which advances. The kernel copies the bytes from the file's pages into the X
    /// socket (sendfile): they never pass through this process, as they do not through a
    /// client that holds them in memory and writes them once.
    ///
    /// xcb gives up the socket's write side for the one request (`xcb_take_socket`) and takes
    /// it back by itself before its next write. As xcbext.h asks of requests written behind its
    /// back, a GetInputFocus, whose reply is discarded, goes first, so that xcb follows the
    /// sequence numbers. Blocks until the request is written, as xcb's own writes do.
    func setProperty(_ property: UInt32, of window: UInt32, type: UInt32, from file: Int32,
                     at offset: inout off_t, count: Int) -> FileSend {
        var sent: UInt64 = 0
        guard xcb_take_socket(connection, { _ in }, nil, 0, &sent) == 1 else { return .broken }
        let padding = (4 - count % 4) % 4
        let words = 6 + (count + padding) / 4
        var header: [UInt8] = [43, 0]  // GetInputFocus: opcode, unused, length 1
        Self.append(UInt16(1), to: &header)
        header += [18, 0]  // ChangeProperty: opcode, mode Replace
        if words <= Int(UInt16.max) {
            Self.append(UInt16(words), to: &header)
        } else {
            // BIG-REQUESTS: a zero length, then the length in a word of its own (counted).
            Self.append(UInt16(0), to: &header)
            Self.append(UInt32(words + 1), to: &header)
        }
        for word in [window, property, type] { Self.append(word, to: &header) }
        header += [8, 0, 0, 0]  // format 8, unused
        Self.append(UInt32(count), to: &header)
        let wrote = header.withUnsafeMutableBytes { raw -> Int32 in
            var vector = iovec(iov_base: raw.baseAddress, iov_len: raw.count)
            return xcb_writev(connection, &vector, 1, 2)
        }
        guard wrote == 1 else { return .broken }
        xcb_discard_reply64(connection, sent + 1)
        let socket = fileDescriptor
        var left = count
        while left > 0 {
            let n = cxcb_sendfile(socket, file, &offset, left)
            if n > 0 {
                left -= n
            } else if n == 0 {
                break
            } else if errno == EAGAIN {
                guard waitWritable(socket) else { return .broken }
            } else if errno == EINVAL || errno == EIO {
                break  // the file cannot be read any more: treated as ended
            } else if errno != EINTR {
                return .broken
            }
        }
        guard writeZeros(left + padding, to: socket) else { return .broken }
        return left == 0 ? .sent : .fileShrank
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes += $0 }  // the host's byte order, which xcb announced
    }

    /// Waits until `socket` takes more bytes; false when it failed.
    private func waitWritable(_ socket: Int32) -> Bool {
        var entry = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        while true {
            let n = poll(&entry, 1, -1)
            if n > 0 { return entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) == 0 }
            if n < 0 && errno != EINTR { return false }
        }
    }

    private func writeZeros(_ count: Int, to socket: Int32) -> Bool {
        let zeros = [UInt8](repeating: 0, count: min(count, 1 << 16))
        var left = count
        while left > 0 {
            let n = zeros.withUnsafeBytes { write(socket, $0.baseAddress, min(left, $0.count)) }
            if n > 0 {
                left -= n
            } else if n < 0 && errno == EAGAIN {
                guard waitWritable(socket) else { return false }
            } else if !(n < 0 && errno == EINTR) {
                return false
            }
        }
        return true
    }

    func deleteProperty(_ property: UInt32, of window: UInt32) {
        xcb_delete_property(connection, window, property)
    }

    // MARK: Selections

    func convertSelection(_ selection: UInt32, to target: UInt32, into property: UInt32,
                          requestor: UInt32, time: UInt32) {
        xcb_convert_selection(connection, requestor, selection, target, property, time)
    }

    func setOwner(_ window: UInt32, of selection: UInt32, time: UInt32) {
        xcb_set_selection_owner(connection, window, selection, time)
    }

    /// The owner window of `selection` (0: None); nil when the connection broke.
    func owner(of selection: UInt32) -> UInt32? {
        guard let reply = xcb_get_selection_owner_reply(connection, xcb_get_selection_owner(connection, selection), nil)
        else { return nil }
        defer { free(reply) }
        return reply.pointee.owner
    }

    func notify(_ requestor: UInt32, selection: UInt32, target: UInt32, property: UInt32, time: UInt32) {
        cxcb_send_selection_notify(connection, requestor, selection, target, property, time)
    }

    /// Asks XFixes for owner changes, window destructions and client closes on `selection`.
    func watchSelection(_ selection: UInt32, window: UInt32) {
        xcb_xfixes_select_selection_input(connection, window, selection, CXCB_XFIXES_WATCH_MASK)
    }
}

import CDBus
#if canImport(Glibc)
import Glibc
#endif

extension BrokerLink {
    /// One representation's bytes as `SetItems` carries them.
    enum Payload {
        /// Inline (`data`): at most 16 KiB, as the client library sends small bytes.
        case bytes([UInt8])
        /// A descriptor the broker reads to its end before it answers (`fd`; not owned).
        case descriptor(Int32)
    }

    /// The one item with one representation that `ferry copy --text` (or standard input with
    /// `--type`) writes, as the client library's `ItemEncoder` encodes it.
    struct OneItem {
        /// The type identifier, sent as it is.
        var type: String
        var payload: Payload
        var localOnly = false
        var sensitive = false
    }

    /// Replaces the items of the pasteboard at `path` with `item`, with no options; the new
    /// change count. The call and its time limit (600 s) are the client library's
    /// `setItemProviders` for an unregistered client.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.SetItems`.
    func setItems(path: String, item: OneItem) -> Answer<UInt64> {
        let reply = call(path: path, interface: "org.ferry.Pasteboard1", member: "SetItems", timeoutMilliseconds: 600_000) { iter in
            var items = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "a{sv}", &items) != 0,
                  Self.appendItem(item, to: &items),
                  dbus_message_iter_close_container(&iter, &items) != 0 else { return false }
            return Self.appendEmptyOptions(to: &iter)
        }
        switch reply {
        case nil:
            return .failed(FrontFailure(status: 1, message: "out of memory"))
        case .error(let name, let message)?:
            return Self.answer(toError: name, message)
        case .message(let message)?:
            defer { dbus_message_unref(message) }
            let unexpected = Answer<UInt64>.failed(
                FrontFailure(busErrorName: "org.ferry.Error.Bus", message: "Pasteboard1.SetItems answered with an unexpected reply"))
            var iter = DBusMessageIter()
            guard dbus_message_has_signature(message, "tas") != 0, dbus_message_iter_init(message, &iter) != 0 else { return unexpected }
            var changeCount: UInt64 = 0
            dbus_message_iter_get_basic(&iter, &changeCount)
            guard dbus_message_iter_next(&iter) != 0 else { return unexpected }
            var ids = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &ids)
            var count = 0
            while dbus_message_iter_get_arg_type(&ids) == CDBUS_TYPE_STRING {
                count += 1
                dbus_message_iter_next(&ids)
            }
            // One item written, one id answered (as the client library checks).
            return count == 1 ? .answered(changeCount) : unexpected
        }
    }

    /// Appends the item's `a{sv}`: `representations` (one: `type`, `visibility` all, `data` or
    /// `fd`), then `localOnly` and `sensitive` when set.
    private static func appendItem(_ item: OneItem, to items: inout DBusMessageIter) -> Bool {
        var dictionary = DBusMessageIter()
        guard dbus_message_iter_open_container(&items, CDBUS_TYPE_ARRAY, "{sv}", &dictionary) != 0,
              appendEntry("representations", signature: "av", to: &dictionary, { variant in
                  var list = DBusMessageIter()
                  var one = DBusMessageIter()
                  var representation = DBusMessageIter()
                  return dbus_message_iter_open_container(&variant, CDBUS_TYPE_ARRAY, "v", &list) != 0
                      && dbus_message_iter_open_container(&list, CDBUS_TYPE_VARIANT, "a{sv}", &one) != 0
                      && dbus_message_iter_open_container(&one, CDBUS_TYPE_ARRAY, "{sv}", &representation) != 0
                      && appendRepresentation(item, to: &representation)
                      && dbus_message_iter_close_container(&one, &representation) != 0
                      && dbus_message_iter_close_container(&list, &one) != 0
                      && dbus_message_iter_close_container(&variant, &list) != 0
              }),
              !item.localOnly || appendBool("localOnly", true, to: &dictionary),
              !item.sensitive || appendBool("sensitive", true, to: &dictionary) else { return false }
        return dbus_message_iter_close_container(&items, &dictionary) != 0
    }

    private static func appendRepresentation(_ item: OneItem, to dictionary: inout DBusMessageIter) -> Bool {
        guard appendEntry("type", signature: "s", to: &dictionary, { append(item.type, to: &$0) }),
              appendEntry("visibility", signature: "s", to: &dictionary, { append("all", to: &$0) }) else { return false }
        switch item.payload {
        case .bytes(let bytes):
            return appendEntry("data", signature: "ay", to: &dictionary) { variant in
                var array = DBusMessageIter()
                guard dbus_message_iter_open_container(&variant, CDBUS_TYPE_ARRAY, "y", &array) != 0 else { return false }
                // libdbus copies the bytes; an empty array still needs a valid pointer.
                let appended = (bytes.isEmpty ? [0] : bytes).withUnsafeBufferPointer { buffer in
                    var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&array, CDBUS_TYPE_BYTE, &pointer, Int32(bytes.count)) != 0
                }
                return appended && dbus_message_iter_close_container(&variant, &array) != 0
            }
        case .descriptor(let fd):
            return appendEntry("fd", signature: "h", to: &dictionary) { variant in
                // libdbus duplicates the descriptor.
                var descriptor = fd
                return dbus_message_iter_append_basic(&variant, CDBUS_TYPE_UNIX_FD, &descriptor) != 0
            }
        }
    }
}

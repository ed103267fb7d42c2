import CDBus
import FerrySystem

/// Reads a libdbus message's body into `DBusValue`s through `DBusMessageIter`.
enum MessageReader {
    static func readBody(of message: OpaquePointer) throws -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(try read(&iter))
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(&iter, &v)
        return v
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The signature of the value under `iter`.
    private static func signature(_ iter: inout DBusMessageIter) throws -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else {
            throw DBusError(.noMemory, "libdbus is out of memory")
        }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    private static func malformed(_ why: String) -> DBusError {
        DBusError(.invalidArgs, "malformed message body: \(why)")
    }

    private static func read(_ iter: inout DBusMessageIter) throws -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case CDBUS_TYPE_STRING: return .string(string(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(unchecked: string(&iter)))
        case CDBUS_TYPE_SIGNATURE: return .signature(Signature(unchecked: string(&iter)))
        case CDBUS_TYPE_UNIX_FD:
            let fd = basic(&iter, Int32(-1))  // libdbus hands us a new descriptor we own
            guard fd >= 0 else {
                throw malformed("the message refers to a unix fd it does not carry")
            }
            return .unixFD(FileDescriptor(taking: fd))
        case CDBUS_TYPE_ARRAY: return try readArray(&iter)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                fields.append(try read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub))
        default:
            throw malformed("unexpected type code \(type)")
        }
    }

    private static func readArray(_ iter: inout DBusMessageIter) throws -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == CDBUS_TYPE_BYTE {
            var pointer: UnsafeMutableRawPointer? = nil
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
            guard let pointer, count > 0 else { return .bytes([]) }
            // Borrowed from the message: copy out.
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        if elementType == CDBUS_TYPE_DICT_ENTRY {
            let full = try signature(&iter)
            // full is "a{kv}"
            let utf8 = full.utf8
            guard utf8.count >= 5 else { throw malformed("dictionary signature '\(full)'") }
            let key = Signature(unchecked: String(decoding: utf8.dropFirst(2).prefix(1), as: UTF8.self))
            let value = Signature(unchecked: String(decoding: utf8.dropFirst(3).dropLast(), as: UTF8.self))
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &pair)
                let k = try read(&pair)
                guard dbus_message_iter_next(&pair) != 0 else { throw malformed("dict entry without a value") }
                let v = try read(&pair)
                entries.append(DBusDictionaryEntry(key: k, value: v))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: key, value: value, entries: entries)
        }
        let element: Signature
        if let code = UInt8(exactly: elementType), SignatureParser.isBasic(code) || code == UInt8(ascii: "v") {
            // A basic or variant element: its signature is its one type code, so there is no
            // need to ask libdbus for the signature (a malloc'd copy) and cut it.
            element = Signature(typeCode: code)
        } else {
            element = Signature(unchecked: String(try signature(&iter).dropFirst()))
        }
        var elements: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            elements.append(try read(&sub))
            dbus_message_iter_next(&sub)
        }
        return .array(element: element, elements: elements)
    }
}

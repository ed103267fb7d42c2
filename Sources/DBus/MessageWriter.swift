import CDBus

/// Appends checked values to a libdbus message through `DBusMessageIter`.
///
/// Every value must have passed `BodyValidator` first: libdbus aborts on bad input.
enum MessageWriter {
    static func append(_ values: [DBusValue], nodes: [TypeNode], to message: OpaquePointer) throws {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for (value, node) in zip(values, nodes) {
            try append(value, node, &iter)
        }
    }

    private static func outOfMemory() -> DBusError { DBusError(.noMemory, "libdbus is out of memory") }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ code: Int32, _ value: T) throws {
        var v = value
        guard dbus_message_iter_append_basic(&iter, code, &v) != 0 else { throw outOfMemory() }
    }

    private static func string(_ iter: inout DBusMessageIter, _ code: Int32, _ text: String) throws {
        let ok = text.withCString { p -> dbus_bool_t in
            var pointer: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(&iter, code, &pointer)
        }
        guard ok != 0 else { throw outOfMemory() }
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ code: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, code, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, code, nil, &sub)
        }
        guard opened != 0 else { throw outOfMemory() }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw outOfMemory() }
    }

    private static func append(_ value: DBusValue, _ node: TypeNode, _ iter: inout DBusMessageIter) throws {
        switch value {
        case .byte(let v): try basic(&iter, CDBUS_TYPE_BYTE, v)
        case .boolean(let v): try basic(&iter, CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try basic(&iter, CDBUS_TYPE_INT16, v)
        case .uint16(let v): try basic(&iter, CDBUS_TYPE_UINT16, v)
        case .int32(let v): try basic(&iter, CDBUS_TYPE_INT32, v)
        case .uint32(let v): try basic(&iter, CDBUS_TYPE_UINT32, v)
        case .int64(let v): try basic(&iter, CDBUS_TYPE_INT64, v)
        case .uint64(let v): try basic(&iter, CDBUS_TYPE_UINT64, v)
        case .double(let v): try basic(&iter, CDBUS_TYPE_DOUBLE, v)
        case .string(let v): try string(&iter, CDBUS_TYPE_STRING, v)
        case .objectPath(let v): try string(&iter, CDBUS_TYPE_OBJECT_PATH, v.rawValue)
        case .signature(let v): try string(&iter, CDBUS_TYPE_SIGNATURE, v.rawValue)
        case .unixFD(let fd):
            // libdbus duplicates the descriptor; hold it open while it does.
            try fd.withOpenDescriptor { raw in try basic(&iter, CDBUS_TYPE_UNIX_FD, Int32(raw)) }
        case .bytes(let bytes):
            try container(&iter, CDBUS_TYPE_ARRAY, "y") { sub in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
                    var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(
                        &sub, CDBUS_TYPE_BYTE, &pointer, Int32(buffer.count))
                }
                guard ok != 0 else { throw outOfMemory() }
            }
        case .array(let element, let elements):
            guard case .array(let elementNode) = node else { preconditionFailure("validated") }
            if elementNode == .basic(UInt8(ascii: "y")),
                let bytes = DBusValue.bytesIfAllBytes(elements)
            {
                try append(.bytes(bytes), node, &iter)
                return
            }
            try container(&iter, CDBUS_TYPE_ARRAY, element.rawValue) { sub in
                for e in elements { try append(e, elementNode, &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            guard case .dictionary(let keyCode, let valueNode) = node else {
                preconditionFailure("validated")
            }
            try container(&iter, CDBUS_TYPE_ARRAY, "{" + key.rawValue + valueType.rawValue + "}") { sub in
                for entry in entries {
                    try container(&sub, CDBUS_TYPE_DICT_ENTRY, nil) { pair in
                        try append(entry.key, .basic(keyCode), &pair)
                        try append(entry.value, valueNode, &pair)
                    }
                }
            }
        case .structure(let fields):
            guard case .structure(let nodes) = node else { preconditionFailure("validated") }
            try container(&iter, CDBUS_TYPE_STRUCT, nil) { sub in
                for (f, n) in zip(fields, nodes) { try append(f, n, &sub) }
            }
        case .variant(let inner):
            let innerNode = try BodyValidator.node(of: inner)
            try container(&iter, CDBUS_TYPE_VARIANT, innerNode.text) { sub in
                try append(inner, innerNode, &sub)
            }
        }
    }
}

import CDBus

/// The header fields of a message, read once for routing (match rules, object dispatch).
struct Envelope: Sendable {
    var type: MatchRule.MessageType?
    var path: String?
    var interface: String?
    var member: String?
    var sender: String?
    var signature: String
    var noReplyExpected: Bool
    let message: Message

    init(_ message: Message) {
        let raw = message.raw
        self.message = message
        switch dbus_message_get_type(raw) {
        case CDBUS_MESSAGE_TYPE_SIGNAL: type = .signal
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: type = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: type = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: type = .error
        default: type = nil
        }
        path = dbus_message_get_path(raw).map { String(cString: $0) }
        interface = dbus_message_get_interface(raw).map { String(cString: $0) }
        member = dbus_message_get_member(raw).map { String(cString: $0) }
        sender = dbus_message_get_sender(raw).map { String(cString: $0) }
        signature = dbus_message_get_signature(raw).map { String(cString: $0) } ?? ""
        noReplyExpected = dbus_message_get_no_reply(raw) != 0
    }

    /// The destination, read only when a match rule asks (method calls never need it).
    var destination: String? {
        message.withRaw { dbus_message_get_destination($0).map { String(cString: $0) } }
    }

    /// One top-level argument as text, for `argN` / `argNpath` matching.
    struct TextArgument {
        var text: String
        var isString: Bool
    }

    /// The top-level arguments that are strings or object paths (nil for other types).
    func stringArguments() -> [TextArgument?] {
        var result: [TextArgument?] = []
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message.raw, &iter) != 0 else { return result }
        repeat {
            let type = dbus_message_iter_get_arg_type(&iter)
            if type == CDBUS_TYPE_STRING || type == CDBUS_TYPE_OBJECT_PATH {
                var value: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&iter, &value)
                result.append(value.map {
                    TextArgument(text: String(cString: $0), isString: type == CDBUS_TYPE_STRING)
                })
            } else {
                result.append(nil)
            }
        } while result.count < 64 && dbus_message_iter_next(&iter) != 0
        return result
    }
}

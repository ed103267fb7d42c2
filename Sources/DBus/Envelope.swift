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
        self.message = message
        if let fields = message.wire?.fields {
            type = Self.type(of: fields.header.kind)
            path = fields.header.path
            interface = fields.header.interface
            member = fields.header.member
            sender = fields.sender
            signature = fields.signature
            noReplyExpected = fields.header.flags & WireWriter.noReplyExpected != 0
            return
        }
        (type, path, interface, member, sender, signature, noReplyExpected) = message.withLibdbus { raw in
            (Message.Kind(code: dbus_message_get_type(raw)).map(Self.type(of:)),
             dbus_message_get_path(raw).map { String(cString: $0) },
             dbus_message_get_interface(raw).map { String(cString: $0) },
             dbus_message_get_member(raw).map { String(cString: $0) },
             dbus_message_get_sender(raw).map { String(cString: $0) },
             dbus_message_get_signature(raw).map { String(cString: $0) } ?? "",
             dbus_message_get_no_reply(raw) != 0)
        } ?? (nil, nil, nil, nil, nil, "", false)
    }

    private static func type(of kind: Message.Kind) -> MatchRule.MessageType {
        switch kind {
        case .signal: .signal
        case .methodCall: .methodCall
        case .methodReturn: .methodReturn
        case .error: .error
        }
    }

    /// The destination, read only when a match rule asks (method calls never need it).
    var destination: String? { message.destination?.rawValue }

    /// One top-level argument as text, for `argN` / `argNpath` matching.
    struct TextArgument {
        var text: String
        var isString: Bool
    }

    /// The top-level arguments that are strings or object paths (nil for other types).
    func stringArguments() -> [TextArgument?] {
        if message.wire != nil {
            return ((try? message.body) ?? []).prefix(64).map { value in
                switch value {
                case .string(let text): TextArgument(text: text, isString: true)
                case .objectPath(let path): TextArgument(text: path.rawValue, isString: false)
                default: nil
                }
            }
        }
        return (try? message.withRaw { raw in
            var result: [TextArgument?] = []
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(raw, &iter) != 0 else { return result }
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
        }) ?? []
    }
}

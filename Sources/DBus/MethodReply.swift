/// A successful reply a method's handler marshalled itself, straight from typed values for the
/// method's declared outputs, with no `DBusValue` tree in between: what a handler declared with
/// `Method(replying:…)` returns. Make one with ``MethodCall/reply(_:)``.
public struct MethodReply: Sendable {
    /// The reply, addressed to the caller.
    let message: Message
    /// The signature of its values, which the router checks against the declared outputs.
    let signature: String
    /// The call it answers: a reply made for another call is refused, not sent.
    let call: ObjectIdentifier
}

extension MethodCall {
    /// The reply to this call carrying `values`, marshalled straight from them for their types'
    /// signatures as `Message.methodReturn(replyingTo:values:)` does (the same codec the client
    /// library's calls use). A `DBusValue` goes in a variant (`v`); values holding unix fds are
    /// appended by libdbus.
    ///
    /// ```swift
    /// return try call.reply(type.identifier, Int64(size), DBusValue.bytes(bytes), "")
    /// ```
    ///
    /// - Throws: `DBusError` when a value cannot go on the wire (a string with NUL, an array
    ///   over the limits).
    public func reply<each T: DBusRepresentable>(_ values: repeat each T) throws -> MethodReply {
        var signature = ""
        for value in repeat each values { signature += type(of: value).dbusSignature.rawValue }
        return MethodReply(message: try Message.methodReturn(replyingTo: message, values: repeat each values),
                           signature: signature, call: ObjectIdentifier(message))
    }
}

/// An incoming call to an exported method or property, as its handler sees it.
///
/// `sender` is the caller's unique bus name, set by the bus and impossible to forge: resolve the
/// caller's identity from it (`connection.credentials(of: call.sender)`) before acting.
public struct MethodCall: Sendable {
    /// The whole incoming message.
    public let message: Message
    /// The caller's unique bus name (`:1.42`).
    public let sender: BusName
    /// The object path the call was sent to.
    public let path: ObjectPath
    /// The interface named by the call.
    public let interface: InterfaceName
    /// The member called (for property handlers: the property's name).
    public let member: MemberName
    /// The decoded arguments, already checked against the declared signature.
    public let arguments: [DBusValue]
    /// The connection that received the call.
    public let connection: Connection

    /// The argument at `index`, converted to `T`.
    ///
    /// Inlinable (with the conversions it calls), so a handler's conversion is specialized for
    /// its types and looks nothing up at run time.
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` when it is missing or of another type.
    @inlinable
    public func argument<T: DBusRepresentable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard arguments.indices.contains(index) else {
            throw DBusError(.invalidArgs, "missing argument \(index)")
        }
        return try arguments[index].get(T.self)
    }

    /// Closes the unix fds the call carried, as this message and the top-level ``arguments`` hold
    /// them, for a handler that has taken its own copy and must be the last holder (the write end
    /// of a pipe: its reader sees end of file once every copy is closed). Copies taken before stay
    /// open.
    /// A call received through libdbus keeps libdbus's copy until the message is let go.
    public func closeFileDescriptors() {
        message.wire?.fds.forEach { $0.close() }
        for case .unixFD(let descriptor) in arguments { descriptor.close() }
    }

    /// All arguments, converted to the given types in order.
    ///
    /// ```swift
    /// let (path, options) = try call.arguments(ObjectPath.self, [String: DBusValue].self)
    /// ```
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` when one is missing or of another type.
    @inlinable
    public func arguments<each T: DBusRepresentable>(_ types: repeat (each T).Type) throws -> (repeat each T) {
        var index = 0
        func next<U: DBusRepresentable>(_ type: U.Type) throws -> U {
            defer { index += 1 }
            return try argument(index, as: U.self)
        }
        return (repeat try next((each T).self))
    }
}

/// A reply a method handler built from typed values (``MethodCall/reply(_:)``), for a method
/// declared with `Method.replying(_:in:out:execution:_:)`.
public struct MethodReply: Sendable {
    let message: Message
}

extension MethodCall {
    /// The reply carrying `values`, marshalled straight from them for their types' signatures
    /// (as `Message.methodReturn(replyingTo:values:)`); the router checks the signature against
    /// the method's declared outputs before sending it.
    ///
    /// - Throws: `DBusError` when a value fails validation (a string with NUL, an array or
    ///   message over the limits).
    public func reply<each T: DBusRepresentable>(_ values: repeat each T) throws -> MethodReply {
        MethodReply(message: try Message.methodReturn(replyingTo: message, values: repeat each values))
    }
}

extension Connection {
    /// Exports an object at `path` implementing `interfaces`.
    ///
    /// The object also answers `org.freedesktop.DBus.Introspectable`, `Properties` and `Peer`.
    /// Exporting more interfaces at the same path later adds them to the object.
    ///
    /// - Throws: `org.ferry.DBus.Error.InvalidName` when an interface is already exported there
    ///   or is one of the standard interfaces.
    public func export(_ interfaces: [Interface], at path: ObjectPath) throws {
        try ownObjects.export(interfaces, at: path)
    }

    /// Exports an object at `path` implementing one interface.
    ///
    /// - Throws: see `export(_:at:)`.
    public func export(_ interface: Interface, at path: ObjectPath) throws {
        try ownObjects.export([interface], at: path)
    }

    /// Makes every `org.freedesktop.DBus.Introspectable` and `Properties` call on this
    /// connection's objects pass `access` before it is served, so that what a service refuses to
    /// callers of its own methods (another uid) its properties and object tree do not tell them.
    /// `Peer` stays open to everyone.
    ///
    /// - Parameter access: the check (see ``StandardAccess``); nil removes it.
    public func restrictStandardInterfaces(_ access: StandardAccess?) {
        ownObjects.restrictStandardInterfaces(access)
    }

    /// Removes the object at `path`, or only `interface` from it.
    ///
    /// - Returns: true when something was removed.
    @discardableResult
    public func unexport(_ path: ObjectPath, interface: InterfaceName? = nil) -> Bool {
        ownObjects.unexport(path, interface: interface)
    }

    /// Emits a signal message.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` when `signal` is not a signal;
    ///   `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    public func emit(signal: Message) throws {
        guard signal.kind == .signal else {
            throw DBusError(.invalidArgs, "emit(signal:) needs a signal, not a \(signal.kind)")
        }
        try send(signal)
    }

    /// Builds and emits a signal.
    ///
    /// - Throws: `DBusError` when a value fails validation or the connection is closed.
    public func emit(path: ObjectPath, interface: InterfaceName, member: MemberName,
                     body: [DBusValue] = [], destination: BusName? = nil) throws {
        try send(Message.signal(path: path, interface: interface, member: member, body: body,
                                destination: destination))
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for an exported object.
    ///
    /// - Parameters:
    ///   - changed: new values of properties, by name.
    ///   - invalidated: names of properties that changed without their new value being sent.
    /// - Throws: `DBusError` when a value fails validation or the connection is closed.
    public func emitPropertiesChanged(path: ObjectPath, interface: InterfaceName,
                                      changed: [String: DBusValue] = [:], invalidated: [String] = []) throws {
        let entries = changed.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(key: .string($0.key), value: .variant($0.value))
        }
        try emit(path: path, interface: StandardInterfaces.propertiesName, member: "PropertiesChanged", body: [
            .string(interface.rawValue),
            .dictionary(key: .string, value: .variant, entries: entries),
            .array(element: .string, elements: invalidated.map { .string($0) }),
        ])
    }
}

/// Who may call `Introspectable` and `Properties` (``Connection/restrictStandardInterfaces(_:)``).
public struct StandardAccess: Sendable {
    /// Answers at once when it can: true lets the call in, a throw refuses it (the error is the
    /// reply), false asks ``resolve``.
    let known: @Sendable (MethodCall) throws -> Bool
    /// Answers when ``known`` could not (asking the bus for the caller's credentials, say): a
    /// throw refuses the call.
    let resolve: @Sendable (MethodCall) async throws -> Void

    /// A check with a synchronous answer for the callers it knows and an asynchronous one for the rest.
    public init(known: @escaping @Sendable (MethodCall) throws -> Bool,
                resolve: @escaping @Sendable (MethodCall) async throws -> Void) {
        self.known = known
        self.resolve = resolve
    }
}

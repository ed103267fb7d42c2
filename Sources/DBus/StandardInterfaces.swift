/// The standard interfaces every exported object implements: `Introspectable`, `Properties`
/// and `Peer`. They are ordinary `Interface` values, so their calls are checked and dispatched
/// like any other; `Introspectable` and `Properties` first pass the connection's access check
/// (`Connection.restrictStandardInterfaces`), when it has one.
enum StandardInterfaces {
    static let introspectableName: InterfaceName = "org.freedesktop.DBus.Introspectable"
    static let propertiesName: InterfaceName = "org.freedesktop.DBus.Properties"
    static let peerName: InterfaceName = "org.freedesktop.DBus.Peer"
    static let names: Set<InterfaceName> = [introspectableName, propertiesName, peerName]
    /// What an exported object answers besides its own interfaces, in dispatch order.
    static let ofObject: [Interface] = [introspectable, properties, peer]
    /// What a node without interfaces of its own (a parent of exported objects) answers.
    static let ofNode: [Interface] = [introspectable, peer]

    /// Passes `call` through the connection's access check, without a suspension for a caller it knows.
    private static func checkAccess(_ call: MethodCall) async throws {
        let objects = call.connection.objects
        if try !objects.standardAccessKnown(call) { try await objects.resolveStandardAccess(call) }
    }

    /// `org.freedesktop.DBus.Introspectable`: the XML of the object at the call's path.
    static let introspectable = Interface(introspectableName) {
        Method("Introspect", out: ["xml_data": "s"]) { call in
            try await checkAccess(call)
            return [.string(Introspection.document(for: call.path, in: call.connection.objects))]
        }
    }

    /// `org.freedesktop.DBus.Peer`. libdbus answers these calls itself before they reach Ferry;
    /// the declaration is for introspection.
    static let peer = Interface(peerName) {
        Method("Ping") { _ in [] }
        Method("GetMachineId", out: ["machine_uuid": "s"]) { _ in [.string(Connection.localMachineID)] }
    }

    /// `org.freedesktop.DBus.Properties`: Get, GetAll, Set and the PropertiesChanged signal.
    /// `Get` runs on the connection's thread: a getter reads what its object keeps (a change
    /// count, a state), and a hop to the pool and back cost more than the read, the most on a
    /// thread that serves many connections.
    static let properties = Interface(propertiesName) {
        Method("Get", in: ["interface_name": "s", "property_name": "s"], out: ["value": "v"],
               execution: .connectionThread) { call in
            try await checkAccess(call)
            let (target, property) = try lookup(call)
            return [.variant(try await read(property, target, call))]
        }
        Method("GetAll", in: ["interface_name": "s"], out: ["properties": "a{sv}"]) { call in
            try await checkAccess(call)
            let name = try call.argument(0, as: String.self)
            let targets = try interfaces(named: name, call)
            var entries: [DBusDictionaryEntry] = []
            for target in targets {
                for property in target.properties where property.getter != nil {
                    let value = try await read(property, target, call)
                    entries.append(DBusDictionaryEntry(key: .string(property.name.rawValue), value: .variant(value)))
                }
            }
            return [.dictionary(key: .string, value: .variant, entries: entries)]
        }
        Method("Set", in: ["interface_name": "s", "property_name": "s", "value": "v"]) { call in
            try await checkAccess(call)
            let (target, property) = try lookup(call)
            guard let setter = property.setter else {
                throw DBusError(.propertyReadOnly, "property \(property.name) is read-only")
            }
            var value = call.arguments[2]
            if case .variant(let inner) = value { value = inner }
            guard value.signature == property.signature else {
                throw DBusError(.invalidArgs, "property \(property.name) has type '\(property.signature)', "
                    + "not '\(value.signature)'")
            }
            try await setter(context(call, target, property), value)
            if property.emitsChangedOnSet {
                if property.getter != nil {
                    let current = try await read(property, target, call)
                    try call.connection.broadcaster.emitPropertiesChanged(
                        path: call.path, interface: target.name, changed: [property.name.rawValue: current])
                } else {
                    try call.connection.broadcaster.emitPropertiesChanged(
                        path: call.path, interface: target.name, invalidated: [property.name.rawValue])
                }
            }
            return []
        }
        Signal("PropertiesChanged", ["interface_name": "s", "changed_properties": "a{sv}",
                                     "invalidated_properties": "as"])
    }

    /// The exported interfaces `name` selects at the call's path ("" selects all).
    private static func interfaces(named name: String, _ call: MethodCall) throws -> [Interface] {
        let exported = call.connection.objects.interfaces(at: call.path) ?? []
        if name.isEmpty { return exported }
        if let match = exported.first(where: { $0.name.rawValue == name }) { return [match] }
        if let standard = InterfaceName(rawValue: name), names.contains(standard) { return [] }
        throw DBusError(.unknownInterface, "no interface '\(name)' at \(call.path)")
    }

    private static func lookup(_ call: MethodCall) throws -> (Interface, Property) {
        let interfaceName = try call.argument(0, as: String.self)
        let propertyName = try call.argument(1, as: String.self)
        for target in try interfaces(named: interfaceName, call) {
            if let property = target.property(propertyName) { return (target, property) }
        }
        throw DBusError(.unknownProperty, "no property '\(propertyName)' in '\(interfaceName)' at \(call.path)")
    }

    private static func read(_ property: Property, _ target: Interface, _ call: MethodCall) async throws -> DBusValue {
        guard let getter = property.getter else {
            throw DBusError(.accessDenied, "property \(property.name) is write-only")
        }
        let value = try await getter(context(call, target, property))
        guard value.signature == property.signature else {
            throw DBusError(.failed, "property \(property.name) produced '\(value.signature)', "
                + "declared '\(property.signature)'")
        }
        return value
    }

    private static func context(_ call: MethodCall, _ target: Interface, _ property: Property) -> MethodCall {
        MethodCall(message: call.message, sender: call.sender, path: call.path, interface: target.name,
                   member: property.name, arguments: call.arguments, connection: call.connection)
    }
}

import Synchronization

/// The objects a connection exports: object path → interfaces, forming a tree for introspection.
///
/// Exporting and lookup may happen on any thread; the owner thread reads it to route calls.
final class ObjectRegistry: Sendable {
    private let objects = Mutex<[ObjectPath: [Interface]]>([:])
    /// Asked before `Introspectable` and `Properties` calls are served; nil lets every caller in.
    private let standardAccess = Mutex<StandardAccess?>(nil)

    /// Makes `Introspectable` and `Properties` calls pass `access` first (nil: no check).
    func restrictStandardInterfaces(_ access: StandardAccess?) {
        standardAccess.withLock { $0 = access }
    }

    /// Whether `call` may be served without asking further: true when nothing is checked or the
    /// check knows the caller; throws the refusal. False means: await ``resolveStandardAccess(_:)``.
    /// Synchronous on purpose: awaiting on every `Properties.Get` cost about 140 µs (measured).
    func standardAccessKnown(_ call: MethodCall) throws -> Bool {
        guard let access = standardAccess.withLock({ $0 }) else { return true }
        return try access.known(call)
    }

    /// Throws what the check set by ``restrictStandardInterfaces(_:)`` throws for `call` when it
    /// could not answer at once.
    func resolveStandardAccess(_ call: MethodCall) async throws {
        guard let access = standardAccess.withLock({ $0 }) else { return }
        try await access.resolve(call)
    }

    /// Adds `interfaces` to the object at `path`.    /// Adds `interfaces` to the object at `path`.
    ///
    /// - Throws: `org.ferry.DBus.Error.InvalidName` when an interface is a standard one or is
    ///   already exported at `path`, or two share a name.
    func export(_ interfaces: [Interface], at path: ObjectPath) throws {
        try objects.withLock { objects in
            var current = objects[path] ?? []
            for interface in interfaces {
                if StandardInterfaces.names.contains(interface.name) {
                    throw DBusError(.invalidName, "\(interface.name) is provided by every exported object")
                }
                if current.contains(where: { $0.name == interface.name }) {
                    throw DBusError(.invalidName, "\(interface.name) is already exported at \(path)")
                }
                current.append(interface)
            }
            objects[path] = current
        }
    }

    /// Removes the object at `path` (or only `interface` from it). Returns true if anything was
    /// removed.
    @discardableResult
    func unexport(_ path: ObjectPath, interface: InterfaceName? = nil) -> Bool {
        objects.withLock { objects in
            guard var current = objects[path] else { return false }
            guard let interface else {
                objects[path] = nil
                return true
            }
            let before = current.count
            current.removeAll { $0.name == interface }
            objects[path] = current.isEmpty ? nil : current
            return current.count != before
        }
    }

    /// The interfaces exported at `path`, or nil when no object lives there.
    func interfaces(at path: ObjectPath) -> [Interface]? {
        objects.withLock { $0[path] }
    }

    /// The names of the direct children of `path` in the tree (objects or their ancestors).
    func children(of path: ObjectPath) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        objects.withLock { objects in
            for candidate in objects.keys where candidate.rawValue.hasPrefix(prefix) {
                let rest = candidate.rawValue.dropFirst(prefix.count)
                if let first = rest.split(separator: "/").first { names.insert(String(first)) }
            }
        }
        return names.sorted()
    }

    /// True when `path` is `/`, an exported object, or an ancestor of one.
    func isNode(_ path: ObjectPath) -> Bool {
        if path.rawValue == "/" { return true }
        return objects.withLock { objects in
            objects[path] != nil || objects.keys.contains { $0.isDescendant(of: path) }
        }
    }
}

/// A D-Bus match rule: which messages a connection wants to receive.
///
/// The rule is added on the bus (`AddMatch`) while a signal stream is being iterated, and the
/// same rule filters messages in-process, so each stream sees only what it asked for.
///
/// ```swift
/// let rule = MatchRule(interface: "org.example.Clock", member: "Tick")
/// for try await signal in connection.signals(matching: rule) { … }
/// ```
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// The message types a rule can select.
    public enum MessageType: String, Sendable, Hashable {
        /// `signal`.
        case signal
        /// `method_call`.
        case methodCall = "method_call"
        /// `method_return`.
        case methodReturn = "method_return"
        /// `error`.
        case error
    }

    /// The message type; signals by default.
    public var type: MessageType?
    /// The sender: a unique name, or a well-known name (matched against its current owner).
    public var sender: BusName?
    /// The interface.
    public var interface: InterfaceName?
    /// The member (signal or method name).
    public var member: MemberName?
    /// The exact object path.
    public var path: ObjectPath?
    /// An object path and everything beneath it.
    public var pathNamespace: ObjectPath?
    /// The destination (for unicast signals).
    public var destination: BusName?
    /// String arguments that must be equal: index (0…63) → value.
    public var arguments: [Int: String]
    /// String or object-path arguments matched as paths (`argNpath`): index → path prefix.
    public var argumentPaths: [Int: String]

    /// Creates a rule; every field left `nil` matches anything.
    public init(
        type: MessageType? = .signal, sender: BusName? = nil, interface: InterfaceName? = nil,
        member: MemberName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        destination: BusName? = nil, arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:]
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
    }

    /// The rule as the bus expects it: `type='signal',interface='org.example.Clock'`.
    public var description: String {
        var parts: [(String, String)] = []
        if let type { parts.append(("type", type.rawValue)) }
        if let sender { parts.append(("sender", sender.rawValue)) }
        if let interface { parts.append(("interface", interface.rawValue)) }
        if let member { parts.append(("member", member.rawValue)) }
        if let path { parts.append(("path", path.rawValue)) }
        if let pathNamespace { parts.append(("path_namespace", pathNamespace.rawValue)) }
        if let destination { parts.append(("destination", destination.rawValue)) }
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) {
            parts.append(("arg\(index)", value))
        }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) {
            parts.append(("arg\(index)path", value))
        }
        return parts.map { "\($0.0)=\(Self.quote($0.1))" }.joined(separator: ",")
    }

    /// Checks the parts that can be wrong at run time (argument indexes, NUL in values).
    ///
    /// - Throws: `org.freedesktop.DBus.Error.MatchRuleInvalid` when the bus would refuse it.
    public func validate() throws {
        for index in arguments.keys where !(0...63).contains(index) {
            throw DBusError(Self.invalidName, "argument index \(index) is outside 0…63")
        }
        for index in argumentPaths.keys where !(0...63).contains(index) {
            throw DBusError(Self.invalidName, "argument index \(index) is outside 0…63")
        }
        for value in Array(arguments.values) + Array(argumentPaths.values)
        where value.utf8.contains(0) {
            throw DBusError(Self.invalidName, "a match rule value contains NUL")
        }
    }

    static let invalidName = ErrorName(unchecked: "org.freedesktop.DBus.Error.MatchRuleInvalid")

    /// Quotes a value: `'…'`, with each apostrophe written as `'\''`.
    static func quote(_ value: String) -> String {
        "'" + value.replacingApostrophes() + "'"
    }

    /// True when `envelope` satisfies every field. `owner` maps a well-known sender to its
    /// current unique owner.
    func matches(_ envelope: Envelope, senderOwner owner: BusName? = nil) -> Bool {
        if let type, type != envelope.type { return false }
        if let sender {
            let actual = envelope.sender
            guard actual == sender.rawValue || (owner != nil && actual == owner?.rawValue) else {
                return false
            }
        }
        if let interface, interface.rawValue != envelope.interface { return false }
        if let member, member.rawValue != envelope.member { return false }
        if let path, path.rawValue != envelope.path { return false }
        if let pathNamespace {
            guard let actual = envelope.path,
                  let actualPath = ObjectPath(rawValue: actual),
                  actualPath.isDescendant(of: pathNamespace) else { return false }
        }
        if let destination, destination.rawValue != envelope.destination { return false }
        if !arguments.isEmpty || !argumentPaths.isEmpty {
            let strings = envelope.stringArguments()
            for (index, value) in arguments {
                guard index < strings.count, strings[index]?.isString == true,
                      strings[index]?.text == value else { return false }
            }
            for (index, value) in argumentPaths {
                guard index < strings.count, let text = strings[index]?.text,
                      Self.pathMatches(text, value) else { return false }
            }
        }
        return true
    }

    /// The `argNpath` rule: equal, or one is a `/`-terminated prefix of the other.
    static func pathMatches(_ argument: String, _ rule: String) -> Bool {
        if argument == rule { return true }
        if rule.hasSuffix("/"), argument.hasPrefix(rule) { return true }
        if argument.hasSuffix("/"), rule.hasPrefix(argument) { return true }
        return false
    }
}

extension String {
    fileprivate func replacingApostrophes() -> String {
        var out = ""
        for ch in self {
            if ch == "'" { out += "'\\''" } else { out.append(ch) }
        }
        return out
    }
}

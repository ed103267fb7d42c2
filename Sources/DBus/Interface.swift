/// A D-Bus interface an object exports: its methods, properties and signals, with handlers.
///
/// ```swift
/// let calculator = Interface("org.example.Calculator") {
///     Method("Add", in: ["a": "i", "b": "i"], out: ["sum": "i"]) { call in
///         [.int32(try call.argument(0, as: Int32.self) + call.argument(1, as: Int32.self))]
///     }
///     Property("Precision", "u", get: { _ in .uint32(2) })
///     Signal("Overflowed", ["value": "x"])
/// }
/// try connection.export(calculator, at: "/org/example/Calculator")
/// ```
///
/// The argument names and signatures are what `Introspect` reports and what incoming calls are
/// checked against: a call whose arguments do not match the `in` signature gets
/// `org.freedesktop.DBus.Error.InvalidArgs` without reaching the handler.
public struct Interface: Sendable {
    /// The interface name.
    public let name: InterfaceName
    /// The methods, in declaration order.
    public var methods: [Method]
    /// The properties, in declaration order.
    public var properties: [Property]
    /// The signals, in declaration order.
    public var signals: [Signal]

    /// Declares an interface from its members.
    public init(_ name: InterfaceName, @InterfaceBuilder members: () -> [InterfaceMember]) {
        self.init(name, members: members())
    }

    /// Declares an interface from a list of members.
    public init(_ name: InterfaceName, members: [InterfaceMember]) {
        self.name = name
        var methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []
        for member in members {
            switch member {
            case .method(let m): methods.append(m)
            case .property(let p): properties.append(p)
            case .signal(let s): signals.append(s)
            }
        }
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func method(_ name: String) -> Method? { methods.first { $0.name.rawValue == name } }
    func property(_ name: String) -> Property? { properties.first { $0.name.rawValue == name } }
}

/// One named, typed argument of a method or signal.
public struct Argument: Sendable, Hashable {
    /// The argument's name (shown by introspection; may be empty).
    public var name: String
    /// The argument's type: one complete type.
    public var signature: Signature

    /// Creates an argument.
    public init(_ name: String, _ signature: Signature) {
        self.name = name
        self.signature = signature
    }

    static func list(_ pairs: KeyValuePairs<String, Signature>) -> [Argument] {
        pairs.map { Argument($0.key, $0.value) }
    }
}

/// A method of an exported interface.
public struct Method: Sendable {
    /// The method's name.
    public let name: MemberName
    /// The arguments the caller sends.
    public let inputs: [Argument]
    /// The values the method returns.
    public let outputs: [Argument]
    /// Where the handler runs.
    public let execution: Execution
    let handler: @Sendable (MethodCall) async throws -> Answer
    /// The handler as declared when it is synchronous: a ``Execution/connectionThread`` method
    /// then runs it inline, as the call is dispatched, with no task.
    private(set) var synchronousHandler: (@Sendable (MethodCall) throws -> [DBusValue])?
    /// The arguments' signatures joined, computed once: every incoming call is checked against it.
    let inputSignature: String
    /// The outputs' signatures joined, computed once: every reply is checked against it.
    let outputSignature: String

    /// What a handler answers: values for the router to check and marshal, or a reply it built
    /// itself from typed values.
    enum Answer: Sendable {
        case values([DBusValue])
        case reply(MethodReply)
    }

    /// Where a method's handler runs.
    public enum Execution: Sendable {
        /// A task on the global concurrent pool (the default): the handler may take its time.
        case pool
        /// The connection's own thread (`Connection.taskExecutor`): no thread hop to start the
        /// handler or to send its reply, which is most of the latency a Swift handler adds to a
        /// call (BENCHMARKS.md). An `async` handler runs as a task started immediately, as the
        /// call is dispatched, and resumes on that thread after each suspension; a synchronous
        /// handler runs inline with no task at all. The handler must not block — it holds up the
        /// connection's I/O while it runs; awaiting is fine.
        case connectionThread
    }

    /// Declares a method.
    ///
    /// - Parameters:
    ///   - name: the member name.
    ///   - inputs: the arguments, in order: `["path": "o", "options": "a{sv}"]`.
    ///   - outputs: the returned values, in order.
    ///   - execution: where the handler runs (``Execution/pool`` unless it is short and never
    ///     blocks).
    ///   - handler: runs as a task for each call; returns the output values. A thrown
    ///     `DBusError` is replied with its name; any other error becomes
    ///     `org.freedesktop.DBus.Error.Failed` with the error's description.
    public init(
        _ name: MemberName, in inputs: KeyValuePairs<String, Signature> = [:],
        out outputs: KeyValuePairs<String, Signature> = [:], execution: Execution = .pool,
        handler: @escaping @Sendable (MethodCall) async throws -> [DBusValue]
    ) {
        self.init(name, inputs: inputs, outputs: outputs, execution: execution) { .values(try await handler($0)) }
    }

    /// A method whose handler builds its reply from typed values
    /// (``MethodCall/reply(_:)``): marshalled straight from them, with no `DBusValue` tree, no
    /// validation walk over one and no per-value boxes. For a large reply, such as a listing of
    /// many dictionaries; a reply of a few small values is cheaper as values (the typed builder
    /// is generic and checks each value's type at run time: BENCHMARKS.md, "ferryd's hot replies").
    ///
    /// - Parameters: as for the other forms; `handler` returns the reply it built. A reply whose
    ///   signature is not the declared outputs' is replaced by an error, as for values.
    ///
    /// ```swift
    /// Method.replying("ListSessions", in: ["options": "a{sv}"], out: ["sessions": "aa{sv}"]) { call in
    ///     try call.reply(sessions)   // [MarshalledDictionary]
    /// }
    /// ```
    public static func replying(
        _ name: MemberName, in inputs: KeyValuePairs<String, Signature> = [:],
        out outputs: KeyValuePairs<String, Signature> = [:], execution: Execution = .pool,
        _ handler: @escaping @Sendable (MethodCall) async throws -> MethodReply
    ) -> Method {
        Method(name, inputs: inputs, outputs: outputs, execution: execution) { .reply(try await handler($0)) }
    }

    private init(_ name: MemberName, inputs: KeyValuePairs<String, Signature>, outputs: KeyValuePairs<String, Signature>,
                 execution: Execution, answering handler: @escaping @Sendable (MethodCall) async throws -> Answer) {
        self.name = name
        self.inputs = Argument.list(inputs)
        self.outputs = Argument.list(outputs)
        self.execution = execution
        self.handler = handler
        synchronousHandler = nil
        inputSignature = self.inputs.map(\.signature.rawValue).joined()
        outputSignature = self.outputs.map(\.signature.rawValue).joined()
    }

    /// Declares a method whose handler is synchronous (it never awaits).
    ///
    /// With ``Execution/connectionThread`` the handler runs on the connection's thread as soon
    /// as the call is dispatched, with no task: the cheapest way to serve a call (BENCHMARKS.md).
    /// It must be short and must not block, since the connection's I/O waits for it. With
    /// ``Execution/pool`` it runs as a task on the global pool, like an `async` handler.
    ///
    /// A closure that contains no `await` picks this form, one that awaits the `async` one.
    ///
    /// - Parameters: as for the `async` form.
    public init(
        _ name: MemberName, in inputs: KeyValuePairs<String, Signature> = [:],
        out outputs: KeyValuePairs<String, Signature> = [:], execution: Execution = .pool,
        handler: @escaping @Sendable (MethodCall) throws -> [DBusValue]
    ) {
        // Typed as async so that this picks the `async` initializer, not this one again.
        let asynchronous: @Sendable (MethodCall) async throws -> [DBusValue] = { call in try handler(call) }
        self.init(name, in: inputs, out: outputs, execution: execution, handler: asynchronous)
        synchronousHandler = handler
    }
}

/// A property of an exported interface, served through `org.freedesktop.DBus.Properties`.
///
/// A `Get` runs its getter on the connection's thread, as a method declared
/// `execution: .connectionThread` runs (a getter reads state it keeps: it must be short and must
/// not block; one that has to wait awaits). `GetAll` and `Set` run on the global pool.
public struct Property: Sendable {
    /// Who may read and write a property.
    public enum Access: String, Sendable {
        /// Readable only.
        case read
        /// Writable only.
        case write
        /// Readable and writable.
        case readWrite = "readwrite"
    }

    /// The property's name.
    public let name: MemberName
    /// The property's type: one complete type.
    public let signature: Signature
    /// Whether it can be read, written or both.
    public let access: Access
    /// Whether a successful `Set` emits `PropertiesChanged` with the new value.
    public let emitsChangedOnSet: Bool
    let getter: (@Sendable (MethodCall) async throws -> DBusValue)?
    let setter: (@Sendable (MethodCall, DBusValue) async throws -> Void)?

    /// Declares a read-only property.
    ///
    /// - Parameter get: returns the current value; receives the `Get`/`GetAll` call.
    public init(_ name: MemberName, _ signature: Signature,
                get: @escaping @Sendable (MethodCall) async throws -> DBusValue) {
        self.init(name, signature, access: .read, emits: false, get: get, set: nil)
    }

    /// Declares a read-write property.
    ///
    /// - Parameters:
    ///   - get: returns the current value.
    ///   - set: stores a new value, already checked against `signature`; throw to refuse it.
    ///   - emitsChangedOnSet: emit `PropertiesChanged` after each successful `Set`.
    public init(_ name: MemberName, _ signature: Signature,
                get: @escaping @Sendable (MethodCall) async throws -> DBusValue,
                set: @escaping @Sendable (MethodCall, DBusValue) async throws -> Void,
                emitsChangedOnSet: Bool = true) {
        self.init(name, signature, access: .readWrite, emits: emitsChangedOnSet, get: get, set: set)
    }

    /// Declares a write-only property.
    public init(_ name: MemberName, _ signature: Signature,
                set: @escaping @Sendable (MethodCall, DBusValue) async throws -> Void) {
        self.init(name, signature, access: .write, emits: false, get: nil, set: set)
    }

    private init(_ name: MemberName, _ signature: Signature, access: Access, emits: Bool,
                 get: (@Sendable (MethodCall) async throws -> DBusValue)?,
                 set: (@Sendable (MethodCall, DBusValue) async throws -> Void)?) {
        self.name = name
        self.signature = signature
        self.access = access
        self.emitsChangedOnSet = emits
        self.getter = get
        self.setter = set
    }
}

/// A signal an exported interface may emit (declared for introspection).
public struct Signal: Sendable {
    /// The signal's name.
    public let name: MemberName
    /// The signal's arguments.
    public let arguments: [Argument]

    /// Declares a signal with its arguments, in order.
    public init(_ name: MemberName, _ arguments: KeyValuePairs<String, Signature> = [:]) {
        self.name = name
        self.arguments = Argument.list(arguments)
    }
}

/// One member of an interface declaration.
public enum InterfaceMember: Sendable {
    /// A method.
    case method(Method)
    /// A property.
    case property(Property)
    /// A signal.
    case signal(Signal)
}

/// Builds an interface's members from declarations listed in a closure.
@resultBuilder
public enum InterfaceBuilder {
    /// A method declaration.
    public static func buildExpression(_ method: Method) -> [InterfaceMember] { [.method(method)] }
    /// A property declaration.
    public static func buildExpression(_ property: Property) -> [InterfaceMember] { [.property(property)] }
    /// A signal declaration.
    public static func buildExpression(_ signal: Signal) -> [InterfaceMember] { [.signal(signal)] }
    /// Several declarations.
    public static func buildExpression(_ members: [InterfaceMember]) -> [InterfaceMember] { members }
    /// Joins the declarations.
    public static func buildBlock(_ parts: [InterfaceMember]...) -> [InterfaceMember] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ part: [InterfaceMember]?) -> [InterfaceMember] { part ?? [] }
    /// The first branch of an `if`/`else`.
    public static func buildEither(first part: [InterfaceMember]) -> [InterfaceMember] { part }
    /// The second branch of an `if`/`else`.
    public static func buildEither(second part: [InterfaceMember]) -> [InterfaceMember] { part }
    /// A `for` loop.
    public static func buildArray(_ parts: [[InterfaceMember]]) -> [InterfaceMember] { parts.flatMap { $0 } }
}

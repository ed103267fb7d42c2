import CDBus
import Synchronization

extension ConnectionRouter {
    /// Routes an incoming method call to an exported object (owner thread).
    ///
    /// Unknown objects, interfaces and methods and mismatched arguments are answered here. A
    /// matching handler runs as a task whose reply is posted back to the owner thread — started
    /// right here for a connection-thread method — or, when it is synchronous and on the
    /// connection thread, inline with no task.
    func dispatchCall(_ envelope: Envelope) {
        guard let connection else { return }
        let message = envelope.message
        // libdbus validated the sender header field (a bus name) when it loaded the message. A
        // connection without a bus has none worth reading (the peer writes it): its link says.
        guard let rawPath = envelope.path, let member = envelope.member,
              let sender = connection.peerLink?.sender ?? envelope.sender.map(BusName.init(unchecked:)) else { return }
        guard !closing else {
            return reply(to: envelope, DBusError(.failed, "the connection is closing"))
        }
        let path = ObjectPath(unchecked: rawPath)
        let registry = connection.objects
        let exported = registry.interfaces(at: path)
        let standard: [Interface]
        if exported != nil {
            standard = StandardInterfaces.ofObject
        } else if registry.isNode(path) {
            standard = StandardInterfaces.ofNode
        } else if envelope.interface == StandardInterfaces.peerName.rawValue {
            // Ping and GetMachineId answer on any path, as libdbus answers them for its connections.
            standard = [StandardInterfaces.peer]
        } else {
            return reply(to: envelope, DBusError(.unknownObject, "no object at path \(rawPath)"))
        }
        // The candidates are the standard interfaces, then the exported ones, narrowed to the
        // call's interface when it names one; the first that has the method serves it. Searched
        // in place: this runs for every incoming call.
        let wanted = envelope.interface
        var named = false
        var found: (Interface, Method)?
        func search(_ list: [Interface]) {
            for candidate in list where wanted == nil || candidate.name.rawValue == wanted {
                named = true
                if let method = candidate.method(member) {
                    found = (candidate, method)
                    return
                }
            }
        }
        search(standard)
        if found == nil, let exported { search(exported) }
        if let name = envelope.interface, !named {
            let error = exported == nil
                ? DBusError(.unknownObject, "no object at path \(rawPath)")
                : DBusError(.unknownInterface, "no interface '\(name)' at object path \(rawPath)")
            return reply(to: envelope, error)
        }
        guard let (interface, method) = found else {
            let scope = envelope.interface.map { "interface '\($0)'" } ?? "any interface"
            return reply(to: envelope, DBusError(
                .unknownMethod, "no method '\(member)' with signature '\(envelope.signature)' in "
                    + "\(scope) at object path \(rawPath)"))
        }
        guard envelope.signature == method.inputSignature else {
            return reply(to: envelope, DBusError(
                .invalidArgs, "\(interface.name).\(member) takes '\(method.inputSignature)', "
                    + "got '\(envelope.signature)'"))
        }
        let noReply = envelope.noReplyExpected
        let memberName = MemberName(unchecked: member)
        if method.execution == .connectionThread, let handler = method.synchronousHandler {
            // A synchronous handler on the connection's thread: run it right here, with no task
            // (libdbus calls this filter with the connection unlocked, so sending is fine).
            let response = Self.response(to: message, noReply: noReply, interface: interface.name, method: method) {
                .values(try handler(MethodCall(message: message, sender: sender, path: path, interface: interface.name,
                                               member: memberName, arguments: try message.body, connection: connection)))
            }
            if let response { try? send(response) }
            return
        }
        handlersInFlight.add(1, ordering: .relaxed)
        let interfaceName = interface.name
        let serve: @Sendable () async -> Void = {
            let answer: Result<Method.Answer, any Error>
            do {
                let call = MethodCall(message: message, sender: sender, path: path, interface: interfaceName,
                                      member: memberName, arguments: try message.body, connection: connection)
                answer = .success(try await method.handler(call))
            } catch {
                answer = .failure(error)
            }
            let response = Self.response(to: message, noReply: noReply, interface: interfaceName, method: method) {
                try answer.get()
            }
            connection.finishHandler(reply: response)
        }
        if method.execution == .connectionThread {
            // Started right here, on the connection's thread, until it first suspends (then it
            // resumes on the connection's executor): no job and no loop round before it runs,
            // and a handler that never suspends replies within this dispatch.
            Task.immediate(executorPreference: connection.taskExecutor, operation: serve)
        } else {
            Task(operation: serve)
        }
    }

    /// The reply to `message` carrying what `answer` gives: its values or the reply it built,
    /// checked against the method's declared outputs, or the error it throws; nil when no reply
    /// is expected.
    static func response(to message: Message, noReply: Bool, interface: InterfaceName, method: Method,
                         _ answer: () throws -> Method.Answer) -> Message? {
        do {
            let produced: String
            switch try answer() {
            case .values(let values):
                if signatures(of: values, equal: method.outputSignature) {
                    return noReply ? nil : try Message.methodReturn(replyingTo: message, body: values)
                }
                produced = values.map(\.signature.rawValue).joined()
            case .reply(let reply):
                produced = reply.message.signature.rawValue
                if produced == method.outputSignature { return noReply ? nil : reply.message }
            }
            throw DBusError(.failed, "\(interface).\(method.name) returned '\(produced)', "
                + "declared '\(method.outputSignature)'")
        } catch {
            return noReply ? nil : errorReply(to: message, error)
        }
    }

    /// Whether the signatures of `values`, concatenated, are exactly `expected` — compared piece
    /// by piece, without building the joined text (this runs for every reply).
    static func signatures(of values: [DBusValue], equal expected: String) -> Bool {
        let utf8 = expected.utf8
        var index = utf8.startIndex
        for value in values {
            let part = value.signature.rawValue.utf8
            guard let end = utf8.index(index, offsetBy: part.count, limitedBy: utf8.endIndex),
                  utf8[index..<end].elementsEqual(part) else { return false }
            index = end
        }
        return index == utf8.endIndex
    }

    private func reply(to envelope: Envelope, _ error: DBusError) {
        guard !envelope.noReplyExpected, let response = Self.errorReply(to: envelope.message, error) else { return }
        try? send(response)
    }

    /// An error reply for any thrown error: a `DBusError` keeps its name, a
    /// `DBusErrorConvertible` converts itself, anything else becomes
    /// `org.freedesktop.DBus.Error.Failed` with its description.
    static func errorReply(to call: Message, _ error: any Error) -> Message? {
        let dbusError = (error as? DBusError) ?? (error as? any DBusErrorConvertible)?.dbusError
            ?? DBusError(.failed, String(describing: error))
        return try? Message.error(replyingTo: call, dbusError)
    }
}

extension Connection {
    /// Sends a handler's reply, if any, on the owner thread, and counts the handler as done.
    func finishHandler(reply: Message?) {
        let router = self.router
        if loop.onOwnerThread {
            // A handler on the connection's executor: send right here, with no job.
            if let reply { try? router.send(reply) }
            router.handlersInFlight.subtract(1, ordering: .relaxed)
            return
        }
        let accepted = loop.submit {
            if let reply { try? router.send(reply) }
            router.handlersInFlight.subtract(1, ordering: .relaxed)
        }
        if !accepted { router.handlersInFlight.subtract(1, ordering: .relaxed) }
    }
}

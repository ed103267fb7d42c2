import Synchronization

extension Connection {
    /// Subscribes to signals matching `rule` and returns once the rule is active on the bus.
    ///
    /// Signals are routed in-process to every subscription whose rule matches, so two
    /// subscriptions with overlapping rules each see the signals they asked for.
    ///
    /// D-Bus: `org.freedesktop.DBus.AddMatch` on start, `RemoveMatch` when the subscription ends.
    /// - Throws: `DBusError` when the rule is invalid, the bus refuses it (`AddMatch`), or the
    ///   connection is closed.
    public func subscribe(to rule: MatchRule) async throws -> SignalSubscription {
        try rule.validate()
        let (stream, continuation) = AsyncThrowingStream<Message, any Error>.makeStream()
        let route = SignalRoute(rule: rule, continuation: continuation)
        let loop = self.loop, router = self.router
        let ownerRule = rule.sender.flatMap { $0.isUnique || $0 == .bus ? nil : Self.ownerChangedRule(for: $0) }
        let ended = Mutex(false)
        let end: @Sendable () -> Void = {
            guard !ended.withLock({ was in defer { was = true }; return was }) else { return }
            loop.submit {
                router.removeRoute(route)
                try? router.busCallWithoutReply("RemoveMatch", [.string(rule.description)])
                if let ownerRule {
                    try? router.busCallWithoutReply("RemoveMatch", [.string(ownerRule.description)])
                }
            }
        }
        continuation.onTermination = { _ in end() }
        try await perform { router.addRoute(route) }
        do {
            _ = try await busCall("AddMatch", [.string(rule.description)])
            if let ownerRule, let sender = rule.sender {
                _ = try await busCall("AddMatch", [.string(ownerRule.description)])
                let owner = try? await busCall("GetNameOwner", [.string(sender.rawValue)]).first
                if case .string(let unique)? = owner {
                    try enqueue { router.learnOwner(of: sender.rawValue, initially: unique) }
                }
            }
        } catch {
            end()
            throw error
        }
        return SignalSubscription(rule: rule, stream: stream, end: end)
    }

    /// Signals matching `rule`, subscribed when iteration starts.
    public func signals(matching rule: MatchRule) -> SignalSequence {
        SignalSequence(connection: self, rule: rule)
    }

    static func ownerChangedRule(for name: BusName) -> MatchRule {
        MatchRule(sender: .bus, interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                  path: "/org/freedesktop/DBus", arguments: [0: name.rawValue])
    }

    /// Calls a method of the bus itself (`org.freedesktop.DBus`) and returns its reply body.
    func busCall(_ member: MemberName, _ body: [DBusValue], timeout: Duration? = nil) async throws -> [DBusValue] {
        let message = try Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: member, body: body)
        return try await call(message, timeout: timeout).body
    }
}

/// One signal subscription's place in the router (owner thread).
final class SignalRoute: @unchecked Sendable {
    // Thread safety: `rule` and `continuation` are immutable and Sendable; the router, on the
    // owner thread, is the only user otherwise.
    let rule: MatchRule
    let continuation: AsyncThrowingStream<Message, any Error>.Continuation

    init(rule: MatchRule, continuation: AsyncThrowingStream<Message, any Error>.Continuation) {
        self.rule = rule
        self.continuation = continuation
    }
}

extension ConnectionRouter {
    func addRoute(_ route: SignalRoute) {
        routes[ObjectIdentifier(route)] = route
        if let sender = route.rule.sender, !sender.isUnique, sender != .bus {
            trackedNames[sender.rawValue, default: (owner: nil, fromSignal: false, users: 0)].users += 1
        }
    }

    func removeRoute(_ route: SignalRoute) {
        guard routes.removeValue(forKey: ObjectIdentifier(route)) != nil else { return }
        route.continuation.finish()
        if let sender = route.rule.sender?.rawValue, var tracked = trackedNames[sender] {
            tracked.users -= 1
            trackedNames[sender] = tracked.users > 0 ? tracked : nil
        }
    }

    /// Records the owner from `GetNameOwner`, unless a NameOwnerChanged already told us.
    func learnOwner(of name: String, initially owner: String) {
        guard var tracked = trackedNames[name], !tracked.fromSignal else { return }
        tracked.owner = owner
        trackedNames[name] = tracked
    }

    /// Delivers a signal to every matching subscription (owner thread).
    func routeSignal(_ envelope: Envelope) {
        if envelope.sender == BusName.bus.rawValue, envelope.member == "NameOwnerChanged",
           !trackedNames.isEmpty {
            let args = envelope.stringArguments()
            if args.count == 3, let name = args[0]?.text, var tracked = trackedNames[name] {
                let newOwner = args[2]?.text ?? ""
                tracked.owner = newOwner.isEmpty ? nil : newOwner
                tracked.fromSignal = true
                trackedNames[name] = tracked
            }
        }
        for route in routes.values {
            var owner: BusName?
            if let sender = route.rule.sender, let tracked = trackedNames[sender.rawValue] {
                owner = tracked.owner.map { BusName(unchecked: $0) }
            }
            if route.rule.matches(envelope, senderOwner: owner) {
                route.continuation.yield(envelope.message)
            }
        }
    }

    /// Ends every subscription: normally after `close()`, with `error` when the connection was lost.
    func endSignalRoutes(_ error: DBusError) {
        let all = routes.values
        routes = [:]
        trackedNames = [:]
        for route in all {
            if error == DBusError.closedLocally {
                route.continuation.finish()
            } else {
                route.continuation.finish(throwing: error)
            }
        }
    }

    /// Sends a call to the bus without waiting for (or wanting) its reply.
    func busCallWithoutReply(_ member: MemberName, _ body: [DBusValue]) throws {
        let message = try Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: member, body: body,
                                             noReplyExpected: true)
        try send(message)
    }
}

extension DBusError {
    /// The error calls in flight fail with after `Connection.close()`.
    static let closedLocally = DBusError(.disconnected, "the connection was closed")
}

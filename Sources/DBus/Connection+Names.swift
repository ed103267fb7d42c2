import CDBus

/// Options for `Connection.requestName(_:flags:)`.
public struct NameRequestFlags: OptionSet, Sendable, Hashable {
    /// The flag bits, as the bus defines them.
    public let rawValue: UInt32

    /// Creates flags from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Let another connection that asks with `replaceExisting` take the name from us.
    public static let allowReplacement = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_ALLOW_REPLACEMENT)
    /// Take the name from its owner if the owner allowed replacement.
    public static let replaceExisting = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_REPLACE_EXISTING)
    /// Fail rather than wait in the queue when the name is taken.
    public static let doNotQueue = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_DO_NOT_QUEUE)
}

/// The bus's answer to `requestName`.
public enum NameRequestReply: UInt32, Sendable, Hashable {
    /// We now own the name.
    case primaryOwner = 1
    /// Someone else owns it; we wait in its queue.
    case inQueue = 2
    /// Someone else owns it and we did not queue.
    case exists = 3
    /// We already owned it.
    case alreadyOwner = 4
}

/// The bus's answer to `releaseName`.
public enum NameReleaseReply: UInt32, Sendable, Hashable {
    /// We no longer own or queue for the name.
    case released = 1
    /// Nobody owns the name.
    case nonExistent = 2
    /// Someone else owns it and we were not queued.
    case notOwner = 3
}

/// A change of a bus name's owner, from the bus's `NameOwnerChanged` signal.
public struct NameOwnerChange: Sendable, Hashable {
    /// The name whose owner changed.
    public var name: BusName
    /// The previous owner's unique name; nil when the name was unowned.
    public var oldOwner: BusName?
    /// The new owner's unique name; nil when the name is now unowned.
    public var newOwner: BusName?

    /// Creates a change record.
    public init(name: BusName, oldOwner: BusName?, newOwner: BusName?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}

extension Connection {
    /// Asks the bus for a well-known name.
    ///
    /// D-Bus: `org.freedesktop.DBus.RequestName`.
    /// - Throws: `DBusError` when the bus refuses (for example a unique name, or policy).
    public func requestName(_ name: BusName, flags: NameRequestFlags = []) async throws -> NameRequestReply {
        let reply = try await busCall("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)])
        guard case .uint32(let code)? = reply.first, let result = NameRequestReply(rawValue: code) else {
            throw DBusError(.invalidArgs, "unexpected RequestName reply \(reply)")
        }
        return result
    }

    /// Gives up a well-known name (or our place in its queue).
    ///
    /// D-Bus: `org.freedesktop.DBus.ReleaseName`.
    @discardableResult
    public func releaseName(_ name: BusName) async throws -> NameReleaseReply {
        let reply = try await busCall("ReleaseName", [.string(name.rawValue)])
        guard case .uint32(let code)? = reply.first, let result = NameReleaseReply(rawValue: code) else {
            throw DBusError(.invalidArgs, "unexpected ReleaseName reply \(reply)")
        }
        return result
    }

    /// The unique name of the connection owning `name`, or nil when nobody owns it.
    ///
    /// D-Bus: `org.freedesktop.DBus.GetNameOwner`.
    public func owner(of name: BusName) async throws -> BusName? {
        do {
            let reply = try await busCall("GetNameOwner", [.string(name.rawValue)])
            guard case .string(let owner)? = reply.first else { return nil }
            return BusName(rawValue: owner)
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }

    /// Subscribes to owner changes of `name` (or of every name when nil), active on return.
    ///
    /// D-Bus: the `org.freedesktop.DBus.NameOwnerChanged` signal.
    public func nameOwnerChanges(for name: BusName? = nil) async throws -> NameOwnerChanges {
        var rule = MatchRule(sender: .bus, interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                             path: "/org/freedesktop/DBus")
        if let name { rule.arguments[0] = name.rawValue }
        return NameOwnerChanges(subscription: try await subscribe(to: rule))
    }

    /// Waits until nobody owns `name`.
    ///
    /// - Returns: true when the name vanished, false when `timeout` passed first.
    public func waitForNameToVanish(_ name: BusName, timeout: Duration = .seconds(25)) async throws -> Bool {
        let changes = try await nameOwnerChanges(for: name)
        defer { changes.cancel() }
        if try await owner(of: name) == nil { return true }
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for try await change in changes where change.newOwner == nil { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let vanished = try await group.next() ?? false
            group.cancelAll()
            return vanished
        }
    }
}

/// Owner changes of bus names, as an `AsyncSequence`. See `Connection.nameOwnerChanges(for:)`.
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// Each element is one owner change.
    public typealias Element = NameOwnerChange
    /// The error the sequence can throw.
    public typealias Failure = any Error

    let subscription: SignalSubscription

    /// Ends the subscription.
    public func cancel() { subscription.cancel() }

    /// Iterates the changes.
    public func makeAsyncIterator() -> Iterator { Iterator(base: subscription.makeAsyncIterator()) }

    /// The iterator of `NameOwnerChanges`.
    public struct Iterator: AsyncIteratorProtocol {
        var base: SignalSubscription.Iterator

        /// The next owner change, or nil when the subscription has ended.
        public mutating func next() async throws -> NameOwnerChange? {
            while let message = try await base.next() {
                let body = try message.body
                guard body.count == 3, case .string(let name) = body[0], case .string(let old) = body[1],
                      case .string(let new) = body[2], let busName = BusName(rawValue: name) else { continue }
                return NameOwnerChange(name: busName, oldOwner: old.isEmpty ? nil : BusName(rawValue: old),
                                       newOwner: new.isEmpty ? nil : BusName(rawValue: new))
            }
            return nil
        }
    }
}

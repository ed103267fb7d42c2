/// Signals matching one rule, as an `AsyncSequence` of messages.
///
/// Created by `Connection.subscribe(to:)`, which returns once the rule is active on the bus.
/// The rule is removed (`RemoveMatch`) when the subscription is cancelled, when the iterating
/// task is cancelled, or when the subscription and its iterators are released. The sequence ends
/// when the connection closes, and throws `org.freedesktop.DBus.Error.Disconnected` when the
/// connection is lost.
public final class SignalSubscription: AsyncSequence, Sendable {
    /// Each element is one signal message.
    public typealias Element = Message
    /// The error the sequence can throw.
    public typealias Failure = any Error

    /// The rule this subscription matches.
    public let rule: MatchRule
    private let stream: AsyncThrowingStream<Message, any Error>
    private let end: @Sendable () -> Void

    init(rule: MatchRule, stream: AsyncThrowingStream<Message, any Error>, end: @escaping @Sendable () -> Void) {
        self.rule = rule
        self.stream = stream
        self.end = end
    }

    /// Ends the subscription: removes the rule and finishes every iteration.
    public func cancel() { end() }

    deinit { end() }

    /// Iterates the signals; keeps the subscription alive while iterating.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), owner: self)
    }

    /// The iterator of a `SignalSubscription`.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Message, any Error>.AsyncIterator
        let owner: SignalSubscription

        /// The next matching signal, or nil when the subscription has ended.
        public mutating func next() async throws -> Message? {
            try await base.next()
        }
    }
}

/// Signals matching one rule, subscribed lazily: the rule is added on the bus when iteration
/// starts (the first `next()`), and removed when iteration ends.
///
/// Signals emitted before the first `next()` returns its `AddMatch` are not seen; use
/// `Connection.subscribe(to:)` when that matters.
public struct SignalSequence: AsyncSequence, Sendable {
    /// Each element is one signal message.
    public typealias Element = Message
    /// The error the sequence can throw.
    public typealias Failure = any Error

    let connection: Connection
    /// The rule this sequence matches.
    public let rule: MatchRule

    /// Starts an iteration; the subscription begins on the first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(connection: connection, rule: rule)
    }

    /// The iterator of a `SignalSequence`.
    public struct Iterator: AsyncIteratorProtocol {
        let connection: Connection
        let rule: MatchRule
        var subscribed: SignalSubscription.Iterator?

        /// The next matching signal, or nil when the subscription has ended.
        ///
        /// - Throws: the `AddMatch` failure on the first call, or the disconnection error.
        public mutating func next() async throws -> Message? {
            if subscribed == nil {
                subscribed = try await connection.subscribe(to: rule).makeAsyncIterator()
            }
            return try await subscribed!.next()
        }
    }
}

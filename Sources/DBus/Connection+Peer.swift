import Synchronization

/// Whom a peer-to-peer connection accepted by a ``PeerServer`` speaks for: nobody until
/// ``Connection/bind(to:serving:)``, then a bus name, whose calls reach a bus connection's objects.
final class PeerLink: Sendable {
    /// The sender of calls on a connection not bound yet: no bus name can be this one.
    static let unbound = BusName(unchecked: ":direct")

    /// The peer's kernel credentials (nil on the client's side).
    let process: PeerProcess?
    private let binding = Mutex<(name: BusName, served: Connection)?>(nil)

    init(process: PeerProcess) {
        self.process = process
    }

    /// A link bound from the start: the client's side of a connection whose server calls back.
    init(boundTo name: BusName, serving bus: Connection) {
        process = nil
        binding.withLock { $0 = (name, bus) }
    }

    /// The sender of every call on the connection: the bound name, or ``unbound``. The message's
    /// own sender field is never read: on a connection without a bus the peer writes it.
    var sender: BusName { binding.withLock { $0?.name } ?? Self.unbound }

    /// The bus connection whose objects calls reach once bound.
    var served: Connection? { binding.withLock { $0?.served } }

    /// Binds once. Returns false when already bound.
    func bind(_ name: BusName, serving bus: Connection) -> Bool {
        binding.withLock { current in
            guard current == nil else { return false }
            current = (name, bus)
            return true
        }
    }
}

extension Connection {
    /// The kernel's credentials of the peer, for a connection a ``PeerServer`` accepted; nil
    /// for bus connections and the client side of a peer-to-peer one.
    public var peerProcess: PeerProcess? { peerLink?.process }

    /// The bus name a peer-to-peer connection a ``PeerServer`` accepted speaks for once bound;
    /// nil before and for other connections.
    public var boundName: BusName? {
        guard let peerLink, peerLink.served != nil else { return nil }
        return peerLink.sender
    }

    /// Makes every later call on this peer-to-peer connection arrive as if `name` had sent it on
    /// `bus`: handlers see `name` as ``MethodCall/sender`` and reach the objects exported on
    /// `bus` (and no longer the ones exported on this connection). Call it from the handler of
    /// the binding call: calls the peer sends after that call's reply are bound.
    ///
    /// The caller vouches for `name` (a one-time token the bus caller got, say): the message's
    /// own sender field is never trusted on a connection without a bus.
    /// - Throws: `org.freedesktop.DBus.Error.Failed` when this is not a connection a
    ///   ``PeerServer`` accepted, or it is bound already.
    public func bind(to name: BusName, serving bus: Connection) throws {
        guard let peerLink else { throw DBusError(.failed, "only a connection a PeerServer accepted can be bound") }
        guard peerLink.bind(name, serving: bus) else { throw DBusError(.failed, "the connection is bound already") }
    }

    /// Where signals about this connection's objects go: a bound peer connection's objects are
    /// the bus connection's, whose signals go to the bus.
    var broadcaster: Connection { peerLink?.served ?? self }
}

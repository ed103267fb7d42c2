/// A timer on a connection's thread (``Connection/schedule(after:_:)``).
package final class ConnectionTimer: Sendable {
    private let loop: ConnectionLoop

    fileprivate init(loop: ConnectionLoop) { self.loop = loop }

    /// Stops the timer unless it has fired. Called from another thread, it may still fire
    /// meanwhile: the callback must tolerate that.
    package func cancel() {
        if loop.onOwnerThread {
            loop.removeTimer(of: self)
        } else {
            loop.submit { [loop] in loop.removeTimer(of: self) }
        }
    }
}

extension Connection {
    /// Calls `fire` on the connection's thread once `delay` has passed (to the millisecond,
    /// rounded up), unless the timer is cancelled first. The loop keeps it beside its other
    /// timers: no thread and no task waits for it. A connection that has closed never fires it.
    package func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> ConnectionTimer {
        let loop = self.loop, timer = ConnectionTimer(loop: loop)
        let milliseconds = Self.milliseconds(delay)
        // The loop knows its timers by their owner's identity: the timer lives until it fires or
        // is removed, so that no other object takes that identity meanwhile.
        let add: @Sendable () -> Void = { loop.addTimer(of: timer, milliseconds: milliseconds) { withExtendedLifetime(timer) { fire() } } }
        if loop.onOwnerThread {
            add()
        } else {
            loop.submit(add)
        }
        return timer
    }
}

import DBus
import FerryModel
import Synchronization

/// What an ``Application`` remembers about running drags: the drop session of each (drag,
/// scene) the broker entered, for `DropExited`, `ConcludeDrop` and `DropEnded`; and, for drags
/// from its own scenes, the source scene and the watch of the session's `Moved` signal.
final class DragTracker: Sendable {
    struct Key: Hashable {
        var drag: String
        var scene: String
    }

    /// A drag over one scene.
    struct Drop {
        var session: DropSession
        /// Whether the delegate said it can handle the drag (and heard `dropSessionDidEnter`):
        /// only then does it hear the exit and the end, as in UIKit.
        var handled: Bool
    }

    /// A drag from one of the app's scenes.
    struct Source {
        var scene: String
        var watch: Task<Void, Never>?
        var subscription: SignalSubscription?
    }

    struct State {
        var drops: [Key: Drop] = [:]
        var sources: [String: Source] = [:]
    }

    let state = Mutex(State())

    func drop(_ drag: String, scene: String) -> Drop? {
        state.withLock { $0.drops[Key(drag: drag, scene: scene)] }
    }

    func setDrop(_ drop: Drop?, drag: String, scene: String) {
        state.withLock { $0.drops[Key(drag: drag, scene: scene)] = drop }
    }

    /// Forgets and returns the drop of (drag, scene).
    func removeDrop(_ drag: String, scene: String) -> Drop? {
        state.withLock { $0.drops.removeValue(forKey: Key(drag: drag, scene: scene)) }
    }

    /// Notes a drag from `scene`; an earlier watch of the same drag (there should be none) stops.
    func addSource(_ drag: String, scene: String, watch: Task<Void, Never>?, subscription: SignalSubscription?) {
        let old = state.withLock { s in
            defer { s.sources[drag] = Source(scene: scene, watch: watch, subscription: subscription) }
            return s.sources[drag]
        }
        old?.subscription?.cancel()
        old?.watch?.cancel()
    }

    /// The source scene of a drag from this app, if it is one.
    func sourceScene(of drag: String) -> String? {
        state.withLock { $0.sources[drag]?.scene }
    }

    /// Forgets a drag from this app: its `Moved` subscription ends, and this returns once the
    /// watch has delivered the signals already received (they came before the end) and its last
    /// delegate call has finished, so the end is heard after every move.
    func endSource(_ drag: String) async {
        guard let source = state.withLock({ $0.sources.removeValue(forKey: drag) }) else { return }
        source.subscription?.cancel()
        await source.watch?.value
    }

    /// Forgets every drag (the broker that ran them is gone; a new one numbers drags from 1
    /// again): the `Moved` watches stop. Returns the drags that came from this app's scenes.
    func reset() -> [String] {
        let sources = state.withLock { s -> [String: Source] in
            defer { s = State() }
            return s.sources
        }
        for source in sources.values {
            source.subscription?.cancel()
            source.watch?.cancel()
        }
        return Array(sources.keys)
    }
}

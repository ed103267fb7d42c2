import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads that `org.ferry.Client1.ProvideBytes` started but could not answer with at once (a
/// loader that suspended, bytes over the broker's limit), kept under a token for the
/// `ProvideRepresentation` that follows with its `resume` option: that call writes the load's
/// bytes into its pipe, where a reader who leaves can cancel it, instead of loading again.
///
/// A load no one resumes within its ``lifetime`` is cancelled and forgotten.
final class KeptLoads: Sendable {
    /// How long a load waits for its `ProvideRepresentation` (10 s). The broker asks right after
    /// the `ProvideBytes` reply: this only bounds what a broker that never asks leaves behind.
    let lifetime: Duration

    init(lifetime: Duration = .seconds(10)) {
        self.lifetime = lifetime
    }

    private struct Kept {
        var item: String
        var type: String
        var load: Task<Data, any Error>
    }

    private struct State {
        var next: UInt64 = 0
        var kept: [String: Kept] = [:]
    }

    private let state = Mutex(State())

    /// Keeps `load` of `type` of item `item`; the token that resumes it.
    func keep(_ load: Task<Data, any Error>, item: String, type: String) -> String {
        let token = state.withLock { state in
            state.next += 1
            let token = String(state.next)
            state.kept[token] = Kept(item: item, type: type, load: load)
            return token
        }
        Task { [weak self, lifetime] in
            try? await Task.sleep(for: lifetime)
            self?.take(token)?.cancel()
        }
        return token
    }

    /// The load kept under `token` for `type` of item `item`, taken out; nil when there is none
    /// (unknown, forgotten, resumed already, or kept for another item or type).
    func take(_ token: String, item: String, type: String) -> Task<Data, any Error>? {
        state.withLock { state in
            guard let kept = state.kept[token], kept.item == item, kept.type == type else { return nil }
            state.kept[token] = nil
            return kept.load
        }
    }

    private func take(_ token: String) -> Task<Data, any Error>? {
        state.withLock { $0.kept.removeValue(forKey: token)?.load }
    }
}

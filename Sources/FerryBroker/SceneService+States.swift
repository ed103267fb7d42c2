import BrokerCore
import DBus
import FerryBus
import FerryModel

extension SceneService {
    /// Runs a desktop change, stores the windows it changed (undoing it when that fails),
    /// announces changed frames and re-derives the activation states.
    /// - Throws: `FerryModelError` `.storageFailed`.
    func changeDesktop(except: String? = nil, _ body: (inout Desktop) -> Void) throws {
        let before = desktop
        body(&desktop)
        do {
            try persist(changedWindows(since: before))
        } catch {
            desktop = before
            throw error
        }
        windowsChanged(since: before, notifying: true, except: except)
        rederive()
    }

    /// The windows whose frame, screen or stacking order differ from `before` (new ones too).
    func changedWindows(since before: Desktop) -> Set<String> {
        var changed: Set<String> = []
        for (id, window) in desktop.windows {
            guard let old = before.windows[id], old.frame == window.frame, old.screen == window.screen,
                  old.stackOrder == window.stackOrder else {
                changed.insert(id)
                continue
            }
        }
        return changed
    }

    /// Copies changed frames into the sessions, emits `PropertiesChanged` (Frame, Screen) and,
    /// with `notifying`, tells connected scenes' apps (`SceneChanged` frame/screen), except the
    /// session `except` (its app made the change).
    func windowsChanged(since before: Desktop, notifying: Bool, except: String? = nil) {
        for (id, window) in desktop.windows {
            let old = before.windows[id]
            let frameChanged = old?.frame != window.frame, screenChanged = old?.screen != window.screen
            guard frameChanged || screenChanged else { continue }
            sessions[id]?.frame = window.frame
            var properties: [String: DBusValue] = [:], changes: [String: DBusValue] = [:]
            if frameChanged {
                properties["Frame"] = Self.frameStructure(window.frame)
                changes["frame"] = Self.frameWire(window.frame).dbusValue
            }
            if screenChanged {
                properties["Screen"] = .uint32(UInt32(clamping: window.screen))
                changes["screen"] = .uint32(UInt32(clamping: window.screen))
            }
            guard old != nil else { continue }
            emitChanged(id, properties)
            if notifying, id != except, window.isConnected, let app = running[window.appID] {
                _ = try? app.callbacks.enqueue("SceneChanged", [.string(id), changes.dbusValue], timeout: timeouts.call)
            }
        }
    }

    /// Stores sessions as they are now (with their window's frame, screen and stacking order,
    /// and their pending options), in one transaction.
    /// - Throws: `FerryModelError` `.storageFailed`, or `.invalidArgument` for a session the
    ///   store cannot hold.
    func persist(_ ids: some Sequence<String>) throws {
        let stored = ids.compactMap { id -> StoredSceneSession? in
            guard var session = sessions[id], let window = desktop.windows[id] else { return nil }
            session.frame = window.frame
            return StoredSceneSession(session: session, screen: window.screen, stackOrder: window.stackOrder,
                                      pendingOptions: pending[id])
        }
        guard !stored.isEmpty else { return }
        try store.save(stored)
    }

    /// Gives every session the state the desktop derives for it: `PropertiesChanged` (State)
    /// for each change and, for connected scenes, one `SceneChanged` per step
    /// (``SceneActivationState/steps(from:to:)``), lower states first. Updates the mirror of
    /// apps with a foreground scene.
    func rederive() {
        let derived = desktop.derivedStates()
        var changes: [(id: String, old: SceneActivationState, new: SceneActivationState)] = []
        for (id, new) in derived {
            guard let old = sessions[id]?.activationState, old != new else { continue }
            changes.append((id, old, new))
        }
        changes.sort { $0.new.level != $1.new.level ? $0.new.level < $1.new.level : $0.id < $1.id }
        for change in changes {
            guard var session = sessions[change.id] else { continue }
            session.activationState = change.new
            sessions[change.id] = session
            if change.new == .foregroundActive { handoffFront = change.id }
            emitChanged(change.id, ["State": .string(change.new.name)])
            guard change.new != .unattached, desktop.windows[change.id]?.isConnected == true,
                  let app = running[session.bundleIdentifier] else { continue }
            for step in SceneActivationState.steps(from: change.old, to: change.new) {
                _ = try? app.callbacks.enqueue("SceneChanged", [
                    .string(change.id), .variantDictionary(["state": .int32(step.rawValue)]),
                ], timeout: timeouts.call)
            }
        }
        var foreground: Set<String> = []
        for session in sessions.values where session.activationState == .foregroundActive
            || session.activationState == .foregroundInactive {
            foreground.insert(session.bundleIdentifier)
        }
        foregroundApps.set(foreground)
        if !changes.isEmpty { handoffMayHaveChanged() }
    }
}

import Ferry
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One scene of a demo app: `Default` shows the collection (and remembers a selected item),
/// `Editor`/`Viewer` one note or photo. Connects from a fresh activity or its restoration
/// activity (the seed's `options.userActivities.first ?? session.stateRestorationActivity`),
/// else from its state file; keeps title, userInfo and activation conditions in step with what
/// it shows; saves its file whenever the library asks for its restoration activity.
final class DemoSceneDelegate: SceneDelegate {
    let app: DemoApp
    let shown = Mutex(Shown())

    /// What the scene shows.
    struct Shown: Sendable {
        var configuration = DemoKind.defaultConfiguration
        /// The note or photo (Editor, Viewer: shown; Default: selected).
        var item: String?
        /// Whether the scene connected (a delegate that never connected saves nothing).
        var connected = false
        /// When it last came to the front (``DemoApp/nextFrontRank()``): when it connected or
        /// last became `foregroundActive`.
        var frontRank = 0
    }

    init(app: DemoApp) {
        self.app = app
    }

    private var kind: DemoKind { app.kind }

    /// The event key of the scene's item: `note`/`photo` where it is shown (Editor, Viewer),
    /// `selected` in the Default scene's list.
    func itemKey(for configuration: String) -> String {
        configuration == kind.detailConfiguration ? kind.eventKey : "selected"
    }

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async {
        let id = scene.persistentIdentifier
        let configuration = session.configurationName ?? DemoKind.defaultConfiguration
        // A restoration activity the broker also put in the options is not a fresh one.
        let fresh = options.userActivities.first.flatMap { $0 == session.stateRestorationActivity ? nil : $0 }
        let saved = app.states.state(of: id)
        var item = (fresh ?? session.stateRestorationActivity).flatMap(kind.item(in:))
        if item == nil, fresh == nil, let saved, saved.configuration == configuration { item = saved.item }
        let restored = fresh == nil && (saved != nil || session.stateRestorationActivity != nil)
        let rank = app.nextFrontRank()
        shown.withLock { $0 = Shown(configuration: configuration, item: item, connected: true, frontRank: rank) }
        var details: [(key: String, value: DemoEvent.Value)] = []
        if let item {
            details.append((itemKey(for: configuration), .string(item)))
            if !app.library.contains(item) { details.append(("missing", .flag)) }
        }
        if restored { details.append(("restored", .flag)) }
        app.printer.print(DemoEvent("connect", session: id, headline: ("configuration", configuration), details))
        await present(scene)
        persist(scene, reporting: true)
    }

    func sceneDidDisconnect(_ scene: Scene) async {
        app.printer.print(DemoEvent("disconnect", session: scene.persistentIdentifier))
    }

    func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState, to new: SceneActivationState) async {
        if new == .foregroundActive {
            let rank = app.nextFrontRank()
            shown.withLock { $0.frontRank = rank }
        }
        app.printer.print(DemoEvent("state", session: scene.persistentIdentifier, headline: ("state", new.name),
                                    [("from", .string(old.name))]))
    }

    func stateRestorationActivity(for scene: Scene) async -> UserActivity? {
        persist(scene, reporting: true)
        let (configuration, item) = shown.withLock { ($0.configuration, $0.item) }
        guard configuration == kind.detailConfiguration, let item else { return nil }
        var activity = kind.activity(for: item, appName: app.appName)
        activity.isEligibleForHandoff = app.handoffEligible
        return activity
    }

    func scene(_ scene: Scene, continue activity: UserActivity) async {
        let item = kind.item(in: activity)
        var details: [(key: String, value: DemoEvent.Value)] = []
        if let item { details.append((kind.eventKey, .string(item))) }
        app.printer.print(DemoEvent("continue", session: scene.persistentIdentifier,
                                    headline: ("activityType", activity.activityType), details))
        guard let item else { return }
        shown.withLock { $0.item = item }
        await present(scene)
        persist(scene, reporting: true)
    }

    func scene(_ scene: Scene, openURLContexts contexts: [OpenURLContext]) async {
        var details: [(key: String, value: DemoEvent.Value)] = [("urls", .strings(contexts.map(\.url.absoluteString)))]
        if let source = contexts.first?.sourceApplication { details.append(("from", .string(source))) }
        app.printer.print(DemoEvent("open-urls", session: scene.persistentIdentifier, details))
    }

    func sceneDidRefresh(_ scene: Scene) async {
        let (configuration, item) = shown.withLock { ($0.configuration, $0.item) }
        app.printer.print(DemoEvent("refresh", session: scene.persistentIdentifier,
                                    item.map { [(itemKey(for: configuration), .string($0))] } ?? []))
        await present(scene)
    }

    func pasteConfiguration(for scene: Scene) -> PasteConfiguration? {
        kind.pasteConfiguration
    }

    func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String {
        try await paste(itemProviders, into: scene)
    }

    /// One window per item: a detail scene can show and prefers only its own item
    /// (`SELF == 'groceries'`), so opening it again brings that scene back and opening another
    /// item makes a new scene; the Default scene (the list) takes no item's activity.
    static func activationConditions(detail: Bool, item: String?) -> SceneActivationConditions {
        guard detail, let item else { return SceneActivationConditions(canActivateFor: .falsePredicate, prefersToActivateFor: .falsePredicate) }
        return SceneActivationConditions(canActivateFor: .equals(item), prefersToActivateFor: .equals(item))
    }

    /// Sends the scene's title, userInfo and activation conditions (``activationConditions(detail:item:)``)
    /// for what it shows. Failures are printed as `error` events.
    func present(_ scene: Scene) async {
        let (configuration, item) = shown.withLock { ($0.configuration, $0.item) }
        let detail = configuration == kind.detailConfiguration
        let id = scene.persistentIdentifier
        do {
            // Conditions first: once a scene has its title, activities are routed by them.
            try await scene.setActivationConditions(Self.activationConditions(detail: detail, item: item))
            // Before the userInfo and the activity that name the item: a local scene is never offered.
            let local = item.map { app.handoffLocalItems.contains($0) } ?? false
            if scene.isHandoffLocal != local { try await scene.setHandoffLocal(local) }
            try await scene.setUserInfo(item.map { [kind.userInfoKey: .string($0)] } ?? [:])
            try await scene.setTitle(kind.title(appName: app.appName, item: detail ? item : nil))
        } catch {
            app.report("cannot update the scene: \(error.message)", session: id)
        }
    }

    /// Writes the scene's state file (unless unchanged); prints `saved` when written and
    /// `reporting`, an `error` event when it fails.
    /// - Returns: whether the state is on disk (written now or before).
    @discardableResult
    func persist(_ scene: Scene, reporting: Bool = false) -> Bool {
        let (configuration, item, connected) = shown.withLock { ($0.configuration, $0.item, $0.connected) }
        guard connected else { return false }
        let id = scene.persistentIdentifier
        let state = SceneState(persistentIdentifier: id, configuration: configuration, item: item)
        do {
            if try app.states.save(state), reporting {
                app.printer.print(DemoEvent("saved", session: id, headline: ("configuration", configuration),
                                            item.map { [(itemKey(for: configuration), .string($0))] } ?? []))
            }
            return true
        } catch {
            app.report(error.message, session: id)
            return false
        }
    }
}

import FerryModel

/// What an app does with one of its scenes (Apple's `UISceneDelegate` / `UIWindowSceneDelegate`,
/// plus the scene's responder duties for paste, its drag and drop interactions, and what it
/// shares). The library
/// calls these in the order the broker drives the scene: ``scene(_:willConnectTo:options:)``
/// once, then activation-state changes, continued activities, refreshes, pastes, drags and
/// drops, and ``sceneDidDisconnect(_:)`` last.
///
/// Every requirement has a default: nothing happens, no restoration activity, no paste
/// configuration (the scene accepts nothing), nothing to drag, drops accepted by the paste
/// configuration (copied, then pasted with ``scene(_:paste:)``), and nothing to share.
///
/// The calls that answer a drag's proposal — ``scene(_:canHandle:)``,
/// ``pasteConfiguration(for:)`` (asked then too), ``scene(_:dropSessionDidEnter:)`` and
/// ``scene(_:dropSessionDidUpdate:)`` — run on the client connection's own thread unless the
/// delegate is isolated to an actor (`@MainActor`), so the proposal goes back without a thread
/// hop. They must not block: awaiting is fine, bus calls included, but a blocking wait there
/// holds up the connection's I/O — and a blocking wait for a bus reply never ends, since that
/// reply is read by the very thread it blocks.
public protocol SceneDelegate: AnyObject, Sendable {
    /// The scene is about to be shown for `session` (Apple's `scene(_:willConnectTo:options:)`).
    /// `options` holds what to show (activities, URLs); empty when the scene is restored, then
    /// `session.stateRestorationActivity` says what it showed (the seeds'
    /// `options.userActivities.first ?? session.stateRestorationActivity`).
    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async
    /// The scene went away; its session may stay and connect again later.
    func sceneDidDisconnect(_ scene: Scene) async
    /// The scene's activation state changed, one step at a time as the seeds' life cycle goes.
    func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState,
               to new: SceneActivationState) async
    /// The activity that restores what the scene shows now (Apple's
    /// `stateRestorationActivity(for:)`); the library stores it with the session.
    func stateRestorationActivity(for scene: Scene) async -> UserActivity?
    /// An activity sent to this existing scene, chosen by its activation conditions.
    func scene(_ scene: Scene, continue activity: UserActivity) async
    /// URLs sent to this existing scene (Apple's `scene(_:openURLContexts:)`): an activation
    /// request with URLs that went to a scene already connected. In the order they were sent
    /// (Apple hands a set); after ``scene(_:continue:)`` when the request also had an activity.
    func scene(_ scene: Scene, openURLContexts contexts: [OpenURLContext]) async
    /// `requestSceneSessionRefresh` reached the scene: redraw it.
    func sceneDidRefresh(_ scene: Scene) async
    /// The types the scene accepts for paste (Apple's `UIResponder.pasteConfiguration`); nil
    /// accepts nothing.
    func pasteConfiguration(for scene: Scene) -> PasteConfiguration?
    /// Pastes the items (Apple's `paste(itemProviders:)`); their loaders read the pasteboard as a
    /// user action. Runs only when ``pasteConfiguration(for:)`` accepts what the pasteboard holds.
    /// - Returns: a one-line summary of what was pasted, for the paste's result.
    /// - Throws: any error; the paste then fails with it (`FerryError` codes keep their name).
    func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String

    // MARK: Drag source (Apple's UIDragInteractionDelegate)

    /// A drag starts from the scene: the items to drag (Apple's
    /// `dragInteraction(_:itemsForBeginning:)`). ``DragItems/none`` means nothing to drag.
    ///
    /// When this app itself begins the drag (``FerryClient/beginDrag(fromScene:options:)`` on
    /// one of its own scenes, without `providers`), the broker does not ask: the library calls
    /// this after the drag has begun, and the returned ``DragItems/allowsMoveOperation`` and
    /// ``DragItems/restrictedToApp`` change nothing — the ``DragOptions`` given to `beginDrag`
    /// decide. Nothing to drag then cancels the drag and `beginDrag` throws `.notFound`.
    func scene(_ scene: Scene, itemsForBeginning request: DragRequest) async -> DragItems
    /// A drag from this scene moved to `location` (desktop coordinates), where `operation` is
    /// proposed.
    func scene(_ scene: Scene, dragSessionDidMove id: String, to location: Point, operation: DropOperation) async
    /// A drag from this scene ended (Apple's `dragInteraction(_:session:didEndWith:)`): with
    /// `.move`, remove the original.
    func scene(_ scene: Scene, dragSessionDidEnd end: DragEnd) async

    // MARK: Drop target (Apple's UIDropInteractionDelegate)

    /// Whether the scene can take the drag at all (Apple's `dropInteraction(_:canHandle:)`);
    /// asked on every enter and update, on the connection's thread (see above), so answer from
    /// the session alone, fast, without blocking. As in UIKit, a
    /// scene that never answered true hears nothing else of the drag (no enter, exit or end);
    /// its proposal is forbidden, or cancel when it has no paste configuration (or an empty one).
    func scene(_ scene: Scene, canHandle session: DropSession) -> Bool
    /// The drag entered the scene and it can handle it. Runs before the first proposal, on the
    /// connection's thread (see above): do not block.
    func scene(_ scene: Scene, dropSessionDidEnter session: DropSession) async
    /// The drag is over the scene (after entering, and at each move): the proposal. The broker
    /// waits at most 250 ms for it (for the enter and this together) and counts no answer as
    /// forbidden; a move proposal is answered as copy when `session.allowsMoveOperation` is
    /// false. Runs on the connection's thread (see above): await, do not block.
    func scene(_ scene: Scene, dropSessionDidUpdate session: DropSession) async -> DropProposal
    /// The drag left the scene (or was cancelled over it).
    func scene(_ scene: Scene, dropSessionDidExit session: DropSession) async
    /// The drop landed on the scene (Apple's `dropInteraction(_:performDrop:)`): load the items
    /// now; their loaders read the drag pasteboard as a user action, only during this call (a
    /// provider kept and loaded later fails with an `.unavailable` error).
    /// - Returns: a one-line summary of what was done, for the drop's outcome.
    /// - Throws: any error; the drag then ends as cancel with it as the reason.
    func scene(_ scene: Scene, performDrop session: DropSession, operation: DropOperation,
               itemProviders: [ItemProvider]) async throws -> String
    /// After a performed drop, to the performing scene (Apple's `dropInteraction(_:concludeDrop:)`).
    func scene(_ scene: Scene, concludeDrop session: DropSession) async
    /// The drag ended (Apple's `dropInteraction(_:sessionDidEnd:)`), for every scene it entered.
    func scene(_ scene: Scene, dropSessionDidEnd session: DropSession, operation: DropOperation) async

    // MARK: Sharing (Apple's activityItemsConfiguration and the share sheet's completion)

    /// What the scene offers to Copy and Share (Apple's `UIResponder.activityItemsConfiguration`):
    /// asked when someone shares the scene (`Client1.ProvideActivityItems`) and by
    /// ``Scene/share(options:)``. nil, no items, or neither the share nor the copy interaction
    /// means nothing to share.
    func activityItemsConfiguration(for scene: Scene) -> ActivityItemsConfiguration?
    /// A share of the scene's items ended (Apple's `completionWithItemsHandler`): performed
    /// (`completion.activityType`, its returned items) or dismissed (`activityType` nil) — also
    /// a share that never began because the items came too late or there were none.
    ///
    /// D-Bus: `org.ferry.Client1.ShareCompleted`.
    func scene(_ scene: Scene, shareDidComplete completion: ShareCompletion, share: String) async
}

extension SceneDelegate {
    /// Does nothing.
    public func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async {}
    /// Does nothing.
    public func sceneDidDisconnect(_ scene: Scene) async {}
    /// Does nothing.
    public func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState,
                      to new: SceneActivationState) async {}
    /// No restoration activity.
    public func stateRestorationActivity(for scene: Scene) async -> UserActivity? { nil }
    /// Does nothing.
    public func scene(_ scene: Scene, continue activity: UserActivity) async {}
    /// Does nothing.
    public func scene(_ scene: Scene, openURLContexts contexts: [OpenURLContext]) async {}
    /// Does nothing.
    public func sceneDidRefresh(_ scene: Scene) async {}
    /// nil: the scene accepts nothing.
    public func pasteConfiguration(for scene: Scene) -> PasteConfiguration? { nil }
    /// Throws `FerryError` `.unavailable`: the scene does not paste.
    public func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String {
        throw FerryError(.unavailable, "the scene does not paste")
    }

    /// Nothing to drag.
    public func scene(_ scene: Scene, itemsForBeginning request: DragRequest) async -> DragItems { .none }
    /// Does nothing.
    public func scene(_ scene: Scene, dragSessionDidMove id: String, to location: Point, operation: DropOperation) async {}
    /// Does nothing.
    public func scene(_ scene: Scene, dragSessionDidEnd end: DragEnd) async {}
    /// Whether the scene's paste configuration accepts some item's type.
    public func scene(_ scene: Scene, canHandle session: DropSession) -> Bool {
        pasteConfiguration(for: scene).map(session.canLoad) ?? false
    }
    /// Does nothing.
    public func scene(_ scene: Scene, dropSessionDidEnter session: DropSession) async {}
    /// Copy.
    public func scene(_ scene: Scene, dropSessionDidUpdate session: DropSession) async -> DropProposal { .copy }
    /// Does nothing.
    public func scene(_ scene: Scene, dropSessionDidExit session: DropSession) async {}
    /// Pastes the items: ``scene(_:paste:)``.
    public func scene(_ scene: Scene, performDrop session: DropSession, operation: DropOperation,
                      itemProviders: [ItemProvider]) async throws -> String {
        try await self.scene(scene, paste: itemProviders)
    }
    /// Does nothing.
    public func scene(_ scene: Scene, concludeDrop session: DropSession) async {}
    /// Does nothing.
    public func scene(_ scene: Scene, dropSessionDidEnd session: DropSession, operation: DropOperation) async {}

    /// nil: the scene shares nothing.
    public func activityItemsConfiguration(for scene: Scene) -> ActivityItemsConfiguration? { nil }
    /// Does nothing.
    public func scene(_ scene: Scene, shareDidComplete completion: ShareCompletion, share: String) async {}
}

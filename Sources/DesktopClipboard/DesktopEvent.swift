/// Why a selection has no owner any more.
public enum SelectionEnd: String, Sendable, Hashable {
    /// The owner went away without clearing (X11: XFixes `SelectionWindowDestroy` or
    /// `SelectionClientClose`). The bridge restores the selection from its complete copy.
    case ownerQuit
    /// The owner (or another client) cleared it on purpose (X11: `SetSelectionOwner(None)`). The
    /// bridge honours the clear.
    case cleared
    /// The protocol cannot tell (Wayland's `selection(NULL)` means both).
    case unknown
}

/// What a backend reports, in the order it happened on the display.
///
/// A backend never reports its own offers: when the bridge owns a selection, events about that
/// ownership are not `offered` (loop guard, desktop-bridge R11).
public enum DesktopEvent: Sendable {
    /// A foreign owner took the selection. Replaces any earlier offer on that selection, whose
    /// reads may fail from now on.
    case offered(DesktopOffer)
    /// The selection has no owner any more (and the bridge was not it).
    case emptied(DesktopSelection, SelectionEnd)
    /// The bridge's own ownership of the selection ended: another client took it or cleared it.
    /// An `offered` or `emptied` follows when the backend learns which.
    case ownershipLost(DesktopSelection)
    /// X11 only: the owner of CLIPBOARD is exiting and asks the clipboard manager (the bridge
    /// owns `CLIPBOARD_MANAGER`) to save `offer` (ICCCM `SAVE_TARGETS`; `offer.types` are the
    /// targets it asked to save). Call `reply` exactly once: with true after the bridge holds a
    /// complete copy and owns CLIPBOARD again, with false to refuse. The exiting owner waits for
    /// the reply (Qt: up to 5 s), so reply promptly.
    case saveRequested(DesktopOffer, reply: SaveReply)
}

/// The one reply to a `SAVE_TARGETS` request.
public struct SaveReply: Sendable {
    private let body: @Sendable (Bool) -> Void

    /// Wraps what the backend does with the reply.
    public init(_ body: @escaping @Sendable (Bool) -> Void) { self.body = body }

    /// Replies: `saved` true when the bridge now owns CLIPBOARD with a complete copy.
    public func callAsFunction(saved: Bool) { body(saved) }
}

/// The outcome of a `receive`.
public enum ReceiveOutcome: Sendable, Hashable {
    /// The backend wrote this many bytes into the descriptor and closed it (X11).
    case complete(bytes: UInt64)
    /// The descriptor went to the source, which writes and closes it (Wayland): the reader's end
    /// of file is the end of the transfer. The backend has closed its own copy.
    case handedToSource
}

/// One way to reach the desktop's selections: Wayland ext-data-control-v1 or wlr-data-control
/// v2, or X11 with XFixes. The bridge picks one per session and never runs two.
///
/// A backend runs its own display loop; every method may be called from any task. Descriptors
/// passed in are owned by the backend from then on: it closes them when done, on failure too.
/// Descriptors it hands out (to `serve`) belong to the receiver, who writes the bytes and closes.
public protocol DesktopClipboardBackend: AnyObject, Sendable {
    /// The protocol in use: `ext-data-control-v1`, `wlr-data-control-v2` or `x11-xfixes`.
    var protocolName: String { get }

    /// Whether the PRIMARY selection is reachable (data-control before wlr v2 has none).
    var supportsPrimary: Bool { get }

    /// What happens on the display, in order. Finishes by throwing `DesktopClipboardError`
    /// (`.disconnected`) when the display connection breaks, normally after `shutdown()`.
    /// There is one stream per backend: iterate it once.
    var events: AsyncThrowingStream<DesktopEvent, any Error> { get }

    /// Asks the owner of `offer` for its bytes of `type`, written into `descriptor` (the write end
    /// of a pipe, or a file), which the backend owns from now on.
    ///
    /// Never blocks the display loop: X11 bytes arrive by property (INCR for large ones) and are
    /// written as they come; on Wayland the descriptor is passed to the source.
    /// - Parameters:
    ///   - timeout: how long the owner may stay silent (no answer, no next chunk) before the
    ///     transfer is given up with `.timeout`.
    /// - Throws: `DesktopClipboardError` `.offerGone` (the offer was replaced), `.refused`,
    ///   `.timeout`, `.disconnected`; the descriptor is closed then too.
    func receive(_ type: String, from offer: DesktopOffer, into descriptor: Int32,
                 timeout: Duration) async throws -> ReceiveOutcome

    /// Takes ownership of `selection`, offering `types` (every name the bridge answers, text
    /// aliases included), and keeps it until another client takes it (`ownershipLost`), or
    /// `disown`. Each request from an app for one of `types` calls `serve(type, descriptor)`
    /// on a thread of the backend's; the receiver writes the bytes into `descriptor` and closes
    /// it, off that thread (X11: a pipe the backend reads and serves, INCR when large; Wayland:
    /// the requestor's own descriptor). Returns once the display confirmed the ownership.
    /// - Throws: `DesktopClipboardError` `.notOwner`, `.disconnected`.
    func own(_ selection: DesktopSelection, types: [String],
             serve: @escaping @Sendable (_ type: String, _ descriptor: Int32) -> Void) async throws

    /// Serves the bytes of one `serve` call from `file` (a regular file, memfd included, read
    /// from its current offset) in place of the receiver writing them into `descriptor`, the one
    /// `serve` handed out, before anything was written into it. X11: the display loop reads the
    /// file itself, one copy instead of three (file → receiver → pipe → display loop).
    /// - Returns: true when the backend took both descriptors (it closes them); false when it
    ///   took neither — `file` is not a regular file, `descriptor` is not a fresh one of
    ///   `serve`'s, its request is gone, or the backend cannot (Wayland) — and the receiver
    ///   writes into `descriptor` as before.
    func serve(from file: Int32, for descriptor: Int32) async -> Bool

    /// Gives up the bridge's ownership of `selection`, if it has it (the selection becomes
    /// empty). Never clears another client's selection.
    func disown(_ selection: DesktopSelection) async

    /// Closes the display connection; `events` finishes. Calling it again does nothing.
    func shutdown() async
}

extension DesktopClipboardBackend {
    /// A backend whose `serve` descriptors go to the reader itself (Wayland) takes no file:
    /// the receiver writes into the descriptor.
    public func serve(from file: Int32, for descriptor: Int32) async -> Bool { false }
}

import DesktopClipboard
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The desktop's clipboard on an X11 display, through XFixes (desktop-bridge §1).
///
/// Watches CLIPBOARD and PRIMARY, reads offers (INCR aware, streamed into descriptors), owns
/// selections (TARGETS, TIMESTAMP, MULTIPLE, INCR), and acts as the clipboard manager when no
/// one else is. One display thread does all of it without ever waiting for another client.
///
/// An owner that does not answer TARGETS within 2 s is still reported, as an offer of no types:
/// it replaced the selection all the same.
///
/// Writing to a reader that went away must not kill the process: creating a backend sets
/// SIGPIPE to be ignored (the writes then fail with EPIPE, which ends that transfer only).
public final class X11ClipboardBackend: DesktopClipboardBackend {
    /// `x11-xfixes`.
    public let protocolName = "x11-xfixes"
    /// Always true: X11 has PRIMARY.
    public let supportsPrimary = true
    /// What happens on the display, in order; finishes with `.disconnected`.
    public let events: AsyncThrowingStream<DesktopEvent, any Error>
    /// The display connected to, as named (`:0`).
    public let displayName: String
    private let loop: DisplayLoop

    /// Connects to an X display and starts watching its selections.
    ///
    /// - Parameters:
    ///   - display: the display name (`:0`); nil means `$DISPLAY`.
    ///   - clipboardManager: take `CLIPBOARD_MANAGER` when nobody owns it, and report
    ///     `SAVE_TARGETS` hand-overs as `.saveRequested`.
    /// - Throws: `DesktopClipboardError` `.unavailable` without a display, when it cannot be
    ///   reached, or without XFixes.
    public init(display: String? = nil, clipboardManager: Bool = true) throws(DesktopClipboardError) {
        let name = display ?? getenv("DISPLAY").map { String(cString: $0) }
        guard let name, !name.isEmpty else {
            throw DesktopClipboardError(.unavailable, "no X display: DISPLAY is not set")
        }
        signal(SIGPIPE, SIG_IGN)
        let (events, continuation) = AsyncThrowingStream<DesktopEvent, any Error>.makeStream()
        let loop = try DisplayLoop(display: name, clipboardManager: clipboardManager, continuation: continuation)
        try loop.start()
        self.events = events
        self.displayName = name
        self.loop = loop
    }

    /// Whether the backend owns `CLIPBOARD_MANAGER` now (false once another manager took it).
    public var isClipboardManager: Bool { loop.managerHeld.load(ordering: .relaxed) }

    /// Reads `type` from `offer` into `descriptor`, INCR aware, never blocking the display loop.
    ///
    /// - Throws: `DesktopClipboardError` `.offerGone` (replaced before the call, or its owner's
    ///   window or client went away during the transfer), `.refused` (also when the reader closed
    ///   its end), `.timeout`, `.disconnected`; the descriptor is closed in every case.
    public func receive(_ type: String, from offer: DesktopOffer, into descriptor: Int32,
                        timeout: Duration) async throws -> ReceiveOutcome {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ReceiveOutcome, any Error>) in
            let accepted = loop.submit { loop in
                loop.startReceive(type, from: offer, into: descriptor, timeout: timeout) { continuation.resume(with: $0) }
            }
            if !accepted {
                close(descriptor)
                continuation.resume(throwing: DesktopClipboardError(.disconnected, "the backend was shut down"))
            }
        }
    }

    /// Owns `selection` with `types` (protocol targets and duplicates dropped), answering
    /// TARGETS, TIMESTAMP, MULTIPLE and each type through `serve`.
    ///
    /// - Throws: `DesktopClipboardError` `.notOwner`, `.disconnected`.
    public func own(_ selection: DesktopSelection, types: [String],
                    serve: @escaping @Sendable (_ type: String, _ descriptor: Int32) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let accepted = loop.submit { loop in
                loop.startOwn(selection, types: types, serve: serve) { continuation.resume(with: $0) }
            }
            if !accepted {
                continuation.resume(throwing: DesktopClipboardError(.disconnected, "the backend was shut down"))
            }
        }
    }

    /// Serves one `serve` call's bytes from `file` (a regular file or memfd, read from its
    /// offset) in place of the pipe `descriptor`, which it closes: the display loop reads the
    /// file a chunk ahead of the requestor and closes it when the answer ends.
    /// - Returns: false, taking neither descriptor, when `file` is not a regular file or
    ///   `descriptor` is not the write end of a serve pipe still waiting for its first byte.
    public func serve(from file: Int32, for descriptor: Int32) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let accepted = loop.submit { loop in
                continuation.resume(returning: loop.serveFile(file, for: descriptor))
            }
            if !accepted { continuation.resume(returning: false) }
        }
    }

    /// Gives up `selection` if the backend owns it.
    public func disown(_ selection: DesktopSelection) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.submit { loop in
                loop.disown(selection)
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
    }

    /// Releases the selections and the manager role, ends every transfer, closes the connection;
    /// `events` finishes with `.disconnected`. Returns once all of that is done.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.submit { loop in
                loop.stop { continuation.resume() }
            }
            if !accepted { continuation.resume() }
        }
    }

    deinit { loop.submit { $0.stop() } }
}

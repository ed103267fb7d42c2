import DesktopClipboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The desktop's clipboard on a Wayland compositor, through a data-control protocol: the
/// staging `ext-data-control-v1` when the compositor announces it, else wlroots'
/// `zwlr_data_control_manager_v1` (version 2 has PRIMARY, version 1 has not). Both give a
/// client without a surface or keyboard focus the seat's selections, which is what a clipboard
/// bridge needs.
///
/// The first seat the registry announces is the one used. One thread per backend owns the
/// connection; every method may be called from any task.
///
/// Wayland cannot tell an owner that quit from one that cleared: both arrive as
/// `selection(NULL)`, reported as `.emptied(_, .unknown)`. Compositors without either protocol
/// (GNOME's mutter) make `init` throw `.unavailable`; none of those is installed here, so that
/// case is covered only by a display that does not exist.
public final class WaylandClipboardBackend: DesktopClipboardBackend {
    /// The display as given, or `$WAYLAND_DISPLAY`: a socket name under `$XDG_RUNTIME_DIR`, or
    /// an absolute path.
    public let displayName: String
    /// `ext-data-control-v1` or `wlr-data-control-v2` (`wlr-data-control-v1` on compositors
    /// that have only the first version).
    public var protocolName: String { connection.protocolName }
    /// False only on `wlr-data-control-v1`.
    public var supportsPrimary: Bool { connection.supportsPrimary }
    /// What happens on the display; see `DesktopClipboardBackend.events`.
    public let events: AsyncThrowingStream<DesktopEvent, any Error>

    private let connection: WaylandConnection

    /// Connects to a Wayland compositor and binds its data-control manager and first seat.
    /// - Parameter display: a socket name (`wayland-1`, under `$XDG_RUNTIME_DIR`) or an absolute
    ///   socket path; nil means `$WAYLAND_DISPLAY`.
    /// - Throws: `DesktopClipboardError` `.unavailable`, naming what is missing: no display
    ///   given, no compositor at that socket, no seat, or neither data-control protocol.
    public init(display: String? = nil) throws(DesktopClipboardError) {
        let name = display ?? getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? ""
        guard !name.isEmpty else {
            throw DesktopClipboardError(.unavailable, "no Wayland display: WAYLAND_DISPLAY is not set")
        }
        displayName = name
        let (stream, continuation) = AsyncThrowingStream<DesktopEvent, any Error>.makeStream()
        events = stream
        connection = try WaylandConnection.open(name, continuation: continuation)
    }

    deinit { connection.requestStop() }

    /// Passes `descriptor` to the owner of `offer`, which writes its bytes of `type` and
    /// closes it; returns `.handedToSource` once the request is sent (the backend's copy is
    /// closed). The reader's end of file ends the transfer, so `timeout` is the reader's to
    /// enforce here: the backend never sees the bytes.
    /// - Throws: `DesktopClipboardError` `.offerGone` (a newer offer or an empty selection
    ///   replaced it), `.refused` (the offer has no such type), `.disconnected`.
    public func receive(_ type: String, from offer: DesktopOffer, into descriptor: Int32,
                        timeout: Duration) async throws -> ReceiveOutcome {
        try await connection.perform(refused: { close(descriptor) }) { connection, completion in
            completion(connection.receive(type, from: offer, into: descriptor))
        }
    }

    /// Takes `selection` with a new data source offering `types` (in order, each once); each
    /// `send` from the compositor calls `serve(type, descriptor)` on the display thread with
    /// the requestor's own descriptor. Returns after a `wl_display_sync` round trip found the
    /// source still the selection.
    /// - Throws: `DesktopClipboardError` `.notOwner` (another client took it first),
    ///   `.unavailable` (PRIMARY on `wlr-data-control-v1`), `.refused` (an empty type name or
    ///   one with a NUL byte), `.disconnected`.
    public func own(_ selection: DesktopSelection, types: [String],
                    serve: @escaping @Sendable (_ type: String, _ descriptor: Int32) -> Void) async throws {
        try await connection.perform { connection, completion in
            connection.own(selection, types: types, serve: serve, completion: completion)
        }
    }

    /// Destroys the backend's source on `selection`, if it owns it; the compositor then empties
    /// the selection. Another client's selection is never cleared.
    public func disown(_ selection: DesktopSelection) async {
        _ = try? await connection.perform { connection, completion in
            connection.disown(selection)
            completion(.success(()))
        }
    }

    /// Destroys every object, disconnects, and waits for the display thread to end; `events`
    /// finishes with `.disconnected`. Calling it again does nothing.
    public func shutdown() async {
        await connection.stop()
    }
}

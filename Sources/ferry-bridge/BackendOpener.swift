import DesktopClipboard
import FerryBridge
import WaylandClipboard
import X11Clipboard

/// Opens the one backend `--backend` asks for (desktop-bridge R1): never a Wayland and an X11
/// one together, since Xwayland mirrors selections and two bridges would loop.
enum BackendOpener {
    struct Opened {
        var backend: any DesktopClipboardBackend
        var display: String
        var isClipboardManager: @Sendable () -> Bool
    }

    /// - Throws: `DesktopClipboardError` `.unavailable` naming what is missing.
    static func open(_ choice: BackendChoice) throws -> Opened {
        let environment = Environment.current
        switch choice {
        case .wayland:
            return try wayland()
        case .x11:
            return try x11()
        case .auto:
            if environment.wayland != nil {
                do {
                    return try wayland()
                } catch let error as DesktopClipboardError where error.code == .unavailable && environment.x11 != nil {
                    // A compositor without data-control (GNOME's): its Xwayland clipboard is the way in.
                    return try x11()
                }
            }
            guard environment.x11 != nil else {
                throw DesktopClipboardError(.unavailable, "no display: neither WAYLAND_DISPLAY nor DISPLAY is set")
            }
            return try x11()
        }
    }

    private static func wayland() throws -> Opened {
        let backend = try WaylandClipboardBackend()
        return Opened(backend: backend, display: backend.displayName, isClipboardManager: { false })
    }

    private static func x11() throws -> Opened {
        let backend = try X11ClipboardBackend()
        return Opened(backend: backend, display: backend.displayName, isClipboardManager: { backend.isClipboardManager })
    }
}

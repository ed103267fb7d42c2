/// One of the desktop's two selections.
///
/// X11 names them by the atoms `CLIPBOARD` and `PRIMARY`; Wayland's data-control protocols have
/// `selection` and `primary_selection`. Ferry imports CLIPBOARD into the general pasteboard and
/// PRIMARY into the named pasteboard `primary`.
public enum DesktopSelection: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// What Ctrl+C and Ctrl+V use.
    case clipboard = "CLIPBOARD"
    /// The text last selected with the mouse, pasted with the middle button.
    case primary = "PRIMARY"

    /// `CLIPBOARD` or `PRIMARY`.
    public var description: String { rawValue }
}

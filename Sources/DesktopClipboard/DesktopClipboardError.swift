/// A failure talking to the desktop's clipboard: a code and a sentence for a person.
public struct DesktopClipboardError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// No display, or the display offers no way to reach its clipboard (no data-control
        /// protocol on this compositor, no XFixes on this X server).
        case unavailable
        /// The display connection broke (compositor or X server gone, protocol error).
        case disconnected
        /// The owner refused to convert the selection to the type asked for.
        case refused
        /// The owner stopped sending before the timeout passed.
        case timeout
        /// The offer was replaced or its owner went away before or during the transfer.
        case offerGone
        /// The bridge could not take ownership (another client took it first).
        case notOwner
    }

    /// What kind of failure.
    public let code: Code
    /// A sentence for a person.
    public let message: String

    /// Makes an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// A failure of the bridge itself: a code and a sentence for a person.
public struct BridgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// No display the bridge can use (no data-control, no XFixes, no display variable).
        case unavailable
        /// Ferry's broker cannot be reached.
        case noBroker
        /// A descriptor, pipe or scratch file failed.
        case io
        /// A copy did not fit the budgets.
        case overBudget
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

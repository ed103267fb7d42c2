/// A failure of the bridge itself: a code and a sentence for a person.
package struct BridgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    package enum Code: String, Sendable, Hashable {
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
    package let code: Code
    /// A sentence for a person.
    package let message: String

    /// Makes an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    package var description: String { message }
}

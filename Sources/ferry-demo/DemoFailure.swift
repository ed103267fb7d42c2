/// A failure that ends `ferry-demo`: one line on standard error and an exit status.
struct DemoFailure: Error, Sendable, CustomStringConvertible {
    /// The exit statuses of `ferry-demo` (documented in `ferry-demo --help` and docs/demo-apps.md).
    enum Status: Int32, Sendable {
        /// The broker refused, a file could not be written, the bus failed later.
        case failure = 1
        /// Bad arguments, or a folder that is not a demo app (no or a malformed Info.plist).
        case usage = 64
        /// No bus to connect to, or no broker on it.
        case noBroker = 69
    }

    var status: Status
    var message: String

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }
}

import DBus
import FerryModel
import FerryTerminal

/// An error from the Ferry client library: what went wrong as a code a program can switch on
/// (the CLI maps it to its exit status), a message for a person, and the D-Bus error name it
/// came from, when it came from the bus.
public struct FerryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is: an extensible set (a struct, not an enum, so a code added
    /// later does not break a caller's exhaustive `switch`; match the ones you handle and keep a
    /// `default`). The raw values are the codes of the one `ErrorTable` in `FerryTerminal`, which
    /// also gives each its exit status in `ferry`.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name: the last element of its `org.ferry.Error.*` name (`NotFound`).
        public var rawValue: String

        /// A code by name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// `org.ferry.Error.InvalidArgument`: a malformed value (name, type, size, fd).
        public static let invalidArgument = Code(rawValue: "InvalidArgument")
        /// `org.ferry.Error.NotFound`: no such item, pasteboard, type or transfer; nothing conforming.
        public static let notFound = Code(rawValue: "NotFound")
        /// `org.ferry.Error.PermissionDenied`: the paste policy or ownership refuses the call.
        public static let permissionDenied = Code(rawValue: "PermissionDenied")
        /// `org.ferry.Error.Unavailable`: the data exists but cannot be delivered (its source is gone).
        public static let unavailable = Code(rawValue: "Unavailable")
        /// `org.ferry.Error.Cancelled`: the operation was cancelled.
        public static let cancelled = Code(rawValue: "Cancelled")
        /// `org.ferry.Error.Timeout` (and a call the bus gave up waiting for).
        public static let timeout = Code(rawValue: "Timeout")
        /// `org.ferry.Error.TooLarge`: a value over its documented limit.
        public static let tooLarge = Code(rawValue: "TooLarge")
        /// `org.ferry.Error.MultipleScenesNotSupported`: a new scene for an app whose manifest
        /// supports one scene, which it already has.
        public static let multipleScenesNotSupported = Code(rawValue: "MultipleScenesNotSupported")
        /// `org.ferry.Error.NotInteractive`: a paste into a scene of the external-display role,
        /// which takes no user interaction.
        public static let notInteractive = Code(rawValue: "NotInteractive")
        /// No broker: the bus cannot be reached, or nobody owns `org.ferry.Broker` and it cannot
        /// be activated (`ServiceUnknown`, `NameHasNoOwner`, a failed activation).
        public static let noBroker = Code(rawValue: "NoBroker")
        /// A local input/output failure (a file that cannot be read, a broken pipe).
        public static let io = Code(rawValue: "IO")
        /// Any other D-Bus error (see ``FerryError/dbusErrorName``).
        public static let bus = Code(rawValue: "Bus")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person.
    public var message: String
    /// The D-Bus error name this error came from (`org.ferry.Error.NotFound`), nil for local errors.
    public var dbusErrorName: String?

    /// Makes an error.
    public init(_ code: Code, _ message: String, dbusErrorName: String? = nil) {
        self.code = code
        self.message = message
        self.dbusErrorName = dbusErrorName
    }

    /// The message, prefixed with the code: `NotFound: no item 3`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The error for a D-Bus error reply or a local D-Bus-layer failure.
    public init(_ error: DBusError) {
        let name = error.name.rawValue
        self.init(Code(rawValue: ErrorTable.code(forErrorName: name)), error.message.isEmpty ? name : error.message,
                  dbusErrorName: name)
    }

    /// The error for a D-Bus error (a reply's error name, or a failure of the D-Bus layer
    /// itself) that reached the caller as `any Error` (through a loader, a stream), so that a
    /// program maps it without importing the D-Bus layer; nil for any other error.
    public init?(dbusError error: any Error) {
        guard let error = error as? DBusError else { return nil }
        self.init(error)
    }

    /// The error for a model error (a loader that failed, a bad pasteboard name).
    public init(_ error: FerryModelError) {
        let known = ErrorTable.statuses[error.code.rawValue] != nil && !ErrorTable.localCodes.contains(error.code.rawValue)
        let code = known ? Code(rawValue: error.code.rawValue) : .bus
        let text = error.keyPath.map { "\($0): \(error.message)" } ?? error.message
        self.init(code, text)
    }

    /// Any error as a `FerryError` (cancellation becomes `.cancelled`).
    static func converting(_ error: any Error) -> FerryError {
        switch error {
        case let error as FerryError: return error
        case let error as DBusError: return FerryError(error)
        case let error as FerryModelError: return FerryError(error)
        case is CancellationError: return FerryError(.cancelled, "cancelled")
        default: return FerryError(.bus, "\(error)")
        }
    }

    /// Runs `body`, rethrowing whatever it throws as a `FerryError`.
    static func bridging<T>(_ body: () async throws -> T) async throws(FerryError) -> T {
        do {
            return try await body()
        } catch {
            throw converting(error)
        }
    }

    /// Runs synchronous `body`, rethrowing whatever it throws as a `FerryError`.
    static func bridgingSync<T>(_ body: () throws -> T) throws(FerryError) -> T {
        do {
            return try body()
        } catch {
            throw converting(error)
        }
    }

    /// This error as an `org.ferry.Error.*` reply (for the exported `org.ferry.Client1`); local
    /// and bus failures become `Unavailable`.
    var dbusError: DBusError {
        let name: String
        switch code {
        case .noBroker, .io, .bus: name = "org.ferry.Error.Unavailable"
        default: name = "org.ferry.Error." + code.rawValue
        }
        return DBusError((try? ErrorName(name)) ?? .failed, message)
    }
}

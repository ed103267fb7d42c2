import DBus
import FerryModel

/// An error from the Ferry client library: what went wrong as a code a program can switch on
/// (the CLI maps it to its exit status), a message for a person, and the D-Bus error name it
/// came from, when it came from the bus.
public struct FerryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. The first seven mirror `org.ferry.Error.*` one to one.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// `org.ferry.Error.InvalidArgument`: a malformed value (name, type, size, fd).
        case invalidArgument = "InvalidArgument"
        /// `org.ferry.Error.NotFound`: no such item, pasteboard, type or transfer; nothing conforming.
        case notFound = "NotFound"
        /// `org.ferry.Error.PermissionDenied`: the paste policy or ownership refuses the call.
        case permissionDenied = "PermissionDenied"
        /// `org.ferry.Error.Unavailable`: the data exists but cannot be delivered (its source is gone).
        case unavailable = "Unavailable"
        /// `org.ferry.Error.Cancelled`: the operation was cancelled.
        case cancelled = "Cancelled"
        /// `org.ferry.Error.Timeout` (and a call the bus gave up waiting for).
        case timeout = "Timeout"
        /// `org.ferry.Error.TooLarge`: a value over its documented limit.
        case tooLarge = "TooLarge"
        /// `org.ferry.Error.MultipleScenesNotSupported`: a new scene for an app whose manifest
        /// supports one scene, which it already has.
        case multipleScenesNotSupported = "MultipleScenesNotSupported"
        /// No broker: the bus cannot be reached, or nobody owns `org.ferry.Broker` and it cannot
        /// be activated (`ServiceUnknown`, `NameHasNoOwner`, a failed activation).
        case noBroker = "NoBroker"
        /// A local input/output failure (a file that cannot be read, a broken pipe).
        case io = "IO"
        /// Any other D-Bus error (see ``FerryError/dbusErrorName``).
        case bus = "Bus"
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
        let prefix = "org.ferry.Error."
        if name.hasPrefix(prefix), let code = Code(rawValue: String(name.dropFirst(prefix.count))),
           code != .noBroker, code != .bus, code != .io {
            self.init(code, error.message.isEmpty ? name : error.message, dbusErrorName: name)
            return
        }
        let code: Code
        switch error.name {
        case .serviceUnknown, .nameHasNoOwner: code = .noBroker
        case .unknownObject: code = .notFound  // a named pasteboard that was removed
        case .noReply, .timeout: code = .timeout
        case .systemError: code = .io
        case .invalidValue, .invalidObjectPath, .invalidName, .invalidSignature, .invalidArgs: code = .invalidArgument
        case .limitsExceeded: code = .tooLarge
        default: code = name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") ? .noBroker : .bus
        }
        self.init(code, error.message.isEmpty ? name : error.message, dbusErrorName: name)
    }

    /// The error for a model error (a loader that failed, a bad pasteboard name).
    public init(_ error: FerryModelError) {
        let code = Code(rawValue: error.code.rawValue) ?? .bus
        let text = error.keyPath.map { "\($0): \(error.message)" } ?? error.message
        self.init(code == .noBroker || code == .io ? .bus : code, text)
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error from the item model: a code that maps one-to-one onto an `org.ferry.Error.*` D-Bus
/// error name, a human-readable message, and the key path of the offending value when there is one.
public struct FerryModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. Each code has exactly one D-Bus error name.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name, the last component of its D-Bus error name (`InvalidArgument`).
        public let rawValue: String

        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A value is malformed: a bad identifier, a wrong type, a non-plist value, a missing key.
        public static let invalidArgument = Code(rawValue: "InvalidArgument")
        /// The thing asked for does not exist (no representation of that type, no such configuration).
        public static let notFound = Code(rawValue: "NotFound")
        /// The caller may not see or do this (an `ownApp` representation asked for by another app).
        public static let permissionDenied = Code(rawValue: "PermissionDenied")
        /// The thing exists but cannot be delivered (the loader failed, a folder asked for as data).
        public static let unavailable = Code(rawValue: "Unavailable")
        /// The operation was cancelled (Swift task cancellation or `ItemProvider.Progress.cancel()`).
        public static let cancelled = Code(rawValue: "Cancelled")
        /// The operation took too long.
        public static let timeout = Code(rawValue: "Timeout")
        /// A value is larger than its documented limit (e.g. a user activity's `userInfo`).
        public static let tooLarge = Code(rawValue: "TooLarge")
        /// Reading or writing a file failed (save-to-folder could not create or write one).
        public static let io = Code(rawValue: "IO")
        /// A new scene was asked of an app whose manifest does not support multiple scenes while
        /// it already has one (Apple's `UISceneError.multipleScenesNotSupported`).
        public static let multipleScenesNotSupported = Code(rawValue: "MultipleScenesNotSupported")
        /// A paste into (or a drag from) a scene that takes no user interaction: one of the
        /// external-display role (Apple's non-interactive external display).
        public static let notInteractive = Code(rawValue: "NotInteractive")

        /// The D-Bus error name this code maps to, e.g. `org.ferry.Error.InvalidArgument`.
        public var dbusErrorName: String { "org.ferry.Error." + rawValue }

        /// The code for a D-Bus error name, or nil when the name is not an `org.ferry.Error.*` name.
        public init?(dbusErrorName: String) {
            let prefix = "org.ferry.Error."
            guard dbusErrorName.hasPrefix(prefix), dbusErrorName.count > prefix.count else { return nil }
            self.rawValue = String(dbusErrorName.dropFirst(prefix.count))
        }

        /// The code's name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person, without the key path.
    public var message: String
    /// Where in a nested value the failure is, e.g. `userInfo.created` or
    /// `UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[1]`.
    public var keyPath: String?

    /// Makes an error.
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: a sentence for a person.
    ///   - keyPath: where in a nested value the failure is.
    public init(_ code: Code, _ message: String, keyPath: String? = nil) {
        self.code = code
        self.message = message
        self.keyPath = keyPath
    }

    /// `InvalidArgument: userInfo.created: expected a date`.
    public var description: String {
        if let keyPath, !keyPath.isEmpty { return "\(code): \(keyPath): \(message)" }
        return "\(code): \(message)"
    }

    /// The same error with `prefix` put in front of its key path (`prefix.keyPath`, `prefix[0]`).
    public func nested(under prefix: String) -> FerryModelError {
        var copy = self
        copy.keyPath = KeyPath.join(prefix, keyPath)
        return copy
    }

    static func invalid(_ message: String, at keyPath: String? = nil) -> FerryModelError {
        FerryModelError(.invalidArgument, message, keyPath: keyPath)
    }
}

/// Key-path spelling shared by every validator: `a.b`, `a[1]`, `a[1].b`.
enum KeyPath {
    static func join(_ prefix: String, _ rest: String?) -> String {
        guard let rest, !rest.isEmpty else { return prefix }
        if prefix.isEmpty { return rest }
        return rest.hasPrefix("[") ? prefix + rest : prefix + "." + rest
    }

    static func index(_ prefix: String, _ index: Int) -> String { prefix + "[\(index)]" }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A description of what the user is doing, enough to restore it elsewhere: Apple's `NSUserActivity`
/// as a value. It opens scenes (a scene's configuration is chosen by `activityType`), restores
/// their state (`stateRestorationActivity`), and travels inside items as a representation of type
/// ``ContentType/userActivity``.
public struct UserActivity: Sendable, Hashable {
    /// The largest `userInfo` Ferry carries: 64 KiB, measured as its binary property list.
    public static let maximumUserInfoSize = 64 * 1024
    /// Apple's advice for `userInfo`: 3 KB or less. Ferry does not enforce it.
    public static let recommendedUserInfoSize = 3 * 1024

    /// The reverse-DNS activity type, declared by the app in `NSUserActivityTypes`
    /// (`org.ferry.notes.open-note`).
    public let activityType: String
    /// A title for a person (window titles, Handoff); optional.
    public var title: String?
    /// The state needed to restore the activity: property-list values only.
    public var userInfo: [String: PropertyListValue]
    /// The keys of `userInfo` that are needed to restore the activity; `nil` means all keys.
    /// When set, only these keys are carried (``transmittedUserInfo``) and each must be present.
    public var requiredUserInfoKeys: Set<String>?
    /// Where a browser can continue the activity; `http` or `https` only.
    public var webpageURL: URL?
    /// What the activity shows, matched against scenes' activation conditions (`notes/groceries`).
    public var targetContentIdentifier: String?
    /// A stable identifier for deleting saved activities later.
    public var persistentIdentifier: String?
    /// After this instant the activity is no longer offered.
    public var expirationDate: Date?
    /// Whether the activity may be continued on the user's other devices (Handoff); Apple's
    /// `isEligibleForHandoff`, true unless the app says otherwise. An activity that is not
    /// eligible never leaves the machine.
    public var isEligibleForHandoff = true

    /// Makes an activity of a type.
    /// - Parameter activityType: 1–255 bytes of ASCII letters, digits, `.`, `-` and `_`
    ///   (reverse-DNS style, like `org.ferry.notes.open-note` or Apple's sample `viewDetail`).
    /// - Throws: `FerryModelError` `.invalidArgument` for an empty or malformed type.
    public init(activityType: String) throws {
        try UserActivity.validateActivityType(activityType)
        self.activityType = activityType
        self.userInfo = [:]
    }

    /// Whether `activityType` is a well-formed activity type (see ``init(activityType:)``).
    public static func isValidActivityType(_ activityType: String) -> Bool {
        let bytes = activityType.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
        }
    }

    static func validateActivityType(_ activityType: String, at keyPath: String? = nil) throws {
        guard isValidActivityType(activityType) else {
            throw FerryModelError.invalid(
                "\"\(activityType)\" is not an activity type (1-255 ASCII letters, digits, '.', '-', '_')", at: keyPath)
        }
    }

    /// Merges entries into `userInfo`; a key already present takes the new value.
    public mutating func addUserInfoEntries(from entries: [String: PropertyListValue]) {
        userInfo.merge(entries) { _, new in new }
    }

    /// Merges Swift values into `userInfo`, converting them as ``PropertyListValue/init(converting:)`` does.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the first key whose value is not a
    ///   property-list value; `userInfo` is unchanged then.
    public mutating func addUserInfoEntries(from entries: [String: Any]) throws {
        let converted = try PropertyListValue.dictionary(converting: entries)
        addUserInfoEntries(from: converted)
    }

    /// The part of `userInfo` that is carried: all of it, or only ``requiredUserInfoKeys`` when set.
    public var transmittedUserInfo: [String: PropertyListValue] {
        guard let required = requiredUserInfoKeys else { return userInfo }
        return userInfo.filter { required.contains($0.key) }
    }

    /// Whether the activity has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate <= now
    }

    /// Checks what ``archivedData()`` and the wire encoding need.
    /// - Throws: `FerryModelError`: `.invalidArgument` with key path `requiredUserInfoKeys` when a
    ///   required key is missing from `userInfo`, or `webpageURL` when its scheme is not http(s);
    ///   `.tooLarge` with key path `userInfo` when the carried userInfo exceeds
    ///   ``maximumUserInfoSize`` as a binary property list.
    public func validate() throws {
        if let required = requiredUserInfoKeys {
            let missing = required.subtracting(userInfo.keys).sorted()
            if !missing.isEmpty {
                throw FerryModelError.invalid(
                    "required key(s) missing from userInfo: \(missing.joined(separator: ", "))", at: "requiredUserInfoKeys")
            }
        }
        if let webpageURL {
            try UserActivity.validateWebpageURL(webpageURL)
        }
        let size = try PropertyListValue.dictionary(transmittedUserInfo).propertyListData(format: .binary).count
        if size > UserActivity.maximumUserInfoSize {
            throw FerryModelError(.tooLarge,
                "userInfo is \(size) bytes as a binary property list; the limit is \(UserActivity.maximumUserInfoSize)",
                keyPath: "userInfo")
        }
    }

    static func validateWebpageURL(_ url: URL, at keyPath: String = "webpageURL") throws {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw FerryModelError.invalid("\"\(url.absoluteString)\" is not an http or https URL", at: keyPath)
        }
    }
}

/// A sharing activity's identifier (`UIActivity.ActivityType`): reverse-DNS, 1–255 bytes.
/// `org.ferry.activity.*` is reserved for the broker's built-in activities.
public struct ActivityType: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible,
                            ExpressibleByStringLiteral {
    /// The identifier.
    public let rawValue: String

    /// An activity type; not validated (``validate()`` does).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An activity type from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Copy the items to the general pasteboard (built in).
    public static let copy: ActivityType = "org.ferry.activity.copy"
    /// Save each item as a file in a folder (built in).
    public static let saveToFolder: ActivityType = "org.ferry.activity.save-to-folder"
    /// Open the first item's user activity in a new scene (built in).
    public static let openInNewScene: ActivityType = "org.ferry.activity.open-in-new-scene"

    /// Every built-in activity type starts with this.
    public static let builtInPrefix = "org.ferry.activity."

    /// Whether the broker performs this activity itself.
    public var isBuiltIn: Bool { rawValue.hasPrefix(Self.builtInPrefix) }

    /// Checks the identifier's form (the characters of a user activity type, 1–255 bytes).
    /// - Throws: `FerryModelError` `.invalidArgument`.
    public func validate() throws {
        guard UserActivity.isValidActivityType(rawValue) else {
            throw FerryModelError.invalid("\"\(rawValue.printableLine(limit: 80))\" is not an activity type "
                                          + "(1–255 bytes of letters, digits, \".\", \"-\", \"_\")")
        }
    }

    /// The identifier.
    public var description: String { rawValue }

    /// Orders by identifier.
    public static func < (lhs: ActivityType, rhs: ActivityType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where an activity appears in a share sheet (`UIActivity.Category`).
public enum ActivityCategory: String, Sendable, Hashable, CaseIterable {
    /// Does something with the items here (copy, save, add to an album).
    case action
    /// Sends the items somewhere (a message, another app's document).
    case share
}

/// What an activity is and what it can perform with: everything the broker needs to list it
/// (UIActivity's `activityType`, `activityTitle`, `activityCategory`, and the type side of
/// `canPerform(withActivityItems:)`).
public struct ActivityDescription: Sendable, Hashable {
    /// The activity's identifier.
    public var type: ActivityType
    /// The title people see: one printable line, at most 200 bytes.
    public var title: String
    /// Action or share.
    public var category: ActivityCategory
    /// Every item needs a representation conforming to one of these.
    public var acceptableTypes: [ContentType]
    /// The most items it takes; 0 = any number.
    public var maximumItemCount: Int

    /// The longest title, in UTF-8 bytes.
    public static let maximumTitleLength = 200
    /// The most acceptable types of one activity.
    public static let maximumAcceptableTypes = 64

    /// Describes an activity.
    public init(type: ActivityType, title: String, category: ActivityCategory = .action,
                acceptableTypes: [ContentType], maximumItemCount: Int = 0) {
        self.type = type
        self.title = title
        self.category = category
        self.acceptableTypes = acceptableTypes
        self.maximumItemCount = maximumItemCount
    }

    /// The broker's built-in activities, in the order they are listed.
    public static let builtIns: [ActivityDescription] = [
        ActivityDescription(type: .copy, title: "Copy", acceptableTypes: [.item]),
        ActivityDescription(type: .saveToFolder, title: "Save to Folder", acceptableTypes: [.data]),
        ActivityDescription(type: .openInNewScene, title: "Open in New Window", acceptableTypes: [.userActivity],
                            maximumItemCount: 1),
    ]

    /// Whether the activity can perform with items of these types (one array per item): at
    /// least one item, not more than ``maximumItemCount``, and every item with a type conforming
    /// to an acceptable one. An `org.ferry.user-activity` representation counts only for an
    /// activity that accepts exactly that type: an archived activity is not data to save.
    public func canPerform(withItemTypes items: [[ContentType]]) -> Bool {
        guard !items.isEmpty, maximumItemCount == 0 || items.count <= maximumItemCount else { return false }
        return items.allSatisfy { types in
            types.contains { type in
                type == .userActivity ? acceptableTypes.contains(.userActivity)
                                      : acceptableTypes.contains { type.conforms(to: $0) }
            }
        }
    }

    /// Checks an app's activity: a well-formed, non-reserved type, a printable one-line title,
    /// 1–64 acceptable types, a maximum count of 0 or more.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key (`activityType`, `title`, …).
    public func validate() throws {
        do { try type.validate() } catch let error as FerryModelError { throw error.nested(under: "activityType") }
        guard !type.isBuiltIn else {
            throw FerryModelError.invalid("\(ActivityType.builtInPrefix)* is reserved for the broker's own activities",
                                          at: "activityType")
        }
        guard !title.isEmpty, title.utf8.count <= Self.maximumTitleLength, title.printableLine() == title else {
            throw FerryModelError.invalid("must be one printable line of 1–\(Self.maximumTitleLength) bytes", at: "title")
        }
        guard (1...Self.maximumAcceptableTypes).contains(acceptableTypes.count) else {
            throw FerryModelError.invalid("1 to \(Self.maximumAcceptableTypes) types", at: "acceptableTypes")
        }
        guard maximumItemCount >= 0 else { throw FerryModelError.invalid("must not be negative", at: "maximumItemCount") }
    }
}

/// An activity as a share sheet lists it: what it is, and whose it is.
public struct ListedActivity: Sendable, Hashable {
    /// The activity.
    public var type: ActivityType
    /// Its title.
    public var title: String
    /// Action or share.
    public var category: ActivityCategory
    /// The app that performs it; nil for a built-in activity (the broker performs it).
    public var app: String?

    /// Describes a listed activity.
    public init(type: ActivityType, title: String, category: ActivityCategory, app: String?) {
        self.type = type
        self.title = title
        self.category = category
        self.app = app
    }

    /// Whether the broker performs it.
    public var isBuiltIn: Bool { app == nil }
}

/// How a share ended (`completionWithItemsHandler`): the activity's answer.
public struct ShareCompletion: Sendable, Hashable {
    /// Whether the activity did its work.
    public var completed: Bool
    /// The activity performed; nil when the share ended without one (dismissed).
    public var activityType: ActivityType?
    /// What the activity made (string values: paths, note ids, …), in order.
    public var returnedItems: [[String: String]]
    /// A one-line summary for people.
    public var message: String?
    /// The error's name (`org.ferry.Error.Unavailable`, an app's own) when something failed.
    public var errorName: String?
    /// The error's text, when something failed.
    public var error: String?

    /// Describes a completion.
    public init(completed: Bool, activityType: ActivityType?, returnedItems: [[String: String]] = [],
                message: String? = nil, errorName: String? = nil, error: String? = nil) {
        self.completed = completed
        self.activityType = activityType
        self.returnedItems = returnedItems
        self.message = message
        self.errorName = errorName
        self.error = error
    }

    /// The share ended without an activity (the sheet dismissed, the share timed out).
    public static func dismissed(_ message: String? = nil) -> ShareCompletion {
        ShareCompletion(completed: false, activityType: nil, message: message)
    }

    /// The activity failed with a named error.
    public static func failed(_ activityType: ActivityType, errorName: String, error: String) -> ShareCompletion {
        ShareCompletion(completed: false, activityType: activityType, message: error, errorName: errorName, error: error)
    }
}

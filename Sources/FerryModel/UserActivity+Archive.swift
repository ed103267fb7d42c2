#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UserActivity {
    /// The activity as the bytes of an item representation of type ``ContentType/userActivity``:
    /// a binary property list (`bplist00`) whose root dictionary has the keys of the wire shape
    /// (docs/wire.md, "UserActivity"), with `userInfo` as a native plist dictionary and
    /// `expirationDate` as a native `<date>`. Only ``transmittedUserInfo`` is written.
    /// - Throws: what ``validate()`` throws.
    public func archivedData() throws -> Data {
        try validate()
        var root: [String: PropertyListValue] = [
            "activityType": .string(activityType),
            "userInfo": .dictionary(transmittedUserInfo),
        ]
        if let title { root["title"] = .string(title) }
        if let keys = requiredUserInfoKeys { root["requiredUserInfoKeys"] = .array(keys.sorted().map { .string($0) }) }
        if let webpageURL { root["webpageURL"] = .string(webpageURL.absoluteString) }
        if let targetContentIdentifier { root["targetContentIdentifier"] = .string(targetContentIdentifier) }
        if let persistentIdentifier { root["persistentIdentifier"] = .string(persistentIdentifier) }
        if let expirationDate { root["expirationDate"] = .date(expirationDate) }
        if !isEligibleForHandoff { root["eligibleForHandoff"] = .boolean(false) }
        return try PropertyListValue.dictionary(root).propertyListData(format: .binary)
    }

    /// Reads an activity from ``archivedData()`` bytes (XML property lists are accepted too).
    /// Unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the offending key, or `.tooLarge`.
    public init(archivedData data: Data) throws {
        guard data.count <= 4 * UserActivity.maximumUserInfoSize else {
            throw FerryModelError(.tooLarge, "a user-activity archive of \(data.count) bytes is too large")
        }
        guard case .dictionary(let root) = try PropertyListValue(propertyListData: data) else {
            throw FerryModelError.invalid("a user-activity archive must be a dictionary")
        }
        try self.init(propertyList: root)
    }

    /// Reads an activity from a property-list dictionary with the archive's keys.
    init(propertyList root: [String: PropertyListValue]) throws {
        let reader = PropertyListReader(root)
        try self.init(activityType: try reader.requiredString("activityType"))
        title = try reader.optionalString("title")
        userInfo = try reader.optionalDictionary("userInfo") ?? [:]
        if let keys = try reader.optionalStringArray("requiredUserInfoKeys") { requiredUserInfoKeys = Set(keys) }
        if let text = try reader.optionalString("webpageURL") {
            guard let url = URL(string: text) else { throw FerryModelError.invalid("not a URL", at: "webpageURL") }
            webpageURL = url
        }
        targetContentIdentifier = try reader.optionalString("targetContentIdentifier")
        persistentIdentifier = try reader.optionalString("persistentIdentifier")
        if let value = reader.root["expirationDate"] {
            guard let date = value.dateValue else {
                throw FerryModelError.invalid("expected a date, found \(value.kindName)", at: "expirationDate")
            }
            expirationDate = date
        }
        isEligibleForHandoff = try reader.optionalBool("eligibleForHandoff") ?? true
        try validate()
    }
}

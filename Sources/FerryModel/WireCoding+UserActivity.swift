#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UserActivity: WireCodable {
    /// The activity as `a{sv}` (docs/wire.md, "UserActivity"). Only ``transmittedUserInfo`` is sent.
    /// - Throws: what ``validate()`` throws, and `.invalidArgument` for a `userInfo` using `$date`.
    public func wireDictionary() throws -> [String: WireValue] {
        try validate()
        var out: [String: WireValue] = ["activityType": .string(activityType)]
        do {
            out["userInfo"] = try PropertyListValue.dictionary(transmittedUserInfo).wireValue()
        } catch let error as FerryModelError {
            throw error.nested(under: "userInfo")
        }
        if let title { out["title"] = .string(title) }
        if let keys = requiredUserInfoKeys { out["requiredUserInfoKeys"] = .strings(keys.sorted()) }
        if let webpageURL { out["webpageURL"] = .string(webpageURL.absoluteString) }
        if let targetContentIdentifier { out["targetContentIdentifier"] = .string(targetContentIdentifier) }
        if let persistentIdentifier { out["persistentIdentifier"] = .string(persistentIdentifier) }
        if let expirationDate { out["expirationDate"] = .int64(PropertyListValue.microseconds(expirationDate)) }
        if !isEligibleForHandoff { out["eligibleForHandoff"] = .bool(false) }
        return out
    }

    /// Reads an activity from `a{sv}`; unknown keys are ignored.
    /// - Throws: `FerryModelError` naming the key: `activityType` missing or malformed, a non-plist
    ///   or oversized `userInfo`, a `webpageURL` that is not http(s), a required key not in `userInfo`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let type = try wire.required("activityType", wire.string)
        try UserActivity.validateActivityType(type, at: "activityType")
        try self.init(activityType: type)
        title = try wire.string("title")
        if let info = wireDictionary["userInfo"] {
            guard case .dictionary = info else { throw wire.mismatch("userInfo", expected: "a dictionary (a{sv})", found: info) }
            guard case .dictionary(let entries) = try PropertyListValue(wireValue: info, keyPath: "userInfo") else {
                throw FerryModelError.invalid("a date is not a dictionary", at: "userInfo")
            }
            userInfo = entries
        }
        if let keys = try wire.strings("requiredUserInfoKeys") { requiredUserInfoKeys = Set(keys) }
        if let text = try wire.string("webpageURL") {
            guard let url = URL(string: text) else { throw FerryModelError.invalid("not a URL", at: "webpageURL") }
            webpageURL = url
        }
        targetContentIdentifier = try wire.string("targetContentIdentifier")
        persistentIdentifier = try wire.string("persistentIdentifier")
        if let micros = try wire.int64("expirationDate") {
            expirationDate = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        }
        isEligibleForHandoff = try wire.bool("eligibleForHandoff") ?? true
        try validate()
    }
}

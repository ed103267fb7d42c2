#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SceneSession: WireCodable {
    /// The session as `a{sv}` (docs/wire.md, "SceneSession").
    /// - Throws: what the restoration activity's and `userInfo`'s encodings throw, with their key paths.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "persistentIdentifier": .string(persistentIdentifier), "bundleIdentifier": .string(bundleIdentifier),
            "role": .string(role.rawValue), "state": activationState.wireValue,
            "activationConditions": .dictionary(try activationConditions.wireDictionary()),
        ]
        do {
            out["userInfo"] = try PropertyListValue.dictionary(userInfo).wireValue()
        } catch let error as FerryModelError { throw error.nested(under: "userInfo") }
        if let configurationName { out["configurationName"] = .string(configurationName) }
        if let title { out["title"] = .string(title) }
        if let frame { out["frame"] = .dictionary(try frame.wireDictionary()) }
        if let stateRestorationActivity {
            do {
                out["stateRestorationActivity"] = .dictionary(try stateRestorationActivity.wireDictionary())
            } catch let error as FerryModelError { throw error.nested(under: "stateRestorationActivity") }
        }
        return out
    }

    /// Reads a session; `persistentIdentifier`, `bundleIdentifier` and `role` are required.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, e.g.
    ///   `stateRestorationActivity.activityType` or `frame.width`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let identifier = try wire.required("persistentIdentifier", wire.string)
        try SceneSession.validatePersistentIdentifier(identifier)
        let bundle = try wire.required("bundleIdentifier", wire.string)
        guard AppManifest.isValidBundleIdentifier(bundle) else {
            throw FerryModelError.invalid("\"\(bundle)\" is not a bundle identifier", at: "bundleIdentifier")
        }
        let role = try wire.required("role", wire.string)
        guard !role.isEmpty else { throw FerryModelError.invalid("must not be empty", at: "role") }
        var state = SceneActivationState.unattached
        if let value = wireDictionary["state"] { state = try SceneActivationState(wireValue: value, keyPath: "state") }
        var info: [String: PropertyListValue] = [:]
        if let value = wireDictionary["userInfo"] {
            guard case .dictionary = value, case .dictionary(let entries) = try PropertyListValue(wireValue: value, keyPath: "userInfo")
            else { throw wire.mismatch("userInfo", expected: "a dictionary (a{sv})", found: value) }
            info = entries
        }
        try self.init(
            persistentIdentifier: identifier, bundleIdentifier: bundle, role: SceneRole(rawValue: role),
            configurationName: try wire.string("configurationName"), activationState: state,
            title: try wire.string("title"), frame: try wire.decode(Rect.self, "frame"),
            stateRestorationActivity: try wire.decode(UserActivity.self, "stateRestorationActivity"), userInfo: info,
            activationConditions: try wire.decode(SceneActivationConditions.self, "activationConditions") ?? .init())
    }
}

extension SceneConnectionOptions: WireCodable {
    /// `{userActivities: av of a{sv}, urls: as, sourceApplication: s?}`.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "userActivities": .array(try userActivities.enumerated().map { index, activity in
                do { return .dictionary(try activity.wireDictionary()) } catch let error as FerryModelError {
                    throw error.nested(under: KeyPath.index("userActivities", index))
                }
            }),
            "urls": .strings(urls.map(\.absoluteString)),
        ]
        if let sourceApplication { out["sourceApplication"] = .string(sourceApplication) }
        return out
    }

    /// Reads connection options; every key is optional.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, e.g. `userActivities[0].activityType`
    ///   or `urls[1]`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let activities = try (wire.dictionaries("userActivities") ?? []).map { try $0.decodeHere(UserActivity.self) }
        let urls = try (wire.strings("urls") ?? []).enumerated().map { index, text in
            guard let url = URL(string: text), url.scheme != nil else {
                throw FerryModelError.invalid("\"\(text)\" is not an absolute URL", at: KeyPath.index("urls", index))
            }
            return url
        }
        self.init(userActivities: activities, urls: urls, sourceApplication: try wire.string("sourceApplication"))
    }
}

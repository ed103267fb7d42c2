extension AppManifest.DocumentType: WireCodable {
    /// `{name: s?, contentTypes: as, role: s?, handlerRank: s?}`.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = ["contentTypes": .strings(contentTypeIdentifiers)]
        if let name { out["name"] = .string(name) }
        if let role { out["role"] = .string(role) }
        if let handlerRank { out["handlerRank"] = .string(handlerRank) }
        return out
    }

    /// Reads a document type; `contentTypes` is required and each must be a valid identifier.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let identifiers = try wire.required("contentTypes", wire.strings)
        for (index, identifier) in identifiers.enumerated() where !ContentType.isValidIdentifier(identifier) {
            throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier", at: KeyPath.index("contentTypes", index))
        }
        self.init(name: try wire.string("name"), contentTypeIdentifiers: identifiers, role: try wire.string("role"),
                  handlerRank: try wire.string("handlerRank"))
    }
}

extension AppManifest: WireCodable {
    /// The manifest summary (docs/wire.md, "AppManifest").
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "bundleIdentifier": .string(bundleIdentifier),
            "supportsMultipleScenes": .bool(supportsMultipleScenes),
            "sceneConfigurations": .array(try sceneConfigurations.map { .dictionary(try $0.wireDictionary()) }),
            "userActivityTypes": .strings(userActivityTypes),
            "documentTypes": .array(try documentTypes.map { .dictionary(try $0.wireDictionary()) }),
            "exportedTypes": .array(try exportedTypeDeclarations.map { .dictionary(try $0.wireDictionary()) }),
            "importedTypes": .array(try importedTypeDeclarations.map { .dictionary(try $0.wireDictionary()) }),
        ]
        if let name { out["name"] = .string(name) }
        return out
    }

    /// Reads a manifest summary; only `bundleIdentifier` is required.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, e.g.
    ///   `sceneConfigurations[1].name` or `userActivityTypes[0]`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let identifier = try wire.required("bundleIdentifier", wire.string)
        guard AppManifest.isValidBundleIdentifier(identifier) else {
            throw FerryModelError.invalid("\"\(identifier)\" is not a bundle identifier", at: "bundleIdentifier")
        }
        let activityTypes = try wire.strings("userActivityTypes") ?? []
        for (index, type) in activityTypes.enumerated() {
            try UserActivity.validateActivityType(type, at: KeyPath.index("userActivityTypes", index))
        }
        self.init(
            bundleIdentifier: identifier, name: try wire.string("name"),
            supportsMultipleScenes: try wire.bool("supportsMultipleScenes") ?? false,
            sceneConfigurations: try (wire.dictionaries("sceneConfigurations") ?? []).map { try $0.decodeHere(SceneConfiguration.self) },
            userActivityTypes: activityTypes,
            documentTypes: try (wire.dictionaries("documentTypes") ?? []).map { try $0.decodeHere(DocumentType.self) },
            exportedTypeDeclarations: try (wire.dictionaries("exportedTypes") ?? []).map { try $0.decodeHere(TypeDeclaration.self) },
            importedTypeDeclarations: try (wire.dictionaries("importedTypes") ?? []).map { try $0.decodeHere(TypeDeclaration.self) })
    }
}

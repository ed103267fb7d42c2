#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AppManifest {
    /// Reads an Info.plist file.
    /// - Throws: `FerryModelError` `.notFound` when the file cannot be read, else what
    ///   ``init(propertyListData:)`` throws.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FerryModelError(.notFound, "cannot read the manifest \(url.path): \(error)")
        }
        try self.init(propertyListData: data)
    }

    /// Reads `Info.plist` inside an app folder (`Fixtures/Apps/Notes`).
    /// - Throws: what ``init(contentsOf:)`` throws.
    public init(contentsOfAppFolder folder: URL) throws {
        try self.init(contentsOf: folder.appendingPathComponent("Info.plist"))
    }

    /// Parses Info.plist bytes (XML or binary property list).
    /// - Throws: `FerryModelError` `.invalidArgument`; its key path names the offending entry, e.g.
    ///   `UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName`
    ///   with "expected a string, found integer".
    public init(propertyListData data: Data) throws {
        guard case .dictionary(let root) = try PropertyListValue(propertyListData: data) else {
            throw FerryModelError.invalid("an Info.plist must be a dictionary at its root")
        }
        try self.init(propertyList: root)
    }

    /// Reads a manifest from an Info.plist's root dictionary. Unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path of the first bad entry.
    public init(propertyList root: [String: PropertyListValue]) throws {
        let plist = PropertyListReader(root)
        let identifier = try plist.requiredString("CFBundleIdentifier")
        guard AppManifest.isValidBundleIdentifier(identifier) else {
            throw FerryModelError.invalid("\"\(identifier)\" is not a bundle identifier (letters, digits, '-', '.')",
                                          at: "CFBundleIdentifier")
        }
        self.init(bundleIdentifier: identifier)
        name = try plist.optionalString("CFBundleName") ?? plist.optionalString("CFBundleDisplayName")

        if let sceneManifest = try plist.nested("UIApplicationSceneManifest") {
            supportsMultipleScenes = try sceneManifest.optionalBool("UIApplicationSupportsMultipleScenes") ?? false
            if let byRole = try sceneManifest.nested("UISceneConfigurations") {
                sceneConfigurations = try AppManifest.sceneConfigurations(byRole)
            }
        }

        let activityTypes = try plist.optionalStringArray("NSUserActivityTypes") ?? []
        for (index, type) in activityTypes.enumerated() {
            try UserActivity.validateActivityType(type, at: KeyPath.index("NSUserActivityTypes", index))
        }
        userActivityTypes = activityTypes
        handoffLocal = try plist.optionalBool("FerryHandoffLocal") ?? false

        documentTypes = try (plist.optionalDictionaryArray("CFBundleDocumentTypes") ?? []).map { entry in
            let identifiers = try entry.optionalStringArray("LSItemContentTypes") ?? []
            for (index, identifier) in identifiers.enumerated() where !ContentType.isValidIdentifier(identifier) {
                throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier",
                                              at: KeyPath.index(entry.keyPath("LSItemContentTypes"), index))
            }
            return DocumentType(name: try entry.optionalString("CFBundleTypeName"), contentTypeIdentifiers: identifiers,
                                role: try entry.optionalString("CFBundleTypeRole"),
                                handlerRank: try entry.optionalString("LSHandlerRank"))
        }
        exportedTypeDeclarations = try AppManifest.typeDeclarations(plist, "UTExportedTypeDeclarations")
        importedTypeDeclarations = try AppManifest.typeDeclarations(plist, "UTImportedTypeDeclarations")
    }

    /// Whether `identifier` is a bundle identifier: non-empty, at most 255 bytes of ASCII letters,
    /// digits, `-` and `.`.
    public static func isValidBundleIdentifier(_ identifier: String) -> Bool {
        let bytes = identifier.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D
        }
    }

    private static func sceneConfigurations(_ byRole: PropertyListReader) throws -> [SceneConfiguration] {
        let known = [SceneRole.windowApplication.rawValue, SceneRole.windowExternalDisplayNonInteractive.rawValue]
        let roles = byRole.root.keys.sorted { a, b in
            let ia = known.firstIndex(of: a) ?? known.count, ib = known.firstIndex(of: b) ?? known.count
            return ia != ib ? ia < ib : a < b
        }
        var out: [SceneConfiguration] = []
        for roleName in roles {
            let role = SceneRole(rawValue: roleName)
            var names: Set<String> = []
            for entry in try byRole.optionalDictionaryArray(roleName) ?? [] {
                let name = try entry.requiredString("UISceneConfigurationName")
                guard names.insert(name).inserted else {
                    throw FerryModelError.invalid("configuration name \"\(name)\" is used twice in this role",
                                                  at: entry.keyPath("UISceneConfigurationName"))
                }
                out.append(SceneConfiguration(name: name, role: role,
                                              delegateClassName: try entry.optionalString("UISceneDelegateClassName"),
                                              sceneClassName: try entry.optionalString("UISceneClassName"),
                                              storyboardName: try entry.optionalString("UISceneStoryboardFile")))
            }
        }
        return out
    }

    private static func typeDeclarations(_ plist: PropertyListReader, _ key: String) throws -> [TypeDeclaration] {
        try (plist.optionalDictionaryArray(key) ?? []).map { entry in
            let identifier = try entry.requiredString("UTTypeIdentifier")
            guard ContentType.isValidIdentifier(identifier) else {
                throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier", at: entry.keyPath("UTTypeIdentifier"))
            }
            let parents = try entry.optionalStringOrStringArray("UTTypeConformsTo") ?? []
            for (index, parent) in parents.enumerated() where !ContentType.isValidIdentifier(parent) {
                throw FerryModelError.invalid("\"\(parent)\" is not a type identifier",
                                              at: KeyPath.index(entry.keyPath("UTTypeConformsTo"), index))
            }
            let tags = try entry.nested("UTTypeTagSpecification")
            return TypeDeclaration(
                identifier: identifier, conformsTo: parents,
                filenameExtensions: try tags?.optionalStringOrStringArray("public.filename-extension") ?? [],
                mimeTypes: try tags?.optionalStringOrStringArray("public.mime-type") ?? [],
                description: try entry.optionalString("UTTypeDescription"),
                referenceURL: try entry.optionalString("UTTypeReferenceURL"))
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an app declares about itself in its Info.plist: identity, scene configurations, the user
/// activity types it handles, the documents it opens and the types it declares.
public struct AppManifest: Sendable, Hashable {
    /// A document type the app opens (one `CFBundleDocumentTypes` entry).
    public struct DocumentType: Sendable, Hashable {
        /// `CFBundleTypeName`, if given.
        public var name: String?
        /// `LSItemContentTypes`: the type identifiers of the documents.
        public var contentTypeIdentifiers: [String]
        /// `CFBundleTypeRole`: `Editor`, `Viewer`, `Shell` or `None`, if given.
        public var role: String?
        /// `LSHandlerRank`: `Owner`, `Default`, `Alternate` or `None`, if given.
        public var handlerRank: String?

        /// Makes a document type.
        public init(name: String? = nil, contentTypeIdentifiers: [String], role: String? = nil, handlerRank: String? = nil) {
            self.name = name
            self.contentTypeIdentifiers = contentTypeIdentifiers
            self.role = role
            self.handlerRank = handlerRank
        }

        /// Whether a document of `type` is one of these (conformance-aware: `public.png` is a `public.image`).
        public func accepts(_ type: ContentType) -> Bool {
            contentTypeIdentifiers.contains { identifier in
                type.conforms(to: ContentType(identifier) ?? ContentType(uncheckedIdentifier: identifier))
            }
        }
    }

    /// `CFBundleIdentifier` (`org.ferry.notes`).
    public var bundleIdentifier: String
    /// `CFBundleName`, else `CFBundleDisplayName`, if either is given.
    public var name: String?
    /// `UIApplicationSceneManifest.UIApplicationSupportsMultipleScenes`; false when absent.
    public var supportsMultipleScenes: Bool
    /// Every scene configuration: application-role ones first, each role in manifest order.
    public var sceneConfigurations: [SceneConfiguration]
    /// `NSUserActivityTypes`.
    public var userActivityTypes: [String]
    /// `CFBundleDocumentTypes`.
    public var documentTypes: [DocumentType]
    /// `UTExportedTypeDeclarations`: types the app owns.
    public var exportedTypeDeclarations: [TypeDeclaration]
    /// `UTImportedTypeDeclarations`: types the app uses but does not own.
    public var importedTypeDeclarations: [TypeDeclaration]
    /// `FerryHandoffLocal`: the app's user activities never leave this machine (no Handoff from
    /// it, whatever each activity says); false when absent.
    public var handoffLocal = false

    /// Makes a manifest from values.
    public init(bundleIdentifier: String, name: String? = nil, supportsMultipleScenes: Bool = false,
                sceneConfigurations: [SceneConfiguration] = [], userActivityTypes: [String] = [],
                documentTypes: [DocumentType] = [], exportedTypeDeclarations: [TypeDeclaration] = [],
                importedTypeDeclarations: [TypeDeclaration] = []) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.supportsMultipleScenes = supportsMultipleScenes
        self.sceneConfigurations = sceneConfigurations
        self.userActivityTypes = userActivityTypes
        self.documentTypes = documentTypes
        self.exportedTypeDeclarations = exportedTypeDeclarations
        self.importedTypeDeclarations = importedTypeDeclarations
    }

    /// The configurations of a role, in manifest order.
    public func configurations(for role: SceneRole) -> [SceneConfiguration] {
        sceneConfigurations.filter { $0.role == role }
    }

    /// The configuration used when the app names none: the first one of the role (as UIKit does).
    public func defaultConfiguration(for role: SceneRole = .windowApplication) -> SceneConfiguration? {
        configurations(for: role).first
    }

    /// The configuration with a name, in a role or in any role.
    public func configuration(named name: String, role: SceneRole? = nil) -> SceneConfiguration? {
        sceneConfigurations.first { $0.name == name && (role == nil || $0.role == role) }
    }

    /// Whether the app lists `activityType` in `NSUserActivityTypes`.
    public func declaresActivityType(_ activityType: String) -> Bool {
        userActivityTypes.contains(activityType)
    }

    /// The document types that accept documents of `type`, in manifest order.
    public func documentTypes(accepting type: ContentType) -> [DocumentType] {
        documentTypes.filter { $0.accepts(type) }
    }

    /// Whether the app opens documents of `type`.
    public func opensDocuments(of type: ContentType) -> Bool {
        !documentTypes(accepting: type).isEmpty
    }
}

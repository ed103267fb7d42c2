/// A type declared by an app's Info.plist (`UTExportedTypeDeclarations` /
/// `UTImportedTypeDeclarations`), registered with `TypeDatabase.register(_:exported:)`.
public struct TypeDeclaration: Sendable, Hashable {
    /// `UTTypeIdentifier`, e.g. `com.example.recipe`.
    public var identifier: String
    /// `UTTypeConformsTo`: identifiers of the direct parents.
    public var conformsTo: [String]
    /// `UTTypeTagSpecification` `public.filename-extension`, without dots, preferred first.
    public var filenameExtensions: [String]
    /// `UTTypeTagSpecification` `public.mime-type`, preferred first.
    public var mimeTypes: [String]
    /// `UTTypeDescription`.
    public var description: String?
    /// `UTTypeReferenceURL`.
    public var referenceURL: String?

    /// A declaration.
    public init(identifier: String, conformsTo: [String], filenameExtensions: [String] = [], mimeTypes: [String] = [],
                description: String? = nil, referenceURL: String? = nil) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.filenameExtensions = filenameExtensions
        self.mimeTypes = mimeTypes
        self.description = description
        self.referenceURL = referenceURL
    }
}

/// The type declarations apps brought to a ``TypeDatabase``: their manifests'
/// `UTExportedTypeDeclarations` and `UTImportedTypeDeclarations`.
///
/// The broker hands these to the command-line tool, which adds them to its own database so that
/// `ferry type conforms org.ferry.notes.note public.plain-text` answers as the broker does.
public struct AppTypeDeclarations: Sendable, Hashable {
    /// Exported declarations (types the apps own), in registration order.
    public var exported: [TypeDeclaration]
    /// Imported declarations (types the apps use but do not own), in registration order.
    public var imported: [TypeDeclaration]

    /// Declarations from the two lists.
    public init(exported: [TypeDeclaration] = [], imported: [TypeDeclaration] = []) {
        self.exported = exported
        self.imported = imported
    }

    /// Whether there are no declarations at all.
    public var isEmpty: Bool { exported.isEmpty && imported.isEmpty }
}

extension TypeDatabase {
    /// Adds `declarations` as ``register(_:exported:)`` does: the exported ones, then the
    /// imported ones (so an import never shadows an export of the same identifier).
    /// - Throws: `TypeDatabaseError` as ``register(_:exported:)`` does; the exported batch may
    ///   then be registered already.
    public func register(_ declarations: AppTypeDeclarations) throws(TypeDatabaseError) {
        try register(declarations.exported, exported: true)
        try register(declarations.imported, exported: false)
    }
}

/// Everything the database knows about one type, as plain values (for `ferry type info`).
///
/// JSON keys (stable): `identifier`, `declared`, `dynamic`, `public`, `description` (null when
/// unknown), `parents`, `supertypes` (sorted), `filenameExtensions`, `mimeTypes` (preferred first).
public struct ContentTypeInfo: Sendable, Hashable, Codable {
    /// The identifier.
    public var identifier: String
    /// Whether the type is declared.
    public var declared: Bool
    /// Whether the type is dynamic.
    public var dynamic: Bool
    /// Whether the type is in the `public.` domain.
    public var `public`: Bool
    /// The description, when known.
    public var description: String?
    /// Direct parents.
    public var parents: [String]
    /// Every supertype, sorted by identifier.
    public var supertypes: [String]
    /// Filename extensions, preferred first.
    public var filenameExtensions: [String]
    /// MIME types, preferred first.
    public var mimeTypes: [String]

    /// The information `database` has about `type`.
    public init(_ type: ContentType, in database: TypeDatabase = .shared) {
        let tags = database.tags(of: type)
        identifier = type.identifier
        declared = database.isDeclared(type)
        dynamic = type.isDynamic
        `public` = type.isPublicType
        description = database.localizedDescription(of: type)
        parents = database.parents(of: type).map(\.identifier)
        supertypes = database.supertypes(of: type).map(\.identifier).sorted()
        filenameExtensions = tags[.filenameExtension] ?? []
        mimeTypes = tags[.mimeType] ?? []
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, declared, dynamic, `public`, description, parents, supertypes, filenameExtensions, mimeTypes
    }

    /// Encodes every key, `description` as null when unknown.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(identifier, forKey: .identifier)
        try c.encode(declared, forKey: .declared)
        try c.encode(dynamic, forKey: .dynamic)
        try c.encode(`public`, forKey: .public)
        try c.encode(description, forKey: .description)
        try c.encode(parents, forKey: .parents)
        try c.encode(supertypes, forKey: .supertypes)
        try c.encode(filenameExtensions, forKey: .filenameExtensions)
        try c.encode(mimeTypes, forKey: .mimeTypes)
    }
}

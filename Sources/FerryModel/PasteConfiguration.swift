/// The types a view accepts, for paste and for drop alike (Apple's `UIPasteConfiguration`).
///
/// Acceptance is conformance-aware: a configuration accepting `public.image` accepts `public.png`.
public struct PasteConfiguration: Sendable, Hashable {
    /// The accepted type identifiers, in the order they were added, without repeats.
    public private(set) var acceptableTypeIdentifiers: [String] = []

    /// A configuration accepting these type identifiers.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the index of a malformed identifier
    ///   (`acceptableTypeIdentifiers[2]`).
    public init(acceptableTypeIdentifiers identifiers: [String]) throws {
        try addAcceptableTypeIdentifiers(identifiers)
    }

    /// A configuration accepting these types.
    public init(acceptableTypes types: [ContentType]) {
        for type in types where !acceptableTypeIdentifiers.contains(type.identifier) {
            acceptableTypeIdentifiers.append(type.identifier)
        }
    }

    /// A configuration accepting what `objectType` can be read from (Apple's `forAccepting:`),
    /// e.g. `PasteConfiguration(forAccepting: ImageItem.self)` accepts `public.image`.
    public init<T: ItemProviderReading>(forAccepting objectType: T.Type) {
        self.init(acceptableTypes: T.readableContentTypes)
    }

    /// Adds type identifiers; ones already present are skipped.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the index of a malformed identifier;
    ///   then nothing is added.
    public mutating func addAcceptableTypeIdentifiers(_ identifiers: [String]) throws {
        for (index, identifier) in identifiers.enumerated() where !ContentType.isValidIdentifier(identifier) {
            throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier",
                                          at: KeyPath.index("acceptableTypeIdentifiers", index))
        }
        for identifier in identifiers where !acceptableTypeIdentifiers.contains(identifier) {
            acceptableTypeIdentifiers.append(identifier)
        }
    }

    /// Adds the types `objectType` can be read from (Apple's `addTypeIdentifiers(forAccepting:)`).
    public mutating func addTypeIdentifiers<T: ItemProviderReading>(forAccepting objectType: T.Type) {
        for type in T.readableContentTypes where !acceptableTypeIdentifiers.contains(type.identifier) {
            acceptableTypeIdentifiers.append(type.identifier)
        }
    }

    /// The accepted types. An identifier the type database does not know is kept as it is and
    /// accepts only that same identifier.
    public var acceptableTypes: [ContentType] {
        acceptableTypeIdentifiers.map { ContentType($0) ?? ContentType(uncheckedIdentifier: $0) }
    }

    /// Whether some offered type conforms to some accepted type.
    public func accepts(_ types: [ContentType]) -> Bool {
        let accepted = acceptableTypes
        return types.contains { offered in accepted.contains { offered.conforms(to: $0) } }
    }

    /// Whether the item has a representation conforming to an accepted type. Looks at types only;
    /// no data is read (Apple's `canPaste` rule).
    public func accepts(_ provider: ItemProvider) -> Bool {
        accepts(provider.registeredContentTypes)
    }

    /// Whether any of the items is acceptable (paste is enabled, a drop is accepted).
    public func accepts(_ providers: [ItemProvider]) -> Bool {
        providers.contains { accepts($0) }
    }
}

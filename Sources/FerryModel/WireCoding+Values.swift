extension Point: WireCodable {
    /// `{x: d, y: d}`.
    public func wireDictionary() throws -> [String: WireValue] { ["x": .double(x), "y": .double(y)] }
    /// Reads `{x: d, y: d}`; both keys required.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        self.init(x: try wire.required("x", wire.double), y: try wire.required("y", wire.double))
    }
}

extension Size: WireCodable {
    /// `{width: d, height: d}`.
    public func wireDictionary() throws -> [String: WireValue] { ["width": .double(width), "height": .double(height)] }
    /// Reads `{width: d, height: d}`; both keys required.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        self.init(width: try wire.required("width", wire.double), height: try wire.required("height", wire.double))
    }
}

extension Rect: WireCodable {
    /// `{x: d, y: d, width: d, height: d}`.
    public func wireDictionary() throws -> [String: WireValue] {
        ["x": .double(origin.x), "y": .double(origin.y), "width": .double(size.width), "height": .double(size.height)]
    }
    /// Reads `{x, y, width, height}` (all `d`, all required).
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        self.init(x: try wire.required("x", wire.double), y: try wire.required("y", wire.double),
                  width: try wire.required("width", wire.double), height: try wire.required("height", wire.double))
    }
}

extension PasteConfiguration: WireCodable {
    /// `{acceptableTypeIdentifiers: as}`.
    public func wireDictionary() throws -> [String: WireValue] {
        ["acceptableTypeIdentifiers": .strings(acceptableTypeIdentifiers)]
    }
    /// Reads `{acceptableTypeIdentifiers: as}` (required; each a valid identifier).
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        try self.init(acceptableTypeIdentifiers: try wire.required("acceptableTypeIdentifiers", wire.strings))
    }
}

extension SceneActivationConditions: WireCodable {
    /// `{canActivateFor: s, prefersToActivateFor: s}`: NSPredicate format strings.
    public func wireDictionary() throws -> [String: WireValue] {
        ["canActivateFor": .string(canActivateForTargetContentIdentifierPredicate.predicateFormat),
         "prefersToActivateFor": .string(prefersToActivateForTargetContentIdentifierPredicate.predicateFormat)]
    }
    /// Reads the two format strings; a missing one takes its default (`TRUEPREDICATE` / `FALSEPREDICATE`).
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        try self.init(canActivateFor: try wire.string("canActivateFor") ?? "TRUEPREDICATE",
                      prefersToActivateFor: try wire.string("prefersToActivateFor") ?? "FALSEPREDICATE")
    }
}

extension SceneConfiguration: WireCodable {
    /// `{name: s, role: s, delegateClassName: s?, sceneClassName: s?, storyboardName: s?}`.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = ["name": .string(name), "role": .string(role.rawValue)]
        if let delegateClassName { out["delegateClassName"] = .string(delegateClassName) }
        if let sceneClassName { out["sceneClassName"] = .string(sceneClassName) }
        if let storyboardName { out["storyboardName"] = .string(storyboardName) }
        return out
    }
    /// Reads a configuration; `name` and `role` are required and non-empty.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let name = try wire.required("name", wire.string)
        let role = try wire.required("role", wire.string)
        guard !name.isEmpty else { throw FerryModelError.invalid("must not be empty", at: "name") }
        guard !role.isEmpty else { throw FerryModelError.invalid("must not be empty", at: "role") }
        self.init(name: name, role: SceneRole(rawValue: role), delegateClassName: try wire.string("delegateClassName"),
                  sceneClassName: try wire.string("sceneClassName"), storyboardName: try wire.string("storyboardName"))
    }
}

extension TypeDeclaration: WireCodable {
    /// `{identifier: s, conformsTo: as, filenameExtensions: as, mimeTypes: as, description: s?, referenceURL: s?}`.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "identifier": .string(identifier), "conformsTo": .strings(conformsTo),
            "filenameExtensions": .strings(filenameExtensions), "mimeTypes": .strings(mimeTypes),
        ]
        if let description { out["description"] = .string(description) }
        if let referenceURL { out["referenceURL"] = .string(referenceURL) }
        return out
    }
    /// Reads a declaration; `identifier` is required, every identifier must be valid.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let identifier = try wire.required("identifier", wire.string)
        guard ContentType.isValidIdentifier(identifier) else {
            throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier", at: "identifier")
        }
        let parents = try wire.strings("conformsTo") ?? []
        for (index, parent) in parents.enumerated() where !ContentType.isValidIdentifier(parent) {
            throw FerryModelError.invalid("\"\(parent)\" is not a type identifier", at: KeyPath.index("conformsTo", index))
        }
        self.init(identifier: identifier, conformsTo: parents,
                  filenameExtensions: try wire.strings("filenameExtensions") ?? [],
                  mimeTypes: try wire.strings("mimeTypes") ?? [],
                  description: try wire.string("description"), referenceURL: try wire.string("referenceURL"))
    }
}

extension SceneActivationState {
    /// The state on the wire: its raw value as `i`.
    public var wireValue: WireValue { .int32(rawValue) }

    /// Reads a state from any integer.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `keyPath` for an unknown value.
    public init(wireValue: WireValue, keyPath: String = "state") throws {
        guard let n = wireValue.integerValue, let small = Int32(exactly: n), let state = SceneActivationState(rawValue: small) else {
            throw FerryModelError.invalid("expected an activation state (-1, 0, 1, 2), found \(wireValue)", at: keyPath)
        }
        self = state
    }
}

extension SceneDismissalAnimation {
    /// The animation on the wire: its raw value as `i`.
    public var wireValue: WireValue { .int32(rawValue) }

    /// Reads an animation from any integer.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `keyPath` for an unknown value.
    public init(wireValue: WireValue, keyPath: String = "animation") throws {
        guard let n = wireValue.integerValue, let small = Int32(exactly: n), let animation = SceneDismissalAnimation(rawValue: small) else {
            throw FerryModelError.invalid("expected a dismissal animation (1, 2, 3), found \(wireValue)", at: keyPath)
        }
        self = animation
    }
}

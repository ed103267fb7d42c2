extension ActivityCategory {
    /// Reads a category name; nil (absent) is `.action`.
    init(wireName: String?, keyPath: String) throws {
        guard let wireName else { self = .action; return }
        guard let category = ActivityCategory(rawValue: wireName) else {
            throw FerryModelError.invalid("\"\(wireName.printableLine(limit: 40))\" is not a category (action, share)", at: keyPath)
        }
        self = category
    }
}

extension ActivityDescription: WireCodable {
    /// `{activityType, title, category, acceptableTypes, maximumItemCount}` (org.ferry.Sharing1.RegisterActivities).
    public func wireDictionary() throws -> [String: WireValue] {
        ["activityType": .string(type.rawValue), "title": .string(title), "category": .string(category.rawValue),
         "acceptableTypes": .strings(acceptableTypes.map(\.identifier)), "maximumItemCount": .uint32(UInt32(clamping: maximumItemCount))]
    }

    /// Reads and validates an app's activity (``validate()``): `activityType`, `title` and
    /// `acceptableTypes` required.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let names = try wire.required("acceptableTypes", wire.strings)
        let types = try names.enumerated().map { index, name in
            guard ContentType.isValidIdentifier(name), let type = ContentType(importedAs: name) else {
                throw FerryModelError.invalid("\"\(name.printableLine(limit: 80))\" is not a type identifier",
                                              at: KeyPath.index("acceptableTypes", index))
            }
            return type
        }
        self.init(type: ActivityType(rawValue: try wire.required("activityType", wire.string)),
                  title: try wire.required("title", wire.string),
                  category: try ActivityCategory(wireName: try wire.string("category"), keyPath: "category"),
                  acceptableTypes: types,
                  maximumItemCount: Int(try wire.int64("maximumItemCount") ?? 0))
        try validate()
    }
}

extension ListedActivity: WireCodable {
    /// `{activityType, title, category, app ("" for a built-in), builtIn}` (org.ferry.Sharing1.ListActivities).
    public func wireDictionary() throws -> [String: WireValue] {
        ["activityType": .string(type.rawValue), "title": .string(title), "category": .string(category.rawValue),
         "app": .string(app ?? ""), "builtIn": .bool(isBuiltIn)]
    }

    /// Reads a listed activity; `activityType` and `title` required.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let app = try wire.string("app") ?? ""
        self.init(type: ActivityType(rawValue: try wire.required("activityType", wire.string)),
                  title: try wire.required("title", wire.string),
                  category: try ActivityCategory(wireName: try wire.string("category"), keyPath: "category"),
                  app: app.isEmpty ? nil : app)
    }
}

extension ShareCompletion: WireCodable {
    /// The most returned items a completion carries.
    public static let maximumReturnedItems = 1024

    /// `{completed, activityType, returnedItems, message, errorName, error}` (org.ferry.Sharing1).
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "completed": .bool(completed), "activityType": .string(activityType?.rawValue ?? ""),
            "returnedItems": .array(returnedItems.map { item in .dictionary(item.mapValues { .string($0) }) }),
        ]
        if let message { out["message"] = .string(message) }
        if let errorName { out["errorName"] = .string(errorName) }
        if let error { out["error"] = .string(error) }
        return out
    }

    /// Reads a completion; `completed` required, `activityType` "" or absent is none,
    /// `returnedItems` string values only.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, `.tooLarge` past
    ///   ``maximumReturnedItems``.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let type = try wire.string("activityType") ?? ""
        self.init(completed: try wire.required("completed", wire.bool),
                  activityType: type.isEmpty ? nil : ActivityType(rawValue: type),
                  returnedItems: try Self.returnedItems(wire),
                  message: try wire.string("message"), errorName: try wire.string("errorName"), error: try wire.string("error"))
    }

    /// `returnedItems`: `aa{sv}` whose values are all strings.
    static func returnedItems(_ wire: WireReader) throws -> [[String: String]] {
        guard let items = try wire.dictionaries("returnedItems") else { return [] }
        guard items.count <= maximumReturnedItems else {
            throw FerryModelError(.tooLarge, "\(items.count) returned items; at most \(maximumReturnedItems)", keyPath: "returnedItems")
        }
        return try items.map { item in
            try item.entries.mapValues { value in
                guard case .string(let text) = value else {
                    throw FerryModelError.invalid("returned items carry strings only, found \(value.signature)", at: item.path)
                }
                return text
            }
        }
    }
}

extension ActivityItemsConfiguration.ItemMetadata: WireCodable {
    /// `{title, messageBody}`, each when given.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [:]
        if let title { out["title"] = .string(title) }
        if let messageBody { out["messageBody"] = .string(messageBody) }
        return out
    }

    /// Reads `{title, messageBody}`, both optional.
    /// - Throws: `FerryModelError` `.invalidArgument` for a value that is not a string.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        self.init(title: try wire.string("title"), messageBody: try wire.string("messageBody"))
    }
}

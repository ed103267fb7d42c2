import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A pasteboard of the Ferry broker, mirroring `UIPasteboard`: the general one or a named one.
///
/// A value is cheap: it names a pasteboard and the client that talks to it. Metadata
/// (``items``, ``hasStrings``, ``detectPatterns(_:)``) is not a paste; reading content
/// (``string``, ``data(forType:item:)``, ``read(item:type:userAction:preferFD:changeCount:)``) is,
/// and the broker logs and policy-checks it.
///
/// D-Bus: `org.ferry.Pasteboard1` at `/org/ferry/Pasteboard/<name>`.
public struct Pasteboard: Sendable {
    static let interface: InterfaceName = "org.ferry.Pasteboard1"
    /// `Read`, checked once (a paste's call names it).
    static let readMember: MemberName = "Read"
    static let generalPath: ObjectPath = "/org/ferry/Pasteboard/general"

    enum Source: Sendable {
        case client(FerryClient)
        case shared
    }

    /// The general pasteboard on ``FerryClient/shared`` (connected on first use).
    public static var general: Pasteboard {
        Pasteboard(source: .shared, name: PasteboardName.general, path: generalPath)
    }

    let source: Source
    /// The pasteboard's name (`general`, or a named pasteboard's name).
    public let name: String
    /// The pasteboard's object path on the broker.
    public let path: ObjectPath

    init(source: Source, name: String, path: ObjectPath) {
        self.source = source
        self.name = name
        self.path = path
    }

    /// The client this pasteboard talks through (connecting the shared one when needed).
    public var client: FerryClient {
        get async throws(FerryError) {
            switch source {
            case .client(let client): client
            case .shared: try await FerryClient.shared
            }
        }
    }

    /// The change count: bumped by every write, clear, restore and expiry; never goes back.
    ///
    /// D-Bus: the `ChangeCount` property.
    public var changeCount: UInt64 {
        get async throws(FerryError) {
            let client = try await client
            return try await FerryError.bridging {
                let reply = try await client.callHot(
                    path: path, interface: "org.freedesktop.DBus.Properties",
                    member: "Get", body: [.string(Self.interface.rawValue), .string("ChangeCount")], timeout: .seconds(30))
                return try (reply.first?.unwrappingVariants ?? .uint64(0)).get(UInt64.self)
            }
        }
    }

    /// The current items' metadata (types, sizes, names). Not a paste.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Items`.
    public var items: [PasteboardItem] {
        get async throws(FerryError) {
            let reply = try await call("Items")
            guard let value = reply.first else { return [] }
            return try Self.items(from: value)
        }
    }

    /// How many items the pasteboard holds. Not a paste.
    public var numberOfItems: Int {
        get async throws(FerryError) { try await items.count }
    }

    /// Whether some item has a plain-text representation. Not a paste.
    public var hasStrings: Bool { get async throws(FerryError) { try await hasItem(conformingTo: .plainText) } }
    /// Whether some item has a URL representation. Not a paste.
    public var hasURLs: Bool { get async throws(FerryError) { try await hasItem(conformingTo: .url) } }
    /// Whether some item has an image representation. Not a paste.
    public var hasImages: Bool { get async throws(FerryError) { try await hasItem(conformingTo: .image) } }

    /// Whether some item has a representation conforming to `type`. Not a paste.
    public func hasItem(conformingTo type: ContentType) async throws(FerryError) -> Bool {
        try await items.contains { $0.metadata.contentTypes.contains { $0.conforms(to: type) } }
    }

    /// Calls a `org.ferry.Pasteboard1` method on this pasteboard, over the direct connection when
    /// the client has one.
    func call(_ member: MemberName, _ body: [DBusValue] = [], timeout: Duration = .seconds(30))
        async throws(FerryError) -> [DBusValue] {
        let client = try await client
        return try await FerryError.bridging {
            try await client.callHot(path: path, interface: Self.interface, member: member, body: body, timeout: timeout)
        }
    }

    /// Items from an `aa{sv}` value.
    static func items(from value: DBusValue) throws(FerryError) -> [PasteboardItem] {
        let dictionaries = try FerryError.bridgingSync { try WireBridge.dictionaries(value) }
        var items: [PasteboardItem] = []
        for dictionary in dictionaries { items.append(try PasteboardItem(dbus: dictionary)) }
        return items
    }
}

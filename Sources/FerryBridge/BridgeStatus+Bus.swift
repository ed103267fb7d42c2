import DBus
import Ferry
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension BridgeStatus {
    /// The bridge's well-known name on the session bus.
    package static let busName: BusName = "org.ferry.Bridge"
    /// The object serving ``interfaceName``.
    package static let objectPath: ObjectPath = "/org/ferry/Bridge"
    /// The interface.
    package static let interfaceName: InterfaceName = "org.ferry.Bridge1"

    /// The status as `org.ferry.Bridge1.Status` answers it (an `a{sv}`).
    package var dictionary: VariantDictionary {
        [
            "protocol": .string(Self.printable(protocolName)),
            "display": .string(Self.printable(display)),
            "clipboardManager": .boolean(isClipboardManager),
            "clipboard": Self.dictionary(clipboard).dbusValue,
            "primary": Self.dictionary(primary).dbusValue,
            "budgets": ([
                "bytesPerType": .uint64(budgets.bytesPerType),
                "bytesPerSelection": .uint64(budgets.bytesPerSelection),
                "idleTimeoutMilliseconds": .uint64(UInt64(DescriptorPump.milliseconds(budgets.idleTimeout))),
                "maximumTypes": .uint32(UInt32(clamping: budgets.maximumTypes)),
            ] as VariantDictionary).dbusValue,
        ]
    }

    /// Reads what `org.ferry.Bridge1.Status` answered.
    /// - Throws: `DBusError` `InvalidArgs` naming a missing or mistyped key.
    package init(dictionary: VariantDictionary) throws {
        let budgets: VariantDictionary = try Self.nested(dictionary, "budgets")
        self.init(protocolName: try dictionary.value(forKey: "protocol"), display: try dictionary.value(forKey: "display"),
                  isClipboardManager: try dictionary.value(forKey: "clipboardManager"),
                  clipboard: try Self.selection(try Self.nested(dictionary, "clipboard")),
                  primary: try Self.selection(try Self.nested(dictionary, "primary")),
                  budgets: BridgeBudgets(
                    bytesPerType: try budgets.value(forKey: "bytesPerType"),
                    bytesPerSelection: try budgets.value(forKey: "bytesPerSelection"),
                    idleTimeout: .milliseconds(try budgets.value(forKey: "idleTimeoutMilliseconds", as: UInt64.self)),
                    maximumTypes: Int(try budgets.value(forKey: "maximumTypes", as: UInt32.self))))
    }

    /// Asks the running bridge on `connection`'s bus for its status.
    /// - Returns: nil when no bridge runs (nobody owns `org.ferry.Bridge`).
    /// - Throws: `DBusError` from the call, or a malformed reply.
    package static func fetch(over connection: Connection) async throws -> BridgeStatus? {
        guard try await connection.owner(of: busName) != nil else { return nil }
        let reply = try await connection.call(destination: busName, path: objectPath, interface: interfaceName,
                                              member: "Status", body: [], timeout: .seconds(10))
        guard let first = reply.first else { throw DBusError(.invalidArgs, "Status answered nothing") }
        return try BridgeStatus(dictionary: try VariantDictionary(dbusValue: first))
    }

    /// Asks the running bridge on `client`'s bus for its status (a tool on the client library,
    /// `ferry bridge status`, needs no D-Bus connection of its own).
    /// - Returns: nil when no bridge runs (nobody owns `org.ferry.Bridge`).
    /// - Throws: `DBusError` from the call, or a malformed reply.
    public static func fetch(through client: FerryClient) async throws -> BridgeStatus? {
        try await fetch(over: client.connection)
    }

    private static func dictionary(_ selection: Selection) -> VariantDictionary {
        var out: VariantDictionary = [
            "owner": .string(selection.owner.rawValue),
            "types": .array(of: .string, selection.offeredTypes.map { .string(printable($0)) }),
        ]
        if let last = selection.lastImport { out["lastImport"] = dictionary(last).dbusValue }
        if let last = selection.lastExport { out["lastExport"] = dictionary(last).dbusValue }
        return out
    }

    private static func dictionary(_ transfer: Transfer) -> VariantDictionary {
        ["time": .int64(Int64(transfer.time.timeIntervalSince1970 * 1_000_000)), "changeCount": .uint64(transfer.changeCount),
         "complete": .boolean(transfer.isComplete), "sensitive": .boolean(transfer.isSensitive)]
    }

    private static func selection(_ dictionary: VariantDictionary) throws -> Selection {
        var selection = Selection()
        selection.owner = Owner(rawValue: try dictionary.value(forKey: "owner")) ?? .none
        selection.offeredTypes = try dictionary.value(forKey: "types")
        if dictionary["lastImport"] != nil { selection.lastImport = try transfer(try nested(dictionary, "lastImport")) }
        if dictionary["lastExport"] != nil { selection.lastExport = try transfer(try nested(dictionary, "lastExport")) }
        return selection
    }

    private static func transfer(_ dictionary: VariantDictionary) throws -> Transfer {
        Transfer(time: Date(timeIntervalSince1970: Double(try dictionary.value(forKey: "time", as: Int64.self)) / 1_000_000),
                 changeCount: try dictionary.value(forKey: "changeCount"), isComplete: try dictionary.value(forKey: "complete"),
                 isSensitive: try dictionary.value(forKey: "sensitive"))
    }

    private static func nested(_ dictionary: VariantDictionary, _ key: String) throws -> VariantDictionary {
        guard let value = dictionary[key] else { throw DBusError(.invalidArgs, "missing key '\(key)'") }
        return try VariantDictionary(dbusValue: value)
    }

    /// A D-Bus string cannot hold NUL.
    static func printable(_ text: String) -> String { String(text.unicodeScalars.filter { $0 != "\0" }) }
}

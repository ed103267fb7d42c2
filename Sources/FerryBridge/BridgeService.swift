import DBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The bridge's face on the session bus: `org.ferry.Bridge1` at `/org/ferry/Bridge`, under the
/// well-known name `org.ferry.Bridge`, for callers of the bridge's own uid only.
package enum BridgeService {
    /// The interface's version (its `Version` property).
    package static let version: UInt32 = 1
    static let permissionDenied: ErrorName = "org.ferry.Error.PermissionDenied"

    /// Exports the object on `connection` and takes the name.
    /// - Parameter status: what `Status` answers.
    /// - Throws: `BridgeError` `.unavailable` when another bridge holds the name (one per
    ///   session); a `DBusError` from the bus.
    package static func publish(on connection: Connection, status: @escaping @Sendable () async -> BridgeStatus) async throws {
        let uid = getuid()
        let check: @Sendable (MethodCall) async throws -> Void = { call in
            let credentials = try await call.connection.credentials(of: call.sender)
            guard credentials.uid == uid else {
                throw DBusError(permissionDenied, "only uid \(uid) may ask this bridge")
            }
        }
        connection.restrictStandardInterfaces(StandardAccess(known: { _ in false }, resolve: check))
        try connection.export(Interface(BridgeStatus.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(version) })
            Method("Status", in: [:], out: ["status": "a{sv}"]) { call in
                try await check(call)
                return [await status().dictionary.dbusValue]
            }
        }, at: BridgeStatus.objectPath)
        let reply = try await connection.requestName(BridgeStatus.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw BridgeError(.unavailable, "another ferry-bridge owns \(BridgeStatus.busName.rawValue) on this bus")
        }
    }
}

import DBus
import FerryBus
import FerryModel

extension FerryClient {
    /// The type declarations of the apps that registered with the running broker, nil when no
    /// broker runs. Asking does not start one: the call goes to the broker's unique name.
    ///
    /// Add them to a database with `TypeDatabase.register(_:)` to resolve app types as the
    /// broker does.
    /// - Parameter timeout: how long to wait for the broker's answer.
    /// - Throws: `FerryError` `.bus` when the bus or the broker does not answer in time,
    ///   `.invalidArgument` for a malformed answer (naming the entry and key).
    ///
    /// D-Bus: `org.ferry.Broker1.TypeDeclarations`.
    public func appTypeDeclarations(timeout: Duration = .seconds(30)) async throws(FerryError) -> AppTypeDeclarations? {
        guard let owner = try await brokerOwner() else { return nil }
        let reply = try await FerryError.bridging {
            try await connection.call(destination: try BusName(owner), path: Self.brokerPath,
                                      interface: Self.brokerInterface, member: "TypeDeclarations", timeout: timeout)
        }
        guard case .array(_, let entries)? = reply.first else {
            throw FerryError(.invalidArgument, "the broker's TypeDeclarations answered without a list of declarations")
        }
        var declarations = AppTypeDeclarations()
        for (index, entry) in entries.enumerated() {
            do {
                let keyPath = "declarations[\(index)]"
                let wire = try [String: WireValue](dbusValue: entry, keyPath: keyPath)
                let declaration = try TypeDeclaration(dbusValue: entry, keyPath: keyPath)
                if wire["exported"]?.boolValue ?? false {
                    declarations.exported.append(declaration)
                } else {
                    declarations.imported.append(declaration)
                }
            } catch {
                throw FerryError(.invalidArgument, "the broker sent a malformed type declaration: \(FerryError.converting(error).message)")
            }
        }
        return declarations
    }
}

/// Who is behind a bus connection, as the bus daemon established it when the peer connected.
///
/// Use it with `MethodCall.sender` to decide whether to serve a caller; never trust an identity
/// a caller merely claims in its arguments.
public struct Credentials: Sendable, Hashable {
    /// The peer's bus name the credentials are for.
    public var name: BusName
    /// The Unix user id of the peer process.
    public var uid: UInt32
    /// The process id, when the bus knows it.
    public var pid: UInt32?
    /// The supplementary group ids, when the bus reports them.
    public var groups: [UInt32]?
    /// The security label (SELinux/AppArmor context), when the bus reports one.
    public var securityLabel: [UInt8]?
}

extension Connection {
    /// The credentials of the connection that owns `name` (usually a caller's unique name).
    ///
    /// D-Bus: `org.freedesktop.DBus.GetConnectionCredentials`, falling back to
    /// `GetConnectionUnixUser` and `GetConnectionUnixProcessID` on buses without it.
    /// - Throws: `org.freedesktop.DBus.Error.NameHasNoOwner` when nobody owns `name`.
    public func credentials(of name: BusName) async throws -> Credentials {
        do {
            let reply = try await busCall("GetConnectionCredentials", [.string(name.rawValue)])
            guard case .dictionary(_, _, let entries)? = reply.first else {
                throw DBusError(.invalidArgs, "unexpected GetConnectionCredentials reply")
            }
            var credentials = Credentials(name: name, uid: 0)
            var sawUID = false
            for entry in entries {
                guard case .string(let key) = entry.key else { continue }
                let value = entry.value.unwrappingVariants
                switch (key, value) {
                case ("UnixUserID", .uint32(let uid)):
                    credentials.uid = uid
                    sawUID = true
                case ("ProcessID", .uint32(let pid)):
                    credentials.pid = pid
                case ("UnixGroupIDs", _):
                    credentials.groups = try? value.get([UInt32].self)
                case ("LinuxSecurityLabel", .bytes(let label)):
                    credentials.securityLabel = label.last == 0 ? Array(label.dropLast()) : label
                default:
                    break
                }
            }
            guard sawUID else { throw DBusError(.failed, "the bus did not report a uid for \(name)") }
            return credentials
        } catch let error as DBusError where error.name == .unknownMethod {
            return try await legacyCredentials(of: name)
        }
    }

    private func legacyCredentials(of name: BusName) async throws -> Credentials {
        let user = try await busCall("GetConnectionUnixUser", [.string(name.rawValue)])
        guard case .uint32(let uid)? = user.first else {
            throw DBusError(.invalidArgs, "unexpected GetConnectionUnixUser reply")
        }
        var pid: UInt32?
        if case .uint32(let value)? = try? await busCall("GetConnectionUnixProcessID", [.string(name.rawValue)]).first {
            pid = value
        }
        return Credentials(name: name, uid: uid, pid: pid)
    }
}

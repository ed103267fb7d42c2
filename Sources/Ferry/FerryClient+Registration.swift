import DBus
import FerryModel
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FerryClient {
    /// Registers this connection as app `appID`, so it can promise representations and the
    /// broker knows who it is. Exports `org.ferry.Client1` at ``clientPath`` first, so the broker
    /// can call back as soon as the registration exists, and installs the exit hook of
    /// ``flushOnExit()`` so a normal exit hands promised data to the broker.
    /// - Parameters:
    ///   - appID: the app id; must equal the manifest's `CFBundleIdentifier`.
    ///   - manifest: the app's Info.plist bytes (XML or binary), at most 1 MiB.
    /// - Throws: `FerryError`: `.invalidArgument` (a malformed manifest, another app id on this
    ///   connection), `.permissionDenied` (the app id is held by another live connection),
    ///   `.tooLarge`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Broker1.RegisterApp`.
    ///
    /// When the broker offers direct connections, the client opens its own right after (without
    /// waiting for it), so that the broker's calls to the app — promised data, a drag's
    /// proposals — go over it from the start (docs/direct-connections.md).
    ///
    /// A broker that starts later (a restart, `ferryd --replace`) knows nothing of the app: the
    /// client registers again with it, by itself. Promises made to the old broker are gone with
    /// it (it marked them unavailable).
    public func register(appID: String, manifest: [UInt8]) async throws(FerryError) {
        try await exportClientObject()
        try await sendRegistration(appID: appID, manifest: manifest)
        state.withLock { s in
            s.appID = appID
            s.manifest = manifest
        }
        flushOnExit()
        // The broker calls an app over its direct connection once there is one (promised data, a
        // drag's proposals): open it now, without waiting, rather than at the first hot call.
        let (direct, bus) = (self.direct, connection)
        Task { _ = await direct.connection(over: bus) }
    }

    /// Sends `RegisterApp`, with the option `scenes=true` when an ``Application`` is registered
    /// through this client (so a broker that restarted reconnects its scenes).
    private func sendRegistration(appID: String, manifest: [UInt8]) async throws(FerryError) {
        var options: [String: DBusValue] = [:]
        if Application.of(self) != nil { options["scenes"] = .boolean(true) }
        _ = try await callBroker("RegisterApp", [.string(appID), .bytes(manifest), .objectPath(Self.clientPath),
                                                 options.dbusValue])
    }

    /// Registers as a command-line tool: a generated manifest with app id `org.ferry.cli.<pid>`
    /// and name `ferry`, so a `--lazy` copy can promise data.
    /// - Throws: what ``register(appID:manifest:)`` throws.
    public func registerCommandLineTool() async throws(FerryError) {
        let appID = "org.ferry.cli.\(getpid())"
        try await register(appID: appID, manifest: Self.commandLineManifest(appID: appID))
    }

    /// A minimal XML property list naming `appID` and the name `ferry`.
    static func commandLineManifest(appID: String) -> [UInt8] {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
              <key>CFBundleIdentifier</key>
              <string>\(appID)</string>
              <key>CFBundleName</key>
              <string>ferry</string>
            </dict>
            </plist>

            """
        return Array(xml.utf8)
    }

    /// Exports `org.ferry.Client1` once, with the watch that keeps the broker's owner known.
    func exportClientObject() async throws(FerryError) {
        guard state.withLock({ s in defer { s.exported = true }; return !s.exported }) else { return }
        do {
            // Writing to a pipe whose reader left must fail with EPIPE, not kill the process.
            signal(SIGPIPE, SIG_IGN)
            let changes = try await connection.nameOwnerChanges(for: Self.brokerName)
            let owner = try await connection.owner(of: Self.brokerName)
            let watch = Task { [weak self] in
                do {
                    for try await change in changes {
                        guard let self else { break }
                        // The drags of the broker that went away ended with it.
                        await Application.of(self)?.forgetDrags()
                        await Application.of(self)?.forgetShares()
                        let registration = self.state.withLock { s -> (String, [UInt8])? in
                            s.brokerOwner = change.newOwner
                            guard change.newOwner != nil, let appID = s.appID, let manifest = s.manifest else { return nil }
                            return (appID, manifest)
                        }
                        // A new broker: this app is registered with nobody now.
                        if let (appID, manifest) = registration {
                            let application = Application.of(self)
                            let shown = Set(application?.connectedScenes.map(\.persistentIdentifier) ?? [])
                            try? await self.sendRegistration(appID: appID, manifest: manifest)
                            await application?.reregisterActivities()
                            await application?.forgetScenesUnknownToBroker(among: shown)
                        }
                    }
                } catch {}
            }
            state.withLock { s in
                s.brokerOwner = owner
                s.ownerWatch = watch
            }
            try connection.export(ClientObject.interface(for: self), at: Self.clientPath)
        } catch {
            state.withLock { $0.exported = false }
            throw FerryError.converting(error)
        }
    }

    /// Whether `sender` is the current owner of `org.ferry.Broker` (asking the bus again when the
    /// cached owner differs, in case the change signal has not arrived yet).
    func isBroker(_ sender: BusName) async -> Bool {
        if state.withLock({ $0.brokerOwner }) == sender { return true }
        guard let owner = try? await connection.owner(of: Self.brokerName) else { return false }
        state.withLock { $0.brokerOwner = owner }
        return owner == sender
    }
}

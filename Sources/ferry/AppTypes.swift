import Ferry
import FerryModel
import Synchronization

/// The types registered apps declare, added to this process's type database before a command
/// reads a type argument, so that `ferry type conforms org.ferry.notes.note public.plain-text`
/// and `ferry copy -t org.ferry.notes.note` answer as the broker does.
///
/// The broker is asked only when a type argument is not known to the machine — an identifier
/// nothing declares here, or a tag only a dynamic type stands for — so commands about the
/// system's types never touch the bus. Only a broker that is already running is asked (its unique name, so no D-Bus activation):
/// a broker started just for the question would have no apps registered and nothing to add.
/// Without a bus or a broker the system's types are used, at once and silently. A broker that
/// does not answer within ``timeout``, or answers something malformed, costs one warning line on
/// standard error; the command then goes on with the system's types.
enum AppTypes {
    /// How long a command waits for the broker's declarations.
    static let timeout: Duration = .milliseconds(500)
    /// Whether ``load(bus:)`` already ran in this process.
    private static let loaded = Mutex(false)

    /// `resolve()` as the machine answers it; when that fails or gives a dynamic type, the
    /// running broker's app types are added (``load(bus:)``) and `resolve()` answers again.
    /// - Throws: what the second `resolve()` throws.
    static func resolving<T>(bus address: String?, _ resolve: () throws -> T, isDynamic: (T) -> Bool) async throws -> T {
        if let local = try? resolve(), !isDynamic(local) { return local }
        await load(bus: address)
        return try resolve()
    }

    /// ``resolving(bus:_:isDynamic:)`` for one content type.
    static func resolving(bus address: String?, _ resolve: () throws -> ContentType) async throws -> ContentType {
        try await resolving(bus: address, resolve, isDynamic: \.isDynamic)
    }

    /// Adds the running broker's app type declarations to `TypeDatabase.shared` (once a process).
    /// - Parameter address: the `--bus` address, nil for the session bus.
    static func load(bus address: String?) async {
        if let address, address.isEmpty { return }  // the command itself reports the bad --bus
        guard loaded.withLock({ loaded in defer { loaded = true }; return !loaded }) else { return }
        guard let client = try? await FerryClient.connect(address: address) else { return }
        let answer: Result<AppTypeDeclarations?, FerryError>
        do { answer = .success(try await client.appTypeDeclarations(timeout: timeout)) } catch { answer = .failure(error) }
        await client.close()
        let declarations: AppTypeDeclarations?
        switch answer {
        case .success(let answered): declarations = answered
        case .failure(let error) where error.dbusErrorName == "org.freedesktop.DBus.Error.UnknownMethod":
            return  // a broker older than Broker1 Version 6 does not list them
        case .failure(let error):
            let why = error.dbusErrorName == "org.freedesktop.DBus.Error.NoReply"
                ? "the broker did not answer within \(Int(timeout / .milliseconds(1))) ms" : error.message
            printError("warning: the broker's app types are not used (\(why)); using the system's types")
            return
        }
        guard let declarations, !declarations.isEmpty else { return }
        do {
            try TypeDatabase.shared.register(declarations)
        } catch {
            printError("warning: the broker's app types are not used (\(error)); using the system's types")
        }
    }
}

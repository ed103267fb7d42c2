import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `--bus ADDRESS`, on every command that talks to the broker.
struct BusOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The D-Bus address to use (default: the session bus, $DBUS_SESSION_BUS_ADDRESS).",
                                            valueName: "address"))
    var bus: String?

    /// Connects to the bus (the broker is started by D-Bus activation on the first call if needed).
    func connect() async throws -> FerryClient { try await Self.connect(bus) }

    /// Connects to the bus at `address`, or the session bus.
    static func connect(_ address: String?) async throws -> FerryClient {
        if let address, address.isEmpty { throw CLIFailure(.usage, "--bus needs an address") }
        return try await FerryClient.connect(address: address)
    }
}

/// `--pasteboard NAME`.
struct PasteboardOption: ParsableArguments {
    @Option(name: [.customShort("p"), .customLong("pasteboard")],
            help: ArgumentHelp("The pasteboard: general (the default) or a named one, created on first use.",
                               valueName: "name"))
    var name: String?

    /// The pasteboard's name.
    var pasteboard: String { name ?? PasteboardName.general }

    /// Checks the name before anything touches the bus.
    /// - Throws: `FerryModelError` `.invalidArgument` (exit status 64).
    func check() throws { try PasteboardName.validate(pasteboard) }

    /// The pasteboard on `client`.
    func resolve(on client: FerryClient) async throws -> Pasteboard {
        pasteboard == PasteboardName.general ? client.general : try await client.pasteboard(named: pasteboard)
    }
}

/// `--pasteboard NAME` on the commands that read, clear or watch: they never create a pasteboard,
/// so a named one that does not exist is `NotFound` (exit status 2).
struct ExistingPasteboardOption: ParsableArguments {
    @Option(name: [.customShort("p"), .customLong("pasteboard")],
            help: ArgumentHelp("The pasteboard: general (the default) or an existing named one.", valueName: "name"))
    var name: String?

    /// The pasteboard's name.
    var pasteboard: String { name ?? PasteboardName.general }

    /// Checks the name before anything touches the bus.
    /// - Throws: `FerryModelError` `.invalidArgument` (exit status 64).
    func check() throws { try PasteboardName.validate(pasteboard) }

    /// The pasteboard on `client`, which must exist.
    /// - Throws: `CLIFailure` (status 2) for a named pasteboard that does not exist.
    func resolve(on client: FerryClient) async throws -> Pasteboard {
        try await Self.existing(pasteboard, on: client)
    }

    /// The pasteboard `name` on `client`, looked up without creating it.
    /// - Throws: `CLIFailure` (status 2) for a named pasteboard that does not exist.
    static func existing(_ name: String, on client: FerryClient) async throws -> Pasteboard {
        guard name != PasteboardName.general else { return client.general }
        let result: Result<Pasteboard, FerryError>
        do { result = .success(try await client.pasteboard(named: name, creating: false)) } catch { result = .failure(error) }
        switch result {
        case .success(let board): return board
        case .failure(let error) where error.code == .notFound: throw CLIFailure("no pasteboard named '\(name)'")
        case .failure(let error): throw error
        }
    }
}

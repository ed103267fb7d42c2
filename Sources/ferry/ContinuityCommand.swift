import ArgumentParser
import Ferry
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ferry continuity`: this device's place among the user's machines (Universal Clipboard and
/// Handoff), and pairing.
struct ContinuityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continuity",
        abstract: "Show and set up continuity with your other machines (pairing).",
        discussion: """
            Continuity shares the general pasteboard and Handoff between your machines \
            through an engine (nats-server) that ferryd reaches; see docs/continuity.md. ferryd \
            makes this device's identity itself; the engine's administrator adds its public \
            key ('ferry continuity status' shows it). Then, on your first device, 'ferry \
            continuity init' makes your key; on each other device 'ferry continuity join' \
            prints a code that you approve on a paired device with 'ferry continuity approve \
            CODE', after checking that both show the same number.
            """,
        subcommands: [ContinuityStatusCommand.self, ContinuityInitCommand.self, ContinuityJoinCommand.self,
                      ContinuityApproveCommand.self, ContinuityDevicesCommand.self, ContinuityRevokeCommand.self],
        defaultSubcommand: ContinuityStatusCommand.self)
}

/// `ferry continuity status` (the default).
struct ContinuityStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show this device's name, public key, engine and pairing state.",
        discussion: """
            The state is one of: off (ferryd runs without --continuity), waiting for the \
            engine (not connected yet: the engine is away, or does not list this device's \
            public key yet), unpaired (connected, without your key: run 'ferry continuity \
            init' on your first device, 'ferry continuity join' on the others), paired \
            (sharing). The public key (U…) is what the engine's configuration lists for this \
            device. Then the paired devices it knows ('ferry continuity devices' tells more) \
            and the pairing under way or last ended, if any.

            JSON keys: state (off, waiting, unpaired, paired), device, publicKey, engine \
            (strings, empty when off), devices (names), pairing (null, or an object with id, \
            role (join or approve), stage (waiting, confirm, confirmed, paired, failed), code, \
            peer, number and error (strings or null)).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Report: Encodable {
        var state: String
        var device: String
        var publicKey: String
        var engine: String
        var devices: [String]
        var pairing: PairingReport?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(state, forKey: .state)
            try c.encode(device, forKey: .device)
            try c.encode(publicKey, forKey: .publicKey)
            try c.encode(engine, forKey: .engine)
            try c.encode(devices, forKey: .devices)
            try c.encode(pairing, forKey: .pairing)
        }

        enum CodingKeys: String, CodingKey { case state, device, publicKey, engine, devices, pairing }
    }

    struct PairingReport: Encodable {
        var id: UInt32
        var role: String
        var stage: String
        var code: String?
        var peer: String?
        var number: String?
        var error: String?

        init(_ pairing: ContinuityPairing) {
            id = pairing.id
            role = pairing.role.rawValue
            stage = pairing.stage.rawValue
            code = pairing.code
            peer = pairing.peer
            number = pairing.number
            error = pairing.error.map { "\($0.code.rawValue): \($0.message)" }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(role, forKey: .role)
            try c.encode(stage, forKey: .stage)
            try c.encode(code, forKey: .code)
            try c.encode(peer, forKey: .peer)
            try c.encode(number, forKey: .number)
            try c.encode(error, forKey: .error)
        }

        enum CodingKeys: String, CodingKey { case id, role, stage, code, peer, number, error }
    }

    func run() async throws {
        let status = try await bus.connect().continuityStatus()
        if json {
            return try printJSON(Report(state: status.state.rawValue, device: status.device, publicKey: status.publicKey,
                                        engine: status.engine, devices: status.devices.map(\.name),
                                        pairing: status.pairing.map(PairingReport.init)))
        }
        var rows = [["state", Self.describe(status.state)]]
        if status.state != .off {
            rows += [["device", status.device], ["public key", status.publicKey], ["engine", status.engine]]
        }
        if !status.devices.isEmpty { rows.append(["devices", status.devices.map(\.name).joined(separator: ", ")]) }
        if let pairing = status.pairing {
            var line = "\(pairing.role == .join ? "join" : "approve") \(pairing.code ?? pairing.peer ?? ""): \(pairing.stage.rawValue)"
            if let error = pairing.error { line += " (\(error.message))" }
            rows.append(["pairing", line])
        }
        try writeOut(rows.map { row in
            let label = row[0] + ":"
            return label + String(repeating: " ", count: max(1, 12 - label.count)) + row[1] + "\n"
        }.joined())
    }

    static func describe(_ state: ContinuityStatus.State) -> String {
        switch state {
        case .off: "off"
        case .waiting: "waiting for the engine"
        case .unpaired: "unpaired"
        case .paired: "paired"
        }
    }
}

/// `ferry continuity init`.
struct ContinuityInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Make your key on your first device; sharing starts at once.",
        discussion: """
            Run it once, on the first device you set up: it writes your sealing key \
            (continuity.key, mode 0600, beside continuity.conf) and the device starts sharing \
            without a restart. It refuses on a device that has a key. Every other device gets \
            the same key by joining ('ferry continuity join'), never by a second init: two \
            keys would make two groups of devices that cannot read each other.
            """)

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try await bus.connect().initializeContinuity()
        try writeOut("Made your key; this device shares now. Add your other devices with 'ferry continuity join'.\n")
    }
}

/// `ferry continuity devices`.
struct ContinuityDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List your paired devices.",
        discussion: """
            One line per paired device this device knows (each records itself, sealed with \
            your key): its name, when it was paired and by which device ('-' for a key set up \
            by hand), and its public key. Nothing is printed on an unpaired device.

            JSON keys: devices (array of objects with device, publicKey, pairedAt (seconds \
            since 1970), pairedBy).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var device: String
        var publicKey: String
        var pairedAt: Double
        var pairedBy: String
    }

    struct Report: Encodable {
        var devices: [Entry]
    }

    func run() async throws {
        let devices = try await bus.connect().continuityStatus().devices
        if json {
            return try printJSON(Report(devices: devices.map {
                Entry(device: $0.name, publicKey: $0.publicKey, pairedAt: $0.pairedAt.timeIntervalSince1970, pairedBy: $0.pairedBy)
            }))
        }
        if devices.isEmpty { return }
        let rows = [["DEVICE", "PAIRED", "BY", "PUBLIC KEY"]]
            + devices.map { [$0.name, $0.pairedAt.formatted(.iso8601), $0.pairedBy.isEmpty ? "-" : $0.pairedBy, $0.publicKey] }
        try writeOut(formatTable(rows))
    }
}

/// `ferry continuity revoke NAME`.
struct ContinuityRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a device: make a new key for all your other devices.",
        discussion: """
            Makes a new key and sends it, sealed to each one's own long-term key, to every \
            other device 'ferry continuity devices' lists; they switch to it at once (one that \
            is offline switches when it comes back). The revoked device keeps only the old \
            key: what your devices copy from now on does not open for it, and what it sends \
            no longer opens for them. Also ask the engine's administrator to take its public \
            key out of the engine's configuration (docs/continuity.md). Prints the devices \
            that got the new key.

            Exit status 2 when no such device is recorded, 64 for this device itself.
            """)

    @ArgumentParser.Argument(help: ArgumentHelp("The device to revoke, as 'ferry continuity devices' lists it.", valueName: "name"))
    var name: String

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let rekeyed = try await bus.connect().revokeContinuityDevice(name)
        try writeOut("Revoked \(name); new key for: \(rekeyed.isEmpty ? "no other device" : rekeyed.joined(separator: ", ")) and this one.\n")
    }
}

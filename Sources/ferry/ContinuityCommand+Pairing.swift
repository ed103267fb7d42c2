import ArgumentParser
import Ferry
import FerryTerminal

/// `ferry continuity join`.
struct ContinuityJoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join your other devices: print a code to approve on one of them, and wait.",
        discussion: """
            Run it on a new device (continuity configured, its public key in the engine's \
            configuration, no key yet). It prints a code such as K7QF-29XM; type 'ferry \
            continuity approve K7QF-29XM' on a paired device within 2 minutes. Both devices \
            then show the same 6-digit number: answer y on both when they match. Only then \
            does the paired device send your key, sealed for this exchange; this device \
            writes it and starts sharing without a restart. A "no" on either side, or a \
            code that expires, ends it on both, and nothing is written.

            Exit status 4 when either user declined, 5 when the code expired, 3 when this \
            device is paired already or the exchange was refused.
            """)

    @Flag(name: .long, help: "Confirm the number without asking (for scripts; compare it yourself).")
    var yes = false

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let client = try await bus.connect()
        let (code, id) = try await client.joinContinuity()
        try writeOut("Type this code on a paired device ('ferry continuity approve CODE'):\n  \(code)\n")
        try await PairingFollower(client: client, id: id, yes: yes).follow()
    }
}

/// `ferry continuity approve CODE`.
struct ContinuityApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Approve a device that 'ferry continuity join' waits on, giving it your key.",
        discussion: """
            Run it on a paired device with the code the new device printed. Both devices \
            then show the same 6-digit number: answer y on both when they match; a number \
            that differs means someone is between them, answer n. Only after both said yes \
            is your key sent, sealed for this exchange.

            Exit status 2 when no device waits with that code (mistyped, expired or used), \
            4 when either user declined, 5 when the other device stopped answering, 3 when \
            this device is not paired or the exchange was refused.
            """)

    @ArgumentParser.Argument(help: ArgumentHelp("The code 'ferry continuity join' printed on the new device.", valueName: "code"))
    var code: String

    @Flag(name: .long, help: "Confirm the number without asking (for scripts; compare it yourself).")
    var yes = false

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let client = try await bus.connect()
        let id = try await client.approveContinuity(code: code)
        try await PairingFollower(client: client, id: id, yes: yes).follow()
    }
}

/// Follows a pairing by polling ferryd (no call waits on the network): shows the number, asks
/// the user, and ends with the pairing.
struct PairingFollower {
    let client: FerryClient
    let id: UInt32
    let yes: Bool

    func follow() async throws {
        var asked = false
        while true {
            guard let pairing = try await client.continuityStatus().pairing, pairing.id == id else {
                throw CLIFailure(.unavailable, "ferryd no longer knows this pairing (it restarted?)")
            }
            switch pairing.stage {
            case .waiting, .confirmed:
                break
            case .confirm where !asked:
                asked = true
                let number = pairing.number ?? "?"
                let peer = pairing.peer ?? "the other device"
                try writeOut("Number: \(number)\n")
                let accept: Bool
                if yes {
                    accept = true
                } else {
                    try writeOut("Does \(peer) show \(number) too? [y/N] ")
                    let answer = readLine(strippingNewline: true)?.lowercased() ?? ""
                    accept = answer == "y" || answer == "yes"
                }
                try await client.confirmContinuityPairing(id, accept: accept)
            case .confirm:
                break
            case .paired:
                try writeOut(pairing.role == .join ? "Paired with \(pairing.peer ?? "your devices"); this device shares now.\n"
                             : "\(pairing.peer ?? "The device") joined.\n")
                return
            case .failed:
                throw pairing.error ?? FerryError(.cancelled, "the pairing ended")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

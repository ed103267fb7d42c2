import ArgumentParser
import Ferry
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ferry policy`: answer the paste consent requests the broker holds.
struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "List and answer pastes waiting for your consent.",
        discussion: """
            An app that reads another app's content without a user action (a paste command, a \\
            drop) waits until you allow or deny it, as iOS 16 asks "Allow Paste?"; reading what \\
            the app wrote itself never asks. The broker denies a request nobody answers in time \\
            (30 s unless ferryd was started with --consent-timeout): the app's read fails. See \\
            docs/paste-policy.md for the rules in ~/.config/ferry/paste-policy.
            """,
        subcommands: [PolicyPendingCommand.self, PolicyAllowCommand.self, PolicyDenyCommand.self],
        defaultSubcommand: PolicyPendingCommand.self)
}

/// `ferry policy pending` (the default).
struct PolicyPendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending",
        abstract: "Print the pastes waiting for consent, oldest first.",
        discussion: """
            One line per request: its id, the reading app and its process name ('-' when \\
            unknown), the app whose content it reads ('-' for a command-line copy), the \\
            pasteboard, the types it would receive, and the seconds left before it is denied.

            JSON keys: requests (array of objects with id, readerApp, readerUniqueName, \\
            readerPID, readerProcess (string or null), sourceApp (string or null), pasteboard, \\
            types (array of identifiers), asked and expires (ISO 8601, UTC)).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var id: UInt64
        var readerApp: String
        var readerUniqueName: String
        var readerPID: Int32
        var readerProcess: String?
        var sourceApp: String?
        var pasteboard: String
        var types: [String]
        var asked: String
        var expires: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(readerApp, forKey: .readerApp)
            try c.encode(readerUniqueName, forKey: .readerUniqueName)
            try c.encode(readerPID, forKey: .readerPID)
            try c.encode(readerProcess, forKey: .readerProcess)
            try c.encode(sourceApp, forKey: .sourceApp)
            try c.encode(pasteboard, forKey: .pasteboard)
            try c.encode(types, forKey: .types)
            try c.encode(asked, forKey: .asked)
            try c.encode(expires, forKey: .expires)
        }

        enum CodingKeys: String, CodingKey {
            case id, readerApp, readerUniqueName, readerPID, readerProcess, sourceApp, pasteboard, types, asked, expires
        }
    }

    struct Report: Encodable {
        var requests: [Entry]
    }

    func run() async throws {
        let requests = try await bus.connect().pendingPasteConsents()
        if json {
            return try printJSON(Report(requests: requests.map {
                Entry(id: $0.id, readerApp: $0.readerApp, readerUniqueName: $0.readerUniqueName, readerPID: $0.readerPID,
                      readerProcess: $0.readerProcess, sourceApp: $0.sourceApp, pasteboard: $0.pasteboard,
                      types: $0.types, asked: timestamp($0.asked), expires: timestamp($0.expires))
            }))
        }
        let now = Date()
        var text = ""
        for request in requests {
            let left = max(0, Int(request.expires.timeIntervalSince(now).rounded(.up)))
            let line = "\(request.id)  \(request.readerApp)  \(request.readerProcess ?? "-")  \(request.sourceApp ?? "-")  "
                + "\(request.pasteboard)  \(request.types.isEmpty ? "-" : request.types.joined(separator: ","))  \(left)s"
            text += line.printableLine() + "\n"
        }
        try writeOut(text)
    }
}

/// What `ferry policy allow` and `deny` share: the request's id and `--remember`.
struct PolicyAnswer: ParsableArguments {
    @Argument(help: ArgumentHelp("The request's id (from 'ferry policy pending').", valueName: "id"))
    var id: UInt64

    @Flag(name: .long, help: "Also write the decision into the paste policy file, so the app is not asked again.")
    var remember = false

    @OptionGroup var bus: BusOptions

    func answer(allow: Bool) async throws {
        do {
            try await bus.connect().answerPasteConsent(id, allow: allow, remember: remember)
        } catch let error as FerryError where error.code == .notFound {
            throw CLIFailure("no paste is waiting for consent with id \(id) (answered, timed out or withdrawn)")
        }
    }
}

/// `ferry policy allow ID [--remember]`.
struct PolicyAllowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow",
        abstract: "Let a paste waiting for consent go ahead.",
        discussion: """
            The app's read receives the content. With --remember the broker appends 'allow APP' \\
            to the paste policy file: the app's later reads are allowed without asking. An id \\
            that is not pending exits with status 2.
            """)

    @OptionGroup var answer: PolicyAnswer

    func run() async throws { try await answer.answer(allow: true) }
}

/// `ferry policy deny ID [--remember]`.
struct PolicyDenyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Refuse a paste waiting for consent.",
        discussion: """
            The app's read fails with org.ferry.Error.PermissionDenied. With --remember the \\
            broker appends 'deny APP' to the paste policy file: the app may not paste again, \\
            not even on a user action. An id that is not pending exits with status 2.
            """)

    @OptionGroup var answer: PolicyAnswer

    func run() async throws { try await answer.answer(allow: false) }
}

import ArgumentParser
import FerryBroker
import FerryContinuity
#if canImport(Glibc)
import Glibc
#endif

/// ferryd's continuity options (issue #22): where the engine is and who this device is. All or
/// none of URL, creds and key; off when none is given.
struct ContinuityOptions: ParsableArguments {
    @Option(name: .customLong("continuity"),
            help: ArgumentHelp("The continuity engine (nats-server), e.g. tls://host:4222; turns continuity on.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("This device's nkey seed file (mode 0600).", valueName: "file"))
    var creds: String?

    @Option(help: ArgumentHelp("The user's sealing key file: 64 hexadecimal digits, mode 0600, the same on every device.",
                               valueName: "file"))
    var continuityKey: String?

    @Option(help: ArgumentHelp("The CA that signed the engine's certificate (default: the system's).", valueName: "file"))
    var continuityCA: String?

    @Option(help: ArgumentHelp("This device's name on the engine (default: the host name).", valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("How long a Handoff advertisement of this device's current activity lives, in seconds (default 120); it is renewed after half of it.",
                               valueName: "seconds"))
    var handoffLifetime: Double?

    func validate() throws {
        let given = [url, creds, continuityKey].compactMap { $0 }
        guard given.isEmpty || given.count == 3 else {
            throw ValidationError("--continuity, --creds and --continuity-key go together")
        }
        if given.isEmpty, continuityCA != nil || device != nil {
            throw ValidationError("--continuity-ca and --device need --continuity")
        }
        if let lifetime = handoffLifetime, !(lifetime >= 1 && lifetime <= 86_400) {
            throw ValidationError("--handoff-lifetime \(lifetime): expected 1 to 86400 seconds")
        }
        if given.isEmpty, handoffLifetime != nil {
            throw ValidationError("--handoff-lifetime needs --continuity")
        }
        if let url, !(url.hasPrefix("tls://") || url.hasPrefix("nats://")) {
            throw ValidationError("--continuity \(url): expected tls://host:port")
        }
    }

    /// Whether continuity is on (`--continuity`, `--creds` and `--continuity-key` given).
    var isOn: Bool { url != nil && creds != nil && continuityKey != nil }

    /// The bridge, not yet started.
    /// - Throws: ``Broker/StartFailure`` naming what is wrong (a key or creds file, the address).
    func make(pasteboards: PasteboardService, scenes: SceneService, log: @escaping @Sendable (String) -> Void) throws -> Continuity {
        guard let url, let creds, let continuityKey else { throw Broker.StartFailure(message: "continuity: not configured") }
        let name = device ?? Self.hostName()
        var configuration = Continuity.Configuration(address: EngineAddress(url: url, seedFile: creds, caFile: continuityCA),
                                                     keyFile: continuityKey, device: name)
        if let lifetime = handoffLifetime { configuration.handoffLifetime = .milliseconds(Int64(lifetime * 1000)) }
        do {
            return try Continuity(configuration: configuration, pasteboards: pasteboards, scenes: scenes, log: log)
        } catch {
            throw Broker.StartFailure(message: "continuity: \(error)")
        }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }.prefix(48))
    }
}

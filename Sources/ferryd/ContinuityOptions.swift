import ArgumentParser
import FerryBroker
import FerryContinuity
import FerryModel
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// ferryd's continuity options (issue #22): where the engine is and who this device is, from the
/// command line and the config file (``ContinuityConfigFile``). The engine's URL turns it on;
/// the creds and key files default to `continuity.nk` and `continuity.key` beside the config
/// file (ferryd makes the creds; pairing writes the key).
struct ContinuityOptions: ParsableArguments {
    @Option(name: .customLong("continuity"),
            help: ArgumentHelp("The continuity engine (nats-server), e.g. tls://host:4222; turns continuity on.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("This device's nkey seed file (mode 0600; made when missing; default: continuity.nk beside the config file).",
                               valueName: "file"))
    var creds: String?

    @Option(help: ArgumentHelp("The user's sealing key file: 64 hexadecimal digits, mode 0600, the same on every device (written by 'ferry continuity init' or join; default: continuity.key beside the config file).",
                               valueName: "file"))
    var continuityKey: String?

    @Option(help: ArgumentHelp("The CA that signed the engine's certificate (default: the system's).", valueName: "file"))
    var continuityCA: String?

    @Option(help: ArgumentHelp("This device's name on the engine (default: the host name).", valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("How long a Handoff advertisement of this device's current activity lives, in seconds (default 120); it is renewed after half of it.",
                               valueName: "seconds"))
    var handoffLifetime: Double?

    @Option(help: ArgumentHelp("How long a pairing code from 'ferry continuity join' stays good, in seconds (default 120).",
                               valueName: "seconds"))
    var pairingLifetime: Double?

    @Option(help: ArgumentHelp("Named pasteboards shared like the general one, comma-separated (default: none); only a name listed on both devices crosses.",
                               valueName: "names"))
    var continuityPasteboards: String?

    @Option(help: ArgumentHelp("A continuity config file of key = value lines, the options above without dashes (default: $XDG_CONFIG_HOME/ferry/continuity.conf, read when it exists); the command line wins.",
                               valueName: "file"))
    var continuityConfig: String?

    /// Checks each value given on the command line; whether they go together is checked once
    /// the config file is read (``resolved(defaultConfigPath:)``).
    func validate() throws {
        if let problem = valueProblem { throw ValidationError(problem) }
    }

    /// What is wrong with a value, if anything.
    private var valueProblem: String? {
        if let lifetime = handoffLifetime, !(lifetime >= 1 && lifetime <= 86_400) {
            return "--handoff-lifetime \(lifetime): expected 1 to 86400 seconds"
        }
        if let lifetime = pairingLifetime, !(lifetime >= 1 && lifetime <= 600) {
            return "--pairing-lifetime \(lifetime): expected 1 to 600 seconds"
        }
        if let url, !(url.hasPrefix("tls://") || url.hasPrefix("nats://")) {
            return "--continuity \(url): expected tls://host:port"
        }
        if let continuityConfig, continuityConfig.isEmpty { return "--continuity-config must not be empty" }
        if let continuityPasteboards {
            do {
                _ = try Self.pasteboardNames(continuityPasteboards)
            } catch {
                return "--continuity-pasteboards \(continuityPasteboards): \(error)"
            }
        }
        return nil
    }

    /// The named pasteboards of a `--continuity-pasteboards` list.
    /// - Throws: a message naming the first name that cannot be shared.
    static func pasteboardNames(_ list: String) throws -> Set<String> {
        var names = Set<String>()
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(part.filter { $0 != " " && $0 != "\t" })
            guard !name.isEmpty else { throw ValidationError("an empty name in the list") }
            do {
                try PasteboardName.validate(name)
            } catch let error as FerryModelError {
                throw ValidationError(error.message)
            }
            guard name != PasteboardName.general else { throw ValidationError("the general pasteboard is always shared; list named ones") }
            guard !PasteboardName.isReserved(name) else {
                throw ValidationError("\(name) is one of the broker's own pasteboards (drags, shares), which never leave it")
            }
            names.insert(name)
        }
        return names
    }

    /// What is wrong with the options together, if anything.
    private var combinationProblem: String? {
        guard url == nil else { return nil }
        if creds != nil || continuityKey != nil { return "--creds and --continuity-key need --continuity" }
        if continuityCA != nil || device != nil { return "--continuity-ca and --device need --continuity" }
        if handoffLifetime != nil || pairingLifetime != nil { return "--handoff-lifetime and --pairing-lifetime need --continuity" }
        if continuityPasteboards != nil { return "--continuity-pasteboards needs --continuity" }
        return nil
    }

    /// These options with the config file's values under them: `--continuity-config`'s file
    /// (which must exist), else the default one when it exists.
    /// - Throws: ``Broker/StartFailure`` naming the file and line, or the options that do not go
    ///   together.
    func resolved(defaultConfigPath: String? = ContinuityConfigFile.defaultPath()) throws -> ContinuityOptions {
        var options = self
        var source = "the command line"
        let configPath = continuityConfig ?? defaultConfigPath
        if let path = continuityConfig ?? defaultConfigPath.flatMap({ ContinuityConfigFile.exists($0) ? $0 : nil }) {
            let file = try ContinuityConfigFile(path: path)
            options.url = url ?? file.values["continuity"]
            options.creds = creds ?? file.values["creds"]
            options.continuityKey = continuityKey ?? file.values["continuity-key"]
            options.continuityCA = continuityCA ?? file.values["continuity-ca"]
            options.device = device ?? file.values["device"]
            options.continuityPasteboards = continuityPasteboards ?? file.values["continuity-pasteboards"]
            if let lifetime = file.values["handoff-lifetime"], handoffLifetime == nil {
                guard let seconds = Double(lifetime) else {
                    throw Broker.StartFailure(message: "\(path): handoff-lifetime \(lifetime): expected a number of seconds")
                }
                options.handoffLifetime = seconds
            }
            if let lifetime = file.values["pairing-lifetime"], pairingLifetime == nil {
                guard let seconds = Double(lifetime) else {
                    throw Broker.StartFailure(message: "\(path): pairing-lifetime \(lifetime): expected a number of seconds")
                }
                options.pairingLifetime = seconds
            }
            source = "the command line and \(path)"
        }
        if let problem = options.valueProblem ?? options.combinationProblem {
            throw Broker.StartFailure(message: "continuity (from \(source)): \(problem)")
        }
        if options.url != nil, options.creds == nil || options.continuityKey == nil {
            // Beside the config file: the folder ferryd makes the creds in when they are missing.
            guard let configPath, let slash = configPath.lastIndex(of: "/") else {
                throw Broker.StartFailure(message: "continuity: --creds and --continuity-key have no default without "
                                          + "XDG_CONFIG_HOME or HOME; name both")
            }
            let folder = String(configPath[..<slash])
            options.creds = options.creds ?? folder + "/continuity.nk"
            options.continuityKey = options.continuityKey ?? folder + "/continuity.key"
        }
        return options
    }

    /// Whether continuity is on (`--continuity` given, here or in the config file).
    var isOn: Bool { url != nil }

    /// The bridge, not yet started.
    /// - Throws: ``Broker/StartFailure`` naming what is wrong (a key or creds file, the address).
    func make(pasteboards: PasteboardService, scenes: SceneService, logger: Logger) throws -> Continuity {
        guard let url, let creds, let continuityKey else { throw Broker.StartFailure(message: "continuity: not configured") }
        let name = device ?? Self.hostName()
        var configuration = Continuity.Configuration(address: EngineAddress(url: url, seedFile: creds, caFile: continuityCA),
                                                     keyFile: continuityKey, device: name)
        if let lifetime = handoffLifetime { configuration.handoffLifetime = .milliseconds(Int64(lifetime * 1000)) }
        if let lifetime = pairingLifetime { configuration.pairingLifetime = .milliseconds(Int64(lifetime * 1000)) }
        if let continuityPasteboards { configuration.pasteboards = try Self.pasteboardNames(continuityPasteboards) }
        do {
            return try Continuity(configuration: configuration, pasteboards: pasteboards, scenes: scenes, logger: logger)
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

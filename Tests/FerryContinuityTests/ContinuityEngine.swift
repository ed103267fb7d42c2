import FerryContinuity
import FerryTestSupport
import Foundation

/// A real `nats-server` for one test, on a free loopback port: JetStream in a temporary store
/// directory, TLS with a CA the test makes with `openssl`, and two accounts (ALICE with the
/// devices `laptop` and `desktop`, BOB with `phone`), each device an nkey user allowed to publish
/// only its own announcements (its general pasteboard's and its named ones') and its own replies.
/// A device whose seed its ferryd made joins the configuration with
/// ``addDevice(_:publicKey:account:)`` (nats-server reloads it on SIGHUP).
/// Killed by PID in ``stop()``.
final class ContinuityEngine: @unchecked Sendable {
    let directory: URL
    let storeDirectory: URL
    let port: Int
    var url: String { "tls://127.0.0.1:\(port)" }
    var caFile: String { directory.appendingPathComponent("ca.pem").path }
    /// Seed files by device.
    private(set) var seeds: [String: String] = [:]
    /// Public keys by device.
    private(set) var publicKeys: [String: String] = [:]
    /// Sealing key files by account.
    private(set) var keys: [String: String] = [:]
    private(set) var server: RunningProcess?
    /// The devices of each account in the server's configuration.
    private(set) var accounts = ContinuityEngine.initialAccounts

    static let initialAccounts = ["ALICE": ["laptop", "desktop"], "BOB": ["phone"]]

    init() async throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-continuity-\(getpid())-\(UUID().uuidString.prefix(8))")
        storeDirectory = directory.appendingPathComponent("jetstream")
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        port = try Self.freePort()
        try await makeCertificates()
        for (account, devices) in Self.initialAccounts {
            let keyFile = directory.appendingPathComponent("\(account).key").path
            try writeSecret(Seal.makeKeyText() + "\n", to: keyFile)
            keys[account] = keyFile
            for device in devices {
                let pair = NKey.makeUserSeed()
                let seedFile = directory.appendingPathComponent("\(device).nk").path
                try writeSecret(pair.seed + "\n", to: seedFile)
                seeds[device] = seedFile
                publicKeys[device] = pair.publicKey
            }
        }
        try await start()
    }

    func writeSecret(_ text: String, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw EngineSetupError("cannot write \(path)")
        }
    }

    /// A port nobody listens on now (the kernel's pick for port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw EngineSetupError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func makeCertificates() async throws {
        let dir = directory.path
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-subj", "/CN=Ferry test CA", "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr"],
            ["x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "\(dir)/san.ext", "-out", "\(dir)/server.pem"],
        ]
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(dir)/san.ext", atomically: true, encoding: .utf8)
        for step in steps {
            let result = try await ChildProcess.run("openssl", step)
            guard result.succeeded else { throw EngineSetupError("openssl \(step[0]): \(result.stderr)") }
        }
    }

    /// The server configuration: each device may publish its own announcement and activity
    /// advertisement, JetStream's API, chunk and activity requests to the others and replies; it
    /// may subscribe to its own chunk and activity subjects and its inboxes.
    var configuration: String {
        func users(_ devices: [String]) -> String {
            devices.map { device in
                """
                    { nkey: \(publicKeys[device]!), permissions: {
                        publish: { allow: ["$KV.ferry_pb.\(device)", "$KV.ferry_pb.\(device).>", "$KV.ferry_activity.\(device)",
                                           "$KV.ferry_devices.\(device)",
                                           "$KV.ferry_keys.*", "$JS.API.>", "ferry.dev.*.chunk", "ferry.dev.*.activity",
                                           "ferry.pair.*", "_INBOX.>"] }
                        subscribe: { allow: ["ferry.dev.\(device).chunk", "ferry.dev.\(device).activity", "_INBOX.>",
                                             "$KV.ferry_pb.>", "$KV.ferry_activity.>", "ferry.pair.*"] }
                        allow_responses: true } }
                """
            }.joined(separator: ",\n")
        }
        let accounts = self.accounts.keys.sorted().map { account in
            "  \(account): { jetstream: enabled, users: [\n\(users(self.accounts[account]!))\n  ] }"
        }.joined(separator: "\n")
        return """
            listen: 127.0.0.1:\(port)
            jetstream { store_dir: "\(storeDirectory.path)", max_memory_store: 64MB, max_file_store: 256MB }
            tls { cert_file: "\(directory.path)/server.pem", key_file: "\(directory.path)/server.key", ca_file: "\(caFile)" }
            max_payload: 1MB
            accounts {
            \(accounts)
            }

            """
    }

    /// nats-server's log (appended to across restarts): ``withDevices(_:_:)`` prints its end
    /// when a test throws, since the server says why it refused a client only there.
    var logFile: URL { directory.appendingPathComponent("nats.log") }

    /// The last `count` lines of ``logFile``.
    func logTail(_ count: Int = 40) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? "(no log)"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }

    /// Starts (or restarts) nats-server and waits until it accepts connections.
    func start() async throws {
        let config = directory.appendingPathComponent("nats.conf")
        try configuration.write(to: config, atomically: true, encoding: .utf8)
        let process = try RunningProcess(try ChildProcess.resolve("/usr/sbin/nats-server"),
                                         ["-c", config.path, "-l", logFile.path],
                                         environment: ProcessInfo.processInfo.environment)
        server = process
        let listening = await eventually { isListening() || !process.isRunning }
        guard process.isRunning else { throw EngineSetupError("nats-server exited") }
        guard listening else { throw EngineSetupError("nats-server did not listen on \(port)") }
    }

    /// Lists `device` with `publicKey` in `account` and has nats-server reload its
    /// configuration (SIGHUP to its PID), as an admin adds a new device.
    func addDevice(_ device: String, publicKey: String, account: String = "ALICE") throws {
        publicKeys[device] = publicKey
        accounts[account, default: []].append(device)
        try configuration.write(to: directory.appendingPathComponent("nats.conf"), atomically: true, encoding: .utf8)
        server?.send(SIGHUP)
    }

    /// Takes `device` out of the configuration and reloads, as an admin removes a device.
    func removeDevice(_ device: String) throws {
        for account in accounts.keys { accounts[account]?.removeAll { $0 == device } }
        try configuration.write(to: directory.appendingPathComponent("nats.conf"), atomically: true, encoding: .utf8)
        server?.send(SIGHUP)
    }

    /// ferryd's continuity arguments for a new device `name` whose creds and key files live in
    /// `folder` (neither exists yet: ferryd makes the creds, pairing writes the key).
    func newDeviceArguments(_ name: String, folder: URL) -> [String] {
        ["--continuity", url, "--continuity-ca", caFile, "--device", name,
         "--creds", folder.appendingPathComponent("continuity.nk").path,
         "--continuity-key", folder.appendingPathComponent("continuity.key").path]
    }

    func isListening() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Stops nats-server (by its PID); the store directory stays for a restart.
    func stopServer() async {
        guard let server else { return }
        server.terminate(grace: .seconds(3))
        _ = await server.waitForExit(timeout: .seconds(5))
        self.server = nil
    }

    /// Stops nats-server and removes everything.
    func stop() async {
        await stopServer()
        try? FileManager.default.removeItem(at: directory)
    }

    /// ferryd's continuity arguments for `device`.
    func arguments(for device: String) -> [String] {
        let account = accounts.first { $0.value.contains(device) }!.key
        return ["--continuity", url, "--creds", seeds[device]!, "--continuity-key", keys[account]!,
                "--continuity-ca", caFile, "--device", device]
    }

    /// An engine link as `device` (for a watcher or a forger in a test).
    func link(as device: String) throws -> EngineLink {
        try EngineLink(address: EngineAddress(url: url, seedFile: seeds[device]!, caFile: caFile), name: "test-\(device)")
    }

    /// Every file under the store directory contains none of `marker`'s bytes.
    func storeContains(_ marker: Data) -> Bool {
        guard let walker = FileManager.default.enumerator(at: storeDirectory, includingPropertiesForKeys: nil) else { return false }
        for case let file as URL in walker {
            if let data = try? Data(contentsOf: file), data.range(of: marker) != nil { return true }
        }
        return false
    }
}

/// One device: a private bus and a ferryd with continuity on.
final class Device: @unchecked Sendable {
    let name: String
    let bus: PrivateBus
    let stateDir: URL
    var daemon: ServiceProcess?

    /// Starts ferryd with `engine`'s arguments for `name` (or `arguments` instead) and `extra`,
    /// with `environment` added to the bus's.
    init(_ name: String, engine: ContinuityEngine, arguments: [String]? = nil, extra: [String] = [],
         environment: [String: String] = [:]) async throws {
        self.name = name
        bus = try PrivateBus()
        stateDir = engine.directory.appendingPathComponent("state-\(name)")
        try FileManager.default.createDirectory(at: stateDir, withIntermediateDirectories: true)
        daemon = try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                          ["--bus", bus.address, "--state-dir", stateDir.path]
                                              + (arguments ?? engine.arguments(for: name)) + extra,
                                          environment: bus.environment().merging(environment) { $1 })
    }

    /// Runs `ferry ARGS` on this device's bus.
    func ferry(_ arguments: String..., input: Data? = nil, timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ferry(arguments, input: input, timeout: timeout)
    }

    func ferry(_ arguments: [String], input: Data? = nil, timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ChildProcess.run(try BuiltProducts.executable("ferry"), arguments, environment: bus.environment(),
                                   standardInput: input, timeout: timeout)
    }

    func stop() {
        daemon?.stop()
        bus.stop()
    }
}

/// The test engine could not be set up.
struct EngineSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ContinuityEngine {
    /// A new engine and the devices `starts` make on it, in order, for `body`; afterwards (also
    /// when a start or `body` throws) every device made so far and the engine stop.
    static func withDevices(_ starts: [(ContinuityEngine) async throws -> Device],
                            _ body: (ContinuityEngine, [Device]) async throws -> Void) async throws {
        let engine = try await ContinuityEngine()
        var devices: [Device] = []
        do {
            for start in starts { devices.append(try await start(engine)) }
            try await body(engine, devices)
        } catch {
            print("nats-server's log, the last lines, after \(error):\n\(engine.logTail())")
            await offThePool { [devices] in for device in devices { device.stop() } }
            await engine.stop()
            throw error
        }
        await offThePool { [devices] in for device in devices { device.stop() } }
        await engine.stop()
    }

    /// ``withDevices(_:_:)`` with the two devices every suite starts from: a laptop and a desktop.
    static func withLaptopAndDesktop(_ body: (ContinuityEngine, Device, Device) async throws -> Void) async throws {
        try await withDevices([{ try await Device("laptop", engine: $0) }, { try await Device("desktop", engine: $0) }]) {
            try await body($0, $1[0], $1[1])
        }
    }
}

/// What a finished process wrote to its standard error `descriptor` (one read, up to 4 KiB: an
/// error message).
func errorText(of descriptor: Int32) -> String {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = read(descriptor, &buffer, buffer.count)
    return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
}

import BenchReport
import DBus
import Ferry
import FerryContinuity
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `make bench`'s continuity rows (issue #22), each beside its anchor on the same engine:
///
/// - C1: a 1 KiB paste of a remote item (Read, the chunk pulled from the other ferryd over the
///   engine, the pipe, FinishTransfer) against one libnats request-reply round trip of 1 KiB.
/// - C2: a 64 MiB remote paste's throughput against a raw chunked pull of 64 MiB (libnats
///   request-reply of 512 KiB chunks, the chunk size ferryd pulls with) on the same engine.
/// - C3: a copy on the laptop until the desktop's general pasteboard shows it as remote.
/// - H1, H2: Handoff (HandoffBench.swift).
///
/// It sets everything up itself on loopback: a test CA (openssl), nkeys, a nats-server with
/// JetStream and TLS, two private buses with a ferryd each (laptop, desktop); all stopped by PID.
/// As in a desktop session, there is an `XDG_RUNTIME_DIR` (its own, when none is set), so the
/// clients reach each ferryd over a direct connection, as `scripts/bench.sh` gives paste-bench.
@main
struct ContinuityBench {
    static func main() async {
        let quick = CommandLine.arguments.contains("--quick")
        let bin = Spawn.ferryFolder
        var stages: [BrokerStage] = []
        var server: pid_t = 0
        defer {
            for stage in stages { stage.stop() }
            if server > 0 { _ = Spawn.stop(server, grace: 3) }
        }
        do {
            let setup = try Setup()
            defer { setup.remove() }
            server = try setup.startServer()
            try setup.giveARuntimeDirectory()
            for device in ["laptop", "desktop"] {
                stages.append(try BrokerStage.start(ferryd: "\(bin)/ferryd", arguments: setup.arguments(for: device)))
            }
            let laptop = try await FerryClient.connect(address: stages[0].address)
            let desktop = try await FerryClient.connect(address: stages[1].address)
            try await c1(setup: setup, laptop: laptop, desktop: desktop, count: quick ? 200 : 1000)
            try await c2(setup: setup, laptop: laptop, desktop: desktop, runs: quick ? 3 : 7)
            try await c3(laptop: laptop, desktop: desktop, count: quick ? 50 : 200)
            try await HandoffBench.run(setup: setup, laptop: laptop, desktop: desktop, addresses: stages.map(\.address),
                                       count: quick ? 10 : 30)
            await laptop.close()
            await desktop.close()
        } catch {
            note("error: \(error)")
            for stage in stages { note(stage.logTail("ferryd")) }
            exit(1)
        }
    }

    static let payload = 1024

    /// C1: remote 1 KiB pastes vs libnats request-reply of 1 KiB on the same server.
    static func c1(setup: Setup, laptop: FerryClient, desktop: FerryClient, count: Int) async throws {
        let responder = try setup.link()
        let requester = try setup.link()
        defer { responder.close(); requester.close() }
        let reply = [UInt8](repeating: 0x42, count: payload)
        try responder.subscribe("bench.echo") { _, subject in
            if let subject { try? responder.publish(subject, reply) }
        }
        try responder.flush()
        let request = [UInt8](repeating: 0x41, count: payload)
        var anchor = Samples()
        for index in 0..<(count + count / 10) {
            let start = now()
            _ = try requester.request("bench.echo", request, timeout: .seconds(2))
            if index >= count / 10 { anchor.append(now() - start) }
        }

        _ = try await laptop.general.setData(Data(repeating: 0x43, count: payload), forType: .data)
        let general = desktop.general
        try await waitForRemote(general)
        var pastes = Samples()
        var reads = Samples()
        for index in 0..<(count + count / 10) {
            let start = now()
            let read = try await general.read(item: 0, type: .data)
            let opened = now()
            let bytes = try await read.bytes()
            guard bytes.count == payload else { throw Spawn.Failure(description: "the remote paste gave \(bytes.count) bytes") }
            if index >= count / 10 {
                pastes.append(now() - start)
                reads.append(opened - start)
            }
        }
        report("C1 1 KiB remote paste (Read + chunk over the engine + FinishTransfer)", "p50", value: pastes.median, unit: "µs",
               anchor: "libnats request-reply, 1 KiB", anchorValue: anchor.median, goal: .ratio(atMost: 3))
        report("C1 1 KiB remote paste (Read + chunk over the engine + FinishTransfer)", "p99", value: pastes.percentile(99),
               unit: "µs", anchor: "libnats request-reply, 1 KiB", anchorValue: anchor.percentile(99))
        report("C1 of which: Read, until the reader has the pipe", "p50", value: reads.median, unit: "µs")
    }

    /// C2: 64 MiB remote pastes (read to the end, and checked) vs a raw chunked pull of the
    /// same size: sequential libnats request-replies of 512 KiB, as ferryd's puller makes them,
    /// answered from memory, with no sealing, no pipe and no D-Bus.
    static func c2(setup: Setup, laptop: FerryClient, desktop: FerryClient, runs: Int) async throws {
        let size = 64 << 20
        let chunk = 512 << 10
        let responder = try setup.link()
        let requester = try setup.link()
        defer { responder.close(); requester.close() }
        let block = [UInt8](repeating: 0x44, count: chunk)
        try responder.subscribe("bench.chunk") { _, subject in
            if let subject { try? responder.publish(subject, block) }
        }
        try responder.flush()
        var anchor = Samples()
        for _ in 0..<runs {
            let start = now()
            var pulled = 0
            while pulled < size { pulled += try requester.request("bench.chunk", [0], timeout: .seconds(5)).count }
            anchor.append(Double(pulled) / (now() - start))  // bytes per µs = MB/s
        }

        var payload = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 4096) { payload[index] = UInt8(truncatingIfNeeded: index >> 12) }
        let general = desktop.general
        let before = try await general.changeCount
        // An archive, so the wait cannot mistake C1's 1 KiB data item, still listed, for this one.
        _ = try await laptop.general.setData(Data(payload), forType: .archive)
        let start = now()
        while true {
            if try await general.changeCount != before, let item = try await general.items.first,
               item.origin == "continuity:laptop", item.contentTypes == [.archive] { break }
            guard now() - start < 10e6 else { throw Spawn.Failure(description: "the laptop's 64 MiB copy never reached the desktop") }
            try await Task.sleep(for: .milliseconds(5))
        }
        var pastes = Samples()
        for _ in 0..<runs {
            let start = now()
            let bytes = try await general.read(item: 0, type: .archive).bytes()
            let elapsed = now() - start
            guard bytes == payload else { throw Spawn.Failure(description: "the remote paste gave other bytes (\(bytes.count))") }
            pastes.append(Double(bytes.count) / elapsed)
        }
        report("C2 64 MiB remote paste (chunks pulled over the engine into the reader's pipe)", "throughput, median of \(runs)",
               value: pastes.median, unit: "MB/s", anchor: "raw chunked pull with libnats, 512 KiB chunks",
               anchorValue: anchor.median, goal: .ratio(atLeast: 0.8))
    }

    /// C3: copy on the laptop → the desktop's pasteboard lists it as remote.
    static func c3(laptop: FerryClient, desktop: FerryClient, count: Int) async throws {
        var visible = Samples()
        let general = desktop.general
        for index in 0..<count {
            let before = try await general.changeCount
            let text = "C3 copy \(index)"
            let start = now()
            _ = try await laptop.general.setString(text)
            while true {
                if try await general.changeCount != before, let item = try await general.items.first,
                   item.origin == "continuity:laptop" { break }
                if now() - start > 5e6 { throw Spawn.Failure(description: "copy \(index) never reached the desktop") }
            }
            visible.append(now() - start)
        }
        report("C3 copy on one device → remote on the other (ferry types' query)", "p50", value: visible.median / 1000,
               unit: "ms", goal: .value(atMost: 5, "p50 ≤ 5 ms"))
        report("C3 copy on one device → remote on the other (ferry types' query)", "p99", value: visible.percentile(99) / 1000,
               unit: "ms")

        // The same, watched as an app would: the desktop's Changed signal, then one query. The
        // loop above asks the desktop's ferryd without pause, and on two cores those queries
        // take turns with the path they time.
        var signalled = Samples()
        let changes = try await general.changes()
        var counts = changes.makeAsyncIterator()
        for index in 0..<count {
            let before = try await general.changeCount
            let start = now()
            _ = try await laptop.general.setString("C3 signalled copy \(index)")
            while true {
                guard let count = try await counts.next() else { throw Spawn.Failure(description: "the desktop's Changed signals ended") }
                if count > before, let item = try await general.items.first, item.origin == "continuity:laptop" { break }
                if now() - start > 5e6 { throw Spawn.Failure(description: "signalled copy \(index) never reached the desktop") }
            }
            signalled.append(now() - start)
        }
        report("C3 copy on one device → remote on the other (Changed signal, then one query)", "p50",
               value: signalled.median / 1000, unit: "ms")
        report("C3 copy on one device → remote on the other (Changed signal, then one query)", "p99",
               value: signalled.percentile(99) / 1000, unit: "ms")
    }

    static func waitForRemote(_ general: Pasteboard) async throws {
        let start = now()
        while now() - start < 10e6 {
            if try await general.items.first?.origin == "continuity:laptop" { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Spawn.Failure(description: "the laptop's copy never reached the desktop")
    }
}

/// The engine's side: certificates, keys and configuration in a scratch folder.
struct Setup {
    /// Sets `XDG_RUNTIME_DIR` to a 0700 folder in the scratch folder when it is not set, for the
    /// ferryds started next (their direct-connection sockets) and this process's clients.
    func giveARuntimeDirectory() throws {
        if let set = getenv("XDG_RUNTIME_DIR"), set.pointee != 0 { return }
        let run = "\(folder)/run"
        guard mkdir(run, 0o700) == 0 else { throw Spawn.Failure(description: "cannot make \(run): errno \(errno)") }
        setenv("XDG_RUNTIME_DIR", run, 1)
    }

    let folder: String
    let port: Int
    var seeds: [String: String] = [:]
    var publicKeys: [String: String] = [:]
    let keyFile: String

    init() throws {
        var template = Array("/tmp/continuity-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Spawn.Failure(description: "mkdtemp failed")
        }
        folder = String(cString: made)
        port = 20_000 + Int(getpid() % 20_000)
        keyFile = "\(folder)/alice.key"
        try Self.secret(Seal.makeKeyText(), to: keyFile)
        for device in ["laptop", "desktop", "bench"] {
            let pair = NKey.makeUserSeed()
            seeds[device] = "\(folder)/\(device).nk"
            publicKeys[device] = pair.publicKey
            try Self.secret(pair.seed, to: "\(folder)/\(device).nk")
        }
        try Spawn.writeFile("\(folder)/san.ext", "subjectAltName=IP:127.0.0.1\n")
        for step in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
             "-subj", "/CN=bench CA", "-keyout", "\(folder)/ca.key", "-out", "\(folder)/ca.pem"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", "\(folder)/server.key", "-out", "\(folder)/server.csr"],
            ["x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.pem", "-CAkey", "\(folder)/ca.key",
             "-CAcreateserial", "-days", "1", "-extfile", "\(folder)/san.ext", "-out", "\(folder)/server.pem"],
        ] {
            guard try Spawn.output(["/usr/bin/openssl"] + step, stderr: .null).status == 0 else {
                throw Spawn.Failure(description: "openssl \(step[0]) failed")
            }
        }
    }

    static func secret(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw Spawn.Failure(description: "cannot write \(path)") }
        defer { close(fd) }
        let bytes = Array((text + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw Spawn.Failure(description: "cannot write \(path)") }
    }

    func user(_ device: String) -> String {
        let allow = device == "bench" ? #"publish: ">", subscribe: ">""#
            : #"publish: { allow: ["$KV.ferry_pb.\#(device)", "$KV.ferry_activity.\#(device)", "$JS.API.>", "ferry.dev.*.chunk", "#
            + #""ferry.dev.*.activity", "_INBOX.>"] }, "#
            + #"subscribe: { allow: ["ferry.dev.\#(device).chunk", "ferry.dev.\#(device).activity", "_INBOX.>", "$KV.ferry_pb.>", "#
            + #""$KV.ferry_activity.>"] }, allow_responses: true"#
        return "{ nkey: \(publicKeys[device]!), permissions: { \(allow) } }"
    }

    /// Starts nats-server and waits until it listens; returns its pid.
    func startServer() throws -> pid_t {
        let config = """
            listen: 127.0.0.1:\(port)
            jetstream { store_dir: "\(folder)/js" }
            tls { cert_file: "\(folder)/server.pem", key_file: "\(folder)/server.key" }
            accounts { ALICE: { jetstream: enabled, users: [ \(["laptop", "desktop", "bench"].map(user).joined(separator: ", ")) ] } }

            """
        try Spawn.writeFile("\(folder)/nats.conf", config)
        let pid = try Spawn.start(["/usr/sbin/nats-server", "-c", "\(folder)/nats.conf"], stdout: .null, stderr: .null)
        let start = now()
        while now() - start < 10e6 {
            if (try? link()) != nil { return pid }
            usleep(50_000)
        }
        _ = Spawn.stop(pid, grace: 1)
        throw Spawn.Failure(description: "nats-server did not start on port \(port)")
    }

    func link() throws -> EngineLink {
        try EngineLink(address: EngineAddress(url: "tls://127.0.0.1:\(port)", seedFile: seeds["bench"]!, caFile: "\(folder)/ca.pem"),
                       name: "bench")
    }

    func arguments(for device: String) -> [String] {
        ["--continuity", "tls://127.0.0.1:\(port)", "--creds", seeds[device]!, "--continuity-key", keyFile,
         "--continuity-ca", "\(folder)/ca.pem", "--device", device]
    }

    func remove() { _ = try? Spawn.output(["rm", "-rf", folder]) }
}

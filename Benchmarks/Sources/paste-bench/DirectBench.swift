import BenchReport
import CDBusBench
import DBus
import Ferry
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Issue 20's figures: P1 and P2 over ferryd's direct connection and over the bus, and D4 (the
/// Swift D-Bus layer over a peer-to-peer connection), in alternating rounds beside two anchors:
/// the C libdbus echo through the same dbus-daemon and the C libdbus echo over a peer-to-peer
/// connection (`paste-bench --serve-peer-echo ADDRESS`). D4 and P1 are measured placed by the
/// scheduler, then with each pair and the C peer-to-peer echo placed alike (``Placement``): on one
/// CPU, and the servers on a CPU apart; the goals against the peer-to-peer echo are those of the
/// placed rows.
///
/// Needs ferryd started with `XDG_RUNTIME_DIR` set (scripts/bench.sh does), so it offers direct
/// connections; `paste-bench --only direct`.
struct DirectBench {
    let config: Config
    let address: String
    let scratch: Scratch

    var rounds: Int { config.quick ? 3 : 10 }
    var perRound: Int { config.quick ? 100 : 300 }
    static let payload = LatencyBench.payload
    var bytes: Data { Data((0..<Self.payload).map { UInt8(truncatingIfNeeded: $0) }) }

    func run() async throws {
        let direct = try await Self.client(direct: true)
        let bus = try await Self.client(direct: false)
        guard await direct.usesDirectConnection else {
            throw Spawn.Failure(description: "ferryd offers no direct connection (start it with XDG_RUNTIME_DIR set)")
        }
        let echo = try await EchoAnchor(address: address, connection: bus.connection)
        defer { echo.stop() }
        let peerEcho = try PeerEchoAnchor(path: "\(scratch.path)/c-peer-echo")
        defer { peerEcho.stop() }
        let swiftPeer = try SwiftPeerEchoServer(path: "\(scratch.path)/swift-peer-echo")
        defer { swiftPeer.stop() }

        // D4: the Swift layer over a peer-to-peer connection, against the C peer-to-peer echo.
        let peerClient = try await Connection(peer: swiftPeer.address, speakingFor: BusName(":0.0"))
        let argument: [DBusValue] = [.bytes([UInt8](bytes))]
        let executor = peerClient.taskExecutor
        let d4 = try await alternate(echo: echo, peerEcho: peerEcho, executor: executor) {
            try await SwiftPeerEchoServer.echo(peerClient, argument)
        }
        report("D4 Swift client → Swift echo server, 1 KiB, peer-to-peer", "p50", value: d4.body.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB, peer-to-peer", anchorValue: d4.peer.median)
        report("D4 (the C peer-to-peer echo against the C echo through dbus-daemon)", "p50", value: d4.peer.median,
               unit: "µs", anchor: "C libdbus echo 1 KiB", anchorValue: d4.bus.median)

        // P1: the same held 1 KiB read by a client on the direct connection and one on the bus.
        let boardName = LatencyBench.pasteboardName + "-direct"
        let directBoard = try await direct.pasteboard(named: boardName)
        let busBoard = try await bus.pasteboard(named: boardName)
        var held = ItemProvider()
        held.registerDataRepresentation(for: .data, data: bytes)
        try await directBoard.setItemProviders([held])
        let p1 = try await alternate(echo: echo, peerEcho: peerEcho, executor: await direct.hotCallExecutor) {
            try await LatencyBench.heldPaste(directBoard)
        }
        report("P1 1 KiB held paste, direct connection", "p50", value: p1.body.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: p1.bus.median, goal: .ratio(atMost: 1.0))
        report("P1 1 KiB held paste, direct connection", "p50 vs p2p", value: p1.body.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB, peer-to-peer", anchorValue: p1.peer.median)
        report("P1 1 KiB held paste, direct connection", "p99", value: p1.body.percentile(99), unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: p1.bus.percentile(99))
        let p1bus = try await alternate(echo: echo, peerEcho: peerEcho, executor: bus.connection.taskExecutor) {
            try await LatencyBench.heldPaste(busBoard)
        }
        report("P1 1 KiB held paste, bus (FERRY_DIRECT=0)", "p50", value: p1bus.body.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: p1bus.bus.median)
        if let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) {
            let calls = rounds * perRound
            for (label, board, client) in [("direct", directBoard, direct), ("bus", busBoard, bus)] {
                let cost = try await LatencyBench.perCall(of: ferryd, calls: calls) {
                    try await withTaskExecutorPreference(await client.hotCallExecutor) {
                        for _ in 0..<calls { try await LatencyBench.heldPaste(board) }
                    }
                }
                report("P1 breakdown: ferryd's CPU per Read, \(label)", "mean", value: cost.serverCPU, unit: "µs")
            }
        }

        // P2: a promised 1 KiB from a second client registered as an app: over direct
        // connections (Read, the broker's ProvideRepresentation to the source, the bytes inline
        // in Read's reply), and with both clients on the bus.
        let payload = bytes
        for (label, reader, viaDirect) in [("direct connections", direct, true), ("bus (FERRY_DIRECT=0)", bus, false)] {
            let source = try await Self.client(direct: viaDirect)
            try await source.registerCommandLineTool()
            var promised = ItemProvider()
            promised.registerDataRepresentation(for: .data, estimatedSize: Int64(Self.payload)) { _ in payload }
            let name = boardName + (viaDirect ? "-p2-direct" : "-p2-bus")
            try await source.pasteboard(named: name).setItemProviders([promised])
            let board = try await reader.pasteboard(named: name)
            let p2 = try await alternate(echo: echo, peerEcho: peerEcho, executor: await reader.hotCallExecutor, share: 2) {
                try await LatencyBench.promisedPaste(board)
            }
            report("P2 1 KiB promised paste, \(label)", "p50", value: p2.body.median, unit: "µs",
                   anchor: "C libdbus echo 1 KiB", anchorValue: p2.bus.median, goal: viaDirect ? .ratio(atMost: 2.0) : nil)
            if viaDirect {
                report("P2 1 KiB promised paste, \(label)", "p50 vs p2p", value: p2.body.median, unit: "µs",
                       anchor: "C libdbus echo 1 KiB, peer-to-peer", anchorValue: p2.peer.median)
                if let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) {
                    // Where it goes: ferryd's CPU and context switches per paste (Read and the call
                    // to the source), and this process's (the reader and the source).
                    let calls = rounds * perRound / 2
                    let cost = try await LatencyBench.perCall(of: ferryd, calls: calls) {
                        try await withTaskExecutorPreference(await reader.hotCallExecutor) {
                            for _ in 0..<calls { try await LatencyBench.promisedPaste(board) }
                        }
                    }
                    report("P2 breakdown: ferryd's CPU per promised paste, direct", "mean", value: cost.serverCPU, unit: "µs")
                    report("P2 breakdown: ferryd's context switches per promised paste, direct", "mean",
                           value: cost.serverSwitches, unit: "")
                    report("P2 breakdown: CPU per promised paste, reader and source (this process), direct", "mean",
                           value: cost.clientCPU, unit: "µs")
                }
            }
            _ = try await board.clear()
            await source.close()
        }

        // D4 and P1 again with the processes of each pair placed, last: a placement lingers
        // after it is lifted (the scheduler leaves threads where they are), so the rows placed
        // by the scheduler come first.
        try await placedPairs(servers: [swiftPeer.pid], peerEcho: peerEcho) { placement in
            let placed = try await alternate(echo: nil, peerEcho: peerEcho, executor: executor) {
                try await SwiftPeerEchoServer.echo(peerClient, argument)
            }
            report("D4 Swift client → Swift echo server, 1 KiB, peer-to-peer, \(placement)", "p50", value: placed.body.median,
                   unit: "µs", anchor: "C libdbus echo 1 KiB, peer-to-peer, \(placement)", anchorValue: placed.peer.median,
                   goal: .ratio(atMost: 1.2))
        }
        await peerClient.close()
        if let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) {
            try await placedPairs(servers: [ferryd], peerEcho: peerEcho) { placement in
                let placed = try await alternate(echo: nil, peerEcho: peerEcho, executor: await direct.hotCallExecutor) {
                    try await LatencyBench.heldPaste(directBoard)
                }
                report("P1 1 KiB held paste, direct connection, \(placement)", "p50 vs p2p", value: placed.body.median,
                       unit: "µs", anchor: "C libdbus echo 1 KiB, peer-to-peer, \(placement)", anchorValue: placed.peer.median,
                       goal: .ratio(atMost: 1.5))
            }
        }
        _ = try await directBoard.clear()
        await direct.close()
        await bus.close()
    }

    /// A client on the session bus whose hot calls go direct, or stay on the bus (`FERRY_DIRECT=0`
    /// while it is made: the choice is the client's, made once).
    static func client(direct: Bool) async throws -> FerryClient {
        if !direct { setenv("FERRY_DIRECT", "0", 1) }
        defer { unsetenv("FERRY_DIRECT") }
        let client = try await FerryClient.connect()
        _ = await client.usesDirectConnection
        return client
    }

    /// Runs `measure` twice with this process (the clients) and `servers` with the C
    /// peer-to-peer echo server placed: all on one CPU, then the servers on a CPU apart
    /// (``Placement``); `measure` gets the placement's name for its rows. The scheduler's own
    /// placement may differ between a pair and its anchor (BENCHMARKS.md, "Where the processes
    /// run"); placed, both sit alike. Skips the second with one CPU only.
    func placedPairs(servers: [pid_t], peerEcho: PeerEchoAnchor,
                     _ measure: (String) async throws -> Void) async throws {
        for (together, name) in [(true, "one CPU"), (false, "two CPUs")] where together || Placement.available.count > 1 {
            try await Placement.placed(clients: [getpid()], servers: servers + [peerEcho.pid], together: together) {
                try await measure(name)
            }
        }
    }

    /// `body`, the C echo through the bus (unless `echo` is nil) and the C echo peer-to-peer, in
    /// alternating rounds (after a warm-up of each); µs per call. `share` divides the rounds'
    /// size for slow bodies.
    func alternate(echo: EchoAnchor?, peerEcho: PeerEchoAnchor, executor: any TaskExecutor, share: Int = 1,
                   _ body: @escaping @Sendable () async throws -> Void) async throws -> (body: Samples, bus: Samples, peer: Samples) {
        let count = perRound / share
        @Sendable func round(_ n: Int) async throws -> [Double] {
            var times: [Double] = []
            for _ in 0..<n {
                let start = now()
                try await body()
                times.append(now() - start)
            }
            return times
        }
        var measured = Samples(), bus = Samples(), peer = Samples()
        _ = try await withTaskExecutorPreference(executor) { try await round(max(1, count / 10)) }
        _ = try echo?.echo(payload: Self.payload, iterations: max(1, count / 10))
        _ = try peerEcho.echo(payload: Self.payload, iterations: max(1, count / 10))
        for _ in 0..<rounds {
            measured.append(contentsOf: try await withTaskExecutorPreference(executor) { try await round(count) })
            if let echo { bus.append(contentsOf: try echo.echo(payload: Self.payload, iterations: count)) }
            peer.append(contentsOf: try peerEcho.echo(payload: Self.payload, iterations: count))
        }
        return (measured, bus, peer)
    }
}

/// The second anchor: the C libdbus echo over a peer-to-peer connection, the server a process of
/// its own (`paste-bench --serve-peer-echo ADDRESS`).
struct PeerEchoAnchor {
    let address: String
    let pid: pid_t

    /// `paste-bench --serve-peer-echo ADDRESS`: serves Echo until Quit; the exit status.
    static func serverMain(address: String) -> Int32 {
        cdb_serve_peer(address) == 0 ? 0 : 1
    }

    /// Starts the server on a socket at `path` and waits until it answers.
    init(path: String) throws {
        address = "unix:path=\(path)"
        pid = try Spawn.start([Spawn.ownPath, "--serve-peer-echo", address], stdin: .inherited, stdout: .inherited)
        var times = [Double](repeating: 0, count: 1)
        for _ in 0..<400 {
            if times.withUnsafeMutableBufferPointer({ cdb_echo_peer(address, 1, 1, $0.baseAddress) }) == 0 { return }
            usleep(25_000)
        }
        kill(pid, SIGTERM)
        Spawn.wait(pid)
        throw Spawn.Failure(description: "the C peer-to-peer echo server never answered")
    }

    /// `iterations` blocking Echo calls over a new peer-to-peer connection; µs each.
    func echo(payload: Int, iterations: Int) throws -> [Double] {
        var times = [Double](repeating: 0, count: iterations)
        let rc = times.withUnsafeMutableBufferPointer { cdb_echo_peer(address, payload, Int32(iterations), $0.baseAddress) }
        guard rc == 0 else { throw Spawn.Failure(description: "the C peer-to-peer echo client failed") }
        return times
    }

    func stop() {
        _ = cdb_quit_peer(address)
        Spawn.wait(pid)
    }
}

/// `SwiftEchoServer` over a peer-to-peer connection: `Echo(ay) → ay` on each connection a
/// `PeerServer` accepts, the handler on the connection thread (`paste-bench --serve-swift-peer-echo ADDRESS`).
struct SwiftPeerEchoServer {
    let address: String
    let pid: pid_t

    /// `paste-bench --serve-swift-peer-echo ADDRESS`: serves Echo until Quit; the exit status.
    static func serverMain(address: String) async -> Int32 {
        let (quit, quitting) = AsyncStream.makeStream(of: Void.self)
        let accepted = Mutex<[Connection]>([])
        let interface = Interface(SwiftEchoServer.interface) {
            Method("Echo", in: ["data": "ay"], out: ["data": "ay"], execution: .connectionThread) { call in
                [.bytes(try call.argument(0, as: [UInt8].self))]
            }
            Method("Quit", execution: .connectionThread) { _ in
                quitting.yield()
                return []
            }
        }
        do {
            let server = try await PeerServer(listeningOn: address, name: BusName(":0.0"), accepted: { connection in
                try? connection.export(interface, at: SwiftEchoServer.path)
                accepted.withLock { $0 = $0.filter(\.isConnected) + [connection] }
            }, refused: { _ in })
            for await _ in quit { break }
            await server.close()
            for connection in accepted.withLock({ $0 }) { await connection.close(gracePeriod: .zero) }
            return 0
        } catch {
            note("swift peer echo server: \(error)")
            return 1
        }
    }

    /// Starts the server on a socket at `path` and waits until the socket is there.
    init(path: String) throws {
        address = "unix:path=\(path)"
        pid = try Spawn.start([Spawn.ownPath, "--serve-swift-peer-echo", address], stdin: .inherited, stdout: .inherited)
        for _ in 0..<400 where access(path, F_OK) != 0 { usleep(25_000) }
        guard access(path, F_OK) == 0 else {
            kill(pid, SIGTERM)
            Spawn.wait(pid)
            throw Spawn.Failure(description: "the Swift peer-to-peer echo server never listened")
        }
    }

    /// One Echo of `argument` over `connection`.
    static func echo(_ connection: Connection, _ argument: [DBusValue]) async throws {
        let reply = try await connection.call(destination: nil, path: SwiftEchoServer.path, interface: SwiftEchoServer.interface,
                                              member: "Echo", body: argument)
        guard case .bytes(let bytes)? = reply.first, case .bytes(let sent)? = argument.first, bytes.count == sent.count else {
            throw Spawn.Failure(description: "the Swift peer-to-peer echo server gave the wrong reply")
        }
    }

    func stop() {
        _ = cdb_quit_peer(address)
        Spawn.wait(pid)
    }
}

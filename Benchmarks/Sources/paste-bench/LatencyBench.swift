import BenchReport
import DBus
import Dispatch
import Ferry
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// P1 (1 KiB held paste) and P2 (1 KiB promised paste) through ferryd, each in alternating rounds
/// with the bare libdbus echo of the same 1 KiB on the same bus.
struct LatencyBench {
    let config: Config
    let address: String

    static let payload = 1024
    static let pasteboardName = "paste-bench"

    var rounds: Int { config.quick ? 3 : 10 }
    var perRound: Int { config.quick ? 100 : 300 }
    var bytes: Data { Data((0..<Self.payload).map { UInt8(truncatingIfNeeded: $0) }) }

    func run() async throws {
        let reader = try await FerryClient.connect()
        let echo = try await EchoAnchor(address: address, connection: reader.connection)
        defer { echo.stop() }
        let board = try await reader.pasteboard(named: Self.pasteboardName)
        if config.only != "p2" {
            try await swiftEchoRows(reader.connection, echo: echo)
            if config.only == "dbus" { return }
            try await heldPastes(reader, board, echo: echo)
        }
        if config.only != "p1" { try await promisedPastes(board, executor: reader.connection.taskExecutor, echo: echo) }
        _ = try await board.clear()
        await reader.close()
    }

    /// P1 and where its time goes.
    func heldPastes(_ reader: FerryClient, _ board: Pasteboard, echo: EchoAnchor) async throws {
        let executor = reader.connection.taskExecutor
        // P1: the bytes held by ferryd, read inline.
        var held = ItemProvider()
        held.registerDataRepresentation(for: .data, data: bytes)
        try await board.setItemProviders([held])
        let (onExecutor, anchor1) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
            try await Self.heldPaste(board)
        }
        report("P1 1 KiB held paste (Read, connection executor)", "p50", value: onExecutor.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor1.median, goal: .ratio(atMost: 1.3))
        report("P1 1 KiB held paste (Read, connection executor)", "p99", value: onExecutor.percentile(99), unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor1.percentile(99))
        if let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) {
            // Where the time goes, as CPU: ferryd's per Read against the C echo server's per Echo,
            // and this process's (the Swift client's, the C client's) per call.
            let calls = rounds * perRound
            let paste = try await Self.perCall(of: ferryd, calls: calls) {
                try await withTaskExecutorPreference(executor) {
                    for _ in 0..<calls { try await Self.heldPaste(board) }
                }
            }
            let anchor = try await Self.perCall(of: echo.server, calls: calls) {
                _ = try echo.echo(payload: Self.payload, iterations: calls)
            }
            report("P1 breakdown: CPU per call, ferryd's Read vs the C echo server", "mean", value: paste.serverCPU,
                   unit: "µs", anchor: "C echo server's CPU per Echo", anchorValue: anchor.serverCPU)
            report("P1 breakdown: CPU per call, the Swift client vs the C client", "mean", value: paste.clientCPU,
                   unit: "µs", anchor: "C client's CPU per Echo", anchorValue: anchor.clientCPU)
            report("P1 breakdown: context switches per call, ferryd vs the C echo server", "mean",
                   value: paste.serverSwitches, unit: "", anchor: "C echo server", anchorValue: anchor.serverSwitches)
        }
        // The floor any ferryd method has: a method exported through the Swift D-Bus layer (a
        // task per call) that only echoes, on a second connection of this process.
        let server = try await Connection(address: address)
        try server.export(Interface("org.ferry.PasteBench1") {
            Method("Echo", in: ["data": "ay"], out: ["data": "ay"]) { call in [.bytes(try call.argument(0, as: [UInt8].self))] }
            Method("EchoOnThread", in: ["data": "ay"], out: ["data": "ay"], execution: .connectionThread) { call in
                [.bytes(try call.argument(0, as: [UInt8].self))]
            }
        }, at: "/org/ferry/PasteBench")
        let echoArgument: [DBusValue] = [.bytes([UInt8](bytes))]
        let (swiftEcho, anchor1e) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
            _ = try await reader.connection.call(destination: server.uniqueName, path: "/org/ferry/PasteBench",
                                                 interface: "org.ferry.PasteBench1", member: "Echo", body: echoArgument)
        }
        report("P1 breakdown: Echo 1 KiB exported through the Swift D-Bus layer", "p50", value: swiftEcho.median,
               unit: "µs", anchor: "C libdbus echo 1 KiB", anchorValue: anchor1e.median)
        let (threadEcho, anchor1t) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
            _ = try await reader.connection.call(destination: server.uniqueName, path: "/org/ferry/PasteBench",
                                                 interface: "org.ferry.PasteBench1", member: "EchoOnThread",
                                                 body: echoArgument)
        }
        report("P1 breakdown: the same Echo, handler on the connection thread", "p50", value: threadEcho.median,
               unit: "µs", anchor: "C libdbus echo 1 KiB", anchorValue: anchor1t.median)
        await server.close()

        // Where P1's time goes, on the same executor: a property read (ferryd answers from its
        // store, no policy, no log) and Items (the metadata, not a paste: no policy, no log).
        let (property, anchor1c) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
            _ = try await board.changeCount
        }
        report("P1 breakdown: ChangeCount property (Properties.Get)", "p50", value: property.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor1c.median)
        let (items, anchor1d) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
            _ = try await board.items
        }
        report("P1 breakdown: Items (metadata, not a paste)", "p50", value: items.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor1d.median)
        let (pool, anchor1b) = try await alternate(rounds: rounds, perRound: perRound, echo: echo) {
            guard let data = try await board.data(forType: .data), data.count == Self.payload else {
                throw Spawn.Failure(description: "the held paste gave the wrong bytes")
            }
        }
        report("P1 1 KiB held paste (data(forType:), global pool)", "p50", value: pool.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor1b.median)

    }

    /// P2 and where its time goes.
    func promisedPastes(_ board: Pasteboard, executor: any TaskExecutor, echo: EchoAnchor) async throws {
        // P2: the bytes promised by a second client, registered as an app: inline when the source
        // answers within ferryd's wait (it does here), else through a pipe. The source's loader
        // runs for every paste (PromiseTests).
        let source = try await FerryClient.connect()
        defer { Task { await source.close() } }
        try await source.registerCommandLineTool()
        let sourceBoard = try await source.pasteboard(named: Self.pasteboardName)
        var promised = ItemProvider()
        promised.registerDataRepresentation(for: .data, estimatedSize: Int64(Self.payload)) { _ in bytes }
        try await sourceBoard.setItemProviders([promised])
        let (promisedPaste, anchor2) = try await alternate(rounds: rounds, perRound: perRound / 2, echo: echo, on: executor) {
            try await Self.promisedPaste(board)
        }
        report("P2 1 KiB promised paste", "p50", value: promisedPaste.median, unit: "µs",
               anchor: "C libdbus echo 1 KiB", anchorValue: anchor2.median, goal: .ratio(atMost: 2.5))
        report("P2 1 KiB promised paste", "p99", value: promisedPaste.percentile(99),
               unit: "µs", anchor: "C libdbus echo 1 KiB", anchorValue: anchor2.percentile(99))
        // Where a promised paste through the pipe (`fd: true`) spends its time, one phase after
        // the other (the library overlaps the last two): Read (the broker starts the transfer),
        // the bytes through the pipe (read on a blocking-I/O thread), FinishTransfer (the
        // source's reply).
        var phases = [Samples(), Samples(), Samples()]
        let measured = try await withTaskExecutorPreference(executor) {
            var all: [[Double]] = []
            for _ in 0..<(rounds * perRound / 4) { all.append(try await Self.promisedPastePhases(board)) }
            return all
        }
        for times in measured {
            for (index, time) in times.enumerated() { phases[index].append(time) }
        }
        for (index, phase) in ["Read until the fd arrives", "pipe read to end of file", "FinishTransfer"].enumerated() {
            report("P2 breakdown, through the pipe: \(phase)", "p50", value: phases[index].median, unit: "µs")
        }
        if let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) {
            // CPU per promised paste: ferryd's (Read and the call to the source) and
            // this process's (the reader and the source app, both in here).
            let calls = rounds * perRound / 2
            let paste = try await Self.perCall(of: ferryd, calls: calls) {
                try await withTaskExecutorPreference(executor) {
                    for _ in 0..<calls { try await Self.promisedPaste(board) }
                }
            }
            report("P2 breakdown: CPU per paste, ferryd", "mean", value: paste.serverCPU, unit: "µs")
            report("P2 breakdown: CPU per paste, reader and source (this process)", "mean", value: paste.clientCPU,
                   unit: "µs")
            report("P2 breakdown: context switches per paste, ferryd", "mean", value: paste.serverSwitches, unit: "")
        }
        await source.close()
    }

    /// The Swift D-Bus layer alone, across processes: the Swift client (on its connection's
    /// executor) calling `SwiftEchoServer`, a process of its own, beside the C client calling
    /// the C server; latency and CPU per call on each side.
    func swiftEchoRows(_ connection: Connection, echo: EchoAnchor) async throws {
        let server = try await SwiftEchoServer(address: address, connection: connection)
        defer { server.stop() }
        let executor = connection.taskExecutor
        let argument: [DBusValue] = [.bytes([UInt8](bytes))]
        let calls = rounds * perRound
        let c = try await Self.perCall(of: echo.server, calls: calls) {
            _ = try echo.echo(payload: Self.payload, iterations: calls)
        }
        for (member, handler) in [("Echo", "synchronous handler"), ("EchoAsync", "async handler (a task per call)")] {
            let (latency, anchor) = try await alternate(rounds: rounds, perRound: perRound, echo: echo, on: executor) {
                try await SwiftEchoServer.echo(connection, argument, member: MemberName(member))
            }
            report("D-Bus layer: Swift client → Swift echo server process, 1 KiB, \(handler)", "p50", value: latency.median,
                   unit: "µs", anchor: "C libdbus echo 1 KiB", anchorValue: anchor.median)
            let swift = try await Self.perCall(of: server.pid, calls: calls) {
                try await withTaskExecutorPreference(executor) {
                    for _ in 0..<calls { try await SwiftEchoServer.echo(connection, argument, member: MemberName(member)) }
                }
            }
            report("D-Bus layer: CPU per call, Swift echo server (\(handler)) vs C echo server", "mean",
                   value: swift.serverCPU, unit: "µs", anchor: "C echo server's CPU per Echo", anchorValue: c.serverCPU)
            guard member == "Echo" else { continue }
            report("D-Bus layer: CPU per call, Swift client vs C client", "mean", value: swift.clientCPU,
                   unit: "µs", anchor: "C client's CPU per Echo", anchorValue: c.clientCPU)
            report("D-Bus layer: context switches per call, Swift echo server vs C echo server", "mean",
                   value: swift.serverSwitches, unit: "", anchor: "C echo server", anchorValue: c.serverSwitches)
        }
    }

    static func heldPaste(_ board: Pasteboard) async throws {
        let read = try await board.read(item: 0, type: .data)
        guard case .bytes(let bytes) = read.content, bytes.count == payload else {
            throw Spawn.Failure(description: "the held paste was not \(payload) inline bytes")
        }
    }

    static func promisedPaste(_ board: Pasteboard) async throws {
        let read = try await board.read(item: 0, type: .data)
        let bytes = try await read.bytes()
        guard bytes.count == payload else { throw Spawn.Failure(description: "the promised paste gave \(bytes.count) bytes") }
    }

    /// One promised paste through the pipe in its three phases, one after the other
    /// (`PasteboardRead.bytes()` sends FinishTransfer while it reads); µs each.
    static func promisedPastePhases(_ board: Pasteboard) async throws -> [Double] {
        let start = now()
        let read = try await board.read(item: 0, type: .data, preferFD: true)
        guard case .stream(let fd, let transfer) = read.content, transfer != nil else {
            throw Spawn.Failure(description: "the promised paste came without a stream")
        }
        let afterRead = now()
        let count = try await BlockingRead.run { try fd.readAll().count }
        fd.close()
        let afterBytes = now()
        let written = try await read.finish()
        let end = now()
        guard count == payload, written == UInt64(payload) else {
            throw Spawn.Failure(description: "the promised paste gave \(count) bytes")
        }
        return [afterRead - start, afterBytes - afterRead, end - afterBytes]
    }

    /// What one call costs the server process `pid` (CPU µs, context switches) and this process
    /// (CPU µs), averaged while `body` makes `calls` calls.
    static func perCall(of pid: pid_t, calls: Int, _ body: () async throws -> Void) async throws
        -> (serverCPU: Double, clientCPU: Double, serverSwitches: Double) {
        let cpu = CPUTime.precise(of: pid), own = CPUTime.ofSelf(), switches = ContextSwitches.of(pid)
        try await body()
        let after = ContextSwitches.of(pid)
        let switched = after.voluntary + after.involuntary - switches.voluntary - switches.involuntary
        let n = Double(calls)
        return ((CPUTime.precise(of: pid) - cpu) * 1000 / n, (CPUTime.ofSelf() - own) * 1000 / n, Double(switched) / n)
    }

    /// Runs `body` and the echo anchor in alternating rounds (after a warm-up of each); returns
    /// the per-call times in µs. With `executor`, each round of `body` runs on it, as an app's
    /// latency-sensitive work would (the hop onto it and back is not part of any call).
    func alternate(rounds: Int, perRound: Int, echo: EchoAnchor, on executor: (any TaskExecutor)? = nil,
                   _ body: @escaping @Sendable () async throws -> Void) async throws -> (Samples, Samples) {
        @Sendable func round(_ count: Int) async throws -> [Double] {
            var times: [Double] = []
            for _ in 0..<count {
                let start = now()
                try await body()
                times.append(now() - start)
            }
            return times
        }
        var ferry = Samples(), anchor = Samples()
        _ = try await withTaskExecutorPreference(executor) { try await round(max(1, perRound / 10)) }
        _ = try echo.echo(payload: Self.payload, iterations: max(1, perRound / 10))
        for _ in 0..<rounds {
            ferry.append(contentsOf: try await withTaskExecutorPreference(executor) { try await round(perRound) })
            anchor.append(contentsOf: try echo.echo(payload: Self.payload, iterations: perRound))
        }
        return (ferry, anchor)
    }
}

/// Blocking reads off the connection's thread, on a thread of their own (as the library does).
enum BlockingRead {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "paste-bench.io").async { continuation.resume(with: Result { try body() }) }
        }
    }
}

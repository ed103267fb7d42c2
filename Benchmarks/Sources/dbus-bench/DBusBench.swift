import BenchReport
import CDBusBench
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// Benchmarks the Swift D-Bus layer beside a plain C libdbus client making the same calls against
/// the same C echo server, on the bus in `DBUS_SESSION_BUS_ADDRESS` (`make bench` starts a
/// private one). Prints one JSON line per figure (see scripts/bench-table.py).
///
/// Usage: `dbus-bench [--quick]`; `dbus-bench --serve NAME` is the server it starts itself.
/// For profiling, `dbus-bench --only MODE [N]` runs only N (default 5000) 16-byte echoes and
/// prints their p50: MODE is `executor-echo` (Swift, connection executor), `pool-echo` (Swift,
/// global pool) or `c-echo` (the C client).
@main
enum DBusBench {
    static let serverName = "org.ferry.BenchEcho"

    static func main() async throws {
        let args = CommandLine.arguments
        guard let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }) else {
            fatalError("dbus-bench: set DBUS_SESSION_BUS_ADDRESS (make bench starts a private bus)")
        }
        if args.count == 3, args[1] == "--serve" {
            exit(cdb_serve(address, args[2]) == 0 ? 0 : 1)
        }
        let quick = args.contains("--quick")
        let server = try startServer()
        defer { _ = cdb_quit(address, serverName); Spawn.wait(server) }

        let connection = try await Connection(address: address)
        try await waitForOwner(of: serverName, on: connection)
        let bench = Runner(address: address, connection: connection, rounds: quick ? 2 : 5)
        if let only = args.firstIndex(of: "--only"), only + 1 < args.count {
            let count = only + 2 < args.count ? Int(args[only + 2]) ?? 5000 : 5000
            try await profile(args[only + 1], iterations: count, bench: bench)
            await connection.close()
            return
        }

        // Echo round trip, 16 bytes: p50 and p99, Swift async vs C blocking. First from a task on
        // the connection's own executor (no thread hop per call), then from the global pool.
        let echoes = quick ? 300 : 2000
        let (swiftEcho, cEcho) = try await withTaskExecutorPreference(connection.taskExecutor) {
            try await bench.interleaved(payload: 16, iterations: echoes, kind: .echo)
        }
        report("D1 echo 16 B, connection executor", "p50", swiftEcho.percentile(50), cEcho.percentile(50), unit: "µs", goal: 1.15)
        report("D1 echo 16 B, connection executor", "p99", swiftEcho.percentile(99), cEcho.percentile(99), unit: "µs", goal: nil)
        let (poolEcho, cEcho2) = try await bench.interleaved(payload: 16, iterations: echoes, kind: .echo)
        report("D1 echo 16 B, global pool", "p50", poolEcho.percentile(50), cEcho2.percentile(50), unit: "µs", goal: nil)
        report("D1 echo 16 B, global pool", "p99", poolEcho.percentile(99), cEcho2.percentile(99), unit: "µs", goal: nil)

        // Inline `ay` throughput (payload ÷ round trip; the payload travels both ways).
        for (size, iterations) in [(1 << 20, quick ? 10 : 40), (16 << 20, quick ? 3 : 8)] {
            let (swift, c) = try await bench.interleaved(payload: size, iterations: iterations, kind: .echo)
            let swiftRate = Double(size) / swift.percentile(50), cRate = Double(size) / c.percentile(50)
            report("D2 inline ay echo \(size >> 20) MiB", "throughput", swiftRate, cRate, unit: "MB/s",
                   goal: nil)
        }

        // One fd per call: a fresh memfd with 16 bytes, read to its end by the server.
        let (swiftFD, cFD) = try await bench.interleaved(payload: 16, iterations: quick ? 300 : 2000, kind: .fd)
        report("D3 call passing 1 fd", "p50", swiftFD.percentile(50), cFD.percentile(50), unit: "µs", goal: nil)
        report("D3 fd cost over echo", "p50 delta", swiftFD.percentile(50) - swiftEcho.percentile(50),
               cFD.percentile(50) - cEcho.percentile(50), unit: "µs", goal: nil)
        await connection.close()
    }

    /// Runs one kind of echo alone (for strace, perf or callgrind) and prints its p50.
    static func profile(_ what: String, iterations: Int, bench: Runner) async throws {
        var samples = Samples()
        switch what {
        case "executor-echo":
            samples.values = try await withTaskExecutorPreference(bench.connection.taskExecutor) {
                try await bench.runSwift(payload: 16, iterations: iterations, kind: .echo)
            }
        case "pool-echo":
            samples.values = try await bench.runSwift(payload: 16, iterations: iterations, kind: .echo)
        case "c-echo":
            samples.values = try bench.runC(payload: 16, iterations: iterations, kind: .echo)
        default:
            fatalError("dbus-bench: --only takes executor-echo, pool-echo or c-echo")
        }
        print("\(what): \(iterations) calls, p50 \(rounded(samples.percentile(50))) µs, "
            + "p99 \(rounded(samples.percentile(99))) µs")
    }

    /// This executable again as the C echo server (`--serve`), with this process's standard streams.
    static func startServer() throws -> pid_t {
        try Spawn.start([Spawn.ownPath, "--serve", serverName], stdin: .inherited, stdout: .inherited, stderr: .inherited)
    }

    static func waitForOwner(of name: String, on connection: Connection) async throws {
        for _ in 0..<200 {
            if try await connection.owner(of: try BusName(name)) != nil { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw DBusError(.serviceUnknown, "the echo server never appeared")
    }

    /// Prints one figure: the Swift layer's value beside the C client's.
    static func report(_ bench: String, _ metric: String, _ value: Double, _ anchor: Double, unit: String,
                       goal: Double?) {
        BenchReport.report(bench, metric, value: value, unit: unit, anchor: "C libdbus client", anchorValue: anchor,
                           goal: goal.map { .ratio(atMost: $0) })
    }
}

/// Runs the Swift and C clients in alternating rounds so that machine noise hits both alike.
struct Runner {
    // Names are validated once, as an app declares them; the C client passes bare C strings.
    static let server: BusName = "org.ferry.BenchEcho"
    static let path: ObjectPath = "/org/ferry/Bench"
    static let interface: InterfaceName = "org.ferry.Bench1"
    static let echo: MemberName = "Echo"
    static let takeFD: MemberName = "TakeFD"

    enum Kind { case echo, fd }

    let address: String
    let connection: Connection
    let rounds: Int

    func interleaved(payload: Int, iterations: Int, kind: Kind) async throws -> (swift: Samples, c: Samples) {
        var swift = Samples(), c = Samples()
        let perRound = max(1, iterations / rounds)
        _ = try await runSwift(payload: payload, iterations: max(1, perRound / 10), kind: kind)  // warm-up
        for _ in 0..<rounds {
            swift.values += try await runSwift(payload: payload, iterations: perRound, kind: kind)
            c.values += try runC(payload: payload, iterations: perRound, kind: kind)
        }
        return (swift, c)
    }

    func runSwift(payload: Int, iterations: Int, kind: Kind) async throws -> [Double] {
        let bytes = [UInt8](repeating: 0xA5, count: payload)
        var times: [Double] = []
        times.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = now()
            switch kind {
            case .echo:
                _ = try await connection.call(destination: Self.server, path: Self.path, interface: Self.interface,
                                              member: Self.echo, body: [.bytes(bytes)])
            case .fd:
                let fd = try FileDescriptor.memfd(name: "dbus-bench", contents: bytes, sealed: false)
                _ = try await connection.call(destination: Self.server, path: Self.path, interface: Self.interface,
                                              member: Self.takeFD, body: [.unixFD(fd)])
                fd.close()
            }
            times.append(now() - start)
        }
        return times
    }

    func runC(payload: Int, iterations: Int, kind: Kind) throws -> [Double] {
        var times = [Double](repeating: 0, count: iterations)
        let rc = times.withUnsafeMutableBufferPointer { buffer in
            switch kind {
            case .echo: cdb_echo(address, "org.ferry.BenchEcho", payload, Int32(iterations), buffer.baseAddress)
            case .fd: cdb_take_fd(address, "org.ferry.BenchEcho", payload, Int32(iterations), buffer.baseAddress)
            }
        }
        guard rc == 0 else { throw DBusError(.failed, "the C client failed") }
        return times
    }
}

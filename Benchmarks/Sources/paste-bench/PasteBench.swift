import BenchReport
#if canImport(Glibc)
import Glibc
#endif

/// The pasteboard benchmarks of issue 4 (P1–P4, P6), each beside its anchor in the same run, in
/// alternating rounds. Prints one JSON line per figure (see scripts/bench-table.py).
///
/// Needs `DBUS_SESSION_BUS_ADDRESS` with ferryd serving it, `DISPLAY` for the xclip anchors and
/// `FERRY_BENCH_FERRYD_PID` for P4; scripts/bench.sh sets all three up.
///
/// Usage: `paste-bench [--quick] [--only latency|p1|p2|dbus|throughput|startup|direct|load]` (p1: the
/// D-Bus layer's rows and the held paste; p2: the promised paste; dbus: only the layer's rows;
/// direct: issue 20's direct-connection rows, and load: its 50-client load, only when asked for); `--write-pipe N`, `--serve-echo ADDRESS`,
/// `--serve-swift-echo ADDRESS`, `--serve-peer-echo ADDRESS` and `--serve-swift-peer-echo ADDRESS`
/// are the anchor processes it starts itself.
/// Environment: `FERRY_BENCH_MIB` (P3 size, default 1024), `FERRY_BENCH_XCLIP_MIB` (the xclip
/// anchor's size, default the same), `FERRY_BENCH_FERRY` (the ferry executable for P6, default
/// in `Spawn.ferryFolder`, the root package's release folder).
@main
enum PasteBench {
    static func main() async {
        let args = CommandLine.arguments
        if args.count == 3, args[1] == "--write-pipe", let bytes = Int(args[2]) {
            exit(PipeAnchor.writerMain(bytes: bytes))
        }
        if args.count == 3, args[1] == "--serve-echo" { exit(EchoAnchor.serverMain(address: args[2])) }
        if args.count == 3, args[1] == "--serve-swift-echo" { exit(await SwiftEchoServer.serverMain(address: args[2])) }
        if args.count == 3, args[1] == "--serve-peer-echo" { exit(PeerEchoAnchor.serverMain(address: args[2])) }
        if args.count == 3, args[1] == "--serve-swift-peer-echo" { exit(await SwiftPeerEchoServer.serverMain(address: args[2])) }
        guard let address = Config.environment("DBUS_SESSION_BUS_ADDRESS") else {
            note("set DBUS_SESSION_BUS_ADDRESS (scripts/bench.sh starts a private bus and ferryd)")
            exit(1)
        }
        let config = Config(arguments: args)
        do {
            let scratch = try Scratch()
            defer { scratch.remove() }
            if config.runs("latency") { try await LatencyBench(config: config, address: address).run() }
            if config.runs("throughput") { try await ThroughputBench(config: config, scratch: scratch).run() }
            if config.runs("startup") { try await StartupBench(config: config, scratch: scratch).run() }
            if config.only == "direct" { try await DirectBench(config: config, address: address, scratch: scratch).run() }
            if config.only == "load" { try await LoadBench(config: config).run() }
        } catch {
            note("error: \(error)")
            exit(1)
        }
    }
}

/// What to run and how much.
struct Config {
    var quick: Bool
    var only: String?
    var bytes: Int
    var xclipBytes: Int

    init(arguments: [String]) {
        quick = arguments.contains("--quick")
        if let index = arguments.firstIndex(of: "--only"), index + 1 < arguments.count { only = arguments[index + 1] }
        let mib = Self.environment("FERRY_BENCH_MIB").flatMap(Int.init) ?? (quick ? 256 : 1024)
        bytes = mib << 20
        xclipBytes = (Self.environment("FERRY_BENCH_XCLIP_MIB").flatMap(Int.init) ?? mib) << 20
    }

    func runs(_ section: String) -> Bool {
        only == nil || only == section || (section == "latency" && ["p1", "p2", "dbus"].contains(only))
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// A temporary directory for the files the benchmarks copy, removed at the end.
struct Scratch {
    let path: String

    init() throws {
        var template = Array("\(Config.environment("TMPDIR") ?? "/tmp")/paste-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Spawn.Failure(description: "mkdtemp failed: \(errno)")
        }
        path = String(cString: made)
    }

    /// Writes `count` bytes of 0xA5 to a new file in the directory; returns its path.
    func file(named name: String, count: Int) throws -> String {
        let filePath = "\(path)/\(name)"
        let fd = open(filePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Spawn.Failure(description: "cannot create \(filePath): \(errno)") }
        defer { close(fd) }
        let buffer = [UInt8](repeating: 0xA5, count: Sink.chunk)
        var left = count
        try buffer.withUnsafeBytes { raw in
            while left > 0 {
                let n = write(fd, raw.baseAddress, min(left, raw.count))
                if n < 0 { if errno == EINTR { continue }; throw Spawn.Failure(description: "write \(filePath): \(errno)") }
                left -= n
            }
        }
        return filePath
    }

    /// Writes `text` to a new file in the directory; returns its path.
    func file(named name: String, text: String) throws -> String {
        let filePath = "\(path)/\(name)"
        let fd = open(filePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Spawn.Failure(description: "cannot create \(filePath): \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw Spawn.Failure(description: "write \(filePath): \(errno)")
        }
        return filePath
    }

    func remove() {
        _ = try? Spawn.output(["rm", "-rf", path], stderr: .null)
    }
}

import BenchReport
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// Benchmark P7 of issue 5: a desktop of 200 registered apps × 5 scenes, each app on its own raw
/// bus connection in this process. Times `ferry scenes --json` as a whole process (median and
/// p90) beside its anchor `ferry pasteboards` (the same start-up and a trivial call), in
/// alternating runs, and reads ferryd's VmRSS. Goals: ≤ 40 ms and ferryd's CPU per listing ≤ 6 ms
/// (issue 20; issue 5 asked ≤ 100 ms), ≤ 100 MiB. Also reports how fast
/// the 1000 sessions were set up (informative). One JSON line per figure (scripts/bench-table.py).
///
/// It starts everything itself: a private dbus-daemon and the release `ferryd` with a fresh
/// state folder (both stopped however the benchmark ends).
///
/// Usage: `scene-bench [--apps N] [--scenes N] [--runs N] [--parallel N] [--compare FERRY]`
/// Environment: `FERRY_BENCH_FERRYD`, `FERRY_BENCH_FERRY` (the executables; default: in
/// `Spawn.ferryFolder`, the root package's release folder).
@main
enum SceneBench {
    static func main() async {
        // Writing to the leash's pipe must never kill this process.
        signal(SIGPIPE, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") || arguments.contains("-h") {
            print(Config.usage)
            exit(0)
        }
        let config: Config
        do { config = try Config(arguments: arguments) } catch {
            note("\(error)\n\(Config.usage)")
            exit(64)
        }
        let stage: BrokerStage
        do { stage = try BrokerStage.start(ferryd: config.ferryd) } catch {
            note("error: \(error)")
            exit(1)
        }
        // The `ferry` commands find the private bus the way a user's would.
        setenv("DBUS_SESSION_BUS_ADDRESS", stage.address, 1)
        var status: Int32 = 0
        do {
            try await SceneDesktopBench(config: config, stage: stage).run()
        } catch {
            note("error: \(error)")
            status = 1
        }
        stage.stop()
        exit(status)
    }
}

/// What to run and how much.
struct Config {
    var apps = 200
    var scenesPerApp = 5
    var runs = 30
    var parallel = 8
    var ferryd: String
    var ferry: String
    /// Another build's `ferry`, timed in the same alternation (`--compare`): an A/B of two builds
    /// on one desktop, where runs of the whole bench differ by more than the change.
    var comparedFerry: String?

    static let usage = """
        usage: scene-bench [--apps N] [--scenes N] [--runs N] [--parallel N] [--compare FERRY]
          --apps N         registered apps, each on its own connection (default 200, at most 999)
          --scenes N       scene sessions per app (default 5)
          --runs N         timed runs of each command (default 30)
          --parallel N     apps set up at a time (default 8)
          --compare FERRY  also time this ferry executable's `scenes --json`, alternating with the
                           other commands (an A/B of two builds)
        """

    init(arguments: [String]) throws {
        let folder = Spawn.ferryFolder
        ferryd = getenv("FERRY_BENCH_FERRYD").map { String(cString: $0) } ?? "\(folder)/ferryd"
        ferry = getenv("FERRY_BENCH_FERRY").map { String(cString: $0) } ?? "\(folder)/ferry"
        var rest = arguments[...]
        while let option = rest.popFirst() {
            if option == "--compare", let path = rest.popFirst() {
                comparedFerry = path
                continue
            }
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                throw Spawn.Failure(description: "\(option) needs a positive number")
            }
            switch option {
            case "--apps": apps = min(value, 999)
            case "--scenes": scenesPerApp = value
            case "--runs": runs = value
            case "--parallel": parallel = value
            default: throw Spawn.Failure(description: "unknown option \(option)")
            }
        }
    }
}

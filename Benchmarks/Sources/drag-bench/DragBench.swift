import BenchReport
#if canImport(Glibc)
import Glibc
#endif

/// Benchmark P5 of issue 6: one drag's Move → proposal round trip at 1,000 moves/s.
///
/// It starts a private dbus-daemon and the release `ferryd` on it, registers a source app and
/// two target apps (raw bus connections in this process exporting `org.ferry.Client1`, the
/// targets answering DropEntered/DropUpdated with copy at once), places the two targets' scenes
/// side by side, begins one drag from the source's scene on a fourth connection (the
/// initiator, as `ferry drag` is) and sends its Move calls paced at the rate asked, inside one
/// target, across to the other and back. After each one-second segment of moves, the same
/// paced calls go through a do-nothing relay process (the floor: what the bus and the Swift
/// D-Bus layer cost without ferryd's work), then the anchor — a bare C libdbus Echo round trip
/// on the same bus — runs back to back. Goals: p50 ≤ 0.5 ms, p99 ≤ 2 ms. One JSON line per
/// figure (scripts/bench-table.py); the percentile distributions go to stderr.
///
/// Usage: `drag-bench [--seconds N] [--rate N] [--stay N] [--warmup N] [--items source|initiator]
/// [--no-listener]`
/// Environment: `FERRY_BENCH_FERRYD` (default: the `ferryd` in `Spawn.ferryFolder`, the root
/// package's release folder).
@main
enum DragBench {
    static func main() async {
        // Writing to the leash's pipe must never kill this process.
        signal(SIGPIPE, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--serve-echo", arguments.count == 2 {
            exit(EchoAnchor.serverMain(address: arguments[1]))
        }
        if arguments.first == "--serve-relay", arguments.count == 2 {
            exit(await MoveRelay.serverMain(address: arguments[1]))
        }
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
        var status: Int32 = 0
        do {
            try await MoveBench(config: config, stage: stage).run()
        } catch {
            note("error: \(error)")
            note("ferryd's log ends:\n\(stage.logTail("ferryd.log"))")
            status = 1
        }
        stage.stop()
        exit(status)
    }
}

/// What to run and how much.
struct Config {
    /// Measured seconds (one-second segments, the anchor between them).
    var seconds = 5
    /// Moves per second.
    var rate = 1000
    /// Moves inside one scene before crossing to the other.
    var stay = 50
    /// Paced moves before measuring (not counted).
    var warmup = 500
    /// Who writes the drag's item: the source app (ProvideDragItems) or the initiator (SetItems).
    var items = "source"
    /// Whether the source app listens to the session's Moved signal (the client library does).
    var listener = true
    /// Whether the Moves and the apps' proposals go over direct connections (needs the
    /// `XDG_RUNTIME_DIR` ferryd listens in).
    var direct = false
    var ferryd: String

    static let usage = """
        usage: drag-bench [--seconds N] [--rate N] [--stay N] [--warmup N] [--items source|initiator] [--no-listener] [--direct]
          --seconds N   measured seconds of moves (default 5)
          --rate N      moves per second (default 1000)
          --stay N      moves inside one target scene before crossing to the other (default 50)
          --warmup N    paced moves before measuring (default 500)
          --items WHO   who writes the dragged item: source (ProvideDragItems, default) or initiator
          --no-listener the source app does not subscribe to the session's Moved signal
          --direct      Moves and proposals over direct connections (XDG_RUNTIME_DIR must be set)
        """

    init(arguments: [String]) throws {
        ferryd = getenv("FERRY_BENCH_FERRYD").map { String(cString: $0) } ?? "\(Spawn.ferryFolder)/ferryd"
        var rest = arguments[...]
        while let option = rest.popFirst() {
            if option == "--no-listener" {
                listener = false
                continue
            }
            if option == "--direct" {
                direct = true
                continue
            }
            guard let text = rest.popFirst() else { throw Spawn.Failure(description: "\(option) needs a value") }
            if option == "--items" {
                guard text == "source" || text == "initiator" else {
                    throw Spawn.Failure(description: "--items is source or initiator, not \(text)")
                }
                items = text
                continue
            }
            guard let value = Int(text), value > 0 else { throw Spawn.Failure(description: "\(option) needs a positive number") }
            switch option {
            case "--seconds": seconds = value
            case "--rate": rate = min(value, 100_000)
            case "--stay": stay = value
            case "--warmup": warmup = value
            default: throw Spawn.Failure(description: "unknown option \(option)")
            }
        }
    }
}

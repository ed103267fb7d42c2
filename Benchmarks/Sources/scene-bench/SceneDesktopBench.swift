import BenchReport
import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// P7 itself: sets up the desktop (apps × scenes), then times the `ferry` commands and reads
/// ferryd's memory.
struct SceneDesktopBench {
    let config: Config
    let stage: BrokerStage

    static let bench = "P7"
    var desktop: String { "\(config.apps) apps × \(config.scenesPerApp) scenes" }
    var sessionCount: Int { config.apps * config.scenesPerApp }

    func run() async throws {
        let idle = try Memory(pid: stage.ferrydPID)
        let (apps, setUpTime) = try await setUp()
        report("\(Self.bench) (context) set-up: \(sessionCount) sessions (\(config.apps) connections + RegisterApp "
               + "scenes=true + RequestActivation, \(config.parallel) apps at a time)", "rate",
               value: Double(sessionCount) / setUpTime, unit: "sessions/s")
        report("\(Self.bench) (context) set-up: \(sessionCount) sessions", "time, once", value: setUpTime, unit: "s")

        var cliFailure: (any Error)?
        do {
            try await breakdown(on: apps[0])
            try timeCommands()
        } catch {
            cliFailure = error
        }
        let loaded = try Memory(pid: stage.ferrydPID)
        report("\(Self.bench) ferryd RSS with \(desktop)", "VmRSS", value: loaded.rss, unit: "MiB",
               anchor: "ferryd's RSS when READY", anchorValue: idle.rss, goal: .value(atMost: 100, "≤ 100 MiB"))
        report("\(Self.bench) (context) ferryd peak RSS", "VmHWM", value: loaded.peak, unit: "MiB")
        if let cliFailure { throw cliFailure }
        // The apps stay registered (their connections open) until every figure is taken.
        withExtendedLifetime(apps) {}
    }

    /// Connects and registers every app and opens scenes until each has `scenesPerApp`; waits
    /// until every scene is connected. Returns the apps, in app id order, and the time it took
    /// in seconds (up to the last scene connected, before ListSessions checks the count).
    func setUp() async throws -> ([BenchApp], Double) {
        let began = now()
        let address = stage.address, opens = config.scenesPerApp - 1
        var apps = [BenchApp?](repeating: nil, count: config.apps)
        try await withThrowingTaskGroup(of: (Int, BenchApp).self) { group in
            var next = 0
            func addNext() {
                guard next < config.apps else { return }
                let index = next
                next += 1
                group.addTask {
                    let app = try await BenchApp(index: index + 1, address: address)
                    try await app.register()
                    // The broker gives a newly registered app one session by itself.
                    for _ in 0..<opens { try await app.openScene() }
                    return (index, app)
                }
            }
            for _ in 0..<config.parallel { addNext() }
            while let (index, app) = try await group.next() {
                apps[index] = app
                addNext()
            }
        }
        let ready = apps.compactMap { $0 }
        if try await !waitForConnectedScenes(ready, seconds: 10) {
            try await topUp(ready)
            guard try await waitForConnectedScenes(ready, seconds: 30) else {
                throw Spawn.Failure(description: "only \(connectedScenes(ready)) of \(sessionCount) scenes connected")
            }
        }
        let seconds = (now() - began) / 1e6
        try await topUp(ready)
        return (ready, seconds)
    }

    /// Opens more scenes for apps that have fewer than `scenesPerApp` (when the broker did not
    /// give each new app its first session, or gave it later than the requests).
    func topUp(_ apps: [BenchApp]) async throws {
        let counts = try await sessionsPerApp(on: apps[0].connection)
        var opened = 0
        for app in apps {
            for _ in (counts[app.appID] ?? 0)..<max(counts[app.appID] ?? 0, config.scenesPerApp) {
                try await app.openScene()
                opened += 1
            }
        }
        if opened > 0 { note("opened \(opened) more scenes to reach \(config.scenesPerApp) per app") }
        let total = try await sessionsPerApp(on: apps[0].connection).values.reduce(0, +)
        guard total >= sessionCount else {
            throw Spawn.Failure(description: "ListSessions shows \(total) sessions, expected \(sessionCount)")
        }
        if total > sessionCount { note("ListSessions shows \(total) sessions (more than \(sessionCount))") }
    }

    /// Waits at most `seconds` until the apps have been asked to connect every session; false
    /// when they have not.
    func waitForConnectedScenes(_ apps: [BenchApp], seconds: Double) async throws -> Bool {
        let deadline = now() + seconds * 1e6
        while now() < deadline {
            if connectedScenes(apps) >= sessionCount { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return connectedScenes(apps) >= sessionCount
    }

    /// Scenes connected in all apps (ConnectScene calls minus DisconnectScene calls).
    func connectedScenes(_ apps: [BenchApp]) -> Int {
        apps.reduce(0) { $0 + $1.counters.connectedScenes.load(ordering: .relaxed) }
    }

    /// How many sessions ListSessions shows per app id.
    func sessionsPerApp(on connection: Connection) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for session in try await listSessions(on: connection) {
            let app = (try? session.value(forKey: "bundleIdentifier", as: String.self)) ?? ""
            counts[app, default: 0] += 1
        }
        return counts
    }

    /// D-Bus: `org.ferry.Scenes1.ListSessions` (all apps).
    func listSessions(on connection: Connection) async throws -> [[String: DBusValue]] {
        let reply = try await connection.call(
            destination: BenchApp.brokerName, path: "/org/ferry/Scenes", interface: "org.ferry.Scenes1",
            member: "ListSessions", body: [[String: DBusValue]().dbusValue], timeout: .seconds(30))
        guard reply.count == 1 else { throw Spawn.Failure(description: "ListSessions replied \(reply.count) values") }
        return try reply[0].get([[String: DBusValue]].self)
    }

    /// Where `ferry scenes` spends its time, without process start-up: the ListSessions call of
    /// every session over a direct connection (as `ferry scenes` makes it) and over the bus (the
    /// fallback), against ListPasteboards, from this process, in alternating calls; and the CPU
    /// time each ListSessions costs ferryd (building and sending the reply), this process
    /// (receiving and decoding it) and, on the bus, dbus-daemon, which a loaded machine inflates
    /// less than the wall time.
    func breakdown(on app: BenchApp) async throws {
        let direct = try await BenchClient.openDirect(from: app.connection, broker: app.broker)
        var routes = [Route(name: "direct connection", connection: direct), Route(name: "bus", connection: app.connection)]
        var pasteboards = Samples()
        for round in 0..<(config.runs + 5) {
            for index in routes.indices {
                let measured = try await routes[index].list(self, stage: stage)
                if round >= 5 { routes[index].add(measured) }  // after a warm-up
            }
            let start = now()
            _ = try await app.connection.call(destination: BenchApp.brokerName, path: "/org/ferry/Broker",
                                              interface: "org.ferry.Broker1", member: "ListPasteboards")
            if round >= 5 { pasteboards.append((now() - start) / 1000) }
        }
        await direct.close()
        let runs = Double(config.runs)
        for route in routes {
            let direct = route.connection === direct
            report("\(Self.bench) breakdown: ListSessions of \(sessionCount) sessions, one call in-process, \(route.name)",
                   "median of \(config.runs)", value: route.times.median, unit: "ms",
                   anchor: "ListPasteboards, in-process, bus", anchorValue: pasteboards.median)
            // The goal holds for the listing `ferry scenes` makes: over the direct connection.
            report("\(Self.bench) breakdown: ferryd CPU time per ListSessions, \(route.name) (/proc/pid/stat, 10 ms ticks)",
                   "mean of \(config.runs)", value: route.brokerCPU / runs, unit: "ms",
                   goal: direct ? .value(atMost: 6, "≤ 6 ms") : nil)
            report("\(Self.bench) breakdown: caller CPU time per ListSessions, \(route.name) (receive + decode, getrusage)",
                   "mean of \(config.runs)", value: route.clientCPU / runs, unit: "ms")
            if !direct {
                report("\(Self.bench) breakdown: dbus-daemon CPU time per ListSessions (/proc/pid/stat)",
                       "mean of \(config.runs)", value: route.busCPU / runs, unit: "ms")
            }
        }
    }

    /// One way of calling ListSessions, and what its calls cost.
    struct Route {
        let name: String
        let connection: Connection
        var times = Samples()
        var brokerCPU = 0.0, clientCPU = 0.0, busCPU = 0.0

        /// One ListSessions over this route: ms of wall time, and of CPU time in ferryd, this
        /// process and dbus-daemon.
        func list(_ bench: SceneDesktopBench, stage: BrokerStage) async throws -> (Double, Double, Double, Double) {
            let broker = try CPUTime.of(stage.ferrydPID), client = CPUTime.ofSelf(), bus = try CPUTime.of(stage.busPID)
            let start = now()
            _ = try await bench.listSessions(on: connection)
            let wall = (now() - start) / 1000
            return (wall, try CPUTime.of(stage.ferrydPID) - broker, CPUTime.ofSelf() - client, try CPUTime.of(stage.busPID) - bus)
        }

        mutating func add(_ measured: (wall: Double, broker: Double, client: Double, bus: Double)) {
            times.append(measured.wall)
            brokerCPU += measured.broker
            clientCPU += measured.client
            busCPU += measured.bus
        }
    }

    /// `ferry scenes --json` against `ferry pasteboards`, whole processes, alternating runs.
    func timeCommands() throws {
        let scenes = [config.ferry, "scenes", "--json"], pasteboards = [config.ferry, "pasteboards"]
        guard access(config.ferry, X_OK) == 0 else {
            throw Spawn.Failure(description: "no ferry executable at \(config.ferry) (swift build -c release)")
        }
        let (status, output) = try Spawn.output(scenes)
        guard status == 0 else {
            throw Spawn.Failure(description: "`ferry scenes --json` exited with \(status) (is the scenes command built?)")
        }
        let shown = Self.occurrences(of: Array("org.ferry.bench.app".utf8), in: output)
        if shown < sessionCount {
            note("warning: `ferry scenes --json` names the bench apps \(shown) times for \(sessionCount) sessions")
        }
        report("\(Self.bench) (context) ferry scenes --json output, \(desktop)", "size",
               value: Double(output.count) / 1024, unit: "KiB")
        let compared = config.comparedFerry.map { [$0, "scenes", "--json"] }
        for _ in 0..<3 {  // warm caches
            _ = try Spawn.timedRun(scenes)
            _ = try Spawn.timedRun(pasteboards)
            if let compared { _ = try Spawn.timedRun(compared) }
        }
        var scenesTimes = Samples(), anchorTimes = Samples(), scenesCPU = Samples(), anchorCPU = Samples()
        var comparedTimes = Samples(), comparedCPU = Samples()
        for _ in 0..<config.runs {
            let subject = try Spawn.timedRun(scenes), anchor = try Spawn.timedRun(pasteboards)
            scenesTimes.append(subject.wall)
            scenesCPU.append(subject.cpu)
            anchorTimes.append(anchor.wall)
            anchorCPU.append(anchor.cpu)
            if let compared {
                let other = try Spawn.timedRun(compared)
                comparedTimes.append(other.wall)
                comparedCPU.append(other.cpu)
            }
        }
        if let path = config.comparedFerry {
            report("\(Self.bench) (comparison) \(path) scenes --json, whole process", "median of \(config.runs)",
                   value: comparedTimes.median, unit: "ms", anchor: "ferry scenes --json", anchorValue: scenesTimes.median)
            report("\(Self.bench) (comparison) \(path) scenes --json, CPU time of the process", "median of \(config.runs)",
                   value: comparedCPU.median, unit: "ms", anchor: "ferry scenes --json", anchorValue: scenesCPU.median)
        }
        let name = "\(Self.bench) ferry scenes --json, \(desktop), whole process"
        let anchor = "ferry pasteboards (same start-up, trivial call)"
        report(name, "median of \(config.runs)", value: scenesTimes.median, unit: "ms", anchor: anchor,
               anchorValue: anchorTimes.median, goal: .value(atMost: 40, "≤ 40 ms"))
        report(name, "p90", value: scenesTimes.percentile(90), unit: "ms", anchor: anchor,
               anchorValue: anchorTimes.percentile(90))
        report("\(Self.bench) (context) ferry scenes --json, CPU time of the process (user + system, RUSAGE_CHILDREN)",
               "median of \(config.runs)", value: scenesCPU.median, unit: "ms", anchor: "ferry pasteboards",
               anchorValue: anchorCPU.median)
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
        var count = 0, index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                count += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        return count
    }
}

/// A process's resident memory, from /proc/<pid>/status.
struct Memory {
    /// VmRSS in MiB.
    var rss: Double
    /// VmHWM (peak resident) in MiB.
    var peak: Double

    init(pid: pid_t) throws {
        guard let status = Spawn.readFile("/proc/\(pid)/status") else {
            throw Spawn.Failure(description: "cannot read /proc/\(pid)/status (did ferryd exit?)")
        }
        func field(_ name: String) -> Double {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                let kib = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                    .flatMap { Double($0) }
                return (kib ?? 0) / 1024
            }
            return 0
        }
        rss = field("VmRSS")
        peak = field("VmHWM")
    }
}

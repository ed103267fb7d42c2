import BenchReport
import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// P5 itself: sets up the apps and their scenes, begins the drag, runs the paced moves in
/// one-second segments with the anchor between them, and reports.
struct MoveBench {
    /// Bytes the anchor echoes: about a Move's argument (a `(dd)`).
    static let echoPayload = 16

    let config: Config
    let stage: BrokerStage

    static let bench = "P5"

    /// Counts the Moved signals the source app hears.
    final class SignalCount: Sendable {
        let value = Atomic<Int>(0)
    }

    /// One measured second: its p50 (µs), ferryd's CPU per move (µs), moves sent in the drag
    /// by its end.
    typealias Second = (p50: Double, ferrydCPU: Double, moves: Int)

    /// The apps and their scenes.
    struct Desktop {
        var source: DragApp, left: DragApp, right: DragApp
        var sourceScene: String, leftScene: String, rightScene: String
        var apps: [DragApp] { [source, left, right] }
    }

    func run() async throws {
        let address = stage.address
        let initiator = try await Connection(address: address)
        let (relayPID, relayName) = try await MoveRelay.start(address: address, connection: initiator)
        defer { Spawn.stop(relayPID, grace: 2) }
        let desktop = try await setUp(relay: relayName)
        let (session, pasteboard) = try await beginDrag(on: initiator, from: desktop.sourceScene)
        if config.items == "initiator" {
            try await DragApp.writeItem(on: initiator, pasteboard: pasteboard)
        } else if desktop.source.log.provided.load(ordering: .relaxed) == 0 {
            note("warning: BeginDrag returned without asking the source app for its items (ProvideDragItems)")
        }
        note("drag \(session.rawValue) from \(desktop.sourceScene); targets \(desktop.leftScene) (left), "
             + "\(desktop.rightScene) (right)")

        let moved = SignalCount()
        var listener: Task<Void, Never>?
        if config.listener {
            let rule = MatchRule(sender: desktop.source.broker, interface: "org.ferry.DragSession1", member: "Moved",
                                 path: session)
            let subscription = try await desktop.source.connection.subscribe(to: rule)
            listener = Task {
                do { for try await _ in subscription { moved.value.add(1, ordering: .relaxed) } } catch {}
            }
        }
        defer { listener?.cancel() }

        // With --direct, the Moves and the proposals go over direct connections, as the client
        // library makes them when the broker offers them.
        var moves = initiator
        if config.direct {
            for app in desktop.apps { try await app.openDirect() }
            moves = try await BenchClient.openDirect(from: initiator, broker: desktop.source.broker)
        }
        let echo = try await EchoAnchor(address: address, connection: initiator)
        defer { echo.stop() }
        let targets = [desktop.left, desktop.right], scenes = [desktop.leftScene, desktop.rightScene]
        let path = PacedMoves.Path(stay: config.stay), interval = 1e6 / Double(config.rate)
        let paced = PacedMoves(connection: moves, destination: DragApp.brokerName, session: session,
                               interface: "org.ferry.DragSession1", path: path, targets: targets, scenes: scenes,
                               interval: interval)
        try await MoveRelay.setTargets(zip(targets, scenes).map { ($0.connection.uniqueName, $1) }, on: initiator)
        let floor = PacedMoves(connection: initiator, destination: MoveRelay.name, session: MoveRelay.path,
                               interface: MoveRelay.interfaceName, path: path, targets: targets, scenes: scenes,
                               interval: interval)
        let executor = initiator.taskExecutor, movesExecutor = moves.taskExecutor
        let warmup = config.warmup
        let warm = try await withTaskExecutorPreference(movesExecutor) {
            try await paced.run(first: 0, slots: warmup, after: nil)
        }
        if let wrong = warm.firstWrong {
            throw Spawn.Failure(description: "\(warm.wrong) of \(warm.sent) warm-up moves were answered otherwise; first: \(wrong)")
        }
        let floorWarm = try await withTaskExecutorPreference(executor) {
            try await floor.run(first: 0, slots: max(1, warmup / 2), after: nil)
        }
        if let wrong = floorWarm.firstWrong { throw Spawn.Failure(description: "the relay answered otherwise: \(wrong)") }
        _ = try echo.echo(payload: Self.echoPayload, iterations: 100)

        // One-second segments: the drag, then the relay floor, then the anchor.
        var total = PacedMoves.Run(), floorRun = PacedMoves.Run(), anchor = Samples(), usage = Usage()
        // The relay's figures sit where ferryd's do.
        var floorUsage = Usage()
        // Per measured second: the p50 (µs), ferryd's CPU per move (µs) and the moves sent in the
        // drag by its end (the broker records every step), to see drift.
        var seconds: [Second] = []
        var next = warmup, scene = warm.lastScene
        let movedBefore = moved.value.load(ordering: .relaxed)
        for _ in 0..<config.seconds {
            let before = try Usage(ferryd: stage.ferrydPID, bus: stage.busPID)
            let (first, slots, after) = (next, config.rate, scene)
            let segment = try await withTaskExecutorPreference(movesExecutor) {
                try await paced.run(first: first, slots: slots, after: after)
            }
            var used = Usage()
            used.add(try Usage(ferryd: stage.ferrydPID, bus: stage.busPID), minus: before)
            usage.add(used)
            total.add(segment)
            seconds.append((segment.latencies.median, used.ferrydCPU * 1000 / Double(max(segment.sent, 1)),
                            warm.sent + total.sent))
            next += slots
            scene = segment.lastScene
            let relayBefore = try Usage(ferryd: relayPID, bus: stage.busPID)
            floorRun.add(try await withTaskExecutorPreference(executor) {
                try await floor.run(first: first, slots: slots, after: nil)
            })
            floorUsage.add(try Usage(ferryd: relayPID, bus: stage.busPID), minus: relayBefore)
            anchor.append(contentsOf: try echo.echo(payload: Self.echoPayload, iterations: min(config.rate, 1000)))
        }
        // Moved is emitted without waiting: give the last ones a moment to arrive.
        try await Task.sleep(for: .milliseconds(200))
        let signals = moved.value.load(ordering: .relaxed) - movedBefore
        try await cancel(session, on: initiator)
        try await waitForEnd(of: desktop.source)

        publish(total, floor: floorRun, anchor: anchor, signals: signals, usage: usage, floorUsage: floorUsage,
                seconds: seconds)
        if moves !== initiator { await moves.close() }
        await initiator.close()
        for app in desktop.apps { await app.close() }
    }

    /// Registers the source and the two target apps and places the targets' scenes side by side.
    func setUp(relay: BusName) async throws -> Desktop {
        let address = stage.address
        let source = try await DragApp(appID: "org.ferry.bench.dragsource", address: address, relay: relay)
        let left = try await DragApp(appID: "org.ferry.bench.droptarget1", address: address, relay: relay)
        let right = try await DragApp(appID: "org.ferry.bench.droptarget2", address: address, relay: relay)
        // Each registered app gets a first (cascaded) scene by itself; the two targets' scenes
        // are placed after those, side by side in front of everything: the left and right
        // halves of the screen.
        for app in [source, left, right] { try await app.register() }
        for app in [source, left, right] { try await app.waitForScenes(1, seconds: 10) }
        let leftScene = try await left.openScene(placement: "left")
        let rightScene = try await right.openScene(placement: "right", requestingScene: leftScene)
        guard let sourceScene = source.log.sceneIDs.first else { throw Spawn.Failure(description: "the source has no scene") }
        return Desktop(source: source, left: left, right: right, sourceScene: sourceScene, leftScene: leftScene,
                       rightScene: rightScene)
    }

    /// D-Bus: `org.ferry.DragManager1.BeginDrag` from `scene`; the session's and the drag
    /// pasteboard's paths.
    func beginDrag(on connection: Connection, from scene: String) async throws -> (ObjectPath, ObjectPath) {
        var options: [String: DBusValue] = [:]
        if config.items == "initiator" { options["items"] = .string("initiator") }
        let reply = try await connection.call(
            destination: DragApp.brokerName, path: "/org/ferry/Drag", interface: "org.ferry.DragManager1",
            member: "BeginDrag", body: [.string(scene), options.dbusValue], timeout: .seconds(10))
        guard reply.count == 2, case .objectPath(let session) = reply[0], case .objectPath(let pasteboard) = reply[1] else {
            throw Spawn.Failure(description: "BeginDrag replied \(reply) (expected (o, o))")
        }
        return (session, pasteboard)
    }

    /// D-Bus: `org.ferry.DragSession1.Cancel`.
    func cancel(_ session: ObjectPath, on connection: Connection) async throws {
        _ = try await connection.call(destination: DragApp.brokerName, path: session, interface: "org.ferry.DragSession1",
                                      member: "Cancel", timeout: .seconds(5))
    }

    /// Waits at most 2 s for the source's DragEnded; notes it when it does not come.
    func waitForEnd(of source: DragApp) async throws {
        let deadline = now() + 2e6
        while source.log.ended.load(ordering: .relaxed) == 0 && now() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        if source.log.ended.load(ordering: .relaxed) == 0 { note("warning: the source never heard DragEnded") }
    }

    func publish(_ run: PacedMoves.Run, floor: PacedMoves.Run, anchor: Samples, signals: Int, usage: Usage,
                 floorUsage: Usage,
                 seconds: [Second]) {
        // Over direct connections, issue #20's goals; over the bus, the first ones (issue 6).
        let route = config.direct ? "direct connections" : "2 bus hops"
        let name = "\(Self.bench) drag Move → proposal at \(config.rate)/s (2 target apps, DropUpdated round trip"
            + (config.direct ? ", direct connections)" : ")")
        let anchorName = "C libdbus echo \(Self.echoPayload) B, back to back"
        let ms = { (x: Double) in x / 1000 }
        report(name, "p50 of \(run.sent)", value: ms(run.latencies.median), unit: "ms", anchor: anchorName,
               anchorValue: ms(anchor.median),
               goal: config.direct ? .value(atMost: 0.25, "≤ 0.25 ms") : .value(atMost: 0.5, "≤ 0.5 ms"))
        report(name, "p99", value: ms(run.latencies.percentile(99)), unit: "ms", anchor: anchorName,
               anchorValue: ms(anchor.percentile(99)),
               goal: config.direct ? .value(atMost: 1, "≤ 1 ms") : .value(atMost: 2, "≤ 2 ms"))
        report(name, "max", value: ms(run.latencies.percentile(100)), unit: "ms", anchor: anchorName,
               anchorValue: ms(anchor.percentile(100)))
        report("\(Self.bench) (context) slots missed (a reply later than the next slot; never sent late)",
               "of \(run.slots) slots", value: Double(run.missed), unit: "slots")
        report("\(Self.bench) (context) moves sent per second of the run", "rate",
               value: Double(run.sent) / (run.span / 1e6), unit: "moves/s")
        report("\(Self.bench) (context) send lag: Move sent after its slot was due", "p99",
               value: run.sendLag.percentile(99), unit: "µs")
        if run.wrong > 0 {
            report("\(Self.bench) (context) moves answered other than copy at the expected scene", "count",
                   value: Double(run.wrong), unit: "moves")
            note("first wrong answer: \(run.firstWrong ?? "")")
        }
        for (label, samples) in [("moves inside a scene (DropUpdated)", run.inside),
                                 ("moves across scenes (DropExited + DropEntered)", run.crossing)] {
            report("\(Self.bench) breakdown: \(label), \(samples.values.count) moves", "p50", value: ms(samples.median), unit: "ms")
            report("\(Self.bench) breakdown: \(label), \(samples.values.count) moves", "p99",
                   value: ms(samples.percentile(99)), unit: "ms")
        }
        report("\(Self.bench) breakdown: leg to the target (Move sent → target's handler runs; \(route) + ferryd)",
               "p50", value: ms(run.legToTarget.median), unit: "ms", anchor: anchorName, anchorValue: ms(anchor.median))
        report("\(Self.bench) breakdown: leg back (target's handler → Move reply received; \(route) + ferryd)",
               "p50", value: ms(run.legBack.median), unit: "ms", anchor: anchorName, anchorValue: ms(anchor.median))
        let floorName = "\(Self.bench) breakdown: floor — the same paced calls through a Swift relay process "
            + "(4 bus hops, DropUpdated, no ferryd logic)"
        report(floorName, "p50 of \(floor.sent)", value: ms(floor.latencies.median), unit: "ms", anchor: anchorName,
               anchorValue: ms(anchor.median))
        report(floorName, "p99", value: ms(floor.latencies.percentile(99)), unit: "ms", anchor: anchorName,
               anchorValue: ms(anchor.percentile(99)))
        report(floorName, "slots missed of \(floor.slots)", value: Double(floor.missed), unit: "slots")
        // Other load on the machine moves the tails more than anything measured here.
        if let text = Spawn.readFile("/proc/loadavg"), let first = text.split(separator: " ").first, let load = Double(first) {
            report("\(Self.bench) (context) machine load: 1-min load average at the end of the run", "loadavg",
                   value: load, unit: "runnable", anchor: "CPU cores", anchorValue: Double(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        }
        note("per measured second (moves into the drag: p50 µs, ferryd CPU µs per move): "
             + seconds.map { "\($0.moves): \(Int($0.p50.rounded())), \(Int($0.ferrydCPU.rounded()))" }.joined(separator: "; "))
        // The distributions, for the log.
        let levels: [Double] = [50, 75, 90, 95, 98, 99, 99.5, 99.9]
        for (label, samples) in [("Move", run.latencies), ("floor", floor.latencies), ("echo", anchor)] {
            let text = levels.map { "p\(shortNumber($0)) \(Int(samples.percentile($0).rounded()))" }.joined(separator: ", ")
            note("\(label) µs: \(text)")
        }
        report("\(Self.bench) breakdown: what ferryd adds — Move over the relay floor", "p50",
               value: ms(run.latencies.median), unit: "ms", anchor: "the relay floor", anchorValue: ms(floor.latencies.median))
        let moves = Double(max(run.sent, 1))
        for (label, cpu, switches) in [("ferryd", usage.ferrydCPU, usage.ferrydSwitches),
                                       ("dbus-daemon", usage.busCPU, usage.busSwitches),
                                       ("bench process (initiator + 3 apps)", usage.ownCPU, usage.ownSwitches)] {
            report("\(Self.bench) breakdown: \(label) CPU time per move (/proc stat, getrusage)", "mean",
                   value: cpu * 1000 / moves, unit: "µs")
            report("\(Self.bench) breakdown: \(label) context switches per move (all threads)", "mean",
                   value: Double(switches) / moves, unit: "switches")
        }
        let floorMoves = Double(max(floor.sent, 1))
        report("\(Self.bench) breakdown: floor — relay process CPU time per move", "mean",
               value: floorUsage.ferrydCPU * 1000 / floorMoves, unit: "µs", anchor: "ferryd per move",
               anchorValue: usage.ferrydCPU * 1000 / moves)
        report("\(Self.bench) breakdown: floor — relay process context switches per move", "mean",
               value: Double(floorUsage.ferrydSwitches) / floorMoves, unit: "switches", anchor: "ferryd per move",
               anchorValue: Double(usage.ferrydSwitches) / moves)
        if let first = seconds.first, let last = seconds.last, seconds.count > 1 {
            let drag = "\(first.moves) → \(last.moves) moves into the drag"
            report("\(Self.bench) (context) drift: p50 of the last measured second (\(drag))", "p50", value: ms(last.p50),
                   unit: "ms", anchor: "p50 of the first measured second", anchorValue: ms(first.p50))
            report("\(Self.bench) (context) drift: ferryd CPU per move in the last measured second", "mean",
                   value: last.ferrydCPU, unit: "µs", anchor: "in the first measured second", anchorValue: first.ferrydCPU)
        }
        if config.listener {
            report("\(Self.bench) (context) Moved signals heard by the source", "per move sent",
                   value: Double(signals) / moves, unit: "signals")
        }
    }
}

/// CPU time (ms) and context switches (voluntary + involuntary, all threads) of ferryd, the
/// bus daemon and this process.
struct Usage {
    var ferrydCPU = 0.0, busCPU = 0.0, ownCPU = 0.0
    var ferrydSwitches = 0, busSwitches = 0, ownSwitches = 0

    init() {}

    /// The totals so far.
    init(ferryd: pid_t, bus: pid_t) throws {
        ferrydCPU = try CPUTime.of(ferryd)
        busCPU = try CPUTime.of(bus)
        ownCPU = CPUTime.ofSelf()
        func switches(_ pid: pid_t) -> Int {
            let counts = ContextSwitches.of(pid)
            return counts.voluntary + counts.involuntary
        }
        ferrydSwitches = switches(ferryd)
        busSwitches = switches(bus)
        ownSwitches = switches(getpid())
    }

    /// Adds another interval's usage.
    mutating func add(_ other: Usage) {
        add(other, minus: Usage())
    }

    /// Adds what happened between `before` and `after`.
    mutating func add(_ after: Usage, minus before: Usage) {
        ferrydCPU += after.ferrydCPU - before.ferrydCPU
        busCPU += after.busCPU - before.busCPU
        ownCPU += after.ownCPU - before.ownCPU
        ferrydSwitches += after.ferrydSwitches - before.ferrydSwitches
        busSwitches += after.busSwitches - before.busSwitches
        ownSwitches += after.ownSwitches - before.ownSwitches
    }
}

extension PacedMoves.Run {
    /// Adds another run's figures to this one.
    mutating func add(_ other: PacedMoves.Run) {
        latencies.append(contentsOf: other.latencies.values)
        inside.append(contentsOf: other.inside.values)
        crossing.append(contentsOf: other.crossing.values)
        legToTarget.append(contentsOf: other.legToTarget.values)
        legBack.append(contentsOf: other.legBack.values)
        sendLag.append(contentsOf: other.sendLag.values)
        slots += other.slots
        sent += other.sent
        missed += other.missed
        wrong += other.wrong
        firstWrong = firstWrong ?? other.firstWrong
        span += other.span
        lastScene = other.lastScene
    }
}

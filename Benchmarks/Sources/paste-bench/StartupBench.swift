import BenchReport
import Ferry
#if canImport(Glibc)
import Glibc
#endif

/// P6: `ferry paste` of a short text as a whole process against `xclip -o` of the same text, in
/// alternating runs (the median wall time from spawn to exit, stdout to /dev/null). `ferry` is the
/// front (Sources/ferry-front); for context, the same paste by the full CLI (`ferry-cli` beside
/// it, what `ferry` was before the front), `--help` through both, and what the front's hand-over
/// (an `exec` of `ferry-cli`) adds to a command it does not handle (`pasteboards`).
struct StartupBench {
    let config: Config
    let scratch: Scratch

    static let text = "Ferry moves items between apps."

    func run() async throws {
        let ferry = Config.environment("FERRY_BENCH_FERRY")
            ?? (Spawn.ferryFolder + "/ferry")
        guard access(ferry, X_OK) == 0 else { throw Spawn.Failure(description: "no ferry executable at \(ferry)") }
        let cli = (ferry.lastIndex(of: "/").map { String(ferry[...$0]) } ?? "") + "ferry-cli"
        guard access(cli, X_OK) == 0 else { throw Spawn.Failure(description: "no ferry-cli executable at \(cli)") }
        guard XclipAnchor.isAvailable else { return note("no DISPLAY or xclip: P6 is skipped") }

        let client = try await FerryClient.connect()
        try await client.general.setString(Self.text)
        let owner = try XclipAnchor(selection: "primary", serving: try scratch.file(named: "short.txt", text: Self.text))
        defer { owner.stop() }

        let ferryPaste = [ferry, "paste"], xclipPaste = ["xclip", "-o"], cliPaste = [cli, "paste"]
        for command in [ferryPaste, xclipPaste, cliPaste] {
            let (status, bytes) = try Spawn.output(command, stderr: .null)
            let output = String(decoding: bytes, as: UTF8.self)
            guard status == 0, output.hasPrefix(Self.text) else {
                throw Spawn.Failure(description: "\(command.joined(separator: " ")) gave status \(status), \"\(output)\"")
            }
        }
        let runs = config.quick ? 60 : 300
        var paste = Samples(), xclip = Samples(), help = Samples(), cliPasteTimes = Samples(), cliHelp = Samples()
        var listed = Samples(), cliListed = Samples()
        for _ in 0..<10 { _ = try Spawn.timedRun(ferryPaste); _ = try Spawn.timedRun(xclipPaste); _ = try Spawn.timedRun(cliPaste) }  // warm caches
        for _ in 0..<runs {
            paste.append(try Spawn.timedRun(ferryPaste).wall)
            xclip.append(try Spawn.timedRun(xclipPaste).wall)
            cliPasteTimes.append(try Spawn.timedRun(cliPaste).wall)
            help.append(try Spawn.timedRun([ferry, "--help"]).wall)
            cliHelp.append(try Spawn.timedRun([cli, "--help"]).wall)
            listed.append(try Spawn.timedRun([ferry, "pasteboards"]).wall)
            cliListed.append(try Spawn.timedRun([cli, "pasteboards"]).wall)
        }
        report("P6 ferry paste (\(Self.text.utf8.count) B text), whole process", "median of \(runs)", value: paste.median,
               unit: "ms", anchor: "xclip -o via Xvfb", anchorValue: xclip.median, goal: .ratio(atMost: 0.5))
        report("P6 ferry paste (\(Self.text.utf8.count) B text), whole process", "p90", value: paste.percentile(90),
               unit: "ms", anchor: "xclip -o via Xvfb", anchorValue: xclip.percentile(90))
        report("P6 (context) the same paste by the full CLI (ferry-cli paste, the ferry before the front)", "median of \(runs)",
               value: cliPasteTimes.median, unit: "ms", anchor: "xclip -o via Xvfb", anchorValue: xclip.median)
        report("P6 (context) ferry --help: the front hands it to ferry-cli (exec)", "median of \(runs)", value: help.median,
               unit: "ms", anchor: "xclip -o via Xvfb", anchorValue: xclip.median)
        report("P6 (context) ferry-cli --help: the full CLI's start-up without the bus", "median of \(runs)",
               value: cliHelp.median, unit: "ms", anchor: "xclip -o via Xvfb", anchorValue: xclip.median)
        report("P6 (context) ferry pasteboards through the front (exec of ferry-cli)", "median of \(runs)",
               value: listed.median, unit: "ms", anchor: "ferry-cli pasteboards", anchorValue: cliListed.median)
        _ = try await client.general.clear()
        await client.close()
    }
}

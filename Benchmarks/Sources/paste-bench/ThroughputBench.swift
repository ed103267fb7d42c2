import BenchReport
import DBus
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

/// P3 (1 GiB paste throughput: held, and promised) against a raw pipe and `xclip -o` through
/// Xvfb, in alternating rounds; P4 (ferryd's peak RSS meanwhile).
struct ThroughputBench {
    let config: Config
    let scratch: Scratch

    static let pasteboardName = "paste-bench-large"

    func run() async throws {
        let rounds = config.quick ? 2 : 5
        let size = config.bytes
        let label = size >= 1 << 30 && size % (1 << 30) == 0 ? "\(size >> 30) GiB" : "\(size >> 20) MiB"
        let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap { pid_t($0) }
        if let ferryd { PeakRSS.reset(ferryd) } else { note("FERRY_BENCH_FERRYD_PID unset: P4 is skipped") }
        let baseline = ferryd.flatMap { PeakRSS.read($0, field: "VmRSS") }

        // The anchors' and the held paste's source: a file of `size` bytes.
        let file = try scratch.file(named: "large.bin", count: size)
        let xclip: XclipAnchor?
        if XclipAnchor.isAvailable {
            let xclipFile = config.xclipBytes == size ? file : try scratch.file(named: "xclip.bin", count: config.xclipBytes)
            xclip = try XclipAnchor(selection: "clipboard", serving: xclipFile)
        } else {
            note("no DISPLAY or xclip: the xclip anchor is skipped")
            xclip = nil
        }
        defer { xclip?.stop() }

        // Held: copy the file (the broker reads its fd into its store), then paste it as an fd.
        let reader = try await FerryClient.connect()
        let board = try await reader.pasteboard(named: Self.pasteboardName)
        let copyStart = now()
        try await board.setItemProviders([try ItemProvider(contentsOf: URL(fileURLWithPath: file), contentType: .data)])
        let copySeconds = (now() - copyStart) / 1e6

        var pipe = Samples(), held = Samples(), xclipRates = Samples()
        let xclipRounds = config.quick ? 1 : 3
        for round in 0..<rounds {
            pipe.append(try PipeAnchor.transfer(bytes: size))
            held.append(try await Self.paste(board, expecting: size))
            if let xclip, round < xclipRounds {
                let (bytes, rate) = try xclip.transfer()
                guard bytes == config.xclipBytes else { throw Spawn.Failure(description: "xclip -o gave \(bytes) bytes") }
                xclipRates.append(rate)
            }
        }
        report("P3 \(label) held paste (Read → fd → read to EOF)", "throughput, median of \(rounds)", value: held.median,
               unit: "MB/s", anchor: "raw pipe between 2 processes", anchorValue: pipe.median, goal: .ratio(atLeast: 0.9))
        if xclip != nil {
            let xlabel = config.xclipBytes == size ? label : "\(config.xclipBytes >> 20) MiB"
            report("P3 \(label) held paste (Read → fd → read to EOF)", "throughput, median of \(rounds)", value: held.median,
                   unit: "MB/s", anchor: "xclip -o \(xlabel) via Xvfb (median of \(xclipRates.values.count))",
                   anchorValue: xclipRates.median, goal: .ratio(atLeast: 5))
        }
        report("P3 \(label) held copy (SetItems with the file's fd)", "time, once", value: copySeconds, unit: "s")

        // Promised: a registered source serves the bytes through a pipe; the broker never sees them.
        let source = try await FerryClient.connect()
        try await source.registerCommandLineTool()
        let bytes = Data(repeating: 0xA5, count: size)
        var promised = ItemProvider()
        promised.registerDataRepresentation(for: .data, estimatedSize: Int64(size)) { _ in bytes }
        try await source.pasteboard(named: Self.pasteboardName).setItemProviders([promised])
        var promisedRates = Samples(), pipe2 = Samples()
        for _ in 0..<(config.quick ? 1 : 3) {
            pipe2.append(try PipeAnchor.transfer(bytes: size))
            promisedRates.append(try await Self.paste(board, expecting: size))
        }
        report("P3 \(label) promised paste (pipe from the source app)", "throughput, median of \(promisedRates.values.count)",
               value: promisedRates.median, unit: "MB/s", anchor: "raw pipe between 2 processes", anchorValue: pipe2.median)

        if let ferryd, let peak = PeakRSS.read(ferryd, field: "VmHWM") {
            report("P4 ferryd peak RSS during P3", "VmHWM", value: Double(peak) / 1024, unit: "MiB",
                   anchor: baseline.map { _ in "ferryd's RSS before P3" }, anchorValue: baseline.map { Double($0) / 1024 },
                   goal: .value(atMost: 64, "≤ 64 MiB"))
        }
        if let xclip, let peak = PeakRSS.read(xclip.owner, field: "VmHWM") {
            report("P4 (context) xclip -i peak RSS serving \(config.xclipBytes >> 20) MiB", "VmHWM",
                   value: Double(peak) / 1024, unit: "MiB")
        }
        note("P3: clearing")
        _ = try await board.clear()
        note("P3: closing the source")
        await source.close()
        note("P3: closing the reader")
        await reader.close()
        note("P3: done")
    }

    /// One paste of the item as a stream, read to end of file (and confirmed when promised);
    /// returns MB/s.
    static func paste(_ board: Pasteboard, expecting size: Int) async throws -> Double {
        let start = now()
        let read = try await board.read(item: 0, type: .data, preferFD: true)
        guard case .stream(let fd, let transfer) = read.content else {
            throw Spawn.Failure(description: "a large paste came inline")
        }
        let count = try fd.withRawValue { Sink.drain($0).count }
        fd.close()
        if transfer != nil { _ = try await read.finish() }
        let elapsed = now() - start
        guard count == size else { throw Spawn.Failure(description: "the paste gave \(count) of \(size) bytes") }
        return Double(size) / elapsed
    }
}

/// A process's memory figures from /proc/PID/status.
enum PeakRSS {
    /// A field such as VmHWM or VmRSS, in KiB.
    static func read(_ pid: pid_t, field: String) -> Int? {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix(field + ":") else { continue }
            return Int(text.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Resets the peak (VmHWM) to the current RSS (`echo 5 > /proc/PID/clear_refs`), when allowed.
    static func reset(_ pid: pid_t) {
        guard let file = fopen("/proc/\(pid)/clear_refs", "w") else { return note("cannot reset ferryd's VmHWM") }
        fputs("5", file)
        fclose(file)
    }
}

import DesktopClipboard
import FerryTestSupport
import Foundation
import Testing
import WaylandClipboard

/// Figures for the bridge's benchmarks (issue #17, B1 and B2), measured side by side in one run.
/// Opt-in, they take a while: `FERRY_MEASURE_WAYLAND=1 swift test --skip-build --filter WaylandMeasurements`.
/// They print their figures and fail only when a transfer is incomplete.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["FERRY_MEASURE_WAYLAND"] == "1"))
struct WaylandMeasurements {
    /// 256 MiB read by `wl-paste` from the backend's source (the test writes a file's bytes into
    /// the descriptor it is given) and from `wl-copy` holding the same file.
    @Test func pasteThroughputAgainstWlCopy() async throws {
        try await WaylandFixture.with { f in
            let size = 256 << 20
            let file = try f.sway.writeFile("payload.bin", randomBytes(size, seed: 256))
            let type = "application/octet-stream"
            let paste = ["sh", "-c", "wl-paste -t \(type) | wc -c"]
            var fromFerry: [Duration] = [], fromWlCopy: [Duration] = []
            for _ in 0..<5 {
                try await f.backend.own(.clipboard, types: [type]) { _, fd in copyFile(file, to: fd) }
                let start = ContinuousClock.now
                let ours = try await f.peer(paste)
                fromFerry.append(ContinuousClock.now - start)
                #expect(ours.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(size)")

                try await f.peer(["wl-copy", "-t", type], standardInput: file)
                // wl-copy reads its input in the background before it serves it: wait until it does.
                try await Task.sleep(for: .seconds(1))
                let begin = ContinuousClock.now
                let theirs = try await f.peer(paste)
                fromWlCopy.append(ContinuousClock.now - begin)
                #expect(theirs.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(size)")
            }
            let median = { (runs: [Duration]) in seconds(runs.sorted()[runs.count / 2]) }
            let ferry = median(fromFerry), direct = median(fromWlCopy)
            print("MEASURE 256 MiB wl-paste, median of 5: from WaylandClipboardBackend \(ferry) s "
                + "(runs \(fromFerry.map(seconds))), from wl-copy \(direct) s (runs \(fromWlCopy.map(seconds))); "
                + "throughput ratio backend/wl-copy \(direct / ferry)")
        }
    }

    /// How long after `wl-copy` starts the backend reports `.offered`, and `wl-paste --watch`
    /// runs its command (which notes the time first, then drains the bytes so that wl-copy's
    /// write does not fail), for the same 20 copies.
    @Test func offerLatencyAgainstWlPasteWatch() async throws {
        try await WaylandFixture.with { f in
            let watchLog = "\(f.sway.directory)/watch.log"
            try f.sway.spawn(["wl-paste", "--watch", "sh", "-c", "date +%s%N; cat >/dev/null"], standardOutput: watchLog)
            try await Task.sleep(for: .milliseconds(500))
            var ours: [Int64] = [], theirs: [Int64] = []
            for round in 0..<20 {
                let linesBefore = lines(watchLog).count
                let eventsBefore = f.events.count
                let start = realtimeNanoseconds()
                try await f.peer(["wl-copy", "copy number \(round)"])
                let offered = try await f.waitFor(after: eventsBefore, "offer \(round)") {
                    if case .offered = $0 { true } else { false }
                }
                ours.append(f.arrivals[offered.index] - start)
                let deadline = ContinuousClock.now + .seconds(5)
                while lines(watchLog).count <= linesBefore && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                let seen = try #require(lines(watchLog).dropFirst(linesBefore).first.flatMap { Int64($0) })
                theirs.append(seen - start)
                try await Task.sleep(for: .milliseconds(100))
            }
            let p50 = { (values: [Int64]) in Double(values.sorted()[values.count / 2]) / 1e6 }
            print("MEASURE wl-copy → seen, p50 of 20: WaylandClipboardBackend .offered \(p50(ours)) ms, "
                + "wl-paste --watch \(p50(theirs)) ms (both from wl-copy's start; it includes runuser)")
        }
    }
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

private func lines(_ path: String) -> [Substring] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n")
}

/// Writes the file at `path` into `fd` on a thread of its own, 1 MiB at a time, and closes it.
private func copyFile(_ path: String, to fd: Int32) {
    Thread.detachNewThread {
        let source = open(path, O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        reading: while source >= 0 {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            var offset = 0
            while offset < n {
                let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + offset, n - offset) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break reading }
                offset += written
            }
        }
        if source >= 0 { close(source) }
        close(fd)
    }
}

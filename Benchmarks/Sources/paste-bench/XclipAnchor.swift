import BenchReport
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The X11 anchors: `xclip` against the X server in `$DISPLAY` (scripts/bench.sh starts a private
/// Xvfb). A foreground `xclip -i -quiet` owns a selection; `xclip -o` pastes it.
struct XclipAnchor {
    let selection: String
    let owner: pid_t

    /// Whether an X display and xclip are there.
    static var isAvailable: Bool {
        guard getenv("DISPLAY") != nil else { return false }
        return (try? Spawn.output(["xclip", "-version"], stderr: .null))?.status == 0
    }

    /// Starts an owner of `selection` serving the contents of `file`, and waits until it answers.
    init(selection: String, serving file: String, timeout: Double = 120) throws {
        self.selection = selection
        owner = try Spawn.start(["xclip", "-i", "-quiet", "-selection", selection, file], stderr: .null)
        let deadline = now() + timeout * 1e6
        while now() < deadline {
            if let (status, text) = (try? Spawn.output(["xclip", "-o", "-selection", selection, "-t", "TARGETS"], stderr: .null))
                .map({ ($0.status, String(decoding: $0.bytes, as: UTF8.self)) }),
               status == 0, text.contains("STRING") {
                return
            }
            usleep(100_000)
        }
        stop()
        throw Spawn.Failure(description: "xclip never took the \(selection) selection")
    }

    /// The command that pastes this selection to stdout.
    var pasteCommand: [String] { ["xclip", "-o", "-selection", selection] }

    /// One `xclip -o` of the whole selection into the sink; returns (bytes, MB/s).
    func transfer() throws -> (bytes: Int, rate: Double) {
        let data = try FileDescriptor.pipe(bufferSize: 1 << 20)
        let start = now()
        let pid = try data.write.withRawValue { try Spawn.start(pasteCommand, stdout: .descriptor($0)) }
        data.write.close()
        let received = try data.read.withRawValue { Sink.drain($0).count }
        let status = Spawn.wait(pid)
        let elapsed = now() - start
        data.read.close()
        guard status == 0 else { throw Spawn.Failure(description: "xclip -o exited with \(status)") }
        return (received, Double(received) / elapsed)
    }

    /// Ends the owner (the selection goes away with it).
    func stop() {
        kill(owner, SIGTERM)
        Spawn.wait(owner)
    }
}

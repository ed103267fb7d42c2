import DBus
import Ferry
import FerryBridge
import FerryTestSupport
import Foundation

/// The real pieces for one bridge test on X11: a private bus with the real ferryd, Xvfb, the real
/// ferry-bridge on both, and the peers (xclip, xsel, Tk) as separate processes. Everything is
/// killed by its pid in `close()`.
final class X11BridgeSession: Sendable {
    let bus: PrivateBus
    let stateDir: URL
    let ferryd: ServiceProcess
    let display: XvfbDisplay
    let bridge: ServiceProcess
    let client: FerryClient

    /// - Parameter bus: the private bus to use (one that can activate the document portal, say);
    ///   a plain one by default. The session stops it in `close()` either way.
    init(bus: PrivateBus? = nil) async throws {
        self.bus = try bus ?? PrivateBus()
        stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-bridge-state-\(UUID().uuidString.prefix(8))")
        ferryd = try await ServiceProcess.ferryd(on: self.bus, stateDir: stateDir)
        display = try XvfbDisplay()
        bridge = try await ServiceProcess(try BuiltProducts.executable("ferry-bridge"), ["--bus", self.bus.address, "--verbose"],
                                          environment: display.environment(adding: ["DBUS_SESSION_BUS_ADDRESS": self.bus.address]))
        client = try await FerryClient.connect(address: self.bus.address)
    }

    /// Runs `body` with a fresh session and closes it, also when `body` throws.
    static func with(bus: PrivateBus? = nil, _ body: (X11BridgeSession) async throws -> Void) async throws {
        let session = try await X11BridgeSession(bus: bus)
        do {
            try await body(session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }

    func close() async {
        await client.close()
        await offThePool { [self] in
            bridge.stop()
            display.stop()
            ferryd.stop()
            bus.stop()
            try? FileManager.default.removeItem(at: stateDir)
        }
    }

    /// The display and the private bus, for the bridge and every peer.
    var environment: [String: String] {
        display.environment(adding: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "COLUMNS": "80"])
    }

    /// Runs the real `ferry` on the private bus.
    func ferry(_ arguments: String..., timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ChildProcess.run(try BuiltProducts.executable("ferry"), arguments, environment: environment, timeout: timeout)
    }

    /// Starts `xclip` in the foreground owning `selection` with `data` as `type`.
    func xclipCopy(_ data: Data, type: String = "UTF8_STRING", selection: String = "clipboard") throws -> RunningProcess {
        try withInput(data) { input in
            try RunningProcess("xclip", ["-quiet", "-selection", selection, "-t", type, "-i"], environment: environment,
                               standardInput: input)
        }
    }

    /// Starts `xsel` in the foreground owning `selection` (`-b`, `-p`) with `text`.
    func xselCopy(_ text: String, selection: String = "-b") throws -> RunningProcess {
        try withInput(Data(text.utf8)) { input in
            try RunningProcess("xsel", ["--nodetach", selection, "-i"], environment: environment, standardInput: input)
        }
    }

    /// Starts Tk offering `text` on CLIPBOARD with KDE's password-manager hint `secret`; returns
    /// once Tk owns the clipboard (it runs until stopped: a script read from standard input would
    /// end, and give up the clipboard, at its end of file).
    func tkSecret(_ text: String) async throws -> ServiceProcess {
        let script = TestPaths.fixtures.appendingPathComponent("desktop/tk-offer.tcl").path
        return try await ServiceProcess("wish", [script, "x-kde-passwordManagerHint", "secret", "UTF8_STRING", text],
                                        environment: environment)
    }

    /// Runs `xclip -o` for `type`.
    func xclipPaste(_ type: String, selection: String = "clipboard") async throws -> ChildProcessResult {
        try await ChildProcess.run("xclip", ["-o", "-selection", selection, "-t", type], environment: environment,
                                   timeout: .seconds(30))
    }

    /// The bridge's status.
    func status() async throws -> BridgeStatus? { try await BridgeStatus.fetch(over: client.connection) }

    /// Waits until the bridge has a complete copy of CLIPBOARD's import at least at `changeCount`.
    func waitForCompleteImport(atLeast changeCount: UInt64 = 1, timeout: Duration = .seconds(20)) async throws -> Bool {
        try await eventually(timeout) {
            guard let last = try await status()?.clipboard.lastImport else { return false }
            return last.isComplete && last.changeCount >= changeCount
        }
    }

    private func withInput<T>(_ data: Data, _ body: (Int32) throws -> T) throws -> T {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-bridge-in-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let input = open(file.path, O_RDONLY | O_CLOEXEC)
        defer { Foundation.close(input) }
        return try body(input)
    }
}

import DBus
import DesktopClipboard
import Ferry
import FerryBridge
import FerryLogging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a bridge running: connects to the bus and the display, runs the bridge, and when either
/// goes away connects again with backoff (0.5 s doubling to 30 s).
final class Supervisor: Sendable {
    let choice: BackendChoice
    let busAddress: String?
    let budgets: BridgeBudgets
    let log: BridgeLog
    /// Whether READY is printed once the first bridge runs.
    let announcesReady: Bool
    private let current = Mutex<(bridge: Bridge?, backend: (any DesktopClipboardBackend)?)>((nil, nil))
    private let status = Mutex<Int32>(0)

    /// The status to exit with.
    var exitStatus: Int32 { status.withLock { $0 } }

    init(choice: BackendChoice, busAddress: String?, budgets: BridgeBudgets, log: BridgeLog, announcesReady: Bool) {
        self.announcesReady = announcesReady
        self.choice = choice
        self.busAddress = busAddress
        self.budgets = budgets
        self.log = log
    }

    static let firstDelay: Duration = .milliseconds(500)
    static let longestDelay: Duration = .seconds(30)

    func run() async {
        var delay = Self.firstDelay
        var client: FerryClient?
        var announced = false
        let holder = BridgeHolder()
        while !Task.isCancelled {
            do {
                if client == nil {
                    let connected = try await FerryClient.connect(address: busAddress)
                    try await connected.register(appID: "org.ferry.bridge", manifest: Self.manifest)
                    do {
                        try await BridgeService.publish(on: connected.connection) { await holder.status() }
                    } catch let error as BridgeError {
                        writeToStandardError("ferry-bridge: \(error)\n")
                        status.withLock { $0 = 69 }
                        return
                    }
                    client = connected
                }
                guard let client else { continue }
                let opened = try BackendOpener.open(choice)
                let bridge = Bridge(backend: opened.backend, client: client, budgets: budgets, display: opened.display,
                                    isClipboardManager: opened.isClipboardManager, log: log)
                current.withLock { $0 = (bridge, opened.backend) }
                await holder.set(bridge)
                log.event("bridging \(opened.backend.protocolName) on \(opened.display)")
                if announcesReady && !announced {
                    announced = true
                    // The line tests and scripts wait for: the bridge owns its name and watches the display.
                    let line = Array("READY \(opened.backend.protocolName) \(opened.display)\n".utf8)
                    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                }
                delay = Self.firstDelay
                do {
                    try await bridge.run()
                } catch {
                    if !Task.isCancelled { log.warning("\(error); connecting again") }
                }
                await bridge.stop()
                await opened.backend.shutdown()
                await holder.set(nil)
                current.withLock { $0 = (nil, nil) }
            } catch let error as DesktopClipboardError where error.code == .unavailable && client != nil {
                log.warning("\(error.message); trying again in \(delay)")
            } catch {
                log.warning("\(error); trying again in \(delay)")
                if let error = error as? FerryError, error.code == .noBroker, client != nil { client = nil }
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, Self.longestDelay)
        }
    }

    /// Gives up the selections the bridge serves and closes the display.
    func stop() async {
        let (bridge, backend) = current.withLock { $0 }
        await bridge?.stop()
        await backend?.shutdown()
    }

    static let manifest: [UInt8] = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
          <key>CFBundleIdentifier</key>
          <string>org.ferry.bridge</string>
          <key>CFBundleName</key>
          <string>Desktop clipboard</string>
        </dict>
        </plist>

        """.utf8)
}

/// The bridge `Status` asks, while one runs.
actor BridgeHolder {
    private var bridge: Bridge?
    private var last: BridgeStatus?

    func set(_ bridge: Bridge?) async {
        if let old = self.bridge { last = await old.status() }
        self.bridge = bridge
    }

    /// The running bridge's status; between connections, the last one with the owners unknown.
    func status() async -> BridgeStatus {
        if let bridge { return await bridge.status() }
        var status = last ?? BridgeStatus(protocolName: "none", display: "", isClipboardManager: false,
                                          clipboard: .init(), primary: .init(), budgets: .defaults)
        status.clipboard.owner = .none
        status.primary.owner = .none
        return status
    }
}

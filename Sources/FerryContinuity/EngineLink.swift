import CNATS
@preconcurrency import Crypto
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What went wrong talking to the engine (nats-server), by name.
public struct EngineError: Error, Sendable, CustomStringConvertible {
    /// Why, by name.
    public enum Code: Sendable {
        /// No device serves the subject (the source device is gone).
        case noResponders
        /// No answer within the time allowed (a partition, or a source that stopped).
        case timeout
        /// The engine refused or failed the operation.
        case failed
    }

    /// Why.
    public let code: Code
    /// A line for a person.
    public let message: String

    /// Makes an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// The error for a libnats status, with what was being done.
    static func status(_ status: natsStatus, _ doing: String) -> EngineError {
        let raw = Int32(bitPattern: status.rawValue)
        let code: Code = raw == CNATS_NO_RESPONDERS ? .noResponders : raw == CNATS_TIMEOUT ? .timeout : .failed
        var detail = String(cString: natsStatus_GetText(status))
        var last = natsStatus(0)
        if let text = nats_GetLastError(&last), last.rawValue != 0 {
            let line = String(cString: text)
            if !line.isEmpty { detail = line }
        }
        return EngineError(code, "\(doing): \(detail)")
    }
}

/// How ferryd reaches the engine: its URL, the device's nkey seed file, and the CA that signed
/// the engine's certificate.
public struct EngineAddress: Sendable {
    /// `tls://host:port` (or `nats://` without TLS, which ferryd refuses unless on loopback).
    public var url: String
    /// The device's nkey seed file (mode 0600).
    public var seedFile: String
    /// The CA file that signed the engine's certificate; nil: the system's trust store.
    public var caFile: String?

    /// Makes an address.
    public init(url: String, seedFile: String, caFile: String?) {
        self.url = url
        self.seedFile = seedFile
        self.caFile = caFile
    }
}

/// One connection to the engine through libnats: publish, request-reply, subscriptions and a
/// JetStream key-value bucket. `SendAsap` is on (a round trip takes ~65 µs instead of ~1 ms);
/// libnats reconnects forever with a growing wait, and `events` says when the link drops and
/// comes back. Thread-safe: libnats serializes its own use; callbacks come on libnats' threads.
public final class EngineLink: @unchecked Sendable {
    /// A change of the link's state.
    public enum Event: Sendable {
        /// The link to the engine dropped; libnats keeps trying.
        case disconnected
        /// The link is back.
        case reconnected
    }

    let connection: OpaquePointer
    let jetStream: OpaquePointer
    /// Signs the engine's nonce at each connection; libnats holds it unretained, and it lives
    /// as long as the link (the connection is destroyed first).
    private let signer: NonceSigner
    /// This link's number in ``eventHandlers``, which libnats' connection callbacks carry.
    private let number: Int
    private let closed = Mutex(false)
    /// The replies to ``request(_:_:timeout:then:)``, once there was one.
    let router = Mutex<ReplyRouter?>(nil)

    /// The event handlers of the open links, by link number. libnats calls the disconnected and
    /// reconnected callbacks on a thread of its own, also after ``close()`` returned (closing
    /// posts a last "disconnected"): so the callbacks carry a number, never a pointer to a
    /// link that may be gone, and a number whose link closed finds nothing. Numbers are never
    /// reused.
    private static let eventHandlers = Mutex<(next: Int, handlers: [Int: @Sendable (Event) -> Void])>((1, [:]))

    private static func deliver(_ event: Event, to closure: UnsafeMutableRawPointer?) {
        let number = Int(bitPattern: closure)
        eventHandlers.withLock { $0.handlers[number] }?(event)
    }

    /// Connects (and waits for the first connection: a wrong seed, CA or URL fails here).
    ///
    /// - Parameters:
    ///   - address: where and as whom.
    ///   - name: the connection's name the engine shows (the device).
    /// - Throws: ``EngineError``.
    public init(address: EngineAddress, name: String) throws {
        var options: OpaquePointer?
        try Self.check(natsOptions_Create(&options), "cannot make the engine options")
        defer { natsOptions_Destroy(options) }
        try Self.check(natsOptions_SetURL(options, address.url), "bad engine URL \(address.url)")
        try Self.check(natsOptions_SetName(options, name), "bad device name")
        try Self.check(natsOptions_SetSendAsap(options, true), "cannot set SendAsap")
        signer = NonceSigner(key: try NKey.signingKey(ofSeedFile: address.seedFile))
        try Self.check(natsOptions_SetNKey(options, NKey.publicKey(of: signer.key), { error, signature, length, nonce, closure in
            guard let closure, let nonce else { return NATS_ERR }
            return Unmanaged<NonceSigner>.fromOpaque(closure).takeUnretainedValue().sign(nonce, into: signature, length, error)
        }, Unmanaged.passUnretained(signer).toOpaque()), "cannot use \(address.seedFile)")
        if let ca = address.caFile {
            try Self.check(natsOptions_SetSecure(options, true), "cannot turn TLS on")
            try Self.check(natsOptions_LoadCATrustedCertificates(options, ca), "cannot load the CA \(ca)")
        }
        try Self.check(natsOptions_SetMaxReconnect(options, -1), "cannot set reconnects")
        try Self.check(natsOptions_SetReconnectWait(options, 250), "cannot set the reconnect wait")
        try Self.check(natsOptions_SetReconnectJitter(options, 100, 250), "cannot set the reconnect jitter")
        try Self.check(natsOptions_SetPingInterval(options, 5_000), "cannot set the ping interval")
        number = Self.eventHandlers.withLock { state in defer { state.next += 1 }; return state.next }
        let tag = UnsafeMutableRawPointer(bitPattern: number)
        natsOptions_SetDisconnectedCB(options, { _, closure in EngineLink.deliver(.disconnected, to: closure) }, tag)
        natsOptions_SetReconnectedCB(options, { _, closure in EngineLink.deliver(.reconnected, to: closure) }, tag)
        var connection: OpaquePointer?
        // A signature the signer had to refuse (see NonceSigner) fails this attempt only: the
        // next one gets a new nonce. libnats' own reconnects retry the same way.
        var attempts = 0
        var connected: natsStatus
        repeat {
            let refusals = signer.refusals.load(ordering: .relaxed)
            connected = natsConnection_Connect(&connection, options)
            attempts += 1
            guard connected != NATS_OK, signer.refusals.load(ordering: .relaxed) != refusals else { break }
        } while attempts < 8
        try Self.check(connected, "cannot connect to \(address.url)")
        var jetStream: OpaquePointer?
        let status = natsConnection_JetStream(&jetStream, connection, nil)
        guard status == NATS_OK, let jetStream, let connection else {
            natsConnection_Destroy(connection)
            throw EngineError.status(status, "cannot use JetStream on \(address.url)")
        }
        self.connection = connection
        self.jetStream = jetStream
    }

    deinit { close() }

    /// Sets who hears of the link dropping and coming back (on a libnats thread), until it closes.
    public func onEvent(_ handler: @escaping @Sendable (Event) -> Void) {
        guard !closed.withLock({ $0 }) else { return }
        Self.eventHandlers.withLock { $0.handlers[number] = handler }
    }

    /// Closes the link (subscriptions and watches end). Idempotent.
    public func close() {
        let already = closed.withLock { closed in defer { closed = true }; return closed }
        guard !already else { return }
        Self.eventHandlers.withLock { $0.handlers[number] = nil }
        natsConnection_Close(connection)
        jsCtx_Destroy(jetStream)
        natsConnection_Destroy(connection)
    }

    /// Whether the link is up now.
    public var isConnected: Bool {
        Int32(bitPattern: natsConnection_Status(connection).rawValue) == CNATS_CONN_STATUS_CONNECTED
    }

    static func check(_ status: natsStatus, _ doing: @autoclosure () -> String) throws {
        guard status == NATS_OK else { throw EngineError.status(status, doing()) }
    }

    // MARK: - Core messages

    /// Publishes `bytes` on `subject` (fire and forget; libnats buffers while reconnecting).
    public func publish(_ subject: String, _ bytes: [UInt8]) throws {
        let status = bytes.withUnsafeBytes { natsConnection_Publish(connection, subject, $0.baseAddress, Int32($0.count)) }
        try Self.check(status, "cannot publish on \(subject)")
    }

    /// Sends a request and waits at most `timeout` for the reply's bytes. The request goes
    /// through libnats' own standing reply subscription (one wildcard inbox per connection,
    /// replies matched by token), so it costs the engine no subscription of its own.
    /// - Throws: ``EngineError`` `.noResponders` at once when nobody serves `subject`, `.timeout`.
    public func request(_ subject: String, _ bytes: [UInt8], timeout: Duration) throws -> [UInt8] {
        var reply: OpaquePointer?
        let status = bytes.withUnsafeBytes {
            natsConnection_Request(&reply, connection, subject, $0.baseAddress, Int32($0.count), Self.milliseconds(timeout))
        }
        guard status == NATS_OK, let reply else { throw EngineError.status(status, "no answer on \(subject)") }
        return EngineMessage(reply).withBytes { Array($0) }
    }

    /// A new unique inbox subject (`_INBOX.<unique>`).
    static func makeInbox() throws -> String {
        var raw: UnsafeMutablePointer<natsInbox>?
        try check(natsInbox_Create(&raw), "cannot make an inbox")
        guard let raw else { throw EngineError(.failed, "no inbox") }
        defer { natsInbox_Destroy(raw) }
        return String(cString: raw)
    }

    /// `duration` in whole milliseconds, at least 1.
    static func milliseconds(_ duration: Duration) -> Int64 {
        max(1, Int64(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
    }

    final class Handler: Sendable {
        let body: @Sendable (EngineMessage) -> Void
        init(_ body: @escaping @Sendable (EngineMessage) -> Void) { self.body = body }
    }

    /// Subscribes to `subject`; `handler` gets each message's bytes and its reply subject, one at
    /// a time, on a libnats thread. Lasts as long as the link.
    public func subscribe(_ subject: String, _ handler: @escaping @Sendable ([UInt8], String?) -> Void) throws {
        _ = try subscribeUntilCancelled(subject, handler)  // never cancelled: destroyed with the connection
    }

    /// A subscription that can end before the link does (``subscribeUntilCancelled(_:_:)``).
    public final class Subscription: @unchecked Sendable {
        // The natsSubscription's address, guarded by its own lock: cancel may come from any
        // thread, and the first one takes it.
        private let address: Mutex<UInt?>

        init(_ subscription: OpaquePointer) {
            address = Mutex(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(subscription))))
        }

        /// Ends the subscription (no message is handled after it returns, but one being
        /// handled may finish). Idempotent.
        public func cancel() {
            guard let taken = address.withLock({ value in defer { value = nil }; return value }),
                  let subscription = OpaquePointer(bitPattern: taken) else { return }
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
    }

    /// Subscribes to `subject` like ``subscribe(_:_:)``, until the returned subscription is
    /// cancelled (or the link closes). The handler's box is released by libnats' completion
    /// callback, once the subscription is closed and no message handler runs any more: a
    /// message in flight while cancelling or closing still finds it.
    public func subscribeUntilCancelled(_ subject: String, _ handler: @escaping @Sendable ([UInt8], String?) -> Void) throws -> Subscription {
        try subscribeUntilCancelled(subject) { (message: EngineMessage) in handler(message.withBytes { Array($0) }, message.reply) }
    }

    /// Subscribes to `subject` like ``subscribeUntilCancelled(_:_:)``; `handler` gets each
    /// message as it came (its bytes are not copied out).
    func subscribeUntilCancelled(_ subject: String, _ handler: @escaping @Sendable (EngineMessage) -> Void) throws -> Subscription {
        let box = Unmanaged.passRetained(Handler(handler)).toOpaque()
        var subscription: OpaquePointer?
        let status = natsConnection_Subscribe(&subscription, connection, subject, { _, _, message, closure in
            guard let message, let closure else { return }
            Unmanaged<Handler>.fromOpaque(closure).takeUnretainedValue().body(EngineMessage(message))
        }, box)
        guard status == NATS_OK, let subscription else {
            Unmanaged<Handler>.fromOpaque(box).release()
            try Self.check(status, "cannot subscribe to \(subject)")
            throw EngineError(.failed, "no subscription to \(subject)")
        }
        // Should the subscription have closed already (no callback then), the box stays: a few
        // bytes, never freed under a running handler.
        _ = natsSubscription_SetOnCompleteCB(subscription, { closure in
            if let closure { Unmanaged<Handler>.fromOpaque(closure).release() }
        }, box)
        return Subscription(subscription)
    }

    /// Makes sure everything published so far reached the engine.
    public func flush(timeout: Duration = .seconds(2)) throws {
        try Self.check(natsConnection_FlushTimeout(connection, Int64(timeout.components.seconds * 1000)), "flush")
    }

    // MARK: - Key-value

    /// Creates the bucket `name` (or binds to it when it exists with the same configuration),
    /// keeping one value per key for at most `ttl`.
    public func bucket(_ name: String, ttl: Duration) throws -> Bucket {
        var config = kvConfig()
        kvConfig_Init(&config)
        var store: OpaquePointer?
        let status: natsStatus = name.withCString { bucket in
            config.Bucket = bucket
            config.History = 1
            config.TTL = ttl.components.seconds * 1_000_000_000 + ttl.components.attoseconds / 1_000_000_000
            config.StorageType = js_FileStorage
            return js_CreateKeyValue(&store, jetStream, &config)
        }
        if status != NATS_OK {
            // It exists already (another device made it): bind to it.
            let bound = js_KeyValue(&store, jetStream, name)
            try Self.check(bound, "cannot open the bucket \(name)")
        }
        guard let store else { throw EngineError(.failed, "no bucket \(name)") }
        return Bucket(store: store, name: name)
    }

    /// A JetStream key-value bucket.
    public final class Bucket: @unchecked Sendable {
        let store: OpaquePointer
        /// The bucket's name.
        public let name: String

        init(store: OpaquePointer, name: String) {
            self.store = store
            self.name = name
        }

        deinit { kvStore_Destroy(store) }

        /// Puts `bytes` under `key` (waits for the engine's acknowledgement).
        public func put(_ key: String, _ bytes: [UInt8]) throws {
            var revision: UInt64 = 0
            let status = bytes.withUnsafeBytes { kvStore_Put(&revision, store, key, $0.baseAddress, Int32($0.count)) }
            try EngineLink.check(status, "cannot put \(name).\(key)")
        }

        /// The value under `key`, nil when there is none.
        public func get(_ key: String) throws -> [UInt8]? {
            var entry: OpaquePointer?
            let status = kvStore_Get(&entry, store, key)
            if Int32(bitPattern: status.rawValue) == CNATS_NOT_FOUND { return nil }
            try EngineLink.check(status, "cannot get \(name).\(key)")
            guard let entry else { return nil }
            defer { kvEntry_Destroy(entry) }
            let count = Int(kvEntry_ValueLen(entry))
            guard count > 0, let raw = kvEntry_Value(entry) else { return [] }
            return raw.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        }

        /// Watches every key (or the keys `keys` matches): the latest values first, then each
        /// put as it lands. Runs `handler` on a thread of its own until ``Watch/stop()``.
        public func watchAll(keys: String = ">", _ handler: @escaping @Sendable (_ key: String, _ value: [UInt8]) -> Void) throws -> Watch {
            var watcher: OpaquePointer?
            var options = kvWatchOptions()
            kvWatchOptions_Init(&options)
            options.IgnoreDeletes = true
            try EngineLink.check(kvStore_Watch(&watcher, store, keys, &options), "cannot watch \(name)")
            guard let watcher else { throw EngineError(.failed, "no watcher on \(name)") }
            let watch = Watch(watcher: watcher, bucket: self)
            DispatchQueue(label: "org.ferry.continuity.watch").async { watch.run(handler) }
            return watch
        }
    }

    /// A running watch of a bucket.
    public final class Watch: @unchecked Sendable {
        let watcher: OpaquePointer
        let bucket: Bucket
        let stopped = Mutex(false)
        let done = DispatchSemaphore(value: 0)

        init(watcher: OpaquePointer, bucket: Bucket) {
            self.watcher = watcher
            self.bucket = bucket
        }

        func run(_ handler: @Sendable (String, [UInt8]) -> Void) {
            defer { done.signal() }
            while !stopped.withLock({ $0 }) {
                var entry: OpaquePointer?
                let status = kvWatcher_Next(&entry, watcher, 500)
                if status == NATS_OK, let entry {
                    defer { kvEntry_Destroy(entry) }
                    guard kvEntry_Operation(entry) == kvOp_Put, let key = kvEntry_Key(entry) else { continue }
                    let count = Int(kvEntry_ValueLen(entry))
                    var value: [UInt8] = []
                    if count > 0, let raw = kvEntry_Value(entry) {
                        value = raw.withMemoryRebound(to: UInt8.self, capacity: count) {
                            Array(UnsafeBufferPointer(start: $0, count: count))
                        }
                    }
                    handler(String(cString: key), value)
                } else if status == NATS_OK || Int32(bitPattern: status.rawValue) == CNATS_TIMEOUT {
                    continue  // the end of the initial values (a nil entry), or nothing yet
                } else {
                    usleep(100_000)  // stopped, or the link is down: libnats resumes the watch
                }
            }
        }

        /// Stops the watch and waits for its thread.
        public func stop() {
            stopped.withLock { $0 = true }
            kvWatcher_Stop(watcher)
            done.wait()
            kvWatcher_Destroy(watcher)
        }
    }
}

/// Signs the nonce the engine sends when a link connects (or reconnects) with the device's key,
/// held in memory (read from the seed file once, when the link opens).
///
/// libnats 3.4.1 base64-encodes the signature with a routine that treats its input as a C string:
/// a signature whose first byte is zero (one nonce in 256) encodes to nothing, libnats sends
/// CONNECT without it, and the engine refuses the device ("Authorization Violation"). Ed25519
/// signatures are deterministic, so the signer refuses such a nonce instead: that connection
/// attempt fails, and the next one (``EngineLink``'s first connect, or libnats' reconnect) gets
/// a new nonce.
final class NonceSigner: Sendable {
    let key: Curve25519.Signing.PrivateKey
    /// How many nonces were refused so far (their signature began with a zero byte).
    let refusals = Atomic<Int>(0)

    init(key: Curve25519.Signing.PrivateKey) { self.key = key }

    /// libnats' signature handler: the signature goes into memory libnats frees, or the reason
    /// into `error` (also freed by libnats).
    func sign(_ nonce: UnsafePointer<CChar>, into signature: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
              _ length: UnsafeMutablePointer<Int32>?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> natsStatus {
        guard let signed = try? key.signature(for: UnsafeRawBufferPointer(start: nonce, count: strlen(nonce))) else {
            error?.pointee = strdup("cannot sign the engine's nonce")
            return NATS_ERR
        }
        guard signed.first != 0 else {
            refusals.add(1, ordering: .relaxed)
            error?.pointee = strdup("the nonce's signature begins with a zero byte, which libnats would drop; trying a new nonce")
            return NATS_ERR
        }
        guard let memory = malloc(signed.count)?.assumingMemoryBound(to: UInt8.self) else {
            error?.pointee = strdup("cannot sign the engine's nonce: out of memory")
            return NATS_ERR
        }
        signed.copyBytes(to: memory, count: signed.count)
        signature?.pointee = memory
        length?.pointee = Int32(signed.count)
        return NATS_OK
    }
}

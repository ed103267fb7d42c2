import BrokerCore
import Foundation
import DBus
import Dispatch
import FerryBroker
import FerryModel
import Logging
import FerrySystem
import Synchronization
import CNATS
#if canImport(Glibc)
import Glibc
#endif

/// Universal Clipboard (issue #22): the general pasteboard shared between one user's devices
/// through a NATS engine.
///
/// A local copy announces a sealed ``Envelope`` (types, sizes, names, expiration; no bytes) under
/// this device's key in the user's `ferry_pb` bucket, which keeps it for ``Configuration/ttl``.
/// Every other device watches the bucket and puts the newest announcement (by hybrid logical
/// clock, so a newer local copy wins) on its own general pasteboard as a remote item: promised
/// representations whose owner names the source, with `origin` `continuity:DEVICE`. A paste of
/// one pulls the bytes from the source's ferryd by request-reply in chunks, each sealed, streamed
/// into the reader's pipe through the broker's promise path.
///
/// Never leaves the machine: `localOnly` and sensitive items (sensitive ones are never in the
/// store), `ownApp` representations, and other devices' remote items; the source checks this
/// again on every chunk request, against its live pasteboard. A representation an app still
/// promises is announced too, and its app asked for the bytes when another device pastes it
/// (Continuity+Promises.swift). Nothing on the local
/// bus waits on the network: announcements go out from a queue of their own, and pulls run as
/// transfers.
package final class Continuity: ContinuityHooks, BrokerCompanion, @unchecked Sendable {
    /// How continuity is set up (`ferryd --continuity URL --creds FILE --continuity-key FILE`).
    /// A creds file that does not exist is made; a key file that does not exist leaves the
    /// device unpaired (pairing writes it: Continuity+Pairing.swift).
    package struct Configuration: Sendable {
        /// The engine and this device's credentials.
        package var address: EngineAddress
        /// The file with the user's sealing key (64 hexadecimal digits, mode 0600); missing
        /// until the device is paired.
        package var keyFile: String
        /// This device's name (1–48 letters, digits, `-`, `_`); its subjects carry it.
        package var device: String
        /// How long an announcement lives in the bucket, and a remote item on a receiver.
        package var ttl: Duration = .seconds(120)
        /// The bytes per chunk request (at most ``Continuity/largestChunk`` are answered).
        package var chunkSize = Continuity.largestChunk
        /// How long a pull waits for a chunk before the source counts as unavailable.
        package var chunkTimeout: Duration = .seconds(3)
        /// Handoff: the least time between two advertisements of this device's current
        /// activity (changes in between are coalesced into the next one).
        package var handoffInterval: Duration = .seconds(1)
        /// Handoff: how long an advertisement lives (the `ferry_activity` bucket's TTL, and the
        /// longest a receiver offers it); the source advertises its current activity again
        /// after half of it.
        package var handoffLifetime: Duration = .seconds(120)
        /// Handoff: how long a continue waits for the source device (its app included).
        package var handoffTimeout: Duration = .seconds(5)
        /// Pairing: how long a code from `ferry continuity join` stays good.
        package var pairingLifetime: Duration = .seconds(120)
        /// The named pasteboards carried like the general one (`--continuity-pasteboards`):
        /// announced from here, and shown here when another device announces them.
        package var pasteboards: Set<String> = []

        /// Makes a configuration.
        package init(address: EngineAddress, keyFile: String, device: String) {
            self.address = address
            self.keyFile = keyFile
            self.device = device
        }
    }

    /// The prefix of a remote item's `origin` and of its representations' owner.
    package static let originPrefix = "continuity:"

    /// The most bytes a source answers one chunk request with, whatever length it asks for:
    /// sealed, an answer stays under the engine's usual 1 MiB message limit.
    package static let largestChunk = 512 * 1024

    let configuration: Configuration
    let pasteboards: PasteboardService
    /// The scenes, for Handoff (nil: Universal Clipboard only).
    let scenes: SceneService?
    /// This device's nkey public key (`U…`: what the engine's configuration lists).
    package let publicKey: String
    let clock: HybridClock
    /// Where continuity says what happened and what it could not do (the broker's logger).
    let logger: Logger
    /// Announcements and link events, in order, off the bus's threads.
    let queue = DispatchQueue(label: "org.ferry.continuity")
    let applying: AsyncStream<Envelope>.Continuation
    let applier: Task<Void, Never>
    /// Handoff: a change of the current activity (coalesced: the newest one waits).
    let advertising: AsyncStream<Void>.Continuation
    let advertiser: Task<Void, Never>

    struct State {
        /// The user's sealing key; nil while the device is unpaired.
        var seal: Seal?
        var link: EngineLink?
        /// Whether the paired half (buckets, chunk subject, watches) is set up on ``link``.
        var pairedOnLink = false
        var bucket: EngineLink.Bucket?
        var watch: EngineLink.Watch?
        /// The stamp of the newest local copy (announced or not).
        var localStamp: ClockStamp?
        /// The last announcement of this device, sent again after a reconnect.
        var announced: Envelope?
        /// The stamp of the remote copy on the general pasteboard now.
        var appliedStamp: ClockStamp?
        /// The same for each opted-in named pasteboard (Continuity+NamedPasteboards.swift).
        var named: [String: NamedBoard] = [:]
        var stopped = false
        /// Handoff (Continuity+Handoff.swift).
        var handoff = HandoffState()
        /// Pairing (Continuity+Pairing.swift).
        var pairing: PairingSession?
        /// Devices and revoke (Continuity+Devices.swift).
        var devices = DevicesState()
        var nextPairing: UInt32 = 1
    }

    let state = Mutex(State())
    /// Pulls of promised representations under way, by ``PromisedPull/key(of:)``.
    let promisedPulls = Mutex<[String: PromisedPull]>([:])

    /// Checks the configuration and reads the key and creds (errors name the file and what is
    /// wrong), making the creds file when there is none; connects only in ``start()``. Without a
    /// key file the device is unpaired: connected, but it announces, watches and serves nothing.
    package init(configuration: Configuration, pasteboards: PasteboardService, scenes: SceneService? = nil,
                logger: Logger) throws {
        guard Subjects.isValidDevice(configuration.device), configuration.device.utf8.count <= 48 else {
            throw EngineError(.failed, "bad device name \"\(configuration.device)\": 1 to 48 letters, digits, - or _")
        }
        let (publicKey, made) = try NKey.publicKey(makingSeedFile: configuration.address.seedFile)
        if made { logger.notice("continuity: made this device's creds \(configuration.address.seedFile); its public key is \(publicKey)") }
        var info = stat()
        let hasKey = lstat(configuration.keyFile, &info) == 0 || errno != ENOENT
        let seal = hasKey ? try Seal(keyFile: configuration.keyFile) : nil
        self.publicKey = publicKey
        self.configuration = configuration
        self.pasteboards = pasteboards
        self.scenes = scenes
        state.withLock { $0.seal = seal }
        self.clock = HybridClock(device: configuration.device)
        self.logger = logger
        let (stream, continuation) = AsyncStream<Envelope>.makeStream()
        applying = continuation
        let box = WeakBox()
        applier = Task {
            for await envelope in stream { await box.value?.apply(envelope) }
        }
        let (changes, advertising) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.advertising = advertising
        let interval = configuration.handoffInterval
        advertiser = Task {
            // At most one advertisement per interval; changes meanwhile wait as one.
            for await _ in changes {
                await box.value?.advertiseCurrent()
                try? await Task.sleep(for: interval)
            }
        }
        box.value = self
        cnats_ignore_sigpipe()
    }

    final class WeakBox: @unchecked Sendable {
        weak var value: Continuity?
    }

    var device: String { configuration.device }

    /// The user's sealing key; nil while this device is unpaired.
    var seal: Seal? { state.withLock { $0.seal } }

    /// Plugs into the pasteboards and connects in the background, retrying with a growing wait
    /// until the engine answers.
    package func start() {
        exportInterface()
        pasteboards.setContinuity(self)
        scenes?.setHandoff(self)
        queue.async { self.connect(attempt: 0) }
    }

    /// Disconnects (remote items stay until they expire; reads of them fail).
    package func stop() {
        let (link, watch) = state.withLock { state in
            state.stopped = true
            defer { state.link = nil; state.bucket = nil; state.watch = nil }
            return (state.link, state.watch)
        }
        pasteboards.setContinuity(nil)
        scenes?.setHandoff(nil)
        endPairing()
        stopDevices()
        stopHandoff()
        endPromisedPulls()
        watch?.stop()
        link?.close()
        applying.finish()
        applier.cancel()
        advertising.finish()
        advertiser.cancel()
    }

    // MARK: - Link

    func connect(attempt: Int) {
        guard !state.withLock({ $0.stopped }) else { return }
        do {
            let link = try EngineLink(address: configuration.address, name: "ferryd-\(device)")
            link.onEvent { [weak self] event in
                guard let self else { return }
                self.queue.async { self.linkChanged(event) }
            }
            state.withLock { state in
                state.link = link
                state.pairedOnLink = false
            }
            logger.info("continuity: connected to \(configuration.address.url) as \(device)\(seal == nil ? " (unpaired: ferry continuity init, or join)" : "")")
            if seal != nil { try setUpPaired() }
        } catch {
            let wait = min(5_000, 250 << min(attempt, 5))
            if attempt == 0 { logger.warning("continuity: cannot reach the engine yet (retrying): \(error)") }
            let dropped = state.withLock { state in defer { state.link = nil }; return state.link }
            dropped?.close()
            queue.asyncAfter(deadline: .now() + .milliseconds(wait)) { self.connect(attempt: attempt + 1) }
        }
    }

    /// What a paired device does on the link (on ``queue``, once per link): the bucket, its
    /// chunk subject, Handoff's bucket and subject, the watches, and its newest copy announced.
    func setUpPaired() throws {
        guard let link = state.withLock({ $0.pairedOnLink ? nil : $0.link }) else { return }
        let bucket = try link.bucket(Subjects.bucket, ttl: configuration.ttl)
        try link.subscribe(Subjects.chunks(of: device)) { [weak self] bytes, reply in
            self?.serveChunk(bytes, reply: reply, link: link)
        }
        let activities = try scenes.map { _ in try link.bucket(Subjects.activityBucket, ttl: configuration.handoffLifetime) }
        if activities != nil {
            try link.subscribe(Subjects.activities(of: device)) { [weak self] bytes, reply in
                self?.serveActivity(bytes, reply: reply, link: link)
            }
        }
        state.withLock { state in
            state.pairedOnLink = true
            state.bucket = bucket
            state.handoff.bucket = activities
        }
        try setUpDevices(link)
        startWatch()
        announceCurrent()
        startHandoff()
    }

    /// Starts the paired half with the key just made or received (on ``queue``): no restart.
    func adopt(_ seal: Seal) {
        state.withLock { $0.seal = seal }
        queue.async {
            do {
                try self.setUpPaired()
                self.logger.notice("continuity: paired; this device now shares the general pasteboard")
            } catch {
                self.logger.warning("continuity: paired, but cannot use the engine yet: \(error)")
            }
        }
    }

    func linkChanged(_ event: EngineLink.Event) {
        switch event {
        case .disconnected:
            logger.warning("continuity: lost the engine; remote items disappear")
            let old = state.withLock { state in defer { state.watch = nil }; return state.watch }
            old?.stop()
            Task { await self.dropRemoteItems() }
            handoffLinkLost()
        case .reconnected:
            logger.notice("continuity: the engine is back")
            resume(attempt: 0)
            startHandoff()
        }
    }

    /// Watches the bucket again and announces the newest local copy again (the bucket may have
    /// lost it, or never had it); a restarted engine may take a moment before JetStream answers,
    /// so both are retried for a few seconds.
    func resume(attempt: Int) {
        let watching = startWatch()
        let again = state.withLock { $0.announced }
        let announced = (again.map { put($0) } ?? true) && namedAnnouncements.allSatisfy { put($0) }
        guard !(watching && announced), attempt < 20, !state.withLock({ $0.stopped }) else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(500)) { [weak self] in self?.resume(attempt: attempt + 1) }
    }

    /// Watches the bucket (again); false when the engine refused.
    @discardableResult
    func startWatch() -> Bool {
        guard let bucket = state.withLock({ $0.bucket }) else { return true }
        do {
            let watch = try bucket.watchAll { [weak self] key, value in self?.received(key: key, value: value) }
            let old = state.withLock { state in defer { state.watch = watch }; return state.watch }
            old?.stop()
            return true
        } catch {
            logger.error("continuity: cannot watch the bucket: \(error)")
            return false
        }
    }

    func dropRemoteItems() async {
        state.withLock { $0.appliedStamp = nil }
        _ = try? await pasteboards.clearRemoteItems { $0.options.origin?.hasPrefix(Self.originPrefix) == true }
        await dropNamedRemoteItems()
    }

    // MARK: - Announcing

    /// ContinuityHooks: a change of the general pasteboard (on the pasteboard actor).
    package func generalChanged(changeCount: UInt64) {
        queue.async { self.localChange(changeCount: changeCount) }
    }

    func localChange(changeCount: UInt64) {
        guard let items = try? pasteboards.store.items(in: PasteboardName.general) else { return }
        // Its own writes of remote items come back here: not a local copy.
        if !items.isEmpty, items.allSatisfy({ $0.options.origin?.hasPrefix(Self.originPrefix) == true }) { return }
        let stamp = clock.tick()
        state.withLock { $0.localStamp = stamp; $0.appliedStamp = nil }
        let envelope = Self.envelope(of: items, device: device, stamp: stamp, changeCount: changeCount)
        // When nothing may leave (a local-only or sensitive copy, a clear), the envelope without
        // items still goes if this device's older item is out there: the others drop it, as this
        // device could no longer serve it.
        let announce = state.withLock { state in
            guard !envelope.items.isEmpty || state.announced?.items.isEmpty == false else { return false }
            state.announced = envelope
            return true
        }
        if announce { put(envelope) }
    }

    /// Announces again the newest local copy of this run, if any (after connecting). What the
    /// store held from before ferryd started is not announced: it may be older than what the
    /// other devices copied since, and its time is not known.
    func announceCurrent() {
        if let announced = state.withLock({ $0.announced }) { put(announced) }
        for announced in namedAnnouncements { put(announced) }
    }

    /// What of `items` may leave the machine, as an envelope (without items when nothing may).
    static func envelope(of items: [StoredItem], device: String, stamp: ClockStamp, changeCount: UInt64) -> Envelope {
        let now = Date()
        let leaving: [Envelope.Item] = items.compactMap { item in
            guard mayLeave(item, now: now) else { return nil }
            let types = item.representations.compactMap { representation -> Envelope.Representation? in
                guard mayLeave(representation) else { return nil }
                return Envelope.Representation(type: representation.contentType.identifier, size: representation.size)
            }
            guard !types.isEmpty else { return nil }
            return Envelope.Item(id: item.id, types: types, name: item.suggestedName,
                                 expires: item.options.expirationDate.map { UInt64($0.timeIntervalSince1970 * 1000) })
        }
        return Envelope(device: device, stamp: stamp, changeCount: changeCount, items: leaving)
    }

    /// Whether an item may leave the machine: not `localOnly`, not sensitive, not expired, not
    /// another device's remote item.
    static func mayLeave(_ item: StoredItem, now: Date) -> Bool {
        !item.options.localOnly && !item.options.sensitive && !item.isExpired(at: now)
            && item.options.origin?.hasPrefix(originPrefix) != true
    }

    /// Whether a representation may leave: visible to every app, and held by the broker or
    /// promised by an app still here (not one whose app went without handing it over).
    static func mayLeave(_ representation: StoredRepresentation) -> Bool {
        guard representation.visibility == .all else { return false }
        if case .promised = representation.storage { return true }
        return representation.isHeld
    }

    /// Puts the announcement; false when the engine refused.
    @discardableResult
    func put(_ envelope: Envelope) -> Bool {
        guard let (bucket, seal) = state.withLock({ state in state.bucket.flatMap { bucket in state.seal.map { (bucket, $0) } } })
        else { return true }
        let key = Self.bucketKey(device, pasteboard: envelope.pasteboard)
        do {
            let plain = try JSONEncoder().encode(envelope)
            try bucket.put(key, try seal.seal([UInt8](plain), context: Subjects.announcement(key)))
            return true
        } catch {
            logger.warning("continuity: cannot announce the copy: \(error)")
            return false
        }
    }

    // MARK: - Receiving

    func received(key: String, value: [UInt8]) {
        let (source, pasteboard) = Self.parseBucketKey(key) ?? (key, nil)
        guard source != device, let seal else { return }
        // A named pasteboard this device did not opt in to: not for it.
        if let pasteboard, !configuration.pasteboards.contains(pasteboard) { return }
        guard Subjects.isValidDevice(source),
              let plain = try? seal.open(value, context: Subjects.announcement(key)),
              let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(plain)),
              envelope.device == source, envelope.stamp.device == source, envelope.pasteboard == pasteboard
        else {
            logger.warning("continuity: ignored an announcement under \(key) that does not open with this user's key")
            return
        }
        clock.observe(envelope.stamp)
        applying.yield(envelope)
    }

    func apply(_ envelope: Envelope) async {
        if let name = envelope.pasteboard { return await apply(envelope, on: name) }
        let newer = state.withLock { state in
            let newest = [state.localStamp, state.appliedStamp].compactMap { $0 }.max()
            guard newest.map({ envelope.stamp > $0 }) ?? true else { return false }
            state.appliedStamp = envelope.stamp
            return true
        }
        guard newer else { return }
        await show(envelope, on: PasteboardName.general)
    }

    /// Puts a newer announcement's items on the pasteboard `name` as remote items; an
    /// announcement without items takes the source's older remote item away, since nothing of
    /// its newer copy may be shown here.
    func show(_ envelope: Envelope, on name: String) async {
        let origin = Self.originPrefix + envelope.device
        let items = remoteItems(of: envelope)
        guard !items.isEmpty else {
            if (try? await pasteboards.clearRemoteItems(on: name, where: { $0.options.origin == origin })) == true {
                logger.debug("continuity: \(envelope.device) copied something to \(name) that stays there; its remote item is gone")
            }
            return
        }
        do {
            let count = try await pasteboards.writeRemoteItems(items, to: name)
            logger.info("continuity: \(items.count) remote item(s) from \(envelope.device) on the pasteboard \(name) (change \(count))")
        } catch {
            logger.warning("continuity: cannot show the remote items of \(envelope.device) on \(name): \(error)")
        }
    }

    /// The remote items an announcement shows here: promised representations whose owner names
    /// the source, expiring at the source's time or at the end of the continuity window.
    func remoteItems(of envelope: Envelope) -> [NewItem] {
        let now = Date()
        let windowEnd = now.addingTimeInterval(Double(configuration.ttl.components.seconds))
        let origin = Self.originPrefix + envelope.device
        return envelope.items.compactMap { item in
            var expiration = windowEnd
            if let expires = item.expires {
                expiration = min(expiration, Date(timeIntervalSince1970: Double(expires) / 1000))
            }
            guard expiration > now else { return nil }
            let owner = Self.originPrefix + envelope.device + "/" + item.id.uuidString
            let representations = item.types.compactMap { representation -> NewRepresentation? in
                guard let type = ContentType(importedAs: representation.type) else { return nil }
                return NewRepresentation(contentType: type, data: .promised(owner: owner, estimatedSize: representation.size))
            }
            guard !representations.isEmpty else { return nil }
            return NewItem(options: StoredItem.Options(expirationDate: expiration, origin: origin),
                           suggestedName: item.name, representations: representations)
        }
    }

    // MARK: - Pulling (the reader's side)

    /// ContinuityHooks.
    package func serves(owner: String) -> Bool { owner.hasPrefix(Self.originPrefix) }

    /// ContinuityHooks: starts a pull; the pipe's read end at once, the byte count (or
    /// `Unavailable`, `Timeout`, naming the source device) from the task.
    package func startRemoteRead(owner: String, item: UUID, type: ContentType) throws -> (FileDescriptor, Task<UInt64, any Error>) {
        let rest = owner.dropFirst(Self.originPrefix.count)
        guard let slash = rest.firstIndex(of: "/"), let remoteID = UUID(uuidString: String(rest[rest.index(after: slash)...])) else {
            throw FerryModelError(.unavailable, "bad remote owner \(owner)")
        }
        let source = String(rest[..<slash])
        guard let seal else {
            throw FerryModelError(.unavailable, "this device is not paired, so \(source) cannot serve \(type.identifier)")
        }
        guard let link = state.withLock({ $0.link }), link.isConnected else {
            throw FerryModelError(.unavailable, "the continuity engine is not reachable, so \(source) cannot serve \(type.identifier)")
        }
        let pipe: (read: FileDescriptor, write: FileDescriptor)
        do {
            pipe = try FileDescriptor.pipe(bufferSize: PromiseRelay.pipeBufferSize)
        } catch {
            throw FerryModelError(.unavailable, "cannot make a pipe: \(error)")
        }
        let request = ChunkRequest(from: device, item: remoteID, type: type.identifier, offset: 0, length: configuration.chunkSize,
                                   pull: UUID())
        let puller = Puller(link: link, seal: seal, source: source, request: request, timeout: configuration.chunkTimeout,
                            sink: pipe.write)
        // The first request leaves here, on the caller's thread; its answer is handled where it arrives.
        let task = Task<UInt64, any Error>.immediate {
            try await withCheckedThrowingContinuation { continuation in puller.start { continuation.resume(with: $0) } }
        }
        return (pipe.read, task)
    }

    /// Pulls one representation chunk by chunk into a pipe. The first chunk request is sent at
    /// once through the link's standing reply subscription and its answer is opened and written
    /// into the (still empty) pipe on libnats' delivery thread as it arrives, so a small item
    /// costs one request-reply and no thread waits for it. When that answer says there is more,
    /// the rest is pulled on a worker thread (it blocks), pipelined with ``window`` requests in
    /// flight: the source reads and seals the next chunks while this side opens one and writes
    /// it into the pipe. Each chunk is opened straight from libnats' buffer. Chunks are written in
    /// order; requests past the end are answered empty and dropped.
    struct Puller: Sendable {
        let link: EngineLink
        let seal: Seal
        let source: String
        var request: ChunkRequest
        let timeout: Duration
        let sink: FileDescriptor
        /// Requests in flight at most.
        static let window = 4

        var subject: String { Subjects.chunks(of: source) }

        /// Sends the first request; `done` gets the byte count or the error once the pipe is
        /// closed (on whichever thread finished the pull).
        func start(_ done: @escaping @Sendable (Result<UInt64, any Error>) -> Void) {
            let finish: @Sendable (Result<UInt64, any Error>) -> Void = { result in
                sink.close()
                done(result)
            }
            // Bytes that fit in the empty pipe are written without blocking.
            let fits = sink.pipeCapacity ?? 0
            let first = chunk(0)
            do {
                try link.request(subject, try sealed(first), timeout: timeout) { reply in
                    do {
                        let answer = try reply.mapError { fail($0, after: 0) }.get()
                        let (body, last) = try opened(answer, of: first)
                        guard body.count <= fits else {
                            BlockingIO.start { finish(Result { try rest(after: put(body, total: 0), last: last) }) }
                            return
                        }
                        let total = try put(body, total: 0)
                        if last { return finish(.success(total)) }
                        BlockingIO.start { finish(Result { try rest(after: total, last: false) }) }
                    } catch {
                        finish(.failure(error))
                    }
                }
            } catch let error as EngineError {
                finish(.failure(fail(error, after: 0)))
            } catch {
                finish(.failure(error))
            }
        }

        /// The chunks after the first, once `total` bytes are in the pipe (blocks).
        func rest(after total: UInt64, last: Bool) throws -> UInt64 {
            guard !last else { return total }
            var total = total
            let pipeline: RequestPipeline
            do {
                pipeline = try link.pipeline()
            } catch let error as EngineError {
                throw fail(error, after: total)
            }
            defer { pipeline.close() }
            var arrived: [Int: EngineMessage] = [:]
            var nextToSend = 1
            var nextToWrite = 1
            while true {
                while nextToSend < nextToWrite + Self.window {
                    do {
                        try pipeline.send(subject, try sealed(chunk(nextToSend)), tag: nextToSend)
                    } catch let error as EngineError {
                        throw fail(error, after: total)
                    }
                    nextToSend += 1
                }
                while arrived[nextToWrite] == nil {
                    do {
                        let (tag, answer) = try pipeline.next(timeout: timeout)
                        if tag >= nextToWrite && tag < nextToSend { arrived[tag] = answer }
                    } catch let error as EngineError {
                        throw fail(error, after: total)
                    }
                }
                let (body, last) = try opened(arrived.removeValue(forKey: nextToWrite)!, of: chunk(nextToWrite))
                total = try put(body, total: total)
                if last { return total }
                nextToWrite += 1
            }
        }

        /// The request for chunk `index`.
        func chunk(_ index: Int) -> ChunkRequest {
            var part = request
            part.offset = request.offset + Int64(index) * Int64(request.length)
            return part
        }

        /// The error for the engine's `error` after `total` bytes: a source that is gone answers
        /// at once (no responders), a partition after the timeout.
        func fail(_ error: EngineError, after total: UInt64) -> FerryModelError {
            let why = error.code == .noResponders ? "is gone (no responders)"
                : error.code == .timeout ? "did not answer within \(timeout)" : "cannot be reached: \(error.message)"
            return FerryModelError(error.code == .timeout ? .timeout : .unavailable,
                                   "the source device \(source) \(why) after \(total) bytes of \(request.type)")
        }

        /// `chunk`'s request, sealed for the source.
        func sealed(_ chunk: ChunkRequest) throws -> [UInt8] {
            try seal.seal([UInt8](try JSONEncoder().encode(chunk)), context: Subjects.request(to: source))
        }

        /// The bytes of the source's answer to `chunk`, and whether it was the last chunk.
        func opened(_ answer: EngineMessage, of chunk: ChunkRequest) throws -> (body: Data.SubSequence, last: Bool) {
            let plain = try answer.withBytes { try seal.open(contentsOf: $0, context: Subjects.reply(to: source, chunk)) }
            guard let status = plain.first else {
                throw FerryModelError(.unavailable, "the source device \(source) sent an empty answer")
            }
            let body = plain.dropFirst()
            if status == ChunkStatus.refused {
                throw FerryModelError(.unavailable, "the source device \(source) refused \(request.type): "
                                      + String(decoding: body, as: UTF8.self))
            }
            // The next requests assumed whole chunks: a short one would leave a gap.
            guard status == ChunkStatus.last || body.count == chunk.length else {
                throw FerryModelError(.unavailable, "the source device \(source) sent \(body.count) bytes of a \(chunk.length)-byte chunk")
            }
            return (body, status == ChunkStatus.last)
        }

        /// Writes `body` into the pipe after `total` bytes; the new total.
        func put(_ body: Data.SubSequence, total: UInt64) throws -> UInt64 {
            do {
                try body.withUnsafeBytes { try sink.write(all: $0) }
            } catch {
                throw FerryModelError(.cancelled, "the reader stopped reading \(request.type) after \(total) bytes")
            }
            return total + UInt64(body.count)
        }
    }

    // MARK: - Serving (the source's side)

    enum ChunkStatus {
        static let more: UInt8 = 0
        static let last: UInt8 = 1
        static let refused: UInt8 = 2
    }

    func serveChunk(_ bytes: [UInt8], reply: String?, link: EngineLink) {
        guard let reply, let seal,
              let plain = try? seal.open(bytes, context: Subjects.request(to: device)),
              let request = try? JSONDecoder().decode(ChunkRequest.self, from: Data(plain)),
              Subjects.isValidDevice(request.from), request.offset >= 0, request.length > 0
        else { return }  // not from this user's devices: no answer at all
        let device = self.device
        let send: @Sendable ([UInt8]) -> Void = { answer in
            guard let sealed = try? seal.seal(answer, context: Subjects.reply(to: device, request)) else { return }
            try? link.publish(reply, sealed)
        }
        do {
            switch try chunk(for: request) {
            case .answer(let answer): send(answer)
            case .promised(let pull): servePromised(request, from: pull, send: send)
            }
        } catch {
            send([ChunkStatus.refused] + Array("\(error)".utf8))
        }
    }

    /// The status byte and bytes for `request`, or the pull of a promised representation that
    /// will give them, checked against the live general pasteboard: the item must still be there
    /// and still be allowed to leave.
    func chunk(for request: ChunkRequest) throws -> ChunkSource {
        guard let item = try announcedItem(request.item) else {
            throw FerryModelError(.notFound, "the item is no longer on the pasteboard it was copied to")
        }
        guard Self.mayLeave(item, now: Date()),
              let representation = item.representations.first(where: { $0.contentType.identifier == request.type }),
              Self.mayLeave(representation)
        else { throw FerryModelError(.notFound, "no such representation may leave this machine") }
        // A pull under way keeps serving from its app's bytes, even if the app handed them over meanwhile.
        var owner: String?
        if case .promised(let promiser) = representation.storage { owner = promiser }
        if let pull = try promisedPull(for: request, owner: owner) { return .promised(pull) }
        guard let size = representation.size else {
            throw FerryModelError(.unavailable, "the size of \(request.type) is not known")
        }
        let length = min(max(0, Int(size - request.offset)), request.length, Self.largestChunk)
        // The answer is the status byte (settled once the length is known) and the bytes, read straight into it.
        var answer: [UInt8]
        // A small held representation comes from the broker's contents cache after the first read.
        switch try pasteboards.heldData(of: representation, of: item) {
        case .bytes(let data):
            let start = Int(min(request.offset, Int64(data.count)))
            answer = [ChunkStatus.more]
            answer.append(contentsOf: data[data.startIndex + start ..< data.startIndex + min(data.count, start + length)])
        case .file(let raw, _):
            defer { Glibc.close(raw) }
            answer = [UInt8](unsafeUninitializedCapacity: length + 1) { buffer, count in
                buffer[0] = ChunkStatus.more
                var done = 0
                while done < length {
                    let n = pread(raw, buffer.baseAddress! + 1 + done, length - done, off_t(request.offset) + off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    done += n
                }
                count = 1 + done
            }
        case .promised:
            throw FerryModelError(.unavailable, "\(request.type) was promised again while it was read")
        }
        let bodyCount = answer.count - 1
        let last = request.offset + Int64(bodyCount) >= size || bodyCount == 0
        answer[0] = last ? ChunkStatus.last : ChunkStatus.more
        return .answer(answer)
    }
}

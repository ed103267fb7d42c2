import DBus
import DesktopClipboard
import Ferry
import FerryModel
import FerrySystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Bridge {
    /// Publishes `offer` at once as one promised item, then copies its storable types in the
    /// background (unless sensitive).
    func importOffer(_ offer: DesktopOffer) async {
        var plan = map.importPlan(for: offer.types)
        if offer.selection == .primary {
            // PRIMARY is text only (desktop-bridge R6).
            plan.representations = plan.representations.filter { $0.contentType == .utf8PlainText }
        }
        guard !plan.representations.isEmpty else {
            log.event("\(offer.selection): nothing to import from \(offer.types.joined(separator: " "))")
            return
        }
        let sensitive = await isSecret(offer, hint: plan.secretHint)
        var provider = ItemProvider()
        // A file manager's copy: its (small) URI list is read first and published inline, so
        // ferryd adds the file URL and the item is a file item (desktop-bridge §Types users copy).
        var inline: Set<ContentType> = []
        for imported in plan.representations where imported.contentType == .uriList && !sensitive {
            guard let list = await readInline(imported, of: offer) else { continue }
            provider.registerDataRepresentation(for: imported.contentType, data: list)
            inline.insert(imported.contentType)
        }
        for imported in plan.representations where !inline.contains(imported.contentType) {
            let backend = self.backend
            provider.registerStreamRepresentation(for: imported.contentType) { descriptor in
                try await Self.stream(imported, of: offer, from: backend, into: descriptor, limit: nil,
                                      idleTimeout: Self.lazyIdleTimeout, cancellation: DescriptorPump.Cancellation())
            }
        }
        let origin = Self.origin(of: offer.selection)
        do {
            let board = try await pasteboard(for: offer.selection)
            importsInFlight[board.name, default: 0] += 1
            let count: UInt64
            do {
                count = try await board.setItemProviders([provider], sensitive: sensitive, origin: origin)
                importsInFlight[board.name, default: 1] -= 1
            } catch {
                importsInFlight[board.name, default: 1] -= 1
                throw error
            }
            ownChanges[board.name, default: []].insert(count)
            guard selections[offer.selection]?.latestOffer == offer.id else { return }  // replaced meanwhile
            // The item's id: the items are ours when the change count has not moved since.
            let items = try await board.items
            guard let item = items.first, try await board.changeCount == count else { return }
            let storable = sensitive ? [] : plan.representations.filter { $0.isStorable && !inline.contains($0.contentType) }
            var record = SelectionState.Import(offer: offer, itemID: item.id, changeCount: count, isSensitive: sensitive,
                                               storable: Set(storable.map(\.contentType)))
            selections[offer.selection]?.lastImport = BridgeStatus.Transfer(time: Date(), changeCount: count,
                                                                            isComplete: false, isSensitive: sensitive)
            log.event("\(offer.selection): published change \(count)\(sensitive ? " (sensitive)" : "")")
            if storable.isEmpty {
                record.copyEnded = true
                selections[offer.selection]?.current = record
                finishCopy(of: offer.selection, id: offer.id)
                return
            }
            let cancellation = record.cancellation
            let itemID = item.id
            record.copy = Task { [budgets] in
                let stored = await Self.copy(storable, of: offer, item: itemID, from: self.backend, to: board,
                                             budgets: budgets, cancellation: cancellation, log: self.log)
                self.copied(stored, selection: offer.selection, offerID: offer.id)
            }
            selections[offer.selection]?.current = record
        } catch {
            log.warning("\(offer.selection): could not publish the desktop's copy: \(error)")
        }
    }

    /// The most of a URI list read first and published inline; a longer one stays a promise.
    static let inlineURIListLimit = 64 * 1024

    /// Reads `imported` (converted) from the owner whole, for publishing it inline.
    /// - Returns: nil when it is empty, over ``inlineURIListLimit``, or the owner does not answer in a second.
    func readInline(_ imported: DesktopTypeMap.Imported, of offer: DesktopOffer) async -> Data? {
        guard let (read, write) = try? DescriptorPump.makePipe() else { return nil }
        let backend = self.backend
        async let written: UInt64? = try? Self.stream(imported, of: offer, from: backend, into: write,
                                                      limit: UInt64(Self.inlineURIListLimit), idleTimeout: .seconds(1),
                                                      cancellation: DescriptorPump.Cancellation())
        // On the blocking pool: the read waits up to a second in poll, which a task must not.
        let bytes = await BlockingIO.run { Self.readSmall(read, limit: Self.inlineURIListLimit + 1, timeoutMilliseconds: 1000) }
        guard let count = await written, !bytes.isEmpty, UInt64(bytes.count) == count else {
            log.event("\(offer.selection): \(imported.sourceName) not read first, it stays a promise")
            return nil
        }
        return Data(bytes)
    }

    /// Whether the offer carries KDE's password-manager hint `secret` (read first, R5).
    func isSecret(_ offer: DesktopOffer, hint: String?) async -> Bool {
        guard let hint, let (read, write) = try? DescriptorPump.makePipe() else { return false }
        async let received: Void = { _ = try? await backend.receive(hint, from: offer, into: write, timeout: .seconds(1)) }()
        let bytes = await BlockingIO.run { Self.readSmall(read, limit: 64, timeoutMilliseconds: 1000) }
        await received
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        // An unreadable hint is treated as secret: never store what may be a password.
        return bytes.isEmpty || text == "secret"
    }

    /// Reads at most `limit` bytes (to end of file or the timeout) and closes `descriptor`.
    nonisolated static func readSmall(_ descriptor: Int32, limit: Int, timeoutMilliseconds: Int32) -> [UInt8] {
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: limit)
        while bytes.count < limit {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, timeoutMilliseconds) > 0 else { break }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, limit - bytes.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return bytes
    }

    /// Asks the owner for one type and streams it, converted, into `descriptor` (which this owns).
    /// - Returns: the bytes written.
    /// - Throws: `BridgeError` `.overBudget` past `limit`, `.io`; what the backend throws.
    nonisolated static func stream(_ imported: DesktopTypeMap.Imported, of offer: DesktopOffer,
                                   from backend: any DesktopClipboardBackend, into descriptor: Int32, limit: UInt64?,
                                   idleTimeout: Duration, cancellation: DescriptorPump.Cancellation) async throws -> UInt64 {
        let pipe: (read: Int32, write: Int32)
        do { pipe = try DescriptorPump.makePipe() } catch { close(descriptor); throw error }
        async let outcome = DescriptorPump.copy(from: pipe.read, to: descriptor, conversion: imported.conversion,
                                                limit: limit, idleTimeout: idleTimeout, cancellation: cancellation)
        do {
            _ = try await backend.receive(imported.sourceName, from: offer, into: pipe.write, timeout: idleTimeout)
        } catch {
            // The backend closed the pipe's write end: the pump ends at once.
            _ = await outcome
            throw error
        }
        switch await outcome {
        case .complete(let bytes): return bytes
        case .overLimit: throw BridgeError(.overBudget, "\(imported.sourceName) is larger than \(limit ?? 0) bytes")
        case .sourceSilent: throw DesktopClipboardError(.timeout, "the owner stopped sending \(imported.sourceName)")
        case .destinationStalled: throw BridgeError(.io, "the reader of \(imported.sourceName) stalled")
        case .failed(let reason): throw BridgeError(.io, "copying \(imported.sourceName) failed: \(reason)")
        case .cancelled: throw CancellationError()
        }
    }

    /// Copies the storable types in parallel, each into a scratch file handed to ferryd.
    /// - Returns: the types ferryd now holds.
    nonisolated static func copy(_ storable: [DesktopTypeMap.Imported], of offer: DesktopOffer, item: UUID,
                                 from backend: any DesktopClipboardBackend, to board: Pasteboard, budgets: BridgeBudgets,
                                 cancellation: DescriptorPump.Cancellation, log: BridgeLog) async -> Set<ContentType> {
        let results = await withTaskGroup(of: (ContentType, Int32?, UInt64).self) { group in
            for imported in storable {
                group.addTask {
                    guard let file = ScratchFile.make() else { return (imported.contentType, nil, 0) }
                    let copy = dup(file)
                    do {
                        let bytes = try await stream(imported, of: offer, from: backend, into: copy,
                                                     limit: budgets.bytesPerType, idleTimeout: budgets.idleTimeout,
                                                     cancellation: cancellation)
                        return (imported.contentType, file, bytes)
                    } catch {
                        log.event("\(offer.selection): \(imported.sourceName) not kept: \(error)")
                        close(file)
                        return (imported.contentType, nil, 0)
                    }
                }
            }
            var results: [(ContentType, Int32?, UInt64)] = []
            for await result in group { results.append(result) }
            return results
        }
        var ledger = BridgeBudgets.Ledger(budgets)
        var stored: Set<ContentType> = []
        for (type, file, bytes) in results {
            guard let file else { continue }
            let descriptor = FileDescriptor(taking: file)
            guard !cancellation.isCancelled, ledger.charge(bytes) else {
                log.event("\(offer.selection): \(type.identifier) not kept (\(bytes) bytes over the selection's budget)")
                continue
            }
            lseek(file, 0, SEEK_SET)
            do {
                try await board.fulfill(item: item, type: type, from: descriptor)
                stored.insert(type)
            } catch {
                log.event("\(offer.selection): ferryd did not take \(type.identifier): \(error)")
            }
        }
        return stored
    }

    /// Records the end of an eager copy.
    func copied(_ stored: Set<ContentType>, selection: DesktopSelection, offerID: UInt64) {
        guard var current = selections[selection]?.current, current.offer.id == offerID else { return }
        current.stored = stored
        current.copyEnded = true
        selections[selection]?.current = current
        finishCopy(of: selection, id: offerID)
    }

    func finishCopy(of selection: DesktopSelection, id: UInt64) {
        guard let current = selections[selection]?.current, current.offer.id == id else { return }
        selections[selection]?.lastImport = BridgeStatus.Transfer(time: Date(), changeCount: current.changeCount,
                                                                  isComplete: current.isComplete,
                                                                  isSensitive: current.isSensitive)
        log.event("\(selection): copy of change \(current.changeCount) \(current.isComplete ? "complete" : "incomplete")")
        for waiter in selections[selection]?.copyWaiters ?? [] { waiter.resume() }
        selections[selection]?.copyWaiters = []
    }

    /// Waits until the current import's eager copy of `selection` has ended.
    func waitForCopy(of selection: DesktopSelection) async {
        guard let current = selections[selection]?.current, !current.copyEnded else { return }
        await withCheckedContinuation { continuation in selections[selection]?.copyWaiters.append(continuation) }
    }
}

/// A file with no name in the temporary folder, for one eager copy: gone when its last
/// descriptor closes (ferryd keeps its own copy).
enum ScratchFile {
    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), a macro Glibc's module does not export.
    static let oTmpFile: Int32 = 0o20_200_000

    static func make() -> Int32? {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let fd = open(folder, oTmpFile | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        // File systems without O_TMPFILE: a named file, unlinked at once.
        var template = Array("\(folder)/ferry-bridge-XXXXXX".utf8CString)
        let named = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard named >= 0 else { return nil }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return named
    }
}

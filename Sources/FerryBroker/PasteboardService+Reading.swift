#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel
import FerrySystem
import Logging

extension PasteboardService {
    /// How many bytes of an item's text pattern detection looks at.
    static let detectionLimit = 64 * 1024

    /// `Read`: a paste. Policy first, then the item (of the current items, or of a history
    /// entry with the option `history-entry`), the best conforming representation, and its
    /// bytes: inline below the crossover, else an fd (the blob, a sealed memfd, or the pipe from
    /// the source app). Every allowed read is logged, a history read as one of the general
    /// pasteboard.
    nonisolated func read(_ call: MethodCall, pasteboard name: String) async throws -> [DBusValue] {
        let caller = try await resolve(call)
        let isDrag = try checkTransientAccess(name, caller, .contentReader)
        let index = try call.argument(0, as: UInt32.self)
        let requested = try PasteboardWrite.contentType(try call.argument(1, as: String.self), keyPath: "type")
        let options = WireReader(dbus: try call.argument(2, as: VariantDictionary.self), path: "options")
        // A content reader of a drag or share reads because the user dropped or chose the activity (or is the source itself).
        let userAction = try options.bool("user-action") ?? false || isDrag
        let expectedCount = try options.uint64("change-count")
        let preferFD = try options.bool("fd") ?? false
        let historyEntry = try options.uint64("history-entry").map { Int(clamping: $0) }
        if historyEntry != nil {
            try refuseOnTransientPasteboard(name, caller, "Read of a history entry")
            try Self.requireHistory(name)
        }

        let reader: PastePolicy.Reader = caller.appID.map { .app($0) } ?? .unregistered
        // A foreground scene (active or inactive) lets an app ask the user without a user action.
        let foreground = caller.appID.map(foregroundApps.contains) ?? false
        let rules = policy.current()
        let decision = rules.decide(reader, userAction: userAction, hasForegroundScene: foreground)
        // Refused before the item is looked at, unless reading what the app wrote itself would be allowed.
        if case .deny(let reason) = rules.decide(reader, userAction: userAction, hasForegroundScene: foreground,
                                                 readsOwnContent: true) {
            throw FerryModelError(.permissionDenied, reason)
        }

        var snapshot = try await snapshot(name)
        if let expectedCount, expectedCount != snapshot.changeCount {
            throw FerryModelError(.notFound, "the pasteboard changed: its change count is \(snapshot.changeCount), not \(expectedCount)")
        }
        if let historyEntry {
            // History holds no sensitive items: nothing of it is in memory.
            snapshot = PasteboardSnapshot(changeCount: snapshot.changeCount,
                                          items: try store.historyEntry(historyEntry).items, volatile: nil)
            guard Int(index) < snapshot.items.count else {
                throw FerryModelError(.notFound, "there is no item \(index): history entry \(historyEntry) has \(snapshot.items.count) item(s)")
            }
        }
        guard Int(index) < snapshot.items.count else {
            throw FerryModelError(.notFound, "there is no item \(index): \"\(name)\" has \(snapshot.items.count) item(s)")
        }
        let item = snapshot.items[Int(index)]
        let representation = try Self.bestRepresentation(of: item, index: Int(index), conformingTo: requested, for: caller)
        // Held here while the user is asked; reading what the app wrote itself never asks.
        let consent = try await consentToPaste(decision, caller: caller, userAction: userAction, items: [item],
                                               types: [representation.contentType], pasteboard: name, itemIndex: Int(index))
        let (data, size, transfer) = try await deliver(representation, of: item, volatile: snapshot.volatile,
                                                       preferFD: preferFD, to: caller, pasteboard: name)
        let record = PasteRecord(appID: caller.appID, uniqueName: caller.uniqueName, uid: caller.caller.uid,
                                 pid: Int32(truncatingIfNeeded: caller.caller.pid ?? 0),
                                 process: PasteRecord.readerProcessName(pid: caller.caller.pid, connection: caller.uniqueName),
                                 writerProcess: item.sourceProcess,
                                 historyEntry: historyEntry, pasteboard: name,
                                 itemIndex: Int(index), contentType: representation.contentType, consent: consent?.rawValue)
        logPaste(record)
        return [.string(representation.contentType.identifier), .int64(size), .variant(data), .string(transfer)]
    }

    /// The item's highest-fidelity representation visible to `caller` that conforms to `type`;
    /// one whose bytes are gone only when no other conforms.
    /// - Throws: `FerryModelError` `.notFound` naming the types the item has.
    static func bestRepresentation(of item: StoredItem, index: Int, conformingTo type: ContentType,
                                   for caller: PasteboardCaller) throws -> StoredRepresentation {
        let visible = caller.visibleRepresentations(of: item)
        let conforming = visible.filter { $0.contentType.conforms(to: type) }
        guard let best = conforming.first(where: { $0.storage != .unavailable }) ?? conforming.first else {
            let types = visible.map(\.contentType.identifier).joined(separator: ", ")
            throw FerryModelError(.notFound, "item \(index) has nothing conforming to \(type.identifier); it has "
                                  + (types.isEmpty ? "no representation you can see" : types))
        }
        return best
    }

    /// Where a representation's bytes are now: in memory (a sensitive write) or in the store.
    nonisolated func source(of representation: StoredRepresentation, of item: StoredItem,
                            volatile: VolatileContent?) throws -> RepresentationData {
        try sourceInMemory(of: representation, of: item, volatile: volatile) ?? heldData(of: representation, of: item)
    }

    /// `source(of:of:volatile:)` for a handler on a connection's thread: when the store must be
    /// asked (a contents-cache miss, a blob), it is asked on the blocking pool. The database
    /// queue may be held by a durable write, and ferryd's direct connections share one thread: a
    /// read waiting there would stall every one of them.
    nonisolated func sourceWithoutBlocking(of representation: StoredRepresentation, of item: StoredItem,
                                           volatile: VolatileContent?) async throws -> RepresentationData {
        if let found = try sourceInMemory(of: representation, of: item, volatile: volatile) { return found }
        return try await BlockingIO.run { [self] in try heldData(of: representation, of: item) }
    }

    /// Where a representation's bytes are when no store read is needed: in memory (a sensitive
    /// write, the contents cache), or with the app that promised them while it is still here
    /// (once it is gone the store says where they went: handed over); nil when the store must be
    /// asked.
    private nonisolated func sourceInMemory(of representation: StoredRepresentation, of item: StoredItem,
                                            volatile: VolatileContent?) throws -> RepresentationData? {
        if let volatile, volatile.items.contains(where: { $0.id == item.id }) {
            switch representation.storage {
            case .inline, .blob: return .bytes(volatile.bytes[item.id]?[representation.contentType] ?? Data())
            case .promised(let owner): return .promised(owner: owner)
            case .unavailable:
                throw FerryModelError(.unavailable,
                                      "the app that promised \(representation.contentType.identifier) is gone without handing it over")
            }
        }
        if case .promised(let owner) = representation.storage, promiseOwnerIsHere(owner) { return .promised(owner: owner) }
        guard Self.isCacheable(representation) else { return nil }
        return contentsCache.lookupBytes(item: item.id, type: representation.contentType.identifier).bytes.map { .bytes($0) }
    }

    /// Whether the contents cache keeps a representation's bytes: small ones held in the database.
    private static func isCacheable(_ representation: StoredRepresentation) -> Bool {
        guard representation.storage == .inline, let size = representation.size else { return false }
        return size < inlineReadLimit
    }

    /// A stored representation's bytes: small ones held in the database come from the contents
    /// cache after the first read (a query cost a Read a quarter of ferryd's CPU).
    package nonisolated func heldData(of representation: StoredRepresentation, of item: StoredItem) throws -> RepresentationData {
        let type = representation.contentType
        guard Self.isCacheable(representation) else {
            do {
                return try store.readData(item: item.id, representation: type)
            } catch let error as FerryModelError where error.code == .unavailable && representation.storage == .blob {
                logger.warning("not serving \(type.identifier) of item \(item.id): \(error.message)")
                throw error
            }
        }
        let (cached, generation) = contentsCache.lookupBytes(item: item.id, type: type.identifier)
        if let cached { return .bytes(cached) }
        let data = try store.readData(item: item.id, representation: type)
        if case .bytes(let bytes) = data {
            contentsCache.storeBytes(bytes, item: item.id, type: type.identifier, generation: generation)
        }
        return data
    }

    /// The `data` variant's content, the size (-1 when unknown) and the transfer id ("" for held bytes).
    nonisolated func deliver(_ representation: StoredRepresentation, of item: StoredItem, volatile: VolatileContent?,
                             preferFD: Bool, to caller: PasteboardCaller,
                             pasteboard name: String) async throws -> (DBusValue, Int64, String) {
        switch try await sourceWithoutBlocking(of: representation, of: item, volatile: volatile) {
        case .bytes(let data):
            if data.count < Self.inlineReadLimit && !preferFD { return (.bytes([UInt8](data)), Int64(data.count), "") }
            let memfd = try FileDescriptor.memfd(name: "ferry-paste", contents: data, sealed: true)
            return (.unixFD(memfd), Int64(data.count), "")
        case .file(let raw, let size):
            let descriptor = FileDescriptor(taking: raw)
            if size < Self.inlineReadLimit && !preferFD {
                return (.bytes(try descriptor.readAll(limit: Self.inlineReadLimit)), size, "")
            }
            return (.unixFD(descriptor), size, "")
        case .promised(let owner):
            // A small promise may come inline, when its source answers at once.
            let small = !preferFD && (0..<Int64(Self.inlineReadLimit)).contains(representation.size ?? -1)
            switch try await startPromisedRead(owner: owner, item: item.id, type: representation.contentType,
                                               estimatedSize: representation.size, reader: caller, pasteboard: name,
                                               inlineWithin: small ? Self.promiseInlineWindow : nil) {
            case .bytes(let bytes):
                return (.bytes(bytes), Int64(bytes.count), "")
            case .stream(let descriptor, let transfer):
                return (.unixFD(descriptor), representation.size ?? -1, transfer)
            }
        }
    }

    /// `DetectPatterns`: per item, the patterns its best plain-text or URL representation
    /// matches. Not a paste: no policy, not logged, no bytes leave the broker.
    nonisolated func detectPatterns(_ call: MethodCall, pasteboard name: String) async throws -> [DBusValue] {
        let caller = try await resolve(call)
        try checkTransientAccess(name, caller, .metadataReader)
        let patterns = try Self.patterns(try call.argument(0, as: [String].self))
        let snapshot = try await snapshot(name)
        var detected: [DBusValue] = []
        for item in snapshot.items {
            var found: Set<DetectionPattern> = []
            if !patterns.isEmpty, case let (text, _)? = await detectionText(of: item, volatile: snapshot.volatile, for: caller) {
                found = DetectionPattern.detect(patterns, in: text)
            }
            detected.append(.array(element: .string, elements: found.map(\.rawValue).sorted().map(DBusValue.string)))
        }
        return [.array(element: "as", elements: detected)]
    }

    /// The first 64 KiB of an item's best text and its type: its first visible representation
    /// conforming to `public.plain-text` or `public.url`. Nil when it has none or its bytes
    /// cannot be had.
    nonisolated func detectionText(of item: StoredItem, volatile: VolatileContent?,
                                   for caller: PasteboardCaller) async -> (text: String, type: ContentType)? {
        guard let representation = caller.visibleRepresentations(of: item).first(where: {
            $0.contentType.conforms(to: .plainText) || $0.contentType.conforms(to: .url)
        }) else { return nil }
        let bytes: [UInt8]
        switch try? await sourceWithoutBlocking(of: representation, of: item, volatile: volatile) {
        case .bytes(let data)?:
            bytes = [UInt8](data.prefix(Self.detectionLimit))
        case .file(let raw, _)?:
            let descriptor = FileDescriptor(taking: raw)
            var buffer = [UInt8](repeating: 0, count: Self.detectionLimit)
            let count = buffer.withUnsafeMutableBytes { pread(raw, $0.baseAddress, $0.count, 0) }
            withExtendedLifetime(descriptor) {}
            guard count >= 0 else { return nil }
            bytes = Array(buffer.prefix(count))
        case .promised(let owner)?:
            guard let fetched = await fetchPromised(owner: owner, item: item.id, type: representation.contentType,
                                                    limit: Self.detectionLimit) else { return nil }
            bytes = fetched
        case nil:
            return nil
        }
        return (Self.decodeText(bytes, type: representation.contentType), representation.contentType)
    }

    /// Text bytes as a string: UTF-16 (with or without a byte order mark, little-endian by
    /// default) for the UTF-16 plain-text types, UTF-8 (invalid sequences replaced) otherwise.
    static func decodeText(_ bytes: [UInt8], type: ContentType) -> String {
        let utf16 = ContentType("public.utf16-plain-text").map { type.conforms(to: $0) } ?? false
            || type.identifier == "public.utf16-external-plain-text"
        guard utf16 else { return String(decoding: bytes, as: UTF8.self) }
        var bigEndian = false
        var body = bytes[...]
        if body.starts(with: [0xFE, 0xFF]) { bigEndian = true; body = body.dropFirst(2) }
        else if body.starts(with: [0xFF, 0xFE]) { body = body.dropFirst(2) }
        var units: [UInt16] = []
        units.reserveCapacity(body.count / 2)
        var iterator = body.makeIterator()
        while let first = iterator.next(), let second = iterator.next() {
            units.append(bigEndian ? UInt16(first) << 8 | UInt16(second) : UInt16(second) << 8 | UInt16(first))
        }
        return String(decoding: units, as: UTF16.self)
    }
}

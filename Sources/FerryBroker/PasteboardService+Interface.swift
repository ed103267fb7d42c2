#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel
import FerrySystem
import Synchronization

/// What a pasteboard holds at one moment: its change count and unexpired items.
struct PasteboardSnapshot: Sendable {
    var changeCount: UInt64
    var items: [StoredItem]
    /// The in-memory content when the items are those of a sensitive write.
    var volatile: VolatileContent?
}

extension PasteboardService {
    /// The `org.ferry.Pasteboard1` interface of the pasteboard `name`.
    nonisolated func interface(for name: String) -> Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Property("Name", "s", get: { call in
                try await self.checkDragProperty(call, pasteboard: name)
                return .string(name)
            })
            Property("ChangeCount", "t", get: { call in
                try await self.checkDragProperty(call, pasteboard: name)
                return .uint64(try await self.changeCount(of: name))
            })
            Method("SetItems", in: ["items": "aa{sv}", "options": "a{sv}"], out: ["change_count": "t", "item_ids": "as"]) { call in
                try await self.setItems(call, pasteboard: name)
            }
            Method("Items", out: ["items": "aa{sv}"], execution: .connectionThread) { call in
                let caller = try await self.resolve(call)
                try self.checkTransientAccess(name, caller, .metadataReader)
                let snapshot = try await self.snapshot(name)
                return [PasteboardMetadata.items(snapshot.items, sensitive: snapshot.volatile?.sensitive ?? [], for: caller)]
            }
            Method("DetectPatterns", in: ["patterns": "as"], out: ["detected": "aas"]) { call in
                try await self.detectPatterns(call, pasteboard: name)
            }
            Method("DetectValues", in: ["patterns": "as", "options": "a{sv}"], out: ["values": "aa{sv}"]) { call in
                try await self.detectValues(call, pasteboard: name)
            }
            Method("Read", in: ["item_index": "u", "type": "s", "options": "a{sv}"],
                   out: ["delivered_type": "s", "size": "x", "data": "v", "transfer": "s"],
                   execution: .connectionThread) { call in
                try await self.read(call, pasteboard: name)
            }
            Method("FinishTransfer", in: ["transfer": "s"], out: ["size": "t"], execution: .connectionThread) { call in
                try await self.finishTransfer(call, pasteboard: name)
            }
            Method("Fulfill", in: ["item_id": "s", "type": "s", "data": "v"]) { call in
                try await self.fulfill(call)
                return []
            }
            Method("Clear", out: ["change_count": "t"]) { call in
                try self.refuseOnTransientPasteboard(name, try await self.resolve(call), "Clear")
                let count = try self.store.clear(name)
                await self.didChange(name, changeCount: count)
                return [.uint64(count)]
            }
            Method("History", out: ["entries": "aa{sv}"]) { call in
                let caller = try await self.resolve(call)
                try self.refuseOnTransientPasteboard(name, caller, "History")
                try Self.requireHistory(name)
                let entries = try self.store.history()
                return [.array(element: "a{sv}", elements: entries.map { entry in
                    PasteboardMetadata.historyEntry(entry, for: caller) { self.historyPreview(of: $0, for: caller) }
                })]
            }
            Method("RestoreHistory", in: ["index": "u"], out: ["change_count": "t"]) { call in
                try self.refuseOnTransientPasteboard(name, try await self.resolve(call), "RestoreHistory")
                try Self.requireHistory(name)
                let count = try self.store.restoreHistory(Int(try call.argument(0, as: UInt32.self)))
                await self.didChange(name, changeCount: count)
                return [.uint64(count)]
            }
            Method("ClearHistory") { call in
                try self.refuseOnTransientPasteboard(name, try await self.resolve(call), "ClearHistory")
                try Self.requireHistory(name)
                try self.store.clearHistory()
                return []
            }
            Method("DeleteHistory", in: ["indexes": "au"]) { call in
                try self.refuseOnTransientPasteboard(name, try await self.resolve(call), "DeleteHistory")
                try Self.requireHistory(name)
                let indexes = try call.argument(0, as: [UInt32].self)
                guard !indexes.isEmpty else {
                    throw FerryModelError(.invalidArgument, "no history entry to delete", keyPath: "indexes")
                }
                try self.store.deleteHistory(indexes.map(Int.init))
                return []
            }
            Signal("Changed", ["change_count": "t"])
        }
    }

    /// A transient pasteboard's `Name` and `ChangeCount` are metadata: its metadata readers only.
    /// Nothing to check (and no caller to resolve) on other pasteboards.
    nonisolated func checkDragProperty(_ call: MethodCall, pasteboard name: String) async throws {
        guard isTransientPasteboard(name) else { return }
        try checkTransientAccess(name, try await resolve(call), .metadataReader)
    }

    static func requireHistory(_ name: String) throws {
        guard name == PasteboardName.general else {
            throw FerryModelError(.notFound, "only the general pasteboard keeps a history; \"\(name)\" has none")
        }
    }

    /// The caller's credentials (cached per unique name) and registered app; refuses another uid.
    /// - Throws: `FerryModelError` `.permissionDenied` for another uid; `DBusError` when the bus
    ///   cannot say (the caller is gone).
    nonisolated func resolve(_ call: MethodCall) async throws -> PasteboardCaller {
        let caller = try await callers.resolve(call, on: connection)
        return PasteboardCaller(caller: caller, app: registry.app(of: caller.uniqueName))
    }

    /// The pasteboard's change count (a transient pasteboard's from memory, another's from the
    /// contents cache when it holds the pasteboard; else queried on the blocking pool, since a
    /// query waits behind the store's writes and must hold up neither the cooperative pool nor
    /// a connection's thread).
    nonisolated func changeCount(of name: String) async throws -> UInt64 {
        if isTransientPasteboard(name) { return try transientContent(name).changeCount }
        if let cached = contentsCache.changeCount(of: name) { return cached }
        return try await BlockingIO.run { [store] in try store.changeCount(of: name) }
    }

    /// A pasteboard's change count and items as the store holds them (a sensitive write's items
    /// without their bytes), from the contents cache when it has them, else read and kept there.
    /// Not for a transient pasteboard (it has no rows).
    package nonisolated func storedContents(of name: String) throws -> (changeCount: UInt64, items: [StoredItem]) {
        let (cached, generation) = contentsCache.lookup(name, now: Date())
        if let cached { return cached }
        let contents = try store.contents(of: name)
        contentsCache.store(name, contents, generation: generation)
        return contents
    }

    /// `storedContents(of:)` for a handler on a connection's thread: a cache miss reads the store
    /// on the blocking pool (see `sourceWithoutBlocking(of:of:volatile:)`).
    nonisolated func storedContentsWithoutBlocking(of name: String) async throws -> (changeCount: UInt64, items: [StoredItem]) {
        if let cached = contentsCache.lookup(name, now: Date()).contents { return cached }
        return try await BlockingIO.run { [self] in try storedContents(of: name) }
    }

    /// The pasteboard's change count and current items (in memory for a sensitive write or a
    /// transient pasteboard).
    nonisolated func snapshot(_ name: String) async throws -> PasteboardSnapshot {
        if isTransientPasteboard(name) {
            let content = try transientContent(name)
            return PasteboardSnapshot(changeCount: content.changeCount, items: content.items(at: Date()), volatile: content)
        }
        let (count, items) = try await storedContentsWithoutBlocking(of: name)
        if hasVolatileContent.withLock({ $0.contains(name) }), let content = await volatileContent(name, changeCount: count) {
            return PasteboardSnapshot(changeCount: count, items: content.items(at: Date()), volatile: content)
        }
        return PasteboardSnapshot(changeCount: count, items: items, volatile: nil)
    }

    /// `SetItems`: validates everything, then reads and writes off the caller's thread.
    nonisolated func setItems(_ call: MethodCall, pasteboard name: String) async throws -> [DBusValue] {
        let caller = try await resolve(call)
        let isDrag = try checkTransientAccess(name, caller, .writer)
        let options = WireReader(dbus: call.arguments.count > 1 ? try call.argument(1, as: VariantDictionary.self) : [:], path: "options")
        let append = try options.bool("append") ?? false
        if append && !isDrag {
            throw FerryModelError(.invalidArgument, "append is only for a drag's or share's pasteboard while it runs",
                                  keyPath: "options.append")
        }
        let write = try PasteboardWrite(parsing: try call.argument(0, as: [VariantDictionary].self), writer: caller)
        if isDrag {
            let (count, ids) = try await setTransientItems(write, append: append, pasteboard: name)
            return [.uint64(count), .array(element: .string, elements: ids.map { .string($0.uuidString) })]
        }
        let store = self.store
        let outcome = try await BlockingWork.run(reading: write.descriptors, for: caller.uniqueName,
                                                 timeout: store.descriptorTimeout) { [memory] in
            try write.perform(on: store, pasteboard: name, memory: memory)
        }
        await didChange(name, changeCount: outcome.changeCount, volatile: outcome.volatile)
        return [.uint64(outcome.changeCount), .array(element: .string, elements: outcome.itemIDs.map { .string($0.uuidString) })]
    }

    /// `Fulfill`: only the promise's owner; `ay` (at most 1 MiB) or an fd read to end of file.
    nonisolated func fulfill(_ call: MethodCall) async throws {
        let caller = try await resolve(call)
        let (identifier, typeIdentifier) = try call.arguments(String.self, String.self)
        guard let item = UUID(uuidString: identifier) else {
            throw FerryModelError(.invalidArgument, "\"\(identifier)\" is not an item id", keyPath: "item_id")
        }
        let type = try PasteboardWrite.contentType(typeIdentifier, keyPath: "type")
        let value = call.arguments.count > 2 ? call.arguments[2].unwrappingVariants : .bytes([])
        let store = self.store
        // Whatever happens below, a promise may have become held bytes: re-read metadata.
        defer { contentsCache.invalidateAll() }
        switch value {
        case .bytes(let bytes):
            guard bytes.count <= PasteboardWrite.maximumInlineData else {
                throw FerryModelError(.tooLarge, "\(bytes.count) bytes inline; at most \(PasteboardWrite.maximumInlineData) (send an fd)",
                                      keyPath: "data")
            }
            if try fulfillTransient(item: item, type: type, data: Data(bytes), from: caller.uniqueName) { return }
            if try await fulfillVolatile(item: item, type: type, data: Data(bytes), from: caller.uniqueName) { return }
            try await BlockingWork.run {
                try store.fulfillPromise(item: item, representation: type, data: .bytes(Data(bytes)), from: caller.uniqueName)
            }
        case .unixFD(let descriptor):
            try PasteboardWrite.checkReadable(descriptor, positional: false, keyPath: "data")
            if let room = transientRoom(holding: item) {
                let data = try await BlockingWork.run(reading: [descriptor], for: caller.uniqueName, timeout: store.descriptorTimeout) {
                    try PasteboardWrite.read(descriptor, offset: nil, length: nil, limit: max(0, room),
                                             timeout: store.descriptorTimeout, keyPath: "data")
                }
                // The drag or share may have ended while the fd was read: then nothing was fulfilled.
                guard try fulfillTransient(item: item, type: type, data: data, from: caller.uniqueName) else {
                    throw FerryModelError(.notFound, "item \(identifier) is gone (its drag or share has ended)", keyPath: "item_id")
                }
                return
            }
            if await isVolatile(item) {
                let data = try await BlockingWork.run(reading: [descriptor], for: caller.uniqueName, timeout: store.descriptorTimeout) {
                    try PasteboardWrite.read(descriptor, offset: nil, length: nil, limit: PasteboardWrite.maximumVolatileSize,
                                             timeout: store.descriptorTimeout, keyPath: "data")
                }
                _ = try await fulfillVolatile(item: item, type: type, data: data, from: caller.uniqueName)
                return
            }
            try await BlockingWork.run(reading: [descriptor], for: caller.uniqueName, timeout: store.descriptorTimeout) {
                try withExtendedLifetime(descriptor) {
                    try store.fulfillPromise(item: item, representation: type, data: .fileDescriptor(descriptor.rawValue ?? -1),
                                             from: caller.uniqueName)
                }
            }
        default:
            throw FerryModelError(.invalidArgument, "expected bytes (ay) or a file descriptor (h), found \(value.signature.rawValue)",
                                  keyPath: "data")
        }
    }

    /// Whether `item` belongs to a sensitive write kept in memory.
    func isVolatile(_ item: UUID) -> Bool {
        volatile.values.contains { content in content.items.contains { $0.id == item } }
    }
}

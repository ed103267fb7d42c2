#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel

extension PasteboardWrite {
    /// What a performed write produced.
    struct Outcome: Sendable {
        /// The pasteboard's new change count.
        var changeCount: UInt64
        /// The new items' ids, in order.
        var itemIDs: [UUID]
        /// The items kept in memory only, when the write contained a sensitive item.
        var volatile: VolatileContent?
    }

    /// Reads what must be read and writes the items to the store, durably (or, when an item is
    /// sensitive, into memory: see ``VolatileContent``).
    ///
    /// Blocks: it may copy a large descriptor and waits up to the store's descriptor timeout for
    /// a silent one. Run it with ``BlockingWork``.
    /// - Throws: `FerryModelError` from reading the descriptors or from the store; nothing is
    ///   written then.
    /// - Parameter memory: charged with a sensitive write's bytes (refused past it).
    func perform(on store: PasteboardStore, pasteboard: String, memory: MemoryBudget) throws -> Outcome {
        var write = self
        write.items = addingURLsOfURILists(timeout: store.descriptorTimeout)
        let items = try write.resolvingPasswordManagerHints(timeout: store.descriptorTimeout)
        if items.contains(where: \.isSensitive) {
            return try performVolatile(items, on: store, pasteboard: pasteboard, memory: memory)
        }
        let owner = writer.uniqueName
        let process = PasteRecord.processName(pid: writer.caller.pid)
        let newItems = items.map { item in
            NewItem(id: item.id, options: item.options, sourceAppID: writer.appID, sourceProcess: process,
                    suggestedName: item.suggestedName,
                    representations: item.representations.map { representation in
                        let data: RepresentationSource = switch representation.source {
                        case .bytes(let bytes): .bytes(bytes)
                        case .descriptor(let fd, let offset, let length): .fileRange(fd.rawValue ?? -1, offset: offset, length: length)
                        case .promised(let size): .promised(owner: owner, estimatedSize: size)
                        }
                        return NewRepresentation(contentType: representation.contentType, visibility: representation.visibility,
                                                 data: data)
                    })
        }
        // The descriptors stay open (owned by `items`) until the store has copied them.
        let changeCount = try withExtendedLifetime(items) { try store.write(newItems, to: pasteboard) }
        return Outcome(changeCount: changeCount, itemIDs: items.map(\.id), volatile: nil)
    }

    /// The items with KDE's hint read when it came as an fd (its few bytes say whether the item
    /// is sensitive).
    private func resolvingPasswordManagerHints(timeout: Duration) throws -> [Item] {
        var items = self.items
        for i in items.indices {
            for r in items[i].representations.indices where items[i].representations[r].isPasswordManagerHint {
                if case .descriptor(let fd, let offset, let length) = items[i].representations[r].source {
                    let bytes = try Self.read(fd, offset: offset, length: length, limit: 4096, timeout: timeout,
                                              keyPath: "items[\(i)].representations[\(r)].fd")
                    items[i].representations[r].source = .bytes(bytes)
                }
            }
        }
        return items
    }

    /// A write with a sensitive item: every held byte is read into memory (at most
    /// ``maximumVolatileSize`` in all, and within `memory`: it replaces what the pasteboard's
    /// sensitive items held), and the store only records the change.
    private func performVolatile(_ items: [Item], on store: PasteboardStore, pasteboard: String,
                                 memory: MemoryBudget) throws -> Outcome {
        let key = PasteboardService.sensitiveKey(pasteboard)
        let reason = "a write with a sensitive item is kept in memory"
        let room = memory.room(for: writer.uniqueName, replacing: key)
        var content = try Self.readIntoMemory(items, writer: writer, limit: min(Self.maximumVolatileSize, room),
                                              timeout: store.descriptorTimeout,
                                              limitReason: room < Self.maximumVolatileSize
                                                ? reason + " (ferryd --memory-budget, --caller-memory-budget)" : reason)
        let previous = try memory.charge(key, caller: writer.uniqueName, bytes: content.heldBytes)
        let placeholders = content.items.map { item in
            var options = item.options
            options.sensitive = true
            return NewItem(id: item.id, options: options, representations: item.representations.map { representation in
                switch representation.storage {
                case .promised(let owner):
                    NewRepresentation(contentType: representation.contentType,
                                      data: .promised(owner: owner, estimatedSize: representation.size))
                case .inline, .blob, .unavailable:
                    NewRepresentation(contentType: representation.contentType, data: .bytes(Data()))
                }
            })
        }
        do {
            content.changeCount = try store.write(placeholders, to: pasteboard)
        } catch {
            memory.restore(key, previous)
            throw error
        }
        return Outcome(changeCount: content.changeCount, itemIDs: items.map(\.id), volatile: content)
    }

    /// The write's items held in memory, never in the store (a drag pasteboard's): every held
    /// byte read (at most `limit` in all), promises kept as promises. The change count is left 0.
    ///
    /// Blocks like ``perform(on:pasteboard:memory:)``.
    /// - Throws: `FerryModelError` `.tooLarge` past `limit`, and as reading the descriptors does.
    func performInMemory(limit: Int, timeout: Duration, limitReason: String) throws -> VolatileContent {
        try Self.readIntoMemory(try resolvingPasswordManagerHints(timeout: timeout), writer: writer, limit: limit,
                                timeout: timeout, limitReason: limitReason)
    }

    /// Reads every held byte of `items` into memory (at most `limit` in all; `limitReason` says
    /// why, in the TooLarge message) and describes the items as the store would (held bytes
    /// `.inline`, promises `.promised` by the writer).
    private static func readIntoMemory(_ items: [Item], writer: PasteboardCaller, limit: Int, timeout: Duration,
                                       limitReason: String) throws -> VolatileContent {
        var total = 0
        var bytes: [UUID: [ContentType: Data]] = [:]
        var stored: [StoredItem] = []
        let process = PasteRecord.processName(pid: writer.caller.pid)
        for (i, item) in items.enumerated() {
            var representations: [StoredRepresentation] = []
            for (r, representation) in item.representations.enumerated() {
                let keyPath = "items[\(i)].representations[\(r)]"
                let data: Data
                switch representation.source {
                case .bytes(let inline): data = inline
                case .descriptor(let fd, let offset, let length):
                    do {
                        data = try Self.read(fd, offset: offset, length: length, limit: max(0, limit - total),
                                             timeout: timeout, keyPath: keyPath + ".fd")
                    } catch let error as FerryModelError where error.code == .tooLarge {
                        throw FerryModelError(.tooLarge, "\(limitReason): at most \(limit) bytes in all", keyPath: keyPath + ".fd")
                    }
                case .promised(let size):
                    representations.append(StoredRepresentation(contentType: representation.contentType, visibility: representation.visibility,
                                                                size: size, storage: .promised(owner: writer.uniqueName)))
                    continue
                }
                total += data.count
                guard total <= limit else {
                    throw FerryModelError(.tooLarge, "\(limitReason): at most \(limit) bytes in all", keyPath: keyPath)
                }
                bytes[item.id, default: [:]][representation.contentType] = data
                representations.append(StoredRepresentation(contentType: representation.contentType, visibility: representation.visibility,
                                                            size: Int64(data.count), storage: .inline))
            }
            var options = item.options
            options.sensitive = item.isSensitive
            stored.append(StoredItem(id: item.id, options: options, sourceAppID: writer.appID,
                                     sourceProcess: process, suggestedName: item.suggestedName,
                                     representations: representations))
        }
        return VolatileContent(changeCount: 0, items: stored, sensitive: Set(items.filter(\.isSensitive).map(\.id)), bytes: bytes)
    }

    /// Reads a descriptor's bytes (or a range of them) into memory, at most `limit` bytes.
    static func read(_ descriptor: FileDescriptor, offset: Int64?, length: Int64?, limit: Int, timeout: Duration,
                     keyPath: String) throws -> Data {
        do {
            return try descriptor.withRawValue { fd in
                var reader = DescriptorReader(fd, offset: offset, length: length, timeout: timeout)
                let (data, atEnd) = try reader.read(upTo: max(0, limit) + 1)
                guard atEnd, data.count <= limit else {
                    throw FerryModelError(.tooLarge, "more than \(limit) bytes", keyPath: keyPath)
                }
                return data
            }
        } catch let error as FerryModelError {
            throw error.keyPath == nil ? FerryModelError(error.code, error.message, keyPath: keyPath) : error
        } catch {
            throw FerryModelError(.invalidArgument, "the file descriptor is closed", keyPath: keyPath)
        }
    }
}

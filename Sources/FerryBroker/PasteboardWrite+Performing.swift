#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
    func perform(on store: PasteboardStore, pasteboard: String) throws -> Outcome {
        var items = self.items
        // KDE's hint may come as an fd: read its few bytes to know whether the item is sensitive.
        for i in items.indices {
            for r in items[i].representations.indices where items[i].representations[r].isPasswordManagerHint {
                if case .descriptor(let fd, let offset, let length) = items[i].representations[r].source {
                    let bytes = try Self.read(fd, offset: offset, length: length, limit: 4096, timeout: store.descriptorTimeout,
                                              keyPath: "items[\(i)].representations[\(r)].fd")
                    items[i].representations[r].source = .bytes(bytes)
                }
            }
        }
        if items.contains(where: \.isSensitive) {
            return try performVolatile(items, on: store, pasteboard: pasteboard)
        }
        let owner = writer.uniqueName
        let newItems = items.map { item in
            NewItem(id: item.id, options: item.options, sourceAppID: writer.appID, suggestedName: item.suggestedName,
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

    /// A write with a sensitive item: every held byte is read into memory (at most
    /// ``maximumVolatileSize`` in all), and the store only records the change.
    private func performVolatile(_ items: [Item], on store: PasteboardStore, pasteboard: String) throws -> Outcome {
        var total = 0
        var bytes: [UUID: [ContentType: Data]] = [:]
        var stored: [StoredItem] = []
        var placeholders: [NewItem] = []
        for (i, item) in items.enumerated() {
            var representations: [StoredRepresentation] = []
            var newRepresentations: [NewRepresentation] = []
            for (r, representation) in item.representations.enumerated() {
                let keyPath = "items[\(i)].representations[\(r)]"
                var data: Data?
                switch representation.source {
                case .bytes(let inline): data = inline
                case .descriptor(let fd, let offset, let length):
                    data = try Self.read(fd, offset: offset, length: length, limit: Self.maximumVolatileSize - total,
                                         timeout: store.descriptorTimeout, keyPath: keyPath + ".fd")
                case .promised: data = nil
                }
                if let data {
                    total += data.count
                    guard total <= Self.maximumVolatileSize else {
                        throw FerryModelError(.tooLarge, "a write with a sensitive item is kept in memory: at most \(Self.maximumVolatileSize) bytes",
                                              keyPath: keyPath)
                    }
                    bytes[item.id, default: [:]][representation.contentType] = data
                    representations.append(StoredRepresentation(contentType: representation.contentType, visibility: representation.visibility,
                                                                size: Int64(data.count), storage: .inline))
                    newRepresentations.append(NewRepresentation(contentType: representation.contentType, data: .bytes(Data())))
                } else {
                    guard case .promised(let size) = representation.source else { continue }
                    representations.append(StoredRepresentation(contentType: representation.contentType, visibility: representation.visibility,
                                                                size: size, storage: .promised(owner: writer.uniqueName)))
                    newRepresentations.append(NewRepresentation(contentType: representation.contentType,
                                                                data: .promised(owner: writer.uniqueName, estimatedSize: size)))
                }
            }
            var options = item.options
            options.sensitive = item.isSensitive
            stored.append(StoredItem(id: item.id, options: options, sourceAppID: writer.appID, suggestedName: item.suggestedName,
                                     representations: representations))
            var volatileOptions = item.options
            volatileOptions.sensitive = true
            placeholders.append(NewItem(id: item.id, options: volatileOptions, representations: newRepresentations))
        }
        let changeCount = try store.write(placeholders, to: pasteboard)
        let sensitive = Set(items.filter(\.isSensitive).map(\.id))
        return Outcome(changeCount: changeCount, itemIDs: items.map(\.id),
                       volatile: VolatileContent(changeCount: changeCount, items: stored, sensitive: sensitive, bytes: bytes))
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Logging

/// The built-in copy and save activities' side of the pasteboards: a share's items read whole
/// (promised bytes fetched from the writer now, while the share still runs), and written to the
/// general pasteboard as an ordinary copy by the sharer.
extension PasteboardService {
    /// One representation of a share's item, with its bytes.
    struct FetchedRepresentation: Sendable {
        var contentType: ContentType
        var visibility: ItemProvider.Visibility
        var bytes: Data
    }

    /// The bytes of one representation of a transient pasteboard's item: held ones, or promised
    /// ones fetched from their writer by `deadline`.
    /// - Parameters:
    ///   - name: the transient pasteboard.
    ///   - item: the item (as ``transientItems(_:)`` gave it).
    ///   - representation: one of its representations.
    ///   - index: the item's index, for messages.
    ///   - limit: the most bytes wanted.
    ///   - deadline: when the writer must have served promised bytes.
    /// - Throws: `FerryModelError` `.unavailable` when the bytes cannot be had (the writer gone,
    ///   failing or too slow), `.tooLarge` past `limit`, `.notFound` when the share has ended.
    nonisolated func shareBytes(_ name: String, item: StoredItem, representation: StoredRepresentation, index: Int,
                                limit: Int, by deadline: ContinuousClock.Instant) async throws -> Data {
        let what = "item \(index)'s \(representation.contentType.identifier)"
        let tooLarge = FerryModelError(.tooLarge, "\(what) has more than \(limit) bytes (the most a built-in activity reads)")
        switch representation.storage {
        case .promised(let owner):
            let timeout = max(deadline - .now, .milliseconds(1))
            guard let bytes = await fetchPromised(owner: owner, item: item.id, type: representation.contentType,
                                                  limit: max(0, min(limit, Int.max - 1)) + 1, timeout: timeout) else {
                throw FerryModelError(.unavailable, "\(what) cannot be fetched: the app that promised it is gone, failed or "
                                      + "did not serve it in time")
            }
            guard bytes.count <= limit else { throw tooLarge }
            return Data(bytes)
        case .unavailable:
            throw FerryModelError(.unavailable, "\(what) is unavailable: the app that promised it went away without handing it over")
        case .inline, .blob:
            // Read again: a Fulfill may have changed the bytes since the items were read.
            guard let data = try transientContent(name).bytes[item.id]?[representation.contentType] else {
                throw FerryModelError(.unavailable, "\(what) is gone")
            }
            guard data.count <= limit else { throw tooLarge }
            return data
        }
    }

    /// Copies one representation of a transient pasteboard's item into `sink`: promised bytes
    /// streamed from their writer as they come (however many; by `deadline`), held ones in one
    /// chunk.
    /// - Parameters: as ``shareBytes(_:item:representation:index:limit:by:)``, and `sink`, which
    ///   takes each chunk on a worker thread (it may block).
    /// - Returns: the number of bytes copied.
    /// - Throws: what `sink` throws; otherwise as ``shareBytes(_:item:representation:index:limit:by:)``.
    nonisolated func streamShareBytes(_ name: String, item: StoredItem, representation: StoredRepresentation, index: Int,
                                      by deadline: ContinuousClock.Instant,
                                      into sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> UInt64 {
        guard case .promised(let owner) = representation.storage else {
            let data = try await shareBytes(name, item: item, representation: representation, index: index,
                                            limit: TransientPasteboard.maximumHeldSize, by: deadline)
            try await BlockingWork.run { try data.withUnsafeBytes(sink) }
            return UInt64(data.count)
        }
        let what = "item \(index)'s \(representation.contentType.identifier)"
        guard let (owner, path) = await client(of: owner) else {
            throw FerryModelError(.unavailable, "\(what) cannot be fetched: the app that promised it is gone")
        }
        do {
            return try await relay.stream(owner: owner, clientPath: path, itemID: item.id, type: representation.contentType,
                                          timeout: max(deadline - .now, .milliseconds(1)), into: sink)
        } catch let error as FerryModelError where error.code == .unavailable || error.code == .timeout {
            // Late is unavailable too: the activity cannot wait for ever (the writer's time budget).
            let why = error.code == .timeout ? "the app that promised it did not serve it in time" : error.message
            throw FerryModelError(.unavailable, "\(what) cannot be fetched: \(why)")
        }
    }

    /// Copies a share's items to the general pasteboard as `sharer`: one durable write through
    /// the ordinary write path (history, change count, `Changed`; a sensitive item keeps the
    /// write in memory, out of history). Every representation the sharer may see is copied, its
    /// bytes fetched first (promised ones streamed into a scratch file in the store, so their size
    /// is bounded by the disk budget, not by memory); another app's `ownApp` representations stay behind.
    /// - Parameters:
    ///   - name: the share's pasteboard.
    ///   - sharer: who writes.
    ///   - deadline: when the writers must have served every promised representation.
    /// - Returns: the general pasteboard's new change count and how many items were copied.
    /// - Throws: `FerryModelError`: `.unavailable` when a representation cannot be fetched (then
    ///   nothing is written), `.tooLarge` when promised bytes pass the disk budget (`ferryd
    ///   --disk-budget`; nothing is written or left behind), `.notFound` (no items, or the share
    ///   has ended), or what the store throws.
    func copyShareItems(_ name: String, as sharer: PasteboardCaller,
                        by deadline: ContinuousClock.Instant) async throws -> (changeCount: UInt64, items: Int) {
        let stored = try await transientItems(name)
        var items: [PasteboardWrite.Item] = []
        // Held until the write has copied them; their bytes are given back to the budget then.
        var scratches: [ScratchFile] = []
        defer { withExtendedLifetime(scratches) {} }
        for (index, item) in stored.enumerated() {
            var representations: [PasteboardWrite.Representation] = []
            for representation in sharer.visibleRepresentations(of: item) {
                let source: PasteboardWrite.Source
                if case .promised = representation.storage {
                    // Streamed into a scratch file, charged to the disk budget as it grows (an
                    // endless promise stops there), which the write then copies into a blob.
                    let scratch = try await BlockingWork.run { [store] in try store.blobs.scratch() }
                    scratches.append(scratch)
                    let count = try await streamShareBytes(name, item: item, representation: representation, index: index,
                                                           by: deadline) { chunk in try scratch.append(chunk) }
                    source = .descriptor(scratch.descriptor, offset: 0, length: Int64(count))
                } else {
                    source = .bytes(try await shareBytes(name, item: item, representation: representation, index: index,
                                                         limit: TransientPasteboard.maximumHeldSize, by: deadline))
                }
                representations.append(PasteboardWrite.Representation(contentType: representation.contentType,
                                                                       visibility: representation.visibility, source: source))
            }
            guard !representations.isEmpty else { continue }
            items.append(PasteboardWrite.Item(options: item.options, suggestedName: item.suggestedName,
                                              representations: representations))
        }
        guard !items.isEmpty else { throw FerryModelError(.notFound, "the share has no items the sharer may copy") }
        let write = PasteboardWrite(items: items, writer: sharer)
        let store = self.store, general = PasteboardName.general
        let outcome = try await BlockingWork.run { [memory] in try write.perform(on: store, pasteboard: general, memory: memory) }
        didChange(general, changeCount: outcome.changeCount, volatile: outcome.volatile)
        logger.info("copied \(items.count) item(s) of \(name) to \(general) for \(sharer.appID ?? sharer.uniqueName)")
        return (outcome.changeCount, items.count)
    }
}

extension PasteboardWrite {
    /// A write of items already checked and read (the broker's own, from a share's items).
    init(items: [Item], writer: PasteboardCaller) {
        self.items = items
        self.writer = writer
    }
}

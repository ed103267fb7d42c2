#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// An item to write to a pasteboard: what a source app hands the broker.
package struct NewItem: Sendable {
    /// The item's identity; a fresh one by default.
    package var id: UUID
    /// The item's options. A sensitive item makes the whole write volatile (see
    /// ``PasteboardStore/write(_:to:)``).
    package var options: StoredItem.Options
    /// The app id of the writer, nil when unknown.
    package var sourceAppID: String?
    /// The writer's process name (`/proc/PID/comm`), nil when unknown.
    package var sourceProcess: String?
    /// The item's suggested name.
    package var suggestedName: String?
    /// The representations, highest fidelity first; a content type may appear once.
    package var representations: [NewRepresentation]

    /// Makes an item to write.
    package init(id: UUID = UUID(), options: StoredItem.Options = StoredItem.Options(), sourceAppID: String? = nil,
                sourceProcess: String? = nil, suggestedName: String? = nil, representations: [NewRepresentation]) {
        self.id = id
        self.options = options
        self.sourceAppID = sourceAppID
        self.sourceProcess = sourceProcess
        self.suggestedName = suggestedName
        self.representations = representations
    }
}

/// A representation to write: type, visibility and where its bytes come from.
package struct NewRepresentation: Sendable {
    /// The type of the bytes.
    package var contentType: ContentType
    /// Who may see the representation.
    package var visibility: ItemProvider.Visibility
    /// Where the bytes come from.
    package var data: RepresentationSource

    /// Makes a representation to write.
    package init(contentType: ContentType, visibility: ItemProvider.Visibility = .all, data: RepresentationSource) {
        self.contentType = contentType
        self.visibility = visibility
        self.data = data
    }
}

/// Where the bytes of a representation being written come from.
package enum RepresentationSource: Sendable {
    /// Bytes in memory. Up to ``PasteboardStore/inlineLimit`` they are kept in the database,
    /// above it in a blob file.
    case bytes(Data)
    /// An open, readable file descriptor: the store copies from its current offset to end of
    /// file with a 1 MiB buffer, never holding the whole content in memory. The caller keeps
    /// ownership of the descriptor and closes it.
    case fileDescriptor(Int32)
    /// A byte range of an open, readable file descriptor: `length` bytes (nil: to end of file)
    /// from `offset` (read with `pread`, so the descriptor's own offset does not move; nil: from
    /// its current offset). Several representations may share one descriptor this way. The
    /// caller keeps ownership of the descriptor.
    case fileRange(Int32, offset: Int64?, length: Int64?)
    /// Bytes the app whose bus name is `owner` serves later; `estimatedSize` is its hint.
    case promised(owner: String, estimatedSize: Int64?)
}

/// What ``PasteboardStore/readData(item:representation:)`` gives.
package enum RepresentationData: Sendable {
    /// The bytes of an inline representation.
    case bytes(Data)
    /// A read-only file descriptor (`O_RDONLY | O_CLOEXEC`, offset 0) on a blob, and its size.
    /// The caller owns the descriptor and must close it; it stays valid even if the blob is
    /// deleted afterwards.
    case file(descriptor: Int32, size: Int64)
    /// The bytes are promised: ask the app whose bus name is `owner`.
    case promised(owner: String)
}

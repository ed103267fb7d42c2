import FerryModel
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

/// Large representations of a drag are promised, not handed to the broker: a drag pasteboard
/// holds at most 16 MiB in all, and most drags end without a drop that reads them.
enum DragPromises {
    /// Representations larger than this (bytes in memory, or a file) are promised.
    static let threshold = 1 << 20

    /// What to encode for `provider` on a drag pasteboard: the same item, with bytes in memory
    /// and files over ``threshold`` turned into loaders, which the encoder promises (the client
    /// must be registered). The original provider is the one kept to serve them.
    static func encodable(_ provider: ItemProvider) -> ItemProvider {
        guard provider.representations.contains(where: isLarge) else { return provider }
        var copy = ItemProvider()
        copy.suggestedName = provider.suggestedName
        copy.preferredPresentationSize = provider.preferredPresentationSize
        for representation in provider.representations {
            guard isLarge(representation) else {
                copy.register(representation)
                continue
            }
            let original = representation
            copy.register(ItemProvider.Representation(
                contentType: representation.contentType, visibility: representation.visibility,
                source: .loader { _ in try await ItemEncoder.load(original) },
                estimatedSize: representation.estimatedSize ?? size(of: representation)))
        }
        return copy
    }

    private static func isLarge(_ representation: ItemProvider.Representation) -> Bool {
        switch representation.source {
        case .data(let data): data.count > threshold
        case .file where representation.isFolder: false  // already promised (zipped on demand)
        case .file: (size(of: representation) ?? 0) > threshold
        case .loader, .stream: false
        }
    }

    /// The size of a representation's bytes in memory or of its regular file, nil when unknown.
    private static func size(of representation: ItemProvider.Representation) -> Int64? {
        switch representation.source {
        case .data(let data): return Int64(data.count)
        case .file(let url, _):
            var info = stat()
            guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            return Int64(info.st_size)
        case .loader, .stream: return nil
        }
    }
}

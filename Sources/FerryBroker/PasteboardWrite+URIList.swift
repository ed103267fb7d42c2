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
import FerryModel

extension PasteboardWrite {
    /// Of a `text/uri-list` sent as an fd, at most this many bytes are looked at for its first URI.
    static let uriListPeekLimit = 64 * 1024

    /// The items, each holding a `text/uri-list` (how file managers copy files) but no URL of its
    /// own, with the list's first URI added after it as `public.file-url` (a `file:` URI) or
    /// `public.url`: what a reader asking for a file URL or a URL expects. The list itself stays.
    ///
    /// A list sent as `data` is read as it is; one sent as an fd only when the fd can be read at
    /// an offset (a file, a memfd), so its bytes are left for the copy; a promised list and a pipe
    /// add nothing.
    func addingURLsOfURILists(timeout: Duration) -> [Item] {
        items.map { item in
            guard !item.representations.contains(where: { $0.contentType.conforms(to: .url) }),
                  let list = item.representations.first(where: { $0.contentType.conforms(to: .uriList) }),
                  let data = Self.peek(list.source, timeout: timeout),
                  let first = URIList(data: data)?.uris.first
            else { return item }
            var item = item
            item.representations.append(Representation(contentType: URIList.contentType(of: first), visibility: list.visibility,
                                                       source: .bytes(Data(first.utf8))))
            return item
        }
    }

    /// The first bytes of a held source, without moving a descriptor's offset; nil for a
    /// promise, a pipe, or a descriptor that cannot be read.
    private static func peek(_ source: Source, timeout: Duration) -> Data? {
        switch source {
        case .bytes(let data): return data.prefix(uriListPeekLimit)
        case .promised: return nil
        case .descriptor(let descriptor, let offset, let length):
            return try? descriptor.withRawValue { fd -> Data? in
                let start = offset ?? Int64(lseek(fd, 0, SEEK_CUR))
                guard start >= 0 else { return nil }
                var reader = DescriptorReader(fd, offset: start, length: length.map { min($0, Int64(uriListPeekLimit)) },
                                              timeout: timeout)
                return try reader.read(upTo: uriListPeekLimit).0
            }
        }
    }
}

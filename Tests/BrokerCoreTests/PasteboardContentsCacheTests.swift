@testable import BrokerCore
import Foundation
import Testing

/// The bytes half of the contents cache: what `Read` answers from memory instead of SQLite.
@Suite struct PasteboardContentsCacheTests {
    let item = UUID()

    @Test func storedBytesAreFoundUntilAnyPasteboardChanges() {
        let cache = PasteboardContentsCache()
        let (missing, generation) = cache.lookupBytes(item: item, type: "public.utf8-plain-text")
        #expect(missing == nil)
        cache.storeBytes(Data("hello".utf8), item: item, type: "public.utf8-plain-text", generation: generation)
        #expect(cache.lookupBytes(item: item, type: "public.utf8-plain-text").bytes == Data("hello".utf8))
        #expect(cache.lookupBytes(item: item, type: "public.html").bytes == nil)

        cache.invalidate("another")
        #expect(cache.lookupBytes(item: item, type: "public.utf8-plain-text").bytes == nil)
        let next = cache.lookupBytes(item: item, type: "public.utf8-plain-text").generation
        cache.storeBytes(Data("hello".utf8), item: item, type: "public.utf8-plain-text", generation: next)
        cache.invalidateAll()
        #expect(cache.lookupBytes(item: item, type: "public.utf8-plain-text").bytes == nil)
    }

    @Test func bytesReadBeforeAChangeAreNotKept() {
        let cache = PasteboardContentsCache()
        let generation = cache.lookupBytes(item: item, type: "public.data").generation
        cache.invalidate("general")  // a write lands while the reader queries the store
        cache.storeBytes(Data([1, 2, 3]), item: item, type: "public.data", generation: generation)
        #expect(cache.lookupBytes(item: item, type: "public.data").bytes == nil)
    }

    @Test func pastTheLimitTheCacheStartsOver() {
        let cache = PasteboardContentsCache()
        let chunk = Data(count: PasteboardContentsCache.bytesLimit / 2)
        let first = UUID(), second = UUID(), third = UUID()
        for id in [first, second, third] {
            let generation = cache.lookupBytes(item: id, type: "public.data").generation
            cache.storeBytes(chunk, item: id, type: "public.data", generation: generation)
        }
        #expect(cache.lookupBytes(item: first, type: "public.data").bytes == nil)
        #expect(cache.lookupBytes(item: second, type: "public.data").bytes == nil)
        #expect(cache.lookupBytes(item: third, type: "public.data").bytes?.count == chunk.count)
    }
}

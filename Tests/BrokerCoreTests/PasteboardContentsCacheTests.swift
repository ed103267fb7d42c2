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

    @Test("while a change is underway nothing is answered from the cache, and nothing read meanwhile is kept")
    func aChangeUnderwayBypassesTheCache() {
        let cache = PasteboardContentsCache()
        let first = cache.lookup("general", now: Date()).generation
        cache.store("general", (changeCount: 1, items: []), generation: first)
        let bytesGeneration = cache.lookupBytes(item: item, type: "public.data").generation
        cache.storeBytes(Data([1]), item: item, type: "public.data", generation: bytesGeneration)
        #expect(cache.lookup("general", now: Date()).contents?.changeCount == 1)

        cache.changingAll {
            // The store commits here; a listing must not come from what was cached before.
            let during = cache.lookup("general", now: Date())
            #expect(during.contents == nil)
            #expect(cache.lookupBytes(item: item, type: "public.data").bytes == nil)
            // A reader that queried the store just before the commit tries to keep what it read.
            cache.store("general", (changeCount: 1, items: []), generation: during.generation)
            #expect(cache.lookup("general", now: Date()).contents == nil)
            let bytes = cache.lookupBytes(item: item, type: "public.data").generation
            cache.storeBytes(Data([1]), item: item, type: "public.data", generation: bytes)
            #expect(cache.lookupBytes(item: item, type: "public.data").bytes == nil)
        }
        #expect(cache.lookup("general", now: Date()).contents == nil, "what was read during the change is not kept")
        let after = cache.lookup("general", now: Date()).generation
        cache.store("general", (changeCount: 2, items: []), generation: after)
        #expect(cache.lookup("general", now: Date()).contents?.changeCount == 2, "after it, the cache works again")
    }
}

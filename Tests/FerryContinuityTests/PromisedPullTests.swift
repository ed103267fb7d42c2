@testable import FerryContinuity
import FerryModel
import Testing

/// `PromisedPull`, the source side of a relayed promise: the pasting device asks for chunks
/// ahead, and those requests are served concurrently, in any order.
@Suite("Continuity: a promised pull's pieces")
struct PromisedPullTests {
    @Test("the pull completes with its last bytes served, not with an empty answer past the end served first")
    func completesOnlyOnceEveryByteIsServed() async throws {
        let pull = PromisedPull(key: "desktop/pull/item/public.data", capacity: 8, idleLimit: .seconds(10))
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6]
        try bytes.withUnsafeBytes { try pull.append($0) }
        pull.finish(.success(Int64(bytes.count)))
        let first = try await pull.piece(at: 0, length: 3)
        #expect(first.body == [1, 2, 3] && !first.last && !first.completes)
        // The request past the end, sent ahead, answered before the last bytes: the end, but not done.
        let beyond = try await pull.piece(at: 6, length: 3)
        #expect(beyond.body.isEmpty && beyond.last && !beyond.completes)
        let last = try await pull.piece(at: 3, length: 3)
        #expect(last.body == [4, 5, 6] && last.last && last.completes)
    }

    @Test("an empty representation completes with its one answer")
    func emptyCompletesAtOnce() async throws {
        let pull = PromisedPull(key: "desktop/pull/item/public.data", capacity: 8, idleLimit: .seconds(10))
        pull.finish(.success(0))
        let only = try await pull.piece(at: 0, length: 4)
        #expect(only.body.isEmpty && only.last && only.completes)
    }
}

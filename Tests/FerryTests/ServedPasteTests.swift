import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// `FerryClient.pastesServed()` and `abandonPromises()`: what `ferry copy --paste-once` stands on.
@Suite("Ferry: pastes served from promises")
struct ServedPasteTests {
    @Test("a Read is announced as a served paste; the broker's pattern detection is not")
    func readsAnnouncedDetectionNot() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let served = writer.pastesServed()
            let counter = CallCounter()
            try await writer.general.setItemProviders([PromiseTests.lazyText("https://example.org", counter: counter)])
            let detected = try await reader.general.detectPatterns([.probableWebURL])
            #expect(detected == [[.probableWebURL]])
            #expect(counter.value == 1, "detection fetched the promised text from the writer")
            #expect(try await reader.general.string == "https://example.org")
            var iterator = served.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first?.typeIdentifier == "public.utf8-plain-text")
            #expect(first?.size == 19)
            #expect(counter.value == 2)
            // Nothing else was announced: the next event is the next read's.
            _ = try await reader.general.string
            #expect(await iterator.next()?.size == 19)
            await writer.close()
            await reader.close()
        }
    }

    @Test("abandoned promises are not handed over: the writer's exit drops its item")
    func abandonedPromisesDropped() async throws {
        try await ClientFixture.with { fixture in
            let reader = try await fixture.client()
            #expect(try await reader.general.setString("before") > 0)
            let writer = try await fixture.registeredClient()
            try await writer.general.setItemProviders([PromiseTests.lazyText("once", counter: CallCounter())])
            #expect(try await reader.general.items.first?.promisedTypes == [.utf8PlainText])
            await writer.abandonPromises()
            await writer.close()
            var text: String?
            _ = await eventually {
                text = try? await reader.general.string  // Unavailable until the broker has dropped it
                return text == "before"
            }
            #expect(text == "before", "close handed nothing over, and the broker dropped the promise")
            await reader.close()
        }
    }
}

import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Promised representations: served by the registered writer through org.ferry.Client1, handed to
/// the broker by flush, refused to anyone but the broker.
@Suite("Ferry: promised representations")
struct PromiseTests {
    /// An item whose text is produced by a loader that counts its calls.
    static func lazyText(_ text: String, counter: CallCounter) -> ItemProvider {
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: .utf8PlainText, estimatedSize: Int64(text.utf8.count)) { _ in
            counter.increment()
            return Data(text.utf8)
        }
        return provider
    }

    @Test("a registered client's loader is promised and served on demand: a small one inline, a large one through a pipe",
          arguments: [false, true])
    func promisedServedByWriter(direct: Bool) async throws {
        try await ClientFixture.with(directConnections: direct) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            #expect(await writer.usesDirectConnection == direct)
            let counter = CallCounter()
            try await writer.general.setItemProviders([Self.lazyText("served lazily", counter: counter)])
            #expect(counter.value == 0)
            let items = try await reader.general.items
            #expect(items.first?.promisedTypes == [.utf8PlainText])
            #expect(items.first?.sourceAppID == writer.appID)

            let read = try await reader.general.read(item: 0, type: .plainText)
            #expect(read.transfer == nil, "the broker waited for the small promise and answered with its bytes")
            #expect(String(decoding: try await read.bytes(), as: UTF8.self) == "served lazily")
            #expect(counter.value == 1)
            #expect(try await reader.general.string == "served lazily")
            #expect(counter.value == 2)

            let large = String(repeating: "served through a pipe ", count: 2000)
            try await writer.general.setItemProviders([Self.lazyText(large, counter: counter)])
            let streamed = try await reader.general.read(item: 0, type: .plainText)
            #expect(streamed.transfer != nil)
            #expect(String(decoding: try await streamed.bytes(), as: UTF8.self) == large)
            #expect(counter.value == 3)
            await writer.close()
            await reader.close()
        }
    }

    /// Writes `provider` (whose loader blocks its thread for a second) to the general pasteboard,
    /// has `reader` paste it, and meanwhile reads `other` (holding "held") over the connection the
    /// source's call came in on, from its own executor: that read must not wait for the loader.
    static func expectPasteLeavesConnectionFree(_ provider: ItemProvider, _ text: String, writer: FerryClient,
                                                other: Pasteboard, reader: FerryClient) async throws {
        try await writer.general.setItemProviders([provider])
        let paste = Task { try await reader.general.string }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        let held = try await withTaskExecutorPreference(await writer.hotCallExecutor) { try await other.string }
        #expect(held == "held")
        #expect(ContinuousClock.now - start < .milliseconds(600), "not held up by the loader")
        #expect(try await paste.value == text)
    }

    @Test("a loader that blocks its thread does not hold up the writer's connection: its own pastes go on meanwhile",
          arguments: [false, true])
    func blockingLoaderLeavesConnectionFree(direct: Bool) async throws {
        try await ClientFixture.with(directConnections: direct) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            #expect(await writer.usesDirectConnection == direct)
            let other = try await writer.pasteboard(named: "blocking-loader-other")
            _ = try await other.setString("held")
            var slow = ItemProvider()
            slow.registerDataRepresentation(for: .utf8PlainText) { _ in
                usleep(1_000_000)  // blocks whatever thread runs it
                return Data("slow".utf8)
            }
            try await Self.expectPasteLeavesConnectionFree(slow, "slow", writer: writer, other: other, reader: reader)
            await writer.close()
            await reader.close()
        }
    }

    @Test("a small promise's loader starts on the connection's thread and leaves it at its first suspension",
          arguments: [false, true])
    func smallLoaderStartsOnConnectionThread(direct: Bool) async throws {
        try await ClientFixture.with(directConnections: direct) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let other = try await writer.pasteboard(named: "small-loader-other")
            _ = try await other.setString("held")
            let connectionThread = await withTaskExecutorPreference(await writer.hotCallExecutor) { pthread_self() }
            let threads = Mutex<[pthread_t]>([])
            var small = ItemProvider()
            small.registerDataRepresentation(for: .utf8PlainText, estimatedSize: 5) { _ in
                threads.withLock { $0.append(pthread_self()) }
                try await Task.sleep(for: .milliseconds(1))
                threads.withLock { $0.append(pthread_self()) }
                usleep(1_000_000)  // blocks whatever thread runs it now
                return Data("small".utf8)
            }
            try await Self.expectPasteLeavesConnectionFree(small, "small", writer: writer, other: other, reader: reader)
            let seen = threads.withLock { $0 }
            #expect(seen.count == 2)
            #expect(seen.first.map { pthread_equal($0, connectionThread) != 0 } == true, "started on the connection's thread")
            #expect(seen.last.map { pthread_equal($0, connectionThread) == 0 } == true, "went on elsewhere")
            await writer.close()
            await reader.close()
        }
    }

    @Test("a reader that gives up cancels a small promise's slow loader (over a direct connection: one ProvideBytes kept)",
          arguments: [false, true])
    func cancellingReachesSmallLoader(direct: Bool) async throws {
        try await ClientFixture.with(directConnections: direct) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let cancelled = Mutex(false)
            var small = ItemProvider()
            small.registerDataRepresentation(for: .utf8PlainText, estimatedSize: 5) { _ in
                // Slow until cancelled once; quick afterwards (for the writer's flush as it closes).
                if !cancelled.withLock({ $0 }) {
                    do {
                        try await Task.sleep(for: .seconds(10))
                    } catch {
                        cancelled.withLock { $0 = true }
                        throw error
                    }
                }
                return Data("small".utf8)
            }
            try await writer.general.setItemProviders([small])
            let read = try await reader.general.read(item: 0, type: .plainText)
            let reading = Task { try await read.bytes() }
            try await Task.sleep(for: .milliseconds(200))
            reading.cancel()
            await #expect(throws: FerryError.self) { _ = try await reading.value }
            let deadline = ContinuousClock.now + .seconds(2)
            while !cancelled.withLock({ $0 }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(cancelled.withLock { $0 }, "the loader's task was cancelled")
            await writer.close()
            await reader.close()
        }
    }

    @Test("over a direct connection, a small loader that suspends is loaded once: kept by ProvideBytes, resumed into the pipe, inline all the same")
    func suspendingLoaderLoadedOnce() async throws {
        try await ClientFixture.with(directConnections: true) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            #expect(await writer.usesDirectConnection)
            let counter = CallCounter()
            var small = ItemProvider()
            small.registerDataRepresentation(for: .utf8PlainText, estimatedSize: 6) { _ in
                counter.increment()
                try await Task.sleep(for: .milliseconds(5))
                return Data("loaded".utf8)
            }
            try await writer.general.setItemProviders([small])
            let served = writer.pastesServed()
            let read = try await reader.general.read(item: 0, type: .plainText)
            #expect(read.transfer == nil, "resumed within the broker's wait: inline")
            #expect(String(decoding: try await read.bytes(), as: UTF8.self) == "loaded")
            #expect(counter.value == 1, "loaded once, not again for the pipe")
            #expect(await served.first { _ in true }?.size == 6, "announced as served")
            await writer.close()
            await reader.close()
        }
    }

    @Test("an unregistered client's loader is loaded at once and held by the broker")
    func unregisteredLoaderLoadsNow() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            let counter = CallCounter()
            try await writer.general.setItemProviders([Self.lazyText("held", counter: counter)])
            #expect(counter.value == 1)
            #expect(try await reader.general.items.first?.promisedTypes == [])
            await writer.close()
            #expect(try await reader.general.string == "held")
            await reader.close()
        }
    }

    @Test("copy, flush, quit, paste: promised text and a 3 MiB promised image outlive the writer")
    func flushThenPasteAfterClose() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient()
            let counter = CallCounter()
            let big = pngLikeBytes(3 << 20, seed: 9)
            var image = ItemProvider()
            image.registerDataRepresentation(for: .png, estimatedSize: Int64(big.count)) { _ in big }
            try await writer.general.setItemProviders([Self.lazyText("still here", counter: counter), image])
            await writer.close()  // flushes first
            #expect(counter.value == 1)

            let reader = try await fixture.client()
            let items = try await reader.general.items
            #expect(items.allSatisfy { $0.promisedTypes.isEmpty })
            #expect(try await reader.general.string == "still here")
            #expect(try await firstDifference(reader.general.data(forType: .image, item: 1) ?? Data(), big) == nil)
            await reader.close()
        }
    }

    @Test("a flush started while a promising write is under way waits for it, and hands its promise over too")
    func flushWaitsForWriteUnderWay() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            // The write's second item is a FIFO the broker reads before it answers: the write is
            // under way until this test closes the FIFO's other end.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-flush-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let fifo = folder.appendingPathComponent("held-open")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let held = open(fifo.path, O_RDWR | O_CLOEXEC)
            #expect(held >= 0)
            #expect(write(held, "x", 1) == 1)
            var slow = ItemProvider()
            slow.registerFileRepresentation(for: .data, fileAt: fifo)
            async let written = writer.general.setItemProviders([Self.lazyText("under way", counter: CallCounter()), slow])
            // The broker has taken the byte: the write has been sent, and has no answer yet.
            var unread: Int32 = 1
            let deadline = ContinuousClock.now + .seconds(10)
            while ioctl(held, UInt(FIONREAD), &unread) == 0, unread > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(unread == 0)
            let flush = Task { try await writer.flush() }
            try await Task.sleep(for: .milliseconds(200))
            close(held)
            try await flush.value
            _ = try await written
            #expect(await !writer.hasPendingPromises, "the flush handed the write's promise over")
            #expect(try await reader.general.items.first?.promisedTypes.isEmpty == true)
            #expect(try await reader.general.string == "under way")
            await writer.close()
            await reader.close()
        }
    }

    @Test("a writer that quits without flushing leaves no broken item: the pasteboard is back to its previous content")
    func vanishedWriterLeavesNothingBroken() async throws {
        try await ClientFixture.with { fixture in
            let reader = try await fixture.client()
            _ = try await reader.general.setString("previous")
            let writer = try await fixture.registeredClient()
            try await writer.general.setItemProviders([Self.lazyText("gone", counter: CallCounter())])
            await writer.connection.close()
            var restored: String?
            _ = await eventually {
                restored = try? await reader.general.string
                return restored == "previous"
            }
            #expect(restored == "previous")
            #expect(try await reader.general.history().allSatisfy { $0.items.allSatisfy { $0.promisedTypes.isEmpty } })
            await reader.close()
        }
    }

    @Test("a loader that fails while serving gives the reader .unavailable, and the writer keeps serving")
    func failingLoaderIsUnavailable() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .utf8PlainText) { _ in
                throw FerryModelError(.unavailable, "the disk is gone")
            }
            provider.registerDataRepresentation(for: .html) { _ in Data("<p>fine</p>".utf8) }
            try await writer.general.setItemProviders([provider])
            let error = await #expect(throws: FerryError.self) { _ = try await reader.general.string }
            #expect(error?.code == .unavailable)
            #expect(try await reader.general.data(forType: .html) == Data("<p>fine</p>".utf8))
            await writer.close()
            await reader.close()
        }
    }

    @Test("a paste made at the first Changed is served, even before the writer has the reply that names the item",
          arguments: [false, true])
    func pasteBeforeWriterHasItsReply(direct: Bool) async throws {
        try await ClientFixture.with(directConnections: direct) { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let changes = try await reader.general.changes()
            var iterator = changes.makeAsyncIterator()
            for round in 0..<100 {
                let text = "round \(round)"
                async let written = writer.general.setItemProviders([Self.lazyText(text, counter: CallCounter())])
                _ = try await iterator.next()
                #expect(try await reader.general.string == text)
                _ = try await written
            }
            await writer.close()
            await reader.close()
        }
    }

    @Test("org.ferry.Client1 refuses a caller that is not the broker")
    func clientObjectRefusesOthers() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient()
            try await writer.general.setItemProviders([Self.lazyText("secret", counter: CallCounter())])
            let itemID = try #require(try await writer.general.items.first?.id)
            let intruder = try await fixture.connection()
            let pipe = try FileDescriptor.pipe()
            let error = await #expect(throws: DBusError.self) {
                _ = try await intruder.call(destination: writer.connection.uniqueName, path: FerryClient.clientPath,
                                            interface: "org.ferry.Client1", member: "ProvideRepresentation",
                                            body: [.string(itemID.uuidString.lowercased()), .string("public.utf8-plain-text"),
                                                   .unixFD(pipe.write), [String: DBusValue]().dbusValue],
                                            timeout: .seconds(10))
            }
            #expect(error?.name.rawValue == "org.ferry.Error.PermissionDenied")
            pipe.write.close()
            #expect(try pipe.read.readAll().isEmpty)
            await intruder.close()
            await writer.close()
        }
    }
}

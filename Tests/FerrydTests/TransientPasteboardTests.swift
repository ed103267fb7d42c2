import BrokerCore
import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A broker in this process (ferryd's `Broker` on a real connection owning org.ferry.Broker on a
/// private bus), so tests can create drag pasteboards the way the drag service does, and talk to them over the bus from other connections.
struct DragBroker {
    typealias F = FerrydFixture
    static let name = "org.ferry.drag.1"
    static let path: ObjectPath = "/org/ferry/Pasteboard/org_2eferry_2edrag_2e1"

    let fixture: FerrydFixture
    let running: Broker.Running
    let serving: Task<Void, Never>

    var connection: Connection { running.connection }
    var store: PasteboardStore { running.store }
    var pasteboards: PasteboardService { running.pasteboards }

    static func start() async throws -> DragBroker {
        let fixture = try FerrydFixture()
        let (running, serving) = try await fixture.startBroker()
        return DragBroker(fixture: fixture, running: running, serving: serving)
    }

    func stop() async {
        running.stop(reason: "the test ended")
        await serving.value
        fixture.cleanUp()
    }

    /// A connection registered as an app (Notes' manifest under `appID`) serving `contents` by
    /// type through org.ferry.Client1; `onServe` hears every ProvideRepresentation call, and
    /// `claiming` makes it answer another size than it wrote for a type (a source that miscounts).
    func app(_ appID: String, manifest: String = "Notes", serving contents: [String: [UInt8]] = [:],
             claiming sizes: [String: UInt64] = [:],
             onServe: @escaping @Sendable () -> Void = {}) async throws -> Connection {
        let connection = try await fixture.connect()
        let client = Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(1) })
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                   out: ["size": "t"]) { call in
                let (_, type, fd) = try call.arguments(String.self, String.self, FileDescriptor.self)
                onServe()
                guard let bytes = contents[type] else { throw DBusError(ErrorName("org.ferry.Error.NotFound"), "no \(type)") }
                // Written on a thread of its own: the reader may be a task of this process.
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    F.readers.async { continuation.resume(with: Result { try fd.write(all: bytes); fd.close() }) }
                }
                return [.uint64(sizes[type] ?? UInt64(bytes.count))]
            }
        }
        try connection.export(client, at: "/org/ferry/Client")
        try await F.register(connection, appID, manifest: try F.manifest(manifest))
        return connection
    }

    /// Creates the drag pasteboard `org.ferry.drag.1` as the drag service would.
    func createDrag(_ access: TransientPasteboardAccess) async throws {
        let path = try await pasteboards.createTransientPasteboard(Self.name, access: access)
        #expect(path == Self.path)
    }

    /// `SetItems` with options.
    @discardableResult
    static func setItems(_ connection: Connection, _ items: [DBusValue], append: Bool? = nil,
                         at path: ObjectPath = path) async throws -> (changeCount: UInt64, ids: [String]) {
        var options: VariantDictionary = [:]
        if let append { options["append"] = .boolean(append) }
        let reply = try await F.pasteboard(connection, "SetItems", [.array(element: "a{sv}", elements: items), options.dbusValue],
                                           at: path)
        return (try reply[0].get(UInt64.self), try reply[1].get([String].self))
    }

    /// A pasteboard property.
    static func property(_ connection: Connection, _ name: String, at path: ObjectPath = path) async throws -> DBusValue {
        let reply = try await connection.call(destination: F.broker, path: path, interface: "org.freedesktop.DBus.Properties",
                                              member: "Get", body: [.string("org.ferry.Pasteboard1"), .string(name)],
                                              timeout: .seconds(10))
        return reply[0].unwrappingVariants
    }
}

/// Counts calls from other threads.
final class Counter: Sendable {
    let count = Mutex(0)
}

@Suite("ferryd: drag pasteboards")
struct TransientPasteboardTests {
    typealias F = FerrydFixture
    typealias B = DragBroker

    @Test("a drag pasteboard holds inline and fd bytes in memory; its target reads them as a logged paste; never listed, never stored")
    func writeAndRead() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let target = try await broker.app("org.ferry.notes")
        let (s, t) = (source.uniqueName.rawValue, target.uniqueName.rawValue)
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s, t], contentReaders: [s, t]))
        let changes = try await F.changes(target, at: B.path)
        #expect(try await B.property(target, "ChangeCount") == .uint64(0))
        #expect(try await B.property(target, "Name") == .string(B.name))

        let photo = F.pattern(200_000, seed: 5)
        let (count, ids) = try await B.setItems(source, [
            F.item([F.representation("public.utf8-plain-text", "a dragged note")]),
            F.item([F.representation("public.png", fd: try F.file(photo))], ["suggestedName": .string("cat")]),
        ])
        #expect(count == 1 && ids.count == 2)
        #expect(try (await F.next(changes))?.body == [.uint64(1)])
        #expect(try await B.property(target, "ChangeCount") == .uint64(1))

        let items = try await F.items(target, at: B.path)
        #expect(try items.map(F.types) == [["public.utf8-plain-text"], ["public.png"]])
        #expect(try items[1].value(forKey: "suggestedName", as: String.self) == "cat")
        #expect(try F.representations(items[1])[0].value(forKey: "estimatedSize", as: Int64.self) == 200_000)

        // A registered app reading without user-action: a drop is the user's action.
        let text = try await F.read(target, 0, "public.plain-text", at: B.path)
        #expect(text.isInline)
        #expect(try await text.bytes() == Array("a dragged note".utf8))
        let image = try await F.read(target, 1, "public.image", at: B.path)
        #expect(image.descriptor != nil && image.size == 200_000)
        #expect(try await firstDifference(image.bytes(), photo) == nil)
        #expect(try await F.read(target, 0, "public.plain-text", ["fd": .boolean(true)], at: B.path).descriptor != nil)

        let log = try await F.call(target, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        let dragPastes = log.filter { (try? $0.value(forKey: "pasteboard", as: String.self)) == B.name }
        #expect(dragPastes.count == 3)
        #expect(try dragPastes.last?.value(forKey: "app-id", as: String.self) == "org.ferry.notes")
        #expect(try dragPastes.last?.value(forKey: "type", as: String.self) == "public.utf8-plain-text")

        let listed = try await F.call(source, "ListPasteboards")[0].get([String].self)
        #expect(!listed.contains(B.name))
        #expect(!(try broker.store.pasteboards()).contains(B.name), "nothing of a drag reaches the store")
        #expect(throws: FerryModelError.self) { try broker.store.changeCount(of: B.name) }
        #expect(try await broker.pasteboards.transientItems(B.name).map(\.representations.count) == [1, 1])

        changes.cancel()
        await source.close()
        await target.close()
        await broker.stop()
    }

    @Test("a promised representation is served by the writing app straight to the target; Fulfill makes it held; transientBytes for the broker")
    func promisedRead() async throws {
        let broker = try await DragBroker.start()
        let activity = Array("{\"activityType\":\"org.ferry.notes.open-note\"}".utf8)
        let photo = F.pattern(300_000, seed: 9)
        let served = Counter()
        let source = try await broker.app("org.ferry.notes", serving: ["public.png": photo, "org.ferry.user-activity": activity],
                                          onServe: { served.count.withLock { $0 += 1 } })
        let target = try await broker.app("org.ferry.gallery", manifest: "Gallery")
        let (s, t) = (source.uniqueName.rawValue, target.uniqueName.rawValue)
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s, t], contentReaders: [s, t]))
        let (_, ids) = try await B.setItems(source, [
            F.item([F.promised("public.png", estimatedSize: 300_000), F.promised("org.ferry.user-activity"),
                    F.promised("public.jpeg")]),
        ])

        let png = try await F.read(target, 0, "public.image", at: B.path)
        #expect(!png.transfer.isEmpty && png.size == 300_000)
        #expect(try await firstDifference(png.bytes(), photo) == nil)
        #expect(try await F.pasteboard(target, "FinishTransfer", [.string(png.transfer)], at: B.path) == [.uint64(300_000)])
        #expect(served.count.withLock { $0 } == 1)

        // The broker's own read (the edge drop's user activity): no paste, but the app serves it.
        let type = ContentType.userActivity
        #expect(try await broker.pasteboards.transientBytes(B.name, item: 0, type: type, limit: 4096) == activity)
        await #expect(throws: FerryModelError.self) {
            _ = try await broker.pasteboards.transientBytes(B.name, item: 0, type: type, limit: 10)
        }
        #expect(try await broker.pasteboards.transientBytes(B.name, item: 3, type: type, limit: 4096) == nil)
        #expect(try await broker.pasteboards.transientBytes(B.name, item: 0, type: .plainText, limit: 4096) == nil)

        // Fulfill: the promise becomes held bytes, within the drag's pasteboard.
        let jpeg = F.pattern(50_000, seed: 2)
        _ = try await F.pasteboard(source, "Fulfill", [.string(ids[0]), .string("public.jpeg"), .variant(.unixFD(try F.file(jpeg)))],
                                   at: B.path)
        let representations = try F.representations(try await F.items(target, at: B.path)[0])
        #expect(try representations.map { try $0.value(forKey: "promised", as: Bool.self) } == [true, true, false])
        #expect(try await F.read(target, 0, "public.jpeg", at: B.path).bytes() == jpeg)
        let log = try await F.call(target, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        #expect(log.filter { (try? $0.value(forKey: "pasteboard", as: String.self)) == B.name }.count == 2,
                "the target's two reads are pastes; the broker's own is not")

        // The source going away: its promises are unavailable.
        await source.close()
        #expect(await eventually {
            await F.failure { _ = try await F.read(target, 0, "public.png", at: B.path) }?.name == "org.ferry.Error.Unavailable"
        })
        #expect(try await broker.pasteboards.transientBytes(B.name, item: 0, type: type, limit: 4096) == nil)
        await target.close()
        await broker.stop()
    }

    @Test("the promised reads of a drag are forgotten when its pasteboard goes: FinishTransfer is NotFound after")
    func transfersGoWithTheDrag() async throws {
        let broker = try await DragBroker.start()
        let photo = F.pattern(100_000, seed: 4)
        let source = try await broker.app("org.ferry.notes", serving: ["public.png": photo])
        let target = try await broker.app("org.ferry.gallery", manifest: "Gallery")
        let (s, t) = (source.uniqueName.rawValue, target.uniqueName.rawValue)
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s, t], contentReaders: [s, t]))
        try await B.setItems(source, [F.item([F.promised("public.png", estimatedSize: 100_000)])])
        let first = try await F.read(target, 0, "public.png", at: B.path)
        let second = try await F.read(target, 0, "public.png", at: B.path)
        #expect(try await firstDifference(first.bytes(), photo) == nil)
        #expect(try await firstDifference(second.bytes(), photo) == nil)
        // Finished during the drag (on any pasteboard object: a transfer is the reader's).
        #expect(try await F.pasteboard(target, "FinishTransfer", [.string(first.transfer)], at: F.general) == [.uint64(100_000)])

        await broker.pasteboards.removeTransientPasteboard(B.name)
        let late = await F.failure { _ = try await F.pasteboard(target, "FinishTransfer", [.string(second.transfer)], at: F.general) }
        #expect(late?.name == "org.ferry.Error.NotFound", "\(late?.name ?? "answered")")
        for connection in [source, target] { await connection.close() }
        await broker.stop()
    }

    @Test("append adds items on a drag pasteboard only; 16 MiB held in all at most")
    func appendAndLimit() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let s = source.uniqueName.rawValue
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s], contentReaders: [s]))
        let (_, first) = try await B.setItems(source, [F.item([F.representation("public.utf8-plain-text", "one")])])
        let (count, second) = try await B.setItems(source, [F.item([F.representation("public.utf8-plain-text", "two")])],
                                                   append: true)
        #expect(count == 2 && second.count == 1)
        let items = try await F.items(source, at: B.path)
        #expect(try items.map { try $0.value(forKey: "id", as: String.self) } == first + second)
        #expect(try await F.read(source, 1, "public.text", at: B.path).bytes() == Array("two".utf8))

        let elsewhere = await F.failure {
            try await B.setItems(source, [F.item([F.representation("public.utf8-plain-text", "x")])], append: true,
                                 at: F.general)
        }
        #expect(elsewhere?.name == "org.ferry.Error.InvalidArgument")
        #expect(elsewhere?.message.contains("options.append") == true)
        try await B.setItems(source, [F.item([F.representation("public.utf8-plain-text", "x")])], append: false, at: F.general)

        // 16 MiB in all: a larger fd is TooLarge; an append past the total too; nothing changes.
        let large = [UInt8](repeating: 7, count: (16 << 20) + 1)
        let tooLarge = await F.failure { try await B.setItems(source, [F.item([F.representation("public.data", fd: try F.file(large))])]) }
        #expect(tooLarge?.name == "org.ferry.Error.TooLarge")
        try await B.setItems(source, [F.item([F.representation("public.data", fd: try F.file(Array(large.prefix(10 << 20))))])])
        let past = await F.failure {
            try await B.setItems(source, [F.item([F.representation("public.png", fd: try F.file(Array(large.prefix(7 << 20))))])],
                                 append: true)
        }
        #expect(past?.name == "org.ferry.Error.TooLarge")
        #expect(try await F.items(source, at: B.path).count == 1)
        #expect(try await B.property(source, "ChangeCount") == .uint64(3))
        // Replacing (not appending) frees the held bytes.
        try await B.setItems(source, [F.item([F.representation("public.png", fd: try F.file(Array(large.prefix(7 << 20))))])])
        #expect(try await F.read(source, 0, "public.png", at: B.path).size == 7 << 20)
        await source.close()
        await broker.stop()
    }
}

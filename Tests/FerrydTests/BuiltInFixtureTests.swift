import BrokerCore
import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A broker in this process (ferryd's `Broker` on a real connection owning org.ferry.Broker on a
/// private bus), with the share pasteboard `org.ferry.share.1` made
/// as the share service makes it, so that the built-in activities can be performed on items that
/// raw peers wrote over the bus.
struct BuiltInBroker {
    typealias F = FerrydFixture
    static let name = "org.ferry.share.1"
    static let path: ObjectPath = "/org/ferry/Pasteboard/org_2eferry_2eshare_2e1"

    let fixture: FerrydFixture
    let running: Broker.Running
    let serving: Task<Void, Never>

    var connection: Connection { running.connection }
    var store: PasteboardStore { running.store }
    var sceneStore: SceneStore { running.sceneStore }
    var pasteboards: PasteboardService { running.pasteboards }
    var scenes: SceneService { running.scenes }

    /// - Parameter diskBudget: what the store's blob files may take (`ferryd --disk-budget`).
    static func start(diskBudget: Int64 = PasteboardStore.defaultDiskBudget) async throws -> BuiltInBroker {
        let fixture = try FerrydFixture()
        let (running, serving) = try await fixture.startBroker { $0.diskBudget = diskBudget }
        return BuiltInBroker(fixture: fixture, running: running, serving: serving)
    }

    func stop() async {
        running.stop(reason: "the test ended")
        await serving.value
        fixture.cleanUp()
    }

    /// The same broker seen as the drag tests' fixture (its app helper serves promises).
    var drag: DragBroker {
        DragBroker(fixture: fixture, running: running, serving: serving)
    }

    /// Creates `org.ferry.share.1` with `writer` writing, as the share service does for a share
    /// without a scene (the writer is the sharer) or with one (the writer is the scene's app).
    func createShare(writer: Connection, sharer: Connection? = nil) async throws {
        let parties: Set<String> = [writer.uniqueName.rawValue, (sharer ?? writer).uniqueName.rawValue]
        let path = try await pasteboards.createTransientPasteboard(
            Self.name, access: TransientPasteboardAccess(writers: [writer.uniqueName.rawValue], metadataReaders: parties,
                                                         contentReaders: [writer.uniqueName.rawValue]))
        #expect(path == Self.path)
    }

    /// An app (org.ferry.notes) that serves every promise as /dev/zero does: zeros until the
    /// broker closes the pipe, adding what it wrote to `written`. The caller ignores SIGPIPE.
    func endlessApp(written: Counter) async throws -> Connection {
        let source = try await fixture.connect()
        try source.export(Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(1) })
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"], out: ["size": "t"]) { call in
                let (_, _, fd) = try call.arguments(String.self, String.self, FileDescriptor.self)
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    F.readers.async {
                        let zeros = [UInt8](repeating: 0, count: 1 << 16)
                        continuation.resume(with: Result {
                            defer { fd.close() }
                            while true {
                                try fd.write(all: zeros)
                                written.count.withLock { $0 += zeros.count }
                            }
                        })
                    }
                }
                return [.uint64(0)]
            }
        }, at: "/org/ferry/Client")
        try await F.register(source, "org.ferry.notes", manifest: try F.manifest("Notes"))
        return source
    }

    /// Writes items to the share pasteboard as `writer` (SetItems over the bus).
    @discardableResult
    func write(_ writer: Connection, _ items: [DBusValue]) async throws -> [String] {
        try await DragBroker.setItems(writer, items, at: Self.path).ids
    }

    /// Performs a built-in activity as the share service does once Perform starts: writes stop,
    /// then the activity runs, then the share ends.
    func perform(_ type: ActivityType, options: VariantDictionary = [:], sharer: Connection,
                 sourceApp: String? = nil, promiseBudget: Duration = BuiltInActivities.promiseTimeout) async -> ShareCompletion {
        pasteboards.updateTransientAccess(Self.name) { $0.acceptsWrites = false }
        let completion = await BuiltInActivities(pasteboards: pasteboards, scenes: scenes, promiseBudget: promiseBudget)
            .perform(type, pasteboard: Self.name, options: options,
                     sharer: Caller(uniqueName: sharer.uniqueName.rawValue, uid: getuid(), pid: nil), sourceApp: sourceApp)
        await pasteboards.removeTransientPasteboard(Self.name)
        return completion
    }
}

@Suite("ferryd built-in activities: options")
struct BuiltInFixtureTests {
    @Test("save-to-folder's `to` is checked up front: missing, not a string, relative, missing folder, a file → InvalidArgument")
    func validation() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("builtin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("f".utf8).write(to: folder.appendingPathComponent("file"))
        let bad: [VariantDictionary] = [
            [:], ["to": .uint32(3)], ["to": "relative"], ["to": .string(folder.path + "/missing")],
            ["to": .string(folder.path + "/file")],
        ]
        for options in bad {
            #expect(throws: FerryModelError.self, "\(options)") { try BuiltInActivities.validate(.saveToFolder, options: options) }
            do {
                try BuiltInActivities.validate(.saveToFolder, options: options)
            } catch let error as FerryModelError {
                #expect(error.code == .invalidArgument && error.keyPath == "options.to")
            }
        }
        try BuiltInActivities.validate(.saveToFolder, options: ["to": .string(folder.path)])
        try BuiltInActivities.validate(.saveToFolder, options: ["to": .variant(.string(folder.path))])
        try BuiltInActivities.validate(.copy, options: ["to": "ignored"])
        try BuiltInActivities.validate(.openInNewScene, options: [:])
        #expect(throws: FerryModelError.self) { try BuiltInActivities.validate("org.example.app-activity", options: [:]) }
    }

    @Test("perform with a bad `to` answers a completion, not completed, InvalidArgument; nothing is written")
    func badFolderCompletion() async throws {
        let broker = try await BuiltInBroker.start()
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: sharer)
        try await broker.write(sharer, [F.item([F.representation("public.utf8-plain-text", "hello")])])
        let completion = await broker.perform(.saveToFolder, options: ["to": "not/absolute"], sharer: sharer)
        #expect(!completion.completed)
        #expect(completion.activityType == .saveToFolder)
        #expect(completion.errorName == "org.ferry.Error.InvalidArgument")
        #expect(completion.error?.hasPrefix("options.to: must be an absolute path") == true, "\(completion.error ?? "")")
        #expect(completion.returnedItems.isEmpty)
        await sharer.close()
        await broker.stop()
    }

    typealias F = FerrydFixture
}

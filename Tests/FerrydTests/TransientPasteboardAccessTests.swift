import BrokerCore
import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Who may use a drag pasteboard, reserved names, the methods it lacks, and its removal.
@Suite("ferryd: drag pasteboard access")
struct TransientPasteboardAccessTests {
    typealias F = FerrydFixture
    typealias B = DragBroker

    static let text = F.item([F.representation("public.utf8-plain-text", "dragged")])

    @Test("each role may do only its part: outsiders are PermissionDenied; writes stop once the drop starts")
    func roles() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let entered = try await broker.fixture.connect()
        let performer = try await broker.fixture.connect()
        let outsider = try await broker.fixture.connect()
        let (s, e, p) = (source.uniqueName.rawValue, entered.uniqueName.rawValue, performer.uniqueName.rawValue)
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s, e], contentReaders: [s]))
        try await B.setItems(source, [Self.text])

        // The outsider: nothing at all, with a message naming the drag.
        let patterns: [DBusValue] = [.array(element: .string, elements: [.string("number")])]
        for (member, body) in [("Items", []), ("DetectPatterns", patterns),
                               ("Read", [.uint32(0), .string("public.text"), .variantDictionary(["user-action": .boolean(true)])]),
                               ("FinishTransfer", [.string("x")]), ("Clear", []), ("History", [])] as [(MemberName, [DBusValue])] {
            let refused = await F.failure { _ = try await F.pasteboard(outsider, member, body, at: B.path) }
            #expect(refused?.name == "org.ferry.Error.PermissionDenied", "\(member)")
            #expect(refused?.message.contains("only the parties of drag 1 may") == true, "\(member): \(refused?.message ?? "")")
        }
        let outsiderWrite = await F.failure { try await B.setItems(outsider, [Self.text]) }
        #expect(outsiderWrite?.name == "org.ferry.Error.PermissionDenied")

        // An entered target: metadata, not content; no writes.
        #expect(try await F.items(entered, at: B.path).count == 1)
        #expect(try await F.pasteboard(entered, "DetectPatterns", patterns, at: B.path)[0].get([[String]].self) == [[]])
        let early = await F.failure { _ = try await F.read(entered, 0, "public.text", at: B.path) }
        #expect(early?.name == "org.ferry.Error.PermissionDenied", "reading before the drop is refused")
        let notWriter = await F.failure { try await B.setItems(entered, [Self.text]) }
        #expect(notWriter?.name == "org.ferry.Error.PermissionDenied")
        // Its properties are metadata too: the outsider learns neither its name nor its changes.
        for property in ["ChangeCount", "Name"] {
            let refused = await F.failure { _ = try await B.property(outsider, property) }
            #expect(refused?.name == "org.ferry.Error.PermissionDenied", "\(property)")
        }
        let all = await F.failure {
            _ = try await outsider.call(destination: F.broker, path: B.path, interface: "org.freedesktop.DBus.Properties",
                                        member: "GetAll", body: [.string("org.ferry.Pasteboard1")], timeout: .seconds(10))
        }
        #expect(all?.name == "org.ferry.Error.PermissionDenied")
        #expect(try await B.property(entered, "ChangeCount") == .uint64(1))
        #expect(try await B.property(outsider, "Version", at: F.general) == .uint32(5), "other pasteboards stay open")

        // The drop: writes stop, the performer may read (only while it is a content reader).
        broker.pasteboards.updateTransientAccess(B.name) { access in
            access.acceptsWrites = false
            access.contentReaders.insert(p)
        }
        let late = await F.failure { try await B.setItems(source, [Self.text], append: true) }
        #expect(late?.name == "org.ferry.Error.PermissionDenied")
        #expect(late?.message.contains("drop has started") == true)
        #expect(try await F.read(performer, 0, "public.text", at: B.path).bytes() == Array("dragged".utf8))
        broker.pasteboards.updateTransientAccess(B.name) { $0.contentReaders.remove(p) }
        let after = await F.failure { _ = try await F.read(performer, 0, "public.text", at: B.path) }
        #expect(after?.name == "org.ferry.Error.PermissionDenied")
        broker.pasteboards.updateTransientAccess("org.ferry.drag.99") { $0.contentReaders.insert(p) }  // unknown: nothing

        for connection in [source, entered, performer, outsider] { await connection.close() }
        await broker.stop()
    }

    @Test("a drag pasteboard's change signals reach its parties only")
    func signalsToPartiesOnly() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let outsider = try await broker.fixture.connect()
        let s = source.uniqueName.rawValue
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s], contentReaders: [s]))
        // Every Changed of every pasteboard the bus routes to each connection, in the order emitted.
        let rule = MatchRule(sender: F.broker, interface: F.pasteboardInterface, member: "Changed")
        let partySignals = try await source.subscribe(to: rule)
        let outsiderSignals = try await outsider.subscribe(to: rule)

        try await B.setItems(source, [Self.text])
        let (general, _) = try await B.setItems(source, [Self.text], at: F.general)
        #expect(try (await F.next(partySignals))?.path == B.path)
        #expect(try (await F.next(partySignals))?.path == F.general)
        // Emitted after the drag's signal: had the outsider been sent that one, it would come first.
        let first = try await F.next(outsiderSignals)
        #expect(first?.path == F.general)
        #expect(try first?.body == [.uint64(general)])

        await broker.pasteboards.removeTransientPasteboard(B.name)
        let (afterRemoval, _) = try await B.setItems(source, [Self.text], at: F.general)
        #expect(try (await F.next(partySignals))?.path == B.path, "the last Changed reaches the party")
        let next = try await F.next(outsiderSignals)
        #expect(next?.path == F.general, "and not the outsider")
        #expect(try next?.body == [.uint64(afterRemoval)])

        partySignals.cancel()
        outsiderSignals.cancel()
        for connection in [source, outsider] { await connection.close() }
        await broker.stop()
    }

    @Test("Clear and the history methods are InvalidArgument on a drag pasteboard")
    func noHistory() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let s = source.uniqueName.rawValue
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s], contentReaders: [s]))
        try await B.setItems(source, [Self.text])
        for (member, body) in [("Clear", []), ("History", []), ("RestoreHistory", [.uint32(0)]), ("ClearHistory", [])]
            as [(MemberName, [DBusValue])] {
            let refused = await F.failure { _ = try await F.pasteboard(source, member, body, at: B.path) }
            #expect(refused?.name == "org.ferry.Error.InvalidArgument", "\(member)")
        }
        #expect(try await F.items(source, at: B.path).count == 1, "the items stay")
        await source.close()
        await broker.stop()
    }

    @Test("org.ferry.* names: a drag pasteboard's path to its writers and metadata readers only; users cannot create them")
    func reservedNames() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let entered = try await broker.fixture.connect()
        let performerOnly = try await broker.fixture.connect()
        let outsider = try await broker.fixture.connect()
        try await broker.createDrag(TransientPasteboardAccess(writers: [source.uniqueName.rawValue],
                                                         metadataReaders: [entered.uniqueName.rawValue],
                                                         contentReaders: [performerOnly.uniqueName.rawValue]))
        func pasteboard(_ connection: Connection, _ name: String) async throws -> ObjectPath {
            try await F.call(connection, "Pasteboard", [.string(name), .variantDictionary([:])])[0].get(ObjectPath.self)
        }
        #expect(try await pasteboard(source, B.name) == B.path)
        #expect(try await pasteboard(entered, B.name) == B.path)
        for (connection, name) in [(outsider, B.name), (performerOnly, B.name), (source, "org.ferry.mine"),
                                   (source, "org.ferry.drag.2")] {
            let refused = await F.failure { _ = try await pasteboard(connection, name) }
            #expect(refused?.name == "org.ferry.Error.InvalidArgument", "\(name)")
        }
        #expect(try await F.call(source, "ListPasteboards")[0].get([String].self) == ["general"], "nothing was created")
        #expect(try await pasteboard(source, "org.ferryish") == "/org/ferry/Pasteboard/org_2eferryish", "only the prefix is reserved")
        let remove = await F.failure { _ = try await F.call(source, "RemovePasteboard", [.string(B.name)]) }
        #expect(remove?.name == "org.ferry.Error.InvalidArgument")

        // The broker itself makes only org.ferry.drag.<n> and org.ferry.share.<n>, once each.
        for name in ["org.ferry.drag.", "org.ferry.drag.x", "org.ferry.share.-1", "org.ferry.shares.1", "general", "notes"] {
            await #expect(throws: FerryModelError.self, "\(name)") {
                _ = try await broker.pasteboards.createTransientPasteboard(name, access: TransientPasteboardAccess())
            }
        }
        await #expect(throws: FerryModelError.self) {
            _ = try await broker.pasteboards.createTransientPasteboard(B.name, access: TransientPasteboardAccess())
        }
        let share = try await broker.pasteboards.createTransientPasteboard("org.ferry.share.1",
                                                                            access: TransientPasteboardAccess(writers: [source.uniqueName.rawValue]))
        #expect(share.rawValue == "/org/ferry/Pasteboard/org_2eferry_2eshare_2e1")
        let notParty = await F.failure { _ = try await F.items(outsider, at: share) }
        #expect(notParty?.message.contains("only the parties of share 1 may") == true, "\(notParty?.message ?? "")")
        await broker.pasteboards.removeTransientPasteboard("org.ferry.share.1")
        for connection in [source, entered, performerOnly, outsider] { await connection.close() }
        await broker.stop()
    }

    @Test("removing a drag pasteboard emits a last Changed, unexports it and forgets its items")
    func removal() async throws {
        let broker = try await DragBroker.start()
        let source = try await broker.fixture.connect()
        let s = source.uniqueName.rawValue
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s], contentReaders: [s]))
        try await B.setItems(source, [Self.text])
        try await B.setItems(source, [Self.text], append: true)
        let changes = try await F.changes(source, at: B.path)
        await broker.pasteboards.removeTransientPasteboard(B.name)
        #expect(try (await F.next(changes))?.body == [.uint64(3)])
        let gone = await F.failure { _ = try await F.items(source, at: B.path) }
        #expect(gone != nil && gone?.name.hasPrefix("org.ferry.Error") == false, "the object is gone: \(gone?.name ?? "")")
        await #expect(throws: FerryModelError.self) { _ = try await broker.pasteboards.transientItems(B.name) }
        let path = await F.failure {
            _ = try await F.call(source, "Pasteboard", [.string(B.name), .variantDictionary([:])])
        }
        #expect(path?.name == "org.ferry.Error.InvalidArgument")
        await broker.pasteboards.removeTransientPasteboard(B.name)  // twice: nothing

        // The same drag number can serve again (a new ferryd run counts from 1 again).
        try await broker.createDrag(TransientPasteboardAccess(writers: [s], metadataReaders: [s]))
        #expect(try await F.items(source, at: B.path).isEmpty)
        #expect(try await B.property(source, "ChangeCount") == .uint64(0))
        changes.cancel()
        await source.close()
        await broker.stop()
    }
}

import DBus
import Ferry
import FerryBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A stand-in for ferryd's `org.ferry.Sharing1` on the fake broker: records the activities the
/// app registers, in order with its RegisterApp.
final class FakeSharing: Sendable {
    let registered = Mutex<[[ActivityDescription]]>([])

    static func install(on broker: FakeBroker) throws -> FakeSharing {
        let sharing = FakeSharing()
        try broker.connection.export(Interface("org.ferry.Sharing1") {
            Method("RegisterActivities", in: ["activities": "aa{sv}"]) { [weak sharing] call in
                guard case .array(_, let entries) = call.arguments[0].unwrappingVariants else { return [] }
                let activities = try entries.map { try ActivityDescription(dbusValue: $0) }
                sharing?.registered.withLock { $0.append(activities) }
                return []
            }
        }, at: "/org/ferry/Sharing")
        return sharing
    }
}

/// An app delegate with fixed activities and recording scenes.
final class ActivitiesOnlyDelegate: ApplicationDelegate {
    let activities: [any ApplicationActivity]
    let scenes: ShareAppDelegate
    init(_ activities: [any ApplicationActivity], events: ShareEvents, configuration: ActivityItemsConfiguration? = nil) {
        self.activities = activities
        self.scenes = ShareAppDelegate(events: events, activities: [], configuration: configuration)
    }
    func applicationActivities(for application: Application) -> [any ApplicationActivity] { activities }
    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        ShareSceneDelegate(app: scenes)
    }
}

/// The library's side of `org.ferry.Client1` version 4, driven by a fake broker on a real
/// private bus: registration of activities, and the sharing calls' answers and errors.
@Suite("Ferry: the sharing calls of org.ferry.Client1 (fake broker)")
struct ShareClientObjectTests {
    static let photos = ActivityDescription(type: "org.ferry.test.photos", title: "Photos", acceptableTypes: [.image])
    static let texts = ActivityDescription(type: "org.ferry.test.texts", title: "Texts", category: .share,
                                           acceptableTypes: [.plainText], maximumItemCount: 3)
    static let picky = ActivityDescription(type: "org.ferry.test.picky", title: "Picky", acceptableTypes: [.data])

    struct Stage {
        let bus: PrivateBus
        let broker: FakeBroker
        let sharing: FakeSharing
        let client: FerryClient
        let events: ShareEvents
    }

    static func with(_ activities: [(ActivityDescription, RecordingActivity.Behaviour)] = [
        (photos, .read(.image)), (texts, .read(.plainText)), (picky, .refuse),
    ], configuration: ActivityItemsConfiguration? = nil, _ body: (Stage) async throws -> Void) async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let sharing = try FakeSharing.install(on: broker)
            let events = ShareEvents()
            let client = try await fixture.client()
            _ = try await Application.register(
                client: client, manifest: sceneTestManifest(),
                delegate: ActivitiesOnlyDelegate(activities.map { RecordingActivity(activity: $0.0, behaviour: $0.1, events: events) },
                                                 events: events, configuration: configuration))
            do {
                try await body(Stage(bus: fixture.bus, broker: broker, sharing: sharing, client: client, events: events))
            } catch {
                await client.close()
                await broker.connection.close()
                throw error
            }
            await client.close()
            await broker.connection.close()
        }
    }

    static func info(pasteboard: String = "org.ferry.share.1", itemTypes: [[String]], title: String? = nil,
                     metadata: [[String: String]] = [], sourceApp: String = "") -> DBusValue {
        var info: [String: DBusValue] = [
            "pasteboard": .string(pasteboard), "items": .uint32(UInt32(itemTypes.count)),
            "types": .array(of: .string, Array(Set(itemTypes.joined())).sorted().map(DBusValue.string)),
            "itemTypes": .array(of: "as", itemTypes.map { .array(of: .string, $0.map(DBusValue.string)) }),
            "metadata": .array(of: "a{sv}", metadata.map { $0.mapValues(DBusValue.string).dbusValue }),
            "sourceApp": .string(sourceApp),
        ]
        if let title { info["title"] = .string(title) }
        return info.dbusValue
    }

    static func errorName(_ error: any Error) -> String? { (error as? DBusError)?.name.rawValue }

    @Test("the delegate's activities are registered right after RegisterApp; none means no call")
    func registersAfterRegisterApp() async throws {
        try await Self.with { s in
            #expect(s.broker.registrations.count == 1)
            #expect(s.sharing.registered.withLock { $0 } == [[Self.photos, Self.texts, Self.picky]])
        }
        try await Self.with([]) { s in
            #expect(s.broker.registrations.count == 1)
            #expect(s.sharing.registered.withLock { $0 }.isEmpty)
        }
    }

    @Test("malformed or repeated activities fail Application.register before RegisterApp, naming the entry")
    func invalidActivitiesRefused() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            _ = try FakeSharing.install(on: broker)
            let events = ShareEvents()
            let reserved = ActivityDescription(type: "org.ferry.activity.mine", title: "Mine", acceptableTypes: [.data])
            let cases: [([ActivityDescription], String)] = [
                ([Self.photos, reserved], "activities[1].activityType"),
                ([Self.photos, Self.photos], "activities[1].activityType"),
                ([ActivityDescription(type: "org.ferry.test.x", title: "", acceptableTypes: [.data])], "activities[0].title"),
            ]
            for (activities, key) in cases {
                let client = try await fixture.client()
                await #expect {
                    try await Application.register(
                        client: client, manifest: sceneTestManifest(),
                        delegate: ActivitiesOnlyDelegate(activities.map { RecordingActivity(activity: $0, behaviour: .decline, events: events) },
                                                         events: events))
                } throws: { error in
                    let error = error as? FerryError
                    return error?.code == .invalidArgument && error?.message.hasPrefix(key) == true
                }
                await client.close()
            }
            #expect(broker.registrations.isEmpty)
            await broker.connection.close()
        }
    }

    @Test("CanPerformActivities answers the asked types whose canPerform holds, without providers; unknown types are left out")
    func canPerform() async throws {
        try await Self.with { s in
            let reply = try await s.broker.callClient("CanPerformActivities", [
                .string("4"), .array(of: .string, ["org.ferry.test.photos", "org.ferry.test.picky", "org.ferry.test.unknown"]
                    .map(DBusValue.string)),
                Self.info(itemTypes: [["public.png"]]),
            ])
            #expect(try reply[0].get([String].self) == ["org.ferry.test.photos"])
            #expect(s.events.starting("can ").sorted() == [
                "can org.ferry.test.photos share=4 items=1 providers=0", "can org.ferry.test.picky share=4 items=1 providers=0",
            ])
        }
    }

    @Test("malformed calls are InvalidArgument naming the key", arguments: [
        ("CanPerformActivities", "info.pasteboard"),
        ("CanPerformActivities", "info.itemTypes[0]"),
        ("CanPerformActivities", "info.items"),
        ("CanPerformActivities", "activity_types[0]"),
        ("PerformActivity", "activity_type"),
        ("ShareCompleted", "completion.completed"),
    ])
    func malformedCalls(member: String, key: String) async throws {
        try await Self.with { s in
            let goodInfo = Self.info(itemTypes: [["public.png"]])
            var body: [DBusValue]
            switch key {
            case "info.pasteboard":
                body = [.string("1"), .array(of: .string, []), ["items": DBusValue.uint32(0)].dbusValue]
            case "info.itemTypes[0]":
                body = [.string("1"), .array(of: .string, []),
                        ["pasteboard": DBusValue.string("org.ferry.share.1"), "items": .uint32(1),
                         "itemTypes": .array(of: "as", [.array(of: .string, [.string("not a type")])])].dbusValue]
            case "info.items":
                body = [.string("1"), .array(of: .string, []),
                        ["pasteboard": DBusValue.string("org.ferry.share.1"), "items": .uint32(2),
                         "itemTypes": .array(of: "as", [.array(of: .string, [.string("public.png")])])].dbusValue]
            case "activity_types[0]":
                body = [.string("1"), .array(of: .string, [.string("bad type")]), goodInfo]
            case "activity_type":
                body = [.string("1"), .string("bad type"), goodInfo]
            default:
                body = [.string("1"), .string("some-scene"), ["activityType": DBusValue.string("org.ferry.test.photos")].dbusValue]
            }
            await #expect {
                try await s.broker.callClient(MemberName(member), body)
            } throws: { error in
                Self.errorName(error) == "org.ferry.Error.InvalidArgument" && (error as? DBusError)?.message.contains(key) == true
            }
        }
    }

    @Test("PerformActivity: providers read the named pasteboard as a user action; the result carries returned items")
    func performReads() async throws {
        try await Self.with { s in
            s.broker.state.withLock { $0.items = [[("public.utf8-plain-text", Array("shared words".utf8))]] }
            let reply = try await s.broker.callClient("PerformActivity", [
                .string("9"), .string("org.ferry.test.texts"),
                Self.info(pasteboard: "general", itemTypes: [["public.utf8-plain-text"]], title: "Words",
                          metadata: [["title": "first"]], sourceApp: "org.ferry.test.other"),
            ])
            let result = try ActivityResultWire(reply[0])
            #expect(result.completed == true)
            #expect(result.message == "read 1 item(s)")
            #expect(result.returnedItems == [["size": "12", "type": "public.utf8-plain-text"]])
            #expect(s.events.bytes(readBy: "org.ferry.test.texts") == Data("shared words".utf8))
            #expect(s.events.starting("perform") == [
                "perform org.ferry.test.texts share=9 items=1 title=Words metadata=first source=org.ferry.test.other "
                    + "types=[\"public.utf8-plain-text\"]",
            ])
            // The read was a user action (a paste).
            let reads = s.broker.state.withLock { $0.reads }
            #expect(reads.count == 1)
            #expect(reads.first?.options["user-action"]?.unwrappingVariants == .boolean(true))
            // A type the app did not register.
            await #expect {
                try await s.broker.callClient("PerformActivity", [.string("9"), .string("org.ferry.test.unknown"),
                                                                  Self.info(pasteboard: "general", itemTypes: [["public.png"]])])
            } throws: { Self.errorName($0) == "org.ferry.Error.NotFound" }
        }
    }

    @Test("ProvideActivityItems: count 0 without a configuration or without any interaction; an unknown scene is NotFound",
          arguments: [nil, ShareStage.noteConfiguration(interactions: [])])
    func nothingProvided(configuration: ActivityItemsConfiguration?) async throws {
        try await Self.with(configuration: configuration) { s in
            let scene = try s.broker.newSession()
            try await s.broker.connect(scene)
            let reply = try await s.broker.callClient("ProvideActivityItems", [
                .string("2"), .string(scene.persistentIdentifier), .objectPath(try ObjectPath(PasteboardName.objectPath("org.ferry.share.2"))),
                [String: DBusValue]().dbusValue,
            ])
            let result = try [String: WireValue](dbusValue: reply[0])
            #expect(result["count"] == .uint32(0))
            #expect(s.events.starting("provide") == ["provide \(scene.persistentIdentifier)"])
            await #expect {
                try await s.broker.callClient("ProvideActivityItems", [
                    .string("2"), .string("no-such-scene"), .objectPath("/org/ferry/Pasteboard/general"), [String: DBusValue]().dbusValue,
                ])
            } throws: { Self.errorName($0) == "org.ferry.Error.NotFound" }
        }
    }

    @Test("only the broker may call: another connection's CanPerformActivities is PermissionDenied")
    func onlyTheBroker() async throws {
        try await Self.with { s in
            let stranger = try await Connection(address: s.bus.address)
            await #expect {
                try await stranger.call(destination: s.client.connection.uniqueName, path: FerryClient.clientPath,
                                        interface: "org.ferry.Client1", member: "CanPerformActivities",
                                        body: [.string("1"), .array(of: .string, [.string("org.ferry.test.photos")]),
                                               Self.info(itemTypes: [["public.png"]])], timeout: .seconds(10))
            } throws: { Self.errorName($0) == "org.ferry.Error.PermissionDenied" }
            #expect(s.events.starting("can ").isEmpty)
            await stranger.close()
        }
    }
}

/// `PerformActivity`'s result dictionary, read back.
struct ActivityResultWire {
    var completed: Bool?
    var message: String?
    var returnedItems: [[String: String]]

    init(_ value: DBusValue) throws {
        let wire = try [String: WireValue](dbusValue: value)
        if case .bool(let b)? = wire["completed"] { completed = b }
        if case .string(let m)? = wire["message"] { message = m }
        returnedItems = []
        if case .array(let items)? = wire["returnedItems"] {
            for case .dictionary(let item) in items {
                returnedItems.append(item.compactMapValues { if case .string(let s) = $0 { s } else { nil } })
            }
        }
    }
}

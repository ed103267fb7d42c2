import Foundation
import FerryModel
import FerryTestSupport
import Testing

/// Sample values with every optional field set, shared by the round-trip and golden tests.
enum WireSamples {
    static func userActivity() throws -> UserActivity {
        var activity = try UserActivity(activityType: "org.ferry.notes.open-note")
        activity.title = "Groceries"
        activity.userInfo = [
            "noteID": "notes/groceries", "revision": 7, "pinned": true, "score": 0.75,
            "opened": .date(Date(timeIntervalSince1970: 1_795_336_200.5)), "thumbnail": .data(Data([0, 1, 0xFF])),
            "tags": ["home", "shopping"], "owner": ["name": "Anna Müller", "id": 42], "empty": [],
        ]
        activity.requiredUserInfoKeys = ["noteID", "revision", "pinned", "score", "opened", "thumbnail", "tags", "owner", "empty"]
        activity.webpageURL = URL(string: "https://notes.example.org/groceries")
        activity.targetContentIdentifier = "notes/groceries"
        activity.persistentIdentifier = "note-1"
        activity.expirationDate = Date(timeIntervalSince1970: 1_800_000_000)
        return activity
    }

    static var itemMetadata: ItemProvider.Metadata {
        ItemProvider.Metadata(
            representations: [
                .init(contentType: .png, visibility: .all, estimatedSize: 463, isFile: true, openInPlace: false),
                .init(contentType: .rtf, visibility: .ownApp),
            ],
            suggestedName: "Lake", preferredPresentationSize: Size(width: 24, height: 16))
    }

    static var activityItems: ActivityItemsConfiguration.Summary {
        .init(items: [itemMetadata], itemMetadata: [0: .init(title: "Lake", messageBody: "From Gallery")],
              supportedInteractions: .copy, title: "Photos")
    }

    static func conditions() throws -> SceneActivationConditions {
        try SceneActivationConditions(canActivateFor: "SELF BEGINSWITH 'notes/'", prefersToActivateFor: "SELF == 'notes/groceries'")
    }

    static func session() throws -> SceneSession {
        var restoration = try UserActivity(activityType: "org.ferry.notes.open-note")
        restoration.userInfo = ["noteID": "notes/groceries"]
        return try SceneSession(
            persistentIdentifier: "6F1C2A9E-0B7D-4C1E-9A57-3C2B1D0E4F68", bundleIdentifier: "org.ferry.notes",
            configurationName: "Editor", activationState: .foregroundActive, title: "Groceries",
            frame: Rect(x: 960, y: 0, width: 960, height: 1080), stateRestorationActivity: restoration,
            userInfo: ["zoom": 1.25], activationConditions: try conditions())
    }

    static func connectionOptions() throws -> SceneConnectionOptions {
        var activity = try UserActivity(activityType: "org.ferry.gallery.view-photo")
        activity.userInfo = ["photo": "lake.png"]
        activity.targetContentIdentifier = "photos/lake"
        return SceneConnectionOptions(userActivities: [activity], urls: [URL(fileURLWithPath: "/tmp/lake.png")],
                                      sourceApplication: "org.ferry.notes")
    }

    static func notes() throws -> AppManifest {
        try AppManifest(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Notes/Info.plist"))
    }

    static func gallery() throws -> AppManifest {
        try AppManifest(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Info.plist"))
    }
}

@Suite struct WireTests {
    func roundTrip<T: WireCodable & Equatable>(_ value: T) throws {
        let wire = try value.wireDictionary()
        #expect(try T(wireDictionary: wire) == value)
        var future = wire
        future["someFutureKey"] = .strings(["ignored"])
        future["anotherOne"] = .dictionary(["x": .int32(1)])
        #expect(try T(wireDictionary: future) == value, "unknown keys are ignored")
    }

    @Test func everyShapeRoundTrips() throws {
        try roundTrip(try WireSamples.userActivity())
        try roundTrip(try UserActivity(activityType: "viewDetail"))
        try roundTrip(WireSamples.itemMetadata)
        try roundTrip(ItemProvider.Metadata(representations: []))
        try roundTrip(WireSamples.activityItems)
        try roundTrip(try PasteConfiguration(acceptableTypeIdentifiers: ["public.image", "public.url"]))
        try roundTrip(try WireSamples.conditions())
        try roundTrip(SceneActivationConditions())
        try roundTrip(SceneConfiguration(name: "Editor", role: .windowApplication, delegateClassName: "EditorSceneDelegate",
                                         sceneClassName: "UIWindowScene", storyboardName: "Main"))
        try roundTrip(try WireSamples.notes())
        try roundTrip(try WireSamples.gallery())
        try roundTrip(try WireSamples.session())
        try roundTrip(try SceneSession(persistentIdentifier: "x", bundleIdentifier: "org.ferry.gallery"))
        try roundTrip(try WireSamples.connectionOptions())
        try roundTrip(SceneConnectionOptions())
        try roundTrip(Point(x: 1.5, y: -2))
        try roundTrip(Size(width: 640, height: 480))
        try roundTrip(Rect(x: 0, y: 0, width: 960, height: 1080))
        for state in SceneActivationState.allCases { #expect(try SceneActivationState(wireValue: state.wireValue) == state) }
        for animation in SceneDismissalAnimation.allCases {
            #expect(try SceneDismissalAnimation(wireValue: animation.wireValue) == animation)
        }
        #expect(SceneActivationState.unattached.wireValue == .int32(-1))
        #expect(SceneDismissalAnimation.decline.wireValue == .int32(3))
    }

    @Test func propertyListValuesMapOntoDBusTypes() throws {
        let value: PropertyListValue = ["s": "x", "i": 7, "r": 0.5, "b": false, "d": .data(Data([1])), "a": [1, "two"],
                                        "t": .date(Date(timeIntervalSince1970: 1.000001))]
        guard case .dictionary(let wire) = try value.wireValue() else { Issue.record("not a dictionary"); return }
        #expect(wire.mapValues(\.signature) == ["s": "s", "i": "x", "r": "d", "b": "b", "d": "ay", "a": "av", "t": "a{sv}"])
        #expect(wire["t"] == .dictionary(["$date": .int64(1_000_001)]))
        #expect(try PropertyListValue(wireValue: .dictionary(wire)) == value)
        // Any integer width is accepted; `as` reads as an array of strings.
        #expect(try PropertyListValue(wireValue: .uint32(5)) == 5)
        #expect(try PropertyListValue(wireValue: .strings(["a"])) == ["a"])
    }

    @Test func userActivityValidationNamesTheKey() throws {
        let good = try WireSamples.userActivity().wireDictionary()
        func failure(_ change: (inout [String: WireValue]) -> Void) -> FerryModelError? {
            var wire = good
            change(&wire)
            return #expect(throws: FerryModelError.self) { try UserActivity(wireDictionary: wire) }
        }
        #expect(failure { $0["activityType"] = nil }?.keyPath == "activityType")
        #expect(failure { $0["activityType"] = .string("no spaces allowed") }?.keyPath == "activityType")
        #expect(failure { $0["activityType"] = .int32(1) }?.message == "expected a string (s), found i")
        #expect(failure { $0["title"] = .int64(5) }?.keyPath == "title")
        #expect(failure { $0["userInfo"] = .string("x") }?.keyPath == "userInfo")
        #expect(failure { $0["userInfo"] = .dictionary(["when": .dictionary(["$date": .string("yesterday")])]) }?.keyPath
                == "userInfo.when.$date")
        #expect(failure { $0["userInfo"] = .dictionary(["n": .uint64(.max)]) }?.keyPath == "userInfo.n")
        #expect(failure { $0["webpageURL"] = .string("ftp://example.org/x") }?.keyPath == "webpageURL")
        #expect(failure { $0["requiredUserInfoKeys"] = .strings(["nope"]) }?.keyPath == "requiredUserInfoKeys")
        #expect(failure { $0["expirationDate"] = .double(1) }?.keyPath == "expirationDate")
        let big = failure { $0["userInfo"] = .dictionary(["blob": .bytes(Data(count: 70_000))]); $0["requiredUserInfoKeys"] = nil }
        #expect(big?.code == .tooLarge)
        #expect(big?.keyPath == "userInfo")
    }

    @Test func reservedDateKeyInUserInfoIsRefusedOnEncode() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.userInfo = ["outer": ["$date": 5]]
        let error = #expect(throws: FerryModelError.self) { try activity.wireDictionary() }
        #expect(error?.keyPath == "userInfo.outer.$date")
    }

    @Test func otherShapesNameTheKey() throws {
        let metadata = try WireSamples.itemMetadata.wireDictionary()
        func fails<T: WireCodable>(_ type: T.Type, _ wire: [String: WireValue]) -> String? {
            (#expect(throws: FerryModelError.self) { try T(wireDictionary: wire) })?.keyPath
        }
        var badType = metadata
        badType["representations"] = .array([.dictionary(["type": .string("public.png")]), .dictionary(["type": .string("bad type")])])
        #expect(fails(ItemProvider.Metadata.self, badType) == "representations[1].type")
        var duplicate = metadata
        duplicate["representations"] = .array([.dictionary(["type": .string("public.png")]), .dictionary(["type": .string("public.png")])])
        #expect(fails(ItemProvider.Metadata.self, duplicate) == "representations[1].type")
        var visibility = metadata
        visibility["representations"] = .array([.dictionary(["type": .string("public.png"), "visibility": .string("team")])])
        #expect(fails(ItemProvider.Metadata.self, visibility) == "representations[0].visibility")
        #expect(fails(ItemProvider.Metadata.self, [:]) == "representations")
        var size = metadata
        size["preferredPresentationSize"] = .dictionary(["width": .double(1)])
        #expect(fails(ItemProvider.Metadata.self, size) == "preferredPresentationSize.height")

        var items = try WireSamples.activityItems.wireDictionary()
        items["supportedInteractions"] = .strings(["copy", "print"])
        #expect(fails(ActivityItemsConfiguration.Summary.self, items) == "supportedInteractions[1]")
        items["items"] = .array([.dictionary(["representations": .array([.dictionary(["type": .int32(3)])])])])
        #expect(fails(ActivityItemsConfiguration.Summary.self, items) == "items[0].representations[0].type")

        #expect(fails(PasteConfiguration.self, ["acceptableTypeIdentifiers": .strings(["public.png", "a b"])])
                == "acceptableTypeIdentifiers[1]")
        #expect(fails(SceneActivationConditions.self, ["canActivateFor": .string("SELF MATCHES '.*'")]) == "canActivateFor")
        var manifest = try WireSamples.notes().wireDictionary()
        manifest["sceneConfigurations"] = .array([.dictionary(["role": .string("UIWindowSceneSessionRoleApplication")])])
        #expect(fails(AppManifest.self, manifest) == "sceneConfigurations[0].name")
        manifest["bundleIdentifier"] = nil
        #expect(fails(AppManifest.self, manifest) == "bundleIdentifier")
        #expect(fails(Rect.self, ["x": .double(0), "y": .string("0"), "width": .double(1), "height": .double(1)]) == "y")
        #expect(throws: FerryModelError.self) { try SceneActivationState(wireValue: .int32(7)) }

        var session = try WireSamples.session().wireDictionary()
        session["stateRestorationActivity"] = .dictionary(["activityType": .string("bad type")])
        #expect(fails(SceneSession.self, session) == "stateRestorationActivity.activityType")
        session["frame"] = .dictionary(["x": .double(0), "y": .double(0), "width": .double(1)])
        #expect(fails(SceneSession.self, session) == "frame.height")
        session["state"] = .int32(9)
        #expect(fails(SceneSession.self, session) == "state")
        session["persistentIdentifier"] = .string("")
        #expect(fails(SceneSession.self, session) == "persistentIdentifier")
        session["persistentIdentifier"] = .string("p")
        session["role"] = nil
        #expect(fails(SceneSession.self, session) == "role")
        var options = try WireSamples.connectionOptions().wireDictionary()
        options["urls"] = .strings(["file:///ok", "not a url"])
        #expect(fails(SceneConnectionOptions.self, options) == "urls[1]")
        options["userActivities"] = .array([.dictionary(["title": .string("no type")])])
        #expect(fails(SceneConnectionOptions.self, options) == "userActivities[0].activityType")
    }

    @Test func undeclaredTypeIdentifiersAreKeptAsTheyAre() throws {
        // Another app's exported type need not be declared in this process.
        let wire: [String: WireValue] = ["representations": .array([.dictionary(["type": .string("org.ferry.notes.note")])])]
        let metadata = try ItemProvider.Metadata(wireDictionary: wire)
        #expect(metadata.contentTypes.map(\.identifier) == ["org.ferry.notes.note"])
        #expect(try PasteConfiguration(acceptableTypeIdentifiers: ["org.ferry.notes.note"]).accepts(metadata.contentTypes))
        #expect(!(try PasteConfiguration(acceptableTypeIdentifiers: ["public.image"]).accepts(metadata.contentTypes)))
    }

    @Test func integersOfAnyWidthAreAccepted() throws {
        let wire: [String: WireValue] = ["representations": .array([.dictionary(["type": .string("public.png"), "estimatedSize": .uint32(9)])])]
        #expect(try ItemProvider.Metadata(wireDictionary: wire).representations[0].estimatedSize == 9)
        #expect(try Size(wireDictionary: ["width": .int32(3), "height": .double(4)]) == Size(width: 3, height: 4))
    }

    @Test func validateRejectsWhatLibdbusWouldAbortOn() throws {
        let error = #expect(throws: FerryModelError.self) {
            try WireValue.dictionary(["a": .array([.string("ok"), .string("nul\u{0}inside")])]).validate()
        }
        #expect(error?.keyPath == "a[1]")
        var deep = WireValue.string("bottom")
        for _ in 0..<20 { deep = .array([deep]) }
        #expect(throws: FerryModelError.self) { try deep.validate() }
        #expect(throws: Never.self) { try WireValue.dictionary(try WireSamples.userActivity().wireDictionary()).validate() }
    }

    @Test func textFormatIsGVariantLike() {
        #expect(WireValue.dictionary(["b": .bytes(Data([0, 0xAB])), "a": .strings([]), "s": .string("it's\n")]).description
                == "{'a': <@as []>, 'b': <[byte 0x00, 0xab]>, 's': <'it\\'s\\n'>}")
    }
}

/// The shapes written out as text in Fixtures/wire, so they cannot drift silently.
/// Run with FERRY_UPDATE_GOLDENS=1 to rewrite the files after an intended change (and update docs/wire.md).
@Suite struct WireGoldenTests {
    static let files = GoldenFiles("wire")

    func check(_ name: String, _ wire: [String: WireValue], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mismatch = try Self.files.mismatch(WireValue.prettyText(wire) + "\n", against: "\(name).txt")
        #expect(mismatch == nil, "\(mismatch ?? "") (and update docs/wire.md)", sourceLocation: sourceLocation)
    }

    @Test func userActivity() throws { try check("user-activity", try WireSamples.userActivity().wireDictionary()) }
    @Test func itemMetadata() throws { try check("item-metadata", try WireSamples.itemMetadata.wireDictionary()) }
    @Test func activityItems() throws { try check("activity-items", try WireSamples.activityItems.wireDictionary()) }
    @Test func pasteConfiguration() throws {
        try check("paste-configuration", try PasteConfiguration(acceptableTypeIdentifiers: ["public.image", "public.url"]).wireDictionary())
    }
    @Test func activationConditions() throws { try check("activation-conditions", try WireSamples.conditions().wireDictionary()) }
    @Test func appManifest() throws { try check("app-manifest-notes", try WireSamples.notes().wireDictionary()) }
    @Test func sceneSession() throws { try check("scene-session", try WireSamples.session().wireDictionary()) }
    @Test func connectionOptions() throws { try check("connection-options", try WireSamples.connectionOptions().wireDictionary()) }
    @Test func geometry() throws {
        try check("geometry", [
            "point": .dictionary(try Point(x: 10, y: 20).wireDictionary()),
            "size": .dictionary(try Size(width: 640, height: 480).wireDictionary()),
            "rect": .dictionary(try Rect(x: 960, y: 0, width: 960, height: 1080).wireDictionary()),
            "state": SceneActivationState.foregroundActive.wireValue,
            "animation": SceneDismissalAnimation.commit.wireValue,
        ])
    }
}

import FerryModel
import Foundation
import Testing

/// The sharing model: which activities can perform with which items (the one rule the broker and
/// the library share), what an app may register, and the wire forms of Sharing1.
@Suite("FerryModel: share activities, completions and their wire forms")
struct ShareActivityTests {
    static let addToAlbum = ActivityDescription(type: "org.ferry.gallery.add-to-album", title: "Add to Album",
                                                acceptableTypes: [.image])
    static let append = ActivityDescription(type: "org.ferry.notes.append", title: "Append to Note", category: .share,
                                            acceptableTypes: [.plainText], maximumItemCount: 2)

    static func builtIn(_ type: ActivityType) throws -> ActivityDescription {
        try #require(ActivityDescription.builtIns.first { $0.type == type })
    }

    // MARK: Matching

    @Test("the built-ins are copy, save-to-folder, open-in-new-scene, in that order, and reserved")
    func builtIns() {
        #expect(ActivityDescription.builtIns.map(\.type) == [.copy, .saveToFolder, .openInNewScene])
        #expect(ActivityDescription.builtIns.map(\.type.rawValue) == [
            "org.ferry.activity.copy", "org.ferry.activity.save-to-folder", "org.ferry.activity.open-in-new-scene",
        ])
        #expect(ActivityDescription.builtIns.allSatisfy { $0.type.isBuiltIn })
        #expect(!Self.addToAlbum.type.isBuiltIn)
    }

    @Test("type conformance: a PNG item matches an activity accepting public.image; text does not")
    func conformance() {
        #expect(Self.addToAlbum.canPerform(withItemTypes: [[.png]]))
        #expect(Self.addToAlbum.canPerform(withItemTypes: [[.utf8PlainText, .jpeg]]))
        #expect(!Self.addToAlbum.canPerform(withItemTypes: [[.utf8PlainText]]))
        #expect(Self.append.canPerform(withItemTypes: [[.utf8PlainText]]))
        #expect(!Self.append.canPerform(withItemTypes: [[.png]]))
    }

    @Test("every item must match: one photo and one text is not for add-to-album")
    func everyItemMustMatch() {
        #expect(Self.addToAlbum.canPerform(withItemTypes: [[.png], [.jpeg]]))
        #expect(!Self.addToAlbum.canPerform(withItemTypes: [[.png], [.utf8PlainText]]))
        #expect(!Self.addToAlbum.canPerform(withItemTypes: [[.png], []]))
    }

    @Test("count: no items never match; maximumItemCount caps, 0 means any")
    func count() throws {
        #expect(!Self.addToAlbum.canPerform(withItemTypes: []))
        #expect(!(try Self.builtIn(.copy)).canPerform(withItemTypes: []))
        #expect(Self.append.canPerform(withItemTypes: [[.utf8PlainText], [.utf8PlainText]]))
        #expect(!Self.append.canPerform(withItemTypes: [[.utf8PlainText], [.utf8PlainText], [.utf8PlainText]]))
        #expect(Self.addToAlbum.canPerform(withItemTypes: Array(repeating: [.png], count: 500)))
        let open = try Self.builtIn(.openInNewScene)
        #expect(open.canPerform(withItemTypes: [[.userActivity]]))
        #expect(!open.canPerform(withItemTypes: [[.userActivity], [.userActivity]]))
    }

    @Test("the user-activity rule: an archived activity counts only for an activity accepting exactly that type")
    func userActivityRule() throws {
        let copy = try Self.builtIn(.copy), save = try Self.builtIn(.saveToFolder), open = try Self.builtIn(.openInNewScene)
        // Only a user activity: open it, but it is no item to copy or data to save.
        #expect(open.canPerform(withItemTypes: [[.userActivity]]))
        #expect(!copy.canPerform(withItemTypes: [[.userActivity]]))
        #expect(!save.canPerform(withItemTypes: [[.userActivity]]))
        let anything = ActivityDescription(type: "org.example.any", title: "Any", acceptableTypes: [.item])
        #expect(!anything.canPerform(withItemTypes: [[.userActivity]]))
        // A photo with its view activity: all three.
        for activity in [copy, save, open] {
            #expect(activity.canPerform(withItemTypes: [[.png, .userActivity]]), "\(activity.type)")
        }
        // Open needs the activity: a plain photo is not opened.
        #expect(!open.canPerform(withItemTypes: [[.png]]))
        #expect(copy.canPerform(withItemTypes: [[.png]]))
        #expect(save.canPerform(withItemTypes: [[.png]]))
    }

    // MARK: Validation

    @Test("validate accepts a well-formed app activity")
    func validActivity() throws {
        try Self.addToAlbum.validate()
        try Self.append.validate()
        let longest = ActivityDescription(type: ActivityType(rawValue: "a" + String(repeating: "b", count: 254)),
                                          title: String(repeating: "é", count: 100), acceptableTypes: Array(repeating: .data, count: 64))
        try longest.validate()
    }

    @Test("validate names the bad key", arguments: [
        (ActivityDescription(type: "org.ferry.activity.mine", title: "Mine", acceptableTypes: [.data]), "activityType"),
        (ActivityDescription(type: "has space", title: "T", acceptableTypes: [.data]), "activityType"),
        (ActivityDescription(type: "", title: "T", acceptableTypes: [.data]), "activityType"),
        (ActivityDescription(type: ActivityType(rawValue: String(repeating: "a", count: 256)), title: "T", acceptableTypes: [.data]),
         "activityType"),
        (ActivityDescription(type: "org.example.x", title: "", acceptableTypes: [.data]), "title"),
        (ActivityDescription(type: "org.example.x", title: "two\nlines", acceptableTypes: [.data]), "title"),
        (ActivityDescription(type: "org.example.x", title: "bidi\u{202E}", acceptableTypes: [.data]), "title"),
        (ActivityDescription(type: "org.example.x", title: String(repeating: "é", count: 101), acceptableTypes: [.data]), "title"),
        (ActivityDescription(type: "org.example.x", title: "T", acceptableTypes: []), "acceptableTypes"),
        (ActivityDescription(type: "org.example.x", title: "T", acceptableTypes: Array(repeating: .data, count: 65)), "acceptableTypes"),
        (ActivityDescription(type: "org.example.x", title: "T", acceptableTypes: [.data], maximumItemCount: -1), "maximumItemCount"),
    ])
    func invalidActivity(_ activity: ActivityDescription, key: String) {
        #expect { try activity.validate() } throws: { error in
            let error = error as? FerryModelError
            return error?.code == .invalidArgument && error?.keyPath == key
        }
    }

    @Test("ActivityType.validate: reverse-DNS characters, 1–255 bytes")
    func activityTypeValidation() throws {
        try ActivityType.copy.validate()
        try ActivityType(rawValue: "org.example.add_to-album2").validate()
        for bad in ["", "a/b", "naïve", "with space", String(repeating: "x", count: 256)] {
            #expect(throws: FerryModelError.self, "\(bad)") { try ActivityType(rawValue: bad).validate() }
        }
        #expect(ActivityType("b") > ActivityType("a"))
        #expect(ActivityType.saveToFolder.description == "org.ferry.activity.save-to-folder")
    }

    // MARK: Wire forms

    @Test("an activity round-trips through RegisterActivities' entry; maximumItemCount travels as u")
    func activityRoundTrip() throws {
        for activity in [Self.addToAlbum, Self.append] {
            let wire = try activity.wireDictionary()
            #expect(wire["maximumItemCount"] == .uint32(UInt32(activity.maximumItemCount)))
            #expect(wire["category"] == .string(activity.category.rawValue))
            #expect(try ActivityDescription(wireDictionary: wire) == activity)
        }
        // Category and count are optional: action, any number.
        let minimal = try ActivityDescription(wireDictionary: [
            "activityType": .string("org.example.min"), "title": .string("Min"), "acceptableTypes": .strings(["public.data"]),
        ])
        #expect(minimal.category == .action)
        #expect(minimal.maximumItemCount == 0)
        // A type this process does not know is kept as it is.
        let custom = try ActivityDescription(wireDictionary: [
            "activityType": .string("org.example.c"), "title": .string("C"),
            "acceptableTypes": .strings(["com.example.sketch"]),
        ])
        #expect(custom.acceptableTypes.map(\.identifier) == ["com.example.sketch"])
    }

    @Test("decoding an activity validates it and names the key", arguments: [
        (["title": WireValue.string("T"), "acceptableTypes": .strings(["public.data"])], "activityType"),
        (["activityType": .string("org.example.x"), "acceptableTypes": .strings(["public.data"])], "title"),
        (["activityType": .string("org.example.x"), "title": .string("T")], "acceptableTypes"),
        (["activityType": .string("org.example.x"), "title": .string("T"), "acceptableTypes": .strings(["public.data", "not a type"])],
         "acceptableTypes[1]"),
        (["activityType": .string("org.example.x"), "title": .string("T"), "acceptableTypes": .strings(["public.data"]),
          "category": .string("sideways")], "category"),
        (["activityType": .string("org.example.x"), "title": .string("T"), "acceptableTypes": .strings(["public.data"]),
          "maximumItemCount": .string("3")], "maximumItemCount"),
        (["activityType": .string("org.ferry.activity.copy"), "title": .string("T"), "acceptableTypes": .strings(["public.data"])],
         "activityType"),
        (["activityType": .uint32(3), "title": .string("T"), "acceptableTypes": .strings(["public.data"])], "activityType"),
    ])
    func activityDecodingErrors(_ wire: [String: WireValue], key: String) {
        #expect { try ActivityDescription(wireDictionary: wire) } throws: { error in
            let error = error as? FerryModelError
            return error?.code == .invalidArgument && error?.keyPath == key
        }
    }

    @Test("a listed activity round-trips; app \"\" is a built-in")
    func listedRoundTrip() throws {
        let builtIn = ListedActivity(type: .copy, title: "Copy", category: .action, app: nil)
        let app = ListedActivity(type: "org.ferry.notes.append", title: "Append to Note", category: .share, app: "org.ferry.notes")
        let builtInWire = try builtIn.wireDictionary()
        #expect(builtInWire["app"] == .string(""))
        #expect(builtInWire["builtIn"] == .bool(true))
        #expect(try app.wireDictionary()["builtIn"] == .bool(false))
        #expect(try ListedActivity(wireDictionary: builtInWire) == builtIn)
        #expect(try ListedActivity(wireDictionary: try app.wireDictionary()) == app)
        #expect(try ListedActivity(wireDictionary: builtInWire).isBuiltIn)
        #expect { try ListedActivity(wireDictionary: ["title": .string("T")]) } throws: {
            ($0 as? FerryModelError)?.keyPath == "activityType"
        }
    }

    @Test("a completion round-trips with every field; dismissed and failed say what happened")
    func completionRoundTrip() throws {
        let done = ShareCompletion(completed: true, activityType: .saveToFolder,
                                   returnedItems: [["path": "/tmp/a/Lake.png"], ["path": "/tmp/a/Lake 2.png"]],
                                   message: "Saved 2 items")
        #expect(try ShareCompletion(wireDictionary: try done.wireDictionary()) == done)
        let dismissed = ShareCompletion.dismissed("the sheet was closed")
        #expect(dismissed.completed == false && dismissed.activityType == nil)
        let dismissedWire = try dismissed.wireDictionary()
        #expect(dismissedWire["activityType"] == .string(""))
        #expect(try ShareCompletion(wireDictionary: dismissedWire) == dismissed)
        let failed = ShareCompletion.failed("org.ferry.notes.append", errorName: "org.ferry.Error.Unavailable",
                                            error: "the activity's app org.ferry.notes went away")
        #expect(failed.completed == false)
        #expect(failed.errorName == "org.ferry.Error.Unavailable")
        #expect(failed.activityType == "org.ferry.notes.append")
        #expect(try ShareCompletion(wireDictionary: try failed.wireDictionary()) == failed)
        // Optional fields absent stay absent.
        let bare = try ShareCompletion(wireDictionary: ["completed": .bool(false)])
        #expect(bare == ShareCompletion(completed: false, activityType: nil))
    }

    @Test("a malformed completion is a named error: completed missing, a returned value not a string, too many items")
    func completionErrors() {
        #expect { try ShareCompletion(wireDictionary: ["activityType": .string("org.example.x")]) } throws: {
            ($0 as? FerryModelError)?.keyPath == "completed"
        }
        #expect {
            try ShareCompletion(wireDictionary: ["completed": .bool(true),
                                                 "returnedItems": .array([.dictionary(["path": .string("/a")]),
                                                                          .dictionary(["n": .uint32(3)])])])
        } throws: { error in
            let error = error as? FerryModelError
            return error?.code == .invalidArgument && error?.keyPath?.hasPrefix("returnedItems[1]") == true
        }
        #expect {
            try ShareCompletion(wireDictionary: ["completed": .bool(true), "returnedItems": .strings(["x"])])
        } throws: { ($0 as? FerryModelError)?.keyPath == "returnedItems" }
        let many = WireValue.array(Array(repeating: .dictionary([:]), count: ShareCompletion.maximumReturnedItems + 1))
        #expect { try ShareCompletion(wireDictionary: ["completed": .bool(true), "returnedItems": many]) } throws: {
            ($0 as? FerryModelError)?.code == .tooLarge
        }
    }

    @Test("item metadata round-trips; both keys optional; a non-string is a named error")
    func itemMetadata() throws {
        let full = ActivityItemsConfiguration.ItemMetadata(title: "Lake", messageBody: "From Gallery")
        #expect(try ActivityItemsConfiguration.ItemMetadata(wireDictionary: try full.wireDictionary()) == full)
        let empty = ActivityItemsConfiguration.ItemMetadata()
        #expect(try empty.wireDictionary().isEmpty)
        #expect(try ActivityItemsConfiguration.ItemMetadata(wireDictionary: [:]) == empty)
        #expect { try ActivityItemsConfiguration.ItemMetadata(wireDictionary: ["title": .bool(true)]) } throws: {
            ($0 as? FerryModelError)?.keyPath == "title"
        }
    }
}

import Foundation
import FerryModel
import Testing

@Suite struct UserActivityTests {
    func openNote() throws -> UserActivity {
        var activity = try UserActivity(activityType: "org.ferry.notes.open-note")
        activity.title = "Groceries"
        activity.userInfo = ["noteID": "notes/groceries", "revision": 7, "opened": .date(Date(timeIntervalSince1970: 1_795_336_200.25))]
        activity.targetContentIdentifier = "notes/groceries"
        activity.persistentIdentifier = "note-1"
        activity.webpageURL = URL(string: "https://notes.example.org/groceries")
        activity.expirationDate = Date(timeIntervalSince1970: 1_800_000_000)
        return activity
    }

    @Test func validatesTheActivityType() throws {
        #expect(try UserActivity(activityType: "viewDetail").activityType == "viewDetail")
        for bad in ["", "has space", "org.ferry/notes", "ünicode", String(repeating: "a", count: 256)] {
            let error = #expect(throws: FerryModelError.self) { try UserActivity(activityType: bad) }
            #expect(error?.code == .invalidArgument, "\(bad)")
        }
    }

    @Test func addUserInfoEntriesMergesAndRejectsNonPlistValues() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.userInfo = ["a": 1, "b": 2]
        activity.addUserInfoEntries(from: ["b": 3, "c": "x"] as [String: PropertyListValue])
        #expect(activity.userInfo == ["a": 1, "b": 3, "c": "x"])

        struct Model {}
        let error = #expect(throws: FerryModelError.self) {
            try activity.addUserInfoEntries(from: ["itemID": 5, "model": Model()] as [String: Any])
        }
        #expect(error?.keyPath == "model")
        #expect(activity.userInfo["itemID"] == nil, "a failed merge changes nothing")
    }

    @Test func requiredUserInfoKeysNilMeansAllAndOtherwiseFiltersAndMustBePresent() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.userInfo = ["itemID": 5, "scroll": 0.5]
        #expect(activity.transmittedUserInfo == activity.userInfo)

        activity.requiredUserInfoKeys = ["itemID"]
        #expect(activity.transmittedUserInfo == ["itemID": 5])
        let restored = try UserActivity(archivedData: try activity.archivedData())
        #expect(restored.userInfo == ["itemID": 5])
        #expect(restored.requiredUserInfoKeys == ["itemID"])

        activity.requiredUserInfoKeys = ["itemID", "missing"]
        let error = #expect(throws: FerryModelError.self) { try activity.validate() }
        #expect(error?.keyPath == "requiredUserInfoKeys")
        #expect(error?.message.contains("missing") == true)
    }

    @Test func tooLargeUserInfoIsAnError() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.userInfo = ["blob": .data(Data(count: UserActivity.maximumUserInfoSize))]
        let error = #expect(throws: FerryModelError.self) { try activity.archivedData() }
        #expect(error?.code == .tooLarge)
        #expect(error?.keyPath == "userInfo")
        activity.userInfo = ["blob": .data(Data(count: 60 * 1024))]
        #expect(throws: Never.self) { try activity.validate() }
    }

    @Test func webpageURLMustBeHTTP() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.webpageURL = URL(string: "file:///etc/passwd")
        let error = #expect(throws: FerryModelError.self) { try activity.validate() }
        #expect(error?.keyPath == "webpageURL")
    }

    @Test func archiveRoundTripsEveryField() throws {
        let activity = try openNote()
        let data = try activity.archivedData()
        #expect(data.starts(with: Array("bplist00".utf8)))
        #expect(try UserActivity(archivedData: data) == activity)
    }

    @Test func archiveFromAnotherWriterIsValidated() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>activityType</key><string>org.ferry.gallery.view-photo</string>
            <key>userInfo</key><dict><key>photo</key><string>lake.png</string></dict>
            <key>futureKey</key><integer>1</integer>
            </dict></plist>
            """
        let activity = try UserActivity(archivedData: Data(xml.utf8))
        #expect(activity.activityType == "org.ferry.gallery.view-photo")
        #expect(activity.userInfo == ["photo": "lake.png"])

        let bad = xml.replacingOccurrences(of: "<string>lake.png</string></dict>", with: "<string>x</string></dict><key>title</key><integer>3</integer>")
        let error = #expect(throws: FerryModelError.self) { try UserActivity(archivedData: Data(bad.utf8)) }
        #expect(error?.keyPath == "title")
    }

    @Test func expiry() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        #expect(!activity.isExpired())
        activity.expirationDate = Date(timeIntervalSinceNow: -1)
        #expect(activity.isExpired())
    }

    @Test("isEligibleForHandoff: true by default, false travels on the wire and in the archive, and is written only when false")
    func eligibleForHandoffRoundTrips() throws {
        var activity = try openNote()
        #expect(activity.isEligibleForHandoff)
        #expect(try activity.wireDictionary()["eligibleForHandoff"] == nil)
        activity.isEligibleForHandoff = false
        let wire = try activity.wireDictionary()
        #expect(wire["eligibleForHandoff"] == .bool(false))
        #expect(try UserActivity(wireDictionary: wire).isEligibleForHandoff == false)
        #expect(try UserActivity(archivedData: try activity.archivedData()).isEligibleForHandoff == false)
        var plain = wire
        plain["eligibleForHandoff"] = .string("no")
        #expect(throws: FerryModelError.self) { try UserActivity(wireDictionary: plain) }
    }
}

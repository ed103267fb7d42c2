@testable import BrokerCore
import FerryModel
import Foundation
import GRDB
import Testing

@Suite("SceneStore")
struct SceneStoreTests {
    let fixture: StoreFixture

    init() throws {
        fixture = try StoreFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
    }

    func open() throws -> SceneStore { try SceneStore.open(directory: fixture.directory) }

    /// A session with every field set.
    func fullSession() throws -> StoredSceneSession {
        var activity = try UserActivity(activityType: "org.ferry.notes.open-note")
        activity.title = "Groceries"
        activity.userInfo = ["noteID": .string("groceries"), "scroll": .real(12.0),
                             "when": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
                             "tags": .array([.string("a"), .integer(-3), .boolean(true), .data(Data([0, 1, 255]))])]
        activity.targetContentIdentifier = "groceries"
        activity.persistentIdentifier = "note-groceries"
        activity.webpageURL = URL(string: "https://example.org/notes/groceries")
        activity.requiredUserInfoKeys = ["noteID", "scroll", "when", "tags"]
        activity.expirationDate = Date(timeIntervalSince1970: 2_000_000_000.5)
        let session = try SceneSession(
            persistentIdentifier: "7D1E-é-session", bundleIdentifier: "org.ferry.notes", role: .windowApplication,
            configurationName: "Editor", activationState: .unattached, title: "Notes — groceries",
            frame: Rect(x: -12.5, y: 48, width: 960.25, height: 640), stateRestorationActivity: activity,
            userInfo: ["noteID": .string("groceries"), "nested": .dictionary(["depth": .integer(2)]),
                       "zoom": .real(2.0), "empty": .array([]), "none": .dictionary([:]), "blob": .data(Data())],
            activationConditions: try SceneActivationConditions(canActivateFor: "SELF BEGINSWITH 'g'",
                                                                prefersToActivateFor: "SELF == 'groceries'"))
        var pendingActivity = try UserActivity(activityType: "org.ferry.notes.open-note")
        pendingActivity.userInfo = ["noteID": .string("todo")]
        let options = SceneConnectionOptions(userActivities: [pendingActivity, activity],
                                             urls: [URL(string: "file:///tmp/a%20b.txt")!, URL(string: "https://x.org/?q=1")!],
                                             sourceApplication: "org.ferry.gallery")
        return StoredSceneSession(session: session, screen: 1, stackOrder: 42, pendingOptions: options)
    }

    /// A session with nothing but the required fields.
    func bareSession(_ id: String = "bare", app: String = "org.ferry.gallery") throws -> StoredSceneSession {
        StoredSceneSession(session: try SceneSession(persistentIdentifier: id, bundleIdentifier: app,
                                                     role: .windowExternalDisplayNonInteractive),
                           screen: 0, stackOrder: -7)
    }

    @Test func everyFieldRoundTrips() throws {
        let store = try open()
        let full = try fullSession()
        let bare = try bareSession()
        var empty = try bareSession("empty-options")
        empty.pendingOptions = SceneConnectionOptions()
        try store.save([full, bare, empty])
        let loaded = Dictionary(uniqueKeysWithValues: try store.sessions().map { ($0.session.persistentIdentifier, $0) })
        #expect(loaded.count == 3)
        #expect(loaded[full.session.persistentIdentifier] == full)
        #expect(loaded["bare"] == bare)
        #expect(loaded["bare"]?.session.frame == nil)
        #expect(loaded["bare"]?.session.stateRestorationActivity == nil)
        #expect(loaded["bare"]?.pendingOptions == nil)
        #expect(loaded["bare"]?.session.activationConditions == SceneActivationConditions())
        #expect(loaded["empty-options"]?.pendingOptions == SceneConnectionOptions())
        store.close()
    }

    @Test func activationStateIsNotStored() throws {
        let store = try open()
        var stored = try bareSession()
        stored.session.activationState = .foregroundActive
        try store.save([stored])
        #expect(try store.sessions().first?.session.activationState == .unattached)
    }

    @Test func saveUpsertsAndRemoveForgets() throws {
        let store = try open()
        var a = try bareSession("a")
        try store.save([a, try bareSession("b")])
        a.session.title = "Renamed"
        a.session.frame = Rect(x: 1, y: 2, width: 3, height: 4)
        a.stackOrder = 99
        a.pendingOptions = SceneConnectionOptions(urls: [URL(string: "https://example.org")!])
        try store.save([a])
        try store.save([])
        var sessions = try store.sessions()
        #expect(sessions.count == 2)
        #expect(sessions.first { $0.session.persistentIdentifier == "a" } == a)
        // Clearing the frame and options clears them in storage too.
        a.session.frame = nil
        a.pendingOptions = nil
        try store.save([a])
        #expect(try store.sessions().first { $0.session.persistentIdentifier == "a" } == a)
        try store.remove("b")
        try store.remove("nobody")
        sessions = try store.sessions()
        #expect(sessions.map(\.session.persistentIdentifier) == ["a"])
    }

    @Test func anInvalidSessionWritesNothing() throws {
        let store = try open()
        var bad = try bareSession("bad")
        bad.session.bundleIdentifier = "not a bundle id!"
        let error = try #require(throws: FerryModelError.self) { try store.save([try bareSession("good"), bad]) }
        #expect(error.code == .invalidArgument)
        #expect(error.keyPath == "[1].bundleIdentifier")
        var infinite = try bareSession("inf")
        infinite.session.frame = Rect(x: .infinity, y: 0, width: 1, height: 1)
        #expect(throws: FerryModelError.self) { try store.save([infinite]) }
        var nul = try bareSession("nul")
        nul.session.userInfo = ["text": .string("a\u{0}b")]
        let nulError = try #require(throws: FerryModelError.self) { try store.save([nul]) }
        #expect(nulError.keyPath == "[0].userInfo.text")
        var nulOption = try bareSession("nul-option")
        nulOption.pendingOptions = SceneConnectionOptions(sourceApplication: "org.ferry.x\u{0}")
        let optionError = try #require(throws: FerryModelError.self) { try store.save([try bareSession("fine"), nulOption]) }
        #expect(optionError.keyPath?.hasPrefix("[1].pendingOptions") == true)
        var nulTitle = try bareSession("nul-title")
        nulTitle.session.title = "a\u{0}b"
        #expect(throws: FerryModelError.self) { try store.save([nulTitle]) }
        var offScreen = try bareSession("off")
        offScreen.screen = -1
        #expect(throws: FerryModelError.self) { try store.save([offScreen]) }
        #expect(try store.sessions().isEmpty)
    }

    @Test func sessionsSurviveReopening() throws {
        let full = try fullSession()
        do {
            let store = try open()
            try store.save([full])
            try store.saveApp("org.ferry.notes", manifest: [1, 2, 3])
            try store.addPendingDiscard("gone", appID: "org.ferry.notes")
            store.close()
            #expect(throws: FerryModelError.self) { try store.sessions() }
            let error = try #require(throws: FerryModelError.self) { try store.save([full]) }
            #expect(error.code == .storageFailed)
        }
        let reopened = try open()
        #expect(try reopened.sessions() == [full])
        #expect(try reopened.knownApps() == ["org.ferry.notes": [1, 2, 3]])
        #expect(try reopened.pendingDiscards(of: "org.ferry.notes") == ["gone"])
        reopened.close()
        #expect(FileManager.default.fileExists(atPath: fixture.directory + "/scenes.sqlite"))
        // The journal mode is WAL, kept in the file.
        let check = try DatabaseQueue(path: fixture.directory + "/scenes.sqlite")
        #expect(try check.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        try check.close()
    }

    @Test func knownApps() throws {
        let store = try open()
        #expect(try store.knownApps().isEmpty)
        let early = Date(timeIntervalSince1970: 1_000)
        try store.saveApp("org.ferry.notes", manifest: Array("<plist/>".utf8), now: early)
        try store.saveApp("org.ferry.gallery", manifest: [], now: early)
        let later = Date(timeIntervalSince1970: 2_000)
        try store.saveApp("org.ferry.notes", manifest: [9, 8], now: later)
        #expect(try store.knownApps() == ["org.ferry.notes": [9, 8], "org.ferry.gallery": []])
        #expect(try store.appRegistrationDates() == ["org.ferry.notes": later, "org.ferry.gallery": early])
    }

    @Test func pendingDiscards() throws {
        let store = try open()
        #expect(try store.pendingDiscards(of: "org.ferry.notes").isEmpty)
        try store.addPendingDiscard("s2", appID: "org.ferry.notes")
        try store.addPendingDiscard("s1", appID: "org.ferry.notes")
        try store.addPendingDiscard("s2", appID: "org.ferry.notes")
        try store.addPendingDiscard("g1", appID: "org.ferry.gallery")
        #expect(try store.pendingDiscards(of: "org.ferry.notes") == ["s2", "s1"])
        try store.clearPendingDiscards(of: "org.ferry.notes", ["s2"])
        #expect(try store.pendingDiscards(of: "org.ferry.notes") == ["s1"], "only what was delivered is cleared")
        try store.clearPendingDiscards(of: "org.ferry.notes", ["s1"])
        #expect(try store.pendingDiscards(of: "org.ferry.notes").isEmpty)
        #expect(try store.pendingDiscards(of: "org.ferry.gallery") == ["g1"])
    }

    @Test func destroyingForgetsTheSessionAndRecordsItsDiscardTogether() throws {
        let store = try open()
        let session = try SceneSession(persistentIdentifier: "s1", bundleIdentifier: "org.ferry.notes")
        try store.save([StoredSceneSession(session: session, screen: 0, stackOrder: 1)])
        try store.destroy("s1", appID: "org.ferry.notes")
        #expect(try store.sessions().isEmpty)
        #expect(try store.pendingDiscards(of: "org.ferry.notes") == ["s1"])
    }

    @Test func aDamagedRowIsSkippedAndReported() throws {
        do {
            let store = try open()
            try store.save([try fullSession(), try bareSession("good")])
            try store.save([try bareSession("bad-info"), try bareSession("bad-activity"), try bareSession("bad-app"),
                            try bareSession("bad-screen"), try bareSession("bad-id")])
            try store.saveApp("org.ferry.good", manifest: [1])
            try store.saveApp("org.ferry.bad", manifest: [2])
            try store.addPendingDiscard("gone", appID: "org.ferry.good")
            try store.addPendingDiscard("also-gone", appID: "org.ferry.good")
            store.close()
        }
        // Damage three rows behind the store's back.
        let raw = try DatabaseQueue(path: fixture.directory + "/scenes.sqlite")
        try raw.write { db in
            try db.execute(sql: "UPDATE sceneSession SET userInfo = X'00FF00' WHERE persistentIdentifier = 'bad-info'")
            try db.execute(sql: "UPDATE sceneSession SET stateRestorationActivity = 'text' WHERE persistentIdentifier = 'bad-activity'")
            try db.execute(sql: "UPDATE sceneSession SET appID = '' WHERE persistentIdentifier = 'bad-app'")
            try db.execute(sql: "UPDATE sceneSession SET screen = 'left' WHERE persistentIdentifier = 'bad-screen'")
            try db.execute(sql: "UPDATE sceneSession SET persistentIdentifier = X'6964' WHERE persistentIdentifier = 'bad-id'")
            try db.execute(sql: "UPDATE knownApp SET manifest = 'text', registeredAt = 'later' WHERE appID = 'org.ferry.bad'")
            try db.execute(sql: "UPDATE pendingDiscard SET persistentIdentifier = X'00' WHERE persistentIdentifier = 'gone'")
        }
        try raw.close()

        let store = try open()
        #expect(Set(try store.sessions().map(\.session.persistentIdentifier)) == ["7D1E-é-session", "good"])
        var corrupt: [SceneStore.CorruptSession] = []
        let sessions = try store.sessions(corrupt: &corrupt)
        #expect(sessions.count == 2)
        let byID = Dictionary(uniqueKeysWithValues: corrupt.map { ($0.persistentIdentifier, $0.error) })
        #expect(byID.count == 5)
        #expect(byID["bad-screen"]?.keyPath == "screen")
        #expect(corrupt.contains { $0.error.keyPath == "persistentIdentifier" })
        #expect(byID["bad-info"]?.keyPath == "userInfo")
        #expect(byID["bad-activity"]?.keyPath == "stateRestorationActivity")
        #expect(byID["bad-app"]?.keyPath == "appID")
        #expect(byID.values.allSatisfy { $0.code == .invalidArgument })
        // Damaged app and discard rows are skipped too.
        #expect(try store.knownApps() == ["org.ferry.good": [1]])
        #expect(try store.appRegistrationDates().keys.sorted() == ["org.ferry.good"])
        #expect(try store.pendingDiscards(of: "org.ferry.good") == ["also-gone"])
        // Saving a good version of a damaged session repairs it.
        try store.save([try bareSession("bad-info")])
        #expect(try store.sessions().count == 3)
    }

    @Test("a column of another storage class is damage GRDB's own conversions would have hidden")
    func storageClassesAreStrict() throws {
        do {
            let store = try open()
            try store.save([try fullSession(), try bareSession("real-screen"), try bareSession("blob-title"),
                            try bareSession("text-frame"), try bareSession("inf-frame")])
            store.close()
        }
        let raw = try DatabaseQueue(path: fixture.directory + "/scenes.sqlite")
        try raw.write { db in
            // GRDB would read 1.9 as screen 1 and a UTF-8 blob as text; SQLite keeps both as written.
            try db.execute(sql: "UPDATE sceneSession SET screen = 1.9 WHERE persistentIdentifier = 'real-screen'")
            try db.execute(sql: "UPDATE sceneSession SET title = X'6869' WHERE persistentIdentifier = 'blob-title'")
            try db.execute(sql: "UPDATE sceneSession SET frameX = 'five', frameY = 0, frameWidth = 10, frameHeight = 10 WHERE persistentIdentifier = 'text-frame'")
            try db.execute(sql: "UPDATE sceneSession SET frameX = 9e999, frameY = 0, frameWidth = 10, frameHeight = 10 WHERE persistentIdentifier = 'inf-frame'")
        }
        try raw.close()
        let store = try open()
        var corrupt: [SceneStore.CorruptSession] = []
        let sessions = try store.sessions(corrupt: &corrupt)
        #expect(sessions.map(\.session.persistentIdentifier) == ["7D1E-é-session"])
        let byID = Dictionary(uniqueKeysWithValues: corrupt.map { ($0.persistentIdentifier, $0.error) })
        #expect(byID["real-screen"]?.keyPath == "screen")
        #expect(byID["real-screen"]?.message.hasPrefix("expected an integer") == true)
        #expect(byID["blob-title"]?.keyPath == "title")
        #expect(byID["text-frame"]?.keyPath == "frameX")
        #expect(byID["inf-frame"]?.keyPath == "frameX")
        #expect(try sessions.first == fullSession(), "the good row reads back field for field")
    }

    @Test func archivesAreExactAndDamageIsAnErrorNotACrash() throws {
        let value = WireValue.dictionary([
            "b": .bool(true), "i": .int32(-5), "x": .int64(.min), "u": .uint32(.max), "t": .uint64(.max),
            "d": .double(2.0), "nan": .double(-0.0), "s": .string("é\u{1F600}"), "y": .bytes(Data([0, 255])),
            "S": .strings(["", "a"]), "v": .array([.array([]), .dictionary([:])]), "e": .dictionary(["k": .string("")]),
        ])
        let data = SceneStore.WireArchive.encode(value)
        #expect(try SceneStore.WireArchive.decode(data) == value)
        // Every truncation, and every single-byte change, throws or decodes; none traps.
        for length in 0..<data.count {
            #expect(throws: FerryModelError.self) { try SceneStore.WireArchive.decode(data.prefix(length)) }
        }
        for index in data.indices {
            var damaged = data
            damaged[index] ^= 0xA5
            _ = try? SceneStore.WireArchive.decode(damaged)
        }
        #expect(throws: FerryModelError.self) { try SceneStore.WireArchive.decode(data + [0]) }
        // Nesting beyond the wire's limit is refused.
        var deep = WireValue.array([])
        for _ in 0..<40 { deep = .array([deep]) }
        #expect(throws: FerryModelError.self) { try SceneStore.WireArchive.decode(SceneStore.WireArchive.encode(deep)) }
    }

    /// Every archive of up to two bytes after the version: each either throws a named error or
    /// decodes to a value that encodes back to exactly those bytes (the format has one spelling).
    @Test func shortArchivesAreDecodedExactlyOrRefused() throws {
        var decoded = 0
        for length in 0...2 {
            for number in 0..<(1 << (8 * length)) {
                var bytes: [UInt8] = [SceneStore.WireArchive.version]
                for index in 0..<length { bytes.append(UInt8(truncatingIfNeeded: number >> (8 * index))) }
                let data = Data(bytes)
                do {
                    let value = try SceneStore.WireArchive.decode(data)
                    #expect(SceneStore.WireArchive.encode(value) == data, "\(bytes)")
                    decoded += 1
                } catch let error as FerryModelError {
                    #expect(error.code == .invalidArgument)
                }
            }
        }
        // "b\0", "b\1" and nothing else of that size.
        #expect(decoded == 2)
        #expect(try SceneStore.WireArchive.decode(Data([1, UInt8(ascii: "b"), 1])) == .bool(true))
    }

    /// Doubles keep their bits (WireValue's == cannot tell -0.0 from 0.0, nor see a NaN as equal).
    @Test func doublesKeepTheirBits() throws {
        for number in [-0.0, .nan, -.nan, .signalingNaN, .infinity, -.infinity, .leastNonzeroMagnitude, .pi] {
            let archived = try SceneStore.WireArchive.decode(SceneStore.WireArchive.encode(.array([.double(number)])))
            guard case .array(let values) = archived, case .double(let back)? = values.first else {
                Issue.record("\(archived)")
                continue
            }
            #expect(back.bitPattern == number.bitPattern, "\(number)")
        }
    }

    /// Counts far beyond the bytes that follow are refused before anything is allocated.
    @Test func hugeCountsAreTruncationErrors() throws {
        for tag in ["s", "y", "S", "v", "e"] {
            let data = Data([SceneStore.WireArchive.version, UInt8(ascii: Unicode.Scalar(tag)!), 0xFF, 0xFF, 0xFF, 0xFF, 0])
            let error = try #require(throws: FerryModelError.self) { try SceneStore.WireArchive.decode(data) }
            #expect(error.message.contains("truncated"), "\(tag)")
        }
        // A wrong version, an unknown tag, a duplicate key, invalid UTF-8 and a NUL in a string.
        let bad: [[UInt8]] = [
            [2, UInt8(ascii: "b"), 0],
            [1, UInt8(ascii: "z")],
            [1, UInt8(ascii: "e"), 2, 0, 0, 0, 1, 0, 0, 0, 0x6B, UInt8(ascii: "b"), 0, 1, 0, 0, 0, 0x6B, UInt8(ascii: "b"), 1],
            [1, UInt8(ascii: "s"), 1, 0, 0, 0, 0xFF],
            [1, UInt8(ascii: "s"), 1, 0, 0, 0, 0],
        ]
        for bytes in bad {
            #expect(throws: FerryModelError.self, "\(bytes)") { try SceneStore.WireArchive.decode(Data(bytes)) }
        }
    }

    @Test func openingWhereNoDirectoryIsFails() throws {
        let error = try #require(throws: FerryModelError.self) {
            try SceneStore.open(directory: fixture.directory + "/missing/deeper")
        }
        #expect(error.code == .storageFailed)
    }
}

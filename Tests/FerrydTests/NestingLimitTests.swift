import DBus
import FerryTestSupport
import Foundation
import Testing

/// Hostile nesting from the bus — deep property lists, self-referential and exploding binary
/// property lists, deep predicates — gets InvalidArgument at once; ferryd keeps serving
/// everyone and stops promptly on SIGTERM.
@Suite("ferryd: nesting and property-list bounds", .serialized)
struct NestingLimitTests {
    typealias F = FerrydFixture
    typealias S = SceneBus

    static let appID = "org.example.hostile"

    /// A binary property list (`bplist00`) of `objects` (each its marker and contents, with
    /// 2-byte references), object 0 the top.
    static func binaryPlist(_ objects: [[UInt8]]) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            out += object
        }
        let table = out.count
        for offset in offsets { out += [UInt8(offset >> 24 & 0xFF), UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)] }
        func be64(_ n: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(n >> ($0 * 8) & 0xFF) } }
        out += [0, 0, 0, 0, 0, 0, 4, 2] + be64(objects.count) + be64(0) + be64(table)
        return out
    }

    /// An array object of 2-byte references.
    static func array(_ references: [Int]) -> [UInt8] {
        var object: [UInt8] = references.count < 15 ? [0xA0 | UInt8(references.count)] : [0xAF, 0x11, UInt8(references.count >> 8), UInt8(references.count & 0xFF)]
        for r in references { object += [UInt8(r >> 8), UInt8(r & 0xFF)] }
        return object
    }

    /// A dictionary object: one key reference, one value reference.
    static func dictionary(key: Int, value: Int) -> [UInt8] {
        [0xD1, UInt8(key >> 8), UInt8(key & 0xFF), UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    static func ascii(_ text: String) -> [UInt8] {
        precondition(text.utf8.count < 15)
        return [0x50 | UInt8(text.utf8.count)] + Array(text.utf8)
    }

    /// The hostile manifests, by name.
    static var hostileManifests: [(String, [UInt8])] {
        let depth = 20_000
        let deepXML = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>\(appID)</string><key>X</key>"
            + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</dict></plist>"
        let deepXMLDict = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\">"
            + String(repeating: "<dict><key>k</key>", count: depth) + "<true/>" + String(repeating: "</dict>", count: depth) + "</plist>"
        // Arrays 20,000 deep: object i holds object i + 1.
        let deepBinary = binaryPlist((0..<depth).map { $0 + 1 < depth ? array([$0 + 1]) : array([]) })
        // An array that holds itself, and a dictionary whose value is itself.
        let selfArray = binaryPlist([array([0])])
        let selfDictionary = binaryPlist([dictionary(key: 1, value: 0), ascii("loop")])
        // Two objects apart, a cycle: 0 → 1 → 0.
        let twoCycle = binaryPlist([array([1]), array([0])])
        // 60 arrays, each holding the next twice: 2^60 values once expanded.
        let exploding = binaryPlist((0..<60).map { $0 + 1 < 60 ? array([$0 + 1, $0 + 1]) : ascii("leaf") })
        return [("deep XML arrays", Array(deepXML.utf8)), ("deep XML dictionaries", Array(deepXMLDict.utf8)),
                ("deep binary", deepBinary), ("self array", selfArray), ("self dictionary", selfDictionary),
                ("two-object cycle", twoCycle), ("shared-reference bomb", exploding)]
    }

    @Test("hostile manifests get InvalidArgument at once while another app registers; SIGTERM then stops ferryd promptly")
    func hostileManifests() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let attacker = try await fixture.connect()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, manifest) in Self.hostileManifests {
                group.addTask {
                    let failure = await F.failure { try await F.register(attacker, Self.appID, manifest: manifest) }
                    #expect(failure?.name == "org.ferry.Error.InvalidArgument", "\(name): \(String(describing: failure))")
                    #expect(failure?.message.contains("malformed manifest") == true, "\(name): \(String(describing: failure))")
                }
            }
            group.addTask {
                let honest = try await fixture.connect()
                try await F.register(honest, "org.ferry.notes", manifest: try F.manifest("Notes"))
                await honest.close()
            }
            try await group.waitForAll()
        }
        #expect(ContinuousClock.now - started < .seconds(8), "every answer came at once")
        #expect(daemon.isRunning)
        let again = try await fixture.connect()
        try await F.register(again, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        daemon.send(SIGTERM)
        let status = await daemon.waitForExit(timeout: .seconds(5))
        #expect(status != nil, "ferryd stopped within 5 s of SIGTERM")
        await attacker.close()
        await again.close()
    }

    @Test("a deeply nested NOT or parenthesized predicate is InvalidArgument; 64 levels are fine; ferryd keeps serving")
    func deepPredicates() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"))
        let id = try await SceneServiceTests.firstSession(app)
        let depth = 50_000
        let hostile = [
            String(repeating: "NOT ", count: depth) + "TRUEPREDICATE",
            String(repeating: "!", count: depth) + "TRUEPREDICATE",
            String(repeating: "(", count: depth) + "SELF == 'a'" + String(repeating: ")", count: depth),
            String(repeating: "NOT (", count: depth / 2) + "FALSEPREDICATE" + String(repeating: ")", count: depth / 2),
        ]
        for (index, predicate) in hostile.enumerated() {
            for key in ["canActivateFor", "prefersToActivateFor"] {
                let failure = await F.failure {
                    try await S.update(app.connection, id, ["activationConditions": ([key: DBusValue.string(predicate)] as [String: DBusValue]).dbusValue])
                }
                #expect(failure?.name == "org.ferry.Error.InvalidArgument", "predicate \(index) as \(key)")
                #expect(failure?.message.contains("nested too deeply") == true, "predicate \(index): \(String(describing: failure?.message.prefix(200)))")
            }
        }
        let fine = String(repeating: "NOT ", count: 63) + "(SELF == 'x')"
        try await S.update(app.connection, id, ["activationConditions": (["canActivateFor": DBusValue.string(fine)] as [String: DBusValue]).dbusValue])
        #expect(daemon.isRunning)
        try await S.update(app.connection, id, ["title": "still here"])
        await app.quit()
    }

    @Test("a deep predicate written into scenes.sqlite (as an older ferryd accepted) does not stop the next start")
    func persistedDeepPredicate() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"))
        let id = try await SceneServiceTests.firstSession(app)
        try await S.update(app.connection, id, ["activationConditions": (["canActivateFor": "SELF == 'x'"] as [String: DBusValue]).dbusValue])
        await app.quit()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        let database = fixture.stateDir.appendingPathComponent("scenes.sqlite").path
        // 200,000 NOTs: hex(zeroblob(n)) is 2n zeros, each pair replaced by "NOT ".
        let sql = "UPDATE sceneSession SET canActivateFor = replace(hex(zeroblob(200000)), '00', 'NOT ') || 'TRUEPREDICATE' "
            + "WHERE persistentIdentifier = '\(id)'; SELECT length(canActivateFor) FROM sceneSession WHERE persistentIdentifier = '\(id)';"
        let edit = try await ChildProcess.run("/usr/bin/sqlite3", [database, sql], timeout: .seconds(30))
        #expect(edit.succeeded, "\(edit.stderr)")
        #expect(Int(edit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 800_000, "the row holds the deep predicate")

        daemon = try await fixture.start()
        defer { daemon.stop() }
        await provingNothingHappens(for: .milliseconds(500))
        #expect(daemon.isRunning, "ferryd started despite the stored predicate")
        let cli = try await fixture.connect()
        try await F.register(cli, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        _ = try await S.sessions(cli)
        await cli.close()
    }
}

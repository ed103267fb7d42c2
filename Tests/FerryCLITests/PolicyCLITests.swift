import DBus
import FerryTestSupport
import Foundation
import Testing

/// `ferry policy pending|allow|deny` against a real ferryd, with a registered app (this test's
/// own connection) whose read the policy file says to ask about.
@Suite("ferry policy: answering paste consent requests", .serialized)
struct PolicyCLITests {
    static let broker: BusName = "org.ferry.Broker"

    /// Reads item 0 of the general pasteboard as `connection` without a user action.
    static func read(_ connection: Connection) async throws -> [UInt8] {
        let reply = try await connection.call(destination: broker, path: "/org/ferry/Pasteboard/general",
                                              interface: "org.ferry.Pasteboard1", member: "Read",
                                              body: [.uint32(0), .string("public.text"), .variantDictionary([:])],
                                              timeout: .seconds(30))
        return try reply[2].unwrappingVariants.get([UInt8].self)
    }

    /// The ids `ferry policy pending --json` lists.
    static func pendingIDs(_ broker: CLIBroker) async throws -> [UInt64] {
        let result = try await broker.ferry("policy", "pending", "--json")
        let object = try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any]
        let requests = object?["requests"] as? [[String: Any]] ?? []
        return requests.compactMap { ($0["id"] as? NSNumber)?.uint64Value }
    }

    @Test("pending lists the held read; allow lets it through, deny --remember refuses it and the next; the log shows both")
    func answerFromTheCommandLine() async throws {
        let policy = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-policy-\(UUID().uuidString)")
        try "ask org.ferry.gallery\n".write(to: policy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: policy) }
        try await CLIBroker.with(ferrydArguments: ["--policy", policy.path, "--consent-timeout", "20"]) { broker in
            #expect(try await broker.ferry("copy", "--text", "for your eyes").succeeded)
            let gallery = try await Connection(address: broker.bus.address)
            let manifest = [UInt8](try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Info.plist")))
            _ = try await gallery.call(destination: Self.broker, path: "/org/ferry/Broker", interface: "org.ferry.Broker1",
                                       member: "RegisterApp", body: [.string("org.ferry.gallery"), .bytes(manifest),
                                                                     .objectPath("/org/ferry/Client"), .variantDictionary([:])])

            let allowed = Task { try await Self.read(gallery) }
            var ids: [UInt64] = []
            #expect(try await eventually { ids = try await Self.pendingIDs(broker); return ids.count == 1 })
            let text = try await broker.ferry("policy", "pending")
            #expect(text.stdout.hasPrefix("\(ids[0])  org.ferry.gallery  "), "\(text.stdout)")
            #expect(text.stdout.contains("  -  general  public.utf8-plain-text  "), "no source app: the CLI copied it")
            let allow = try await broker.ferry("policy", "allow", String(ids[0]))
            #expect(allow.succeeded, "\(allow.summary)")
            #expect(try await allowed.value == Array("for your eyes".utf8))

            let denied = Task { try await Self.read(gallery) }
            #expect(try await eventually { ids = try await Self.pendingIDs(broker); return ids.count == 1 })
            let deny = try await broker.ferry("policy", "deny", String(ids[0]), "--remember")
            #expect(deny.succeeded, "\(deny.summary)")
            await #expect(throws: DBusError.self) { _ = try await denied.value }
            #expect(try String(contentsOf: policy, encoding: .utf8).contains("\ndeny org.ferry.gallery "))
            let started = ContinuousClock.now
            await #expect(throws: DBusError.self) { _ = try await Self.read(gallery) }
            #expect(ContinuousClock.now - started < .seconds(5), "the remembered deny answers at once")
            #expect(try await Self.pendingIDs(broker).isEmpty)

            let gone = try await broker.ferry("policy", "allow", String(ids[0]))
            #expect(gone.status == 2, "\(gone.summary)")
            #expect(gone.stderr.contains("no paste is waiting for consent with id \(ids[0])"), "\(gone.stderr)")

            let log = try await broker.ferry("log").stdout.split(separator: "\n")
            #expect(log.count == 2, "\(log)")
            #expect(log.first?.hasSuffix("  asked: denied") == true && log.first?.contains("  org.ferry.gallery  ") == true, "\(log)")
            #expect(log.last?.hasSuffix("  asked: allowed") == true, "\(log)")
            await gallery.close()
        }
    }
}

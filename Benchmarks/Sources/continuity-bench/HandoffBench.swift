import BenchReport
import DBus
import Ferry
import FerryContinuity
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Handoff's rows (issue #22 item 3), with the Notes demo app running on both devices:
///
/// - H1: a note opened on the laptop (Scenes1.RequestActivation) until the desktop lists its
///   activity (Scenes1.ListRemoteActivities polled); beside it, the RequestActivation alone.
/// - H2: Scenes1.ContinueRemoteActivity on the desktop: the sealed request to the laptop's
///   ferryd, its app's SaveActivity, the answer, and the desktop's Notes continuing it in the
///   Editor scene that prefers the note; against one libnats request-reply of 1 KiB.
enum HandoffBench {
    static let scenes: ObjectPath = "/org/ferry/Scenes"
    static let interface: InterfaceName = "org.ferry.Scenes1"
    static let notes = ["groceries", "meeting", "ferry-ideas"]

    /// Starts Notes on both buses, waits for their first scenes, and measures H1 and H2.
    static func run(setup: Setup, laptop: FerryClient, desktop: FerryClient, addresses: [String], count: Int) async throws {
        let folder = FileManager.default.currentDirectoryPath + "/Fixtures/Apps/Notes"
        guard FileManager.default.fileExists(atPath: folder + "/Info.plist") else {
            throw Spawn.Failure(description: "run from the package root: \(folder) has no Info.plist")
        }
        var apps: [pid_t] = []
        defer { for pid in apps { _ = Spawn.stop(pid, grace: 2) } }
        for (index, address) in addresses.enumerated() {
            apps.append(try Spawn.start([Spawn.ferryFolder + "/ferry-demo", folder, "--bus", address,
                                         "--state-dir", "\(setup.folder)/notes-\(index)"], stdout: .null, stderr: .null))
        }
        for client in [laptop, desktop] { try await waitForScene(client.connection) }

        var opened = Samples(), visible = Samples()
        var last: String?
        for index in 0..<(count + 1) {
            let note = notes[index % notes.count]
            let start = now()
            _ = try await call(laptop.connection, "RequestActivation", [
                .string("org.ferry.notes"), .string(""),
                DBusValue.variantDictionary(["userActivity": DBusValue.variantDictionary([
                    "activityType": .string("org.ferry.notes.open-note"),
                    "userInfo": DBusValue.variantDictionary(["noteID": .string(note)]),
                    "targetContentIdentifier": .string(note),
                ])]),
            ])
            let openedAt = now()
            var name: String?
            while name == nil {
                for entry in try await remoteActivities(desktop.connection)
                where entry.text("targetContentIdentifier") == note && entry.text("activity") != last {
                    name = entry.text("activity")
                }
                if now() - start > 10e6 { throw Spawn.Failure(description: "the laptop's note \(note) never reached the desktop") }
            }
            last = name
            if index > 0 {  // the first opens the Editor scene: not a steady state
                opened.append(openedAt - start)
                visible.append(now() - start)
            }
            // The laptop advertises at most once a second: the next change waits that out.
            try await Task.sleep(for: .milliseconds(1100))
        }
        report("H1 activity on one device → listed on the other (ferry activities' query)", "p50",
               value: visible.median / 1000, unit: "ms")
        report("H1 activity on one device → listed on the other (ferry activities' query)", "p99",
               value: visible.percentile(99) / 1000, unit: "ms")
        report("H1 of which: the scene opening on the laptop (RequestActivation)", "p50", value: opened.median / 1000, unit: "ms")

        let requester = try setup.link(), responder = try setup.link()
        defer { requester.close(); responder.close() }
        try responder.subscribe("bench.handoff") { _, subject in
            if let subject { try? responder.publish(subject, [UInt8](repeating: 0x42, count: 1024)) }
        }
        try responder.flush()
        var anchor = Samples()
        for _ in 0..<200 {
            let start = now()
            _ = try requester.request("bench.handoff", [UInt8](repeating: 0x41, count: 1024), timeout: .seconds(2))
            anchor.append(now() - start)
        }
        guard let name = last else { return }
        var continued = Samples()
        for index in 0..<(count + 2) {
            let start = now()
            _ = try await call(desktop.connection, "ContinueRemoteActivity", [.string(name), VariantDictionary().dbusValue])
            if index >= 2 { continued.append(now() - start) }  // the first opens the desktop's Editor scene
        }
        report("H2 continue: fetch from the source (its app saves) + open in the local app", "p50", value: continued.median,
               unit: "µs", anchor: "libnats request-reply, 1 KiB", anchorValue: anchor.median)
        report("H2 continue", "p99", value: continued.percentile(99), unit: "µs",
               anchor: "libnats request-reply, 1 KiB", anchorValue: anchor.percentile(99))
    }

    static func call(_ connection: Connection, _ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(destination: "org.ferry.Broker", path: scenes, interface: interface, member: member,
                                  body: body, timeout: .seconds(30))
    }

    static func remoteActivities(_ connection: Connection) async throws -> [VariantDictionary] {
        let reply = try await call(connection, "ListRemoteActivities", [VariantDictionary().dbusValue])
        guard case .array(_, let elements)? = reply.first?.unwrappingVariants else { return [] }
        return try elements.map { try $0.unwrappingVariants.get(VariantDictionary.self) }
    }

    /// Waits until Notes shows a connected scene on `connection`'s broker.
    static func waitForScene(_ connection: Connection) async throws {
        let start = now()
        while now() - start < 20e6 {
            let reply = try await call(connection, "ListSessions", [VariantDictionary().dbusValue])
            if case .array(_, let elements)? = reply.first?.unwrappingVariants,
               try elements.contains(where: { session in
                   let state = try session.unwrappingVariants.get(VariantDictionary.self)["state"]?.unwrappingVariants
                   return state == .int32(0)  // SceneActivationState.foregroundActive
               }) {
                try await Task.sleep(for: .milliseconds(500))  // its title and conditions follow the connection
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Spawn.Failure(description: "Notes showed no scene")
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// A string under `key`, nil when absent or of another type.
    func text(_ key: String) -> String? {
        if case .string(let text)? = self[key]?.unwrappingVariants { return text }
        return nil
    }
}

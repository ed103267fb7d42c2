import FerryTestSupport
import Foundation
import Testing

/// Long-running commands notice when ferryd stops or is replaced.
@Suite("ferry watch and copy --lazy: the broker stops or is replaced", .serialized)
struct BrokerGoneTests {
    @Test("watch exits 69 with one line when the broker stops and the bus cannot start it")
    func watchBrokerStops() async throws {
        try await CLIBroker.with { (broker: CLIBroker) async throws in
            let watcher = try broker.start(["watch"])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            #expect(lines.next(timeout: .seconds(10)) != nil, "no first line")
            broker.daemon.stop()
            let status = await watcher.waitForExit(timeout: .seconds(10))
            #expect(status == 69, "watch kept running after the broker stopped")
            if status == nil { watcher.kill() }  // so that its standard error ends
            let err = String(decoding: FileHandle(fileDescriptor: watcher.standardError, closeOnDealloc: false)
                .readDataToEndOfFile(), as: UTF8.self)
            #expect(err.hasPrefix("ferry: the Ferry broker went away and cannot be started"), "\(err)")
            #expect(err.split(separator: "\n").count == 1, "\(err)")
        }
    }

    @Test("watch follows a broker that replaces the first one: it prints the new broker's state and its changes")
    func watchFollowsReplacement() async throws {
        try await CLIBroker.with { (broker: CLIBroker) async throws in
            #expect(try await broker.ferry("copy", "--text", "one").succeeded)
            #expect(try await broker.ferry("copy", "--text", "two").succeeded)
            let watcher = try broker.start(["watch"])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            let firstLine = lines.next(timeout: .seconds(10))
            let first = try #require(firstLine, "no first line")
            #expect(first.hasSuffix("public.utf8-plain-text"))

            let newState = broker.folder.appendingPathComponent("new-state")
            let second = try await ServiceProcess.ferryd(on: broker.bus, stateDir: newState, ["--replace"])
            defer { second.stop() }
            #expect(await broker.daemon.waitForExit(timeout: .seconds(10)) == 0)
            let fresh = lines.next(timeout: .seconds(10))
            #expect(fresh == "0", "the new broker's empty pasteboard was not printed: \(fresh ?? "nothing")")
            #expect(try await broker.ferry("copy", "--text", "three").succeeded)
            let changed = lines.next(timeout: .seconds(10))
            #expect(changed == "1 public.utf8-plain-text", "\(changed ?? "nothing")")
            #expect(watcher.isRunning)
        }
    }

    @Test("copy --lazy exits 69 with one line when the broker it promised to stops")
    func lazyCopyBrokerStops() async throws {
        try await CLIBroker.with { (broker: CLIBroker) async throws in
            let source = try broker.start(["copy", "--lazy", "--text", "promised"])
            defer { source.kill() }
            #expect(try await eventually { try await broker.ferry("paste").stdout == "promised" })
            broker.daemon.stop()
            let status = await source.waitForExit(timeout: .seconds(10))
            #expect(status == 69, "copy --lazy kept running after the broker stopped")
            if status == nil { source.kill() }  // so that its standard error ends
            let err = String(decoding: FileHandle(fileDescriptor: source.standardError, closeOnDealloc: false)
                .readDataToEndOfFile(), as: UTF8.self)
            #expect(err.hasPrefix("ferry: the Ferry broker went away"), "\(err)")
            #expect(err.split(separator: "\n").count == 1, "\(err)")
        }
    }
}

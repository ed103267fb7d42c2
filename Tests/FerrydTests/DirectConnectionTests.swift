import DBus
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// ferryd's direct (peer-to-peer) connections, through a real bus and the real ferryd: the same
/// answers as over the bus, bound to the caller's bus identity by a one-time token, other users
/// and bad tokens refused, gone with the caller's bus connection.
@Suite("ferryd: direct connections")
struct DirectConnectionTests {
    typealias F = FerrydFixture

    @Test("over a bound direct connection: the same bytes, types, fds and change count as over the bus, logged as the bus caller's paste; the socket 0600 in a 0700 folder")
    func sameAnswersAsTheBus() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let direct = try await stage.bind(bus)
        #expect(direct.uniqueName == bus.uniqueName)

        let big = F.pattern(40_000)
        let (count, ids) = try await F.setItems(direct, [
            F.item([F.representation("public.utf8-plain-text", "hello direct")]),
            F.item([F.representation("public.png", big)]),
        ])
        #expect(count == 1 && ids.count == 2)
        let overBus = try await F.items(bus)
        #expect(try await F.items(direct) == overBus)
        #expect(try overBus.map { try $0.value(forKey: "id", as: String.self) } == ids)

        let text = try await F.read(direct, 0, "public.plain-text")
        #expect(text.deliveredType == "public.utf8-plain-text" && text.isInline)
        #expect(try await text.bytes() == Array("hello direct".utf8))
        let image = try await F.read(direct, 1, "public.image")
        #expect(!image.isInline && image.descriptor?.seals != nil, "40 KiB comes as a sealed memfd over the direct connection too")
        #expect(try await image.bytes() == big)

        let changeCount = try await direct.call(destination: F.broker, path: F.general, interface: "org.freedesktop.DBus.Properties",
                                                member: "Get", body: [.string(F.pasteboardInterface.rawValue), "ChangeCount"],
                                                timeout: .seconds(10))
        #expect(changeCount.first?.unwrappingVariants == .uint64(1))
        let names = try await direct.call(destination: F.broker, path: F.path, interface: F.interface, member: "ListPasteboards",
                                          body: [], timeout: .seconds(10))
        #expect(try names.first?.get([String].self).contains("general") == true)

        let log = try await F.call(bus, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        #expect(log.count == 2)
        #expect(try log.allSatisfy { try $0.value(forKey: "unique-name", as: String.self) == bus.uniqueName.rawValue },
                "a direct read is the bus caller's paste")

        var info = stat()
        #expect(lstat(stage.socketPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(lstat(stage.runtime + "/ferry", &info) == 0 && info.st_mode & 0o777 == 0o700)
        await direct.close()
        await bus.close()
    }

    @Test("the paste policy holds: a read denied over the bus is denied over the direct connection, with the same error")
    func deniedStaysDenied() async throws {
        let policy = FileManager.default.temporaryDirectory.appendingPathComponent("direct-policy-\(UUID().uuidString)")
        try "deny unregistered\n".write(to: policy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: policy) }
        let stage = try await DirectStage(["--policy", policy.path])
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let direct = try await stage.bind(bus)
        try await F.setItems(direct, [F.item([F.representation("public.utf8-plain-text", "secret")])])
        let overBus = await F.failure { _ = try await F.read(bus, 0, "public.plain-text") }
        let overDirect = await F.failure { _ = try await F.read(direct, 0, "public.plain-text") }
        #expect(overBus?.name == "org.ferry.Error.PermissionDenied")
        #expect(overDirect?.name == overBus?.name)
        #expect(try await F.call(bus, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self).isEmpty)
        await direct.close()
        await bus.close()
    }

    @Test("tokens: a forged, a replayed and an expired token are PermissionDenied and the connection closed; unbound, only Direct1 answers")
    func badTokensRefused() async throws {
        let stage = try await DirectStage(["--direct-token-lifetime", "0.5"])
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let (address, token) = try await stage.openDirect(bus)

        let unbound = try await Connection(peer: address, speakingFor: bus.uniqueName)
        let reached = await F.failure { _ = try await F.items(unbound) }
        #expect(reached?.name == "org.freedesktop.DBus.Error.UnknownObject", "an unbound connection reaches no pasteboard")
        var forged = token
        forged[0] ^= 1
        let refused = await F.failure { try await DirectStage.bind(unbound, token: forged) }
        #expect(refused?.name == "org.ferry.Error.PermissionDenied")
        #expect(await stage.closes(unbound), "a refused connection is closed")

        let first = try await Connection(peer: address, speakingFor: bus.uniqueName)
        try await DirectStage.bind(first, token: token)
        let replay = try await Connection(peer: address, speakingFor: bus.uniqueName)
        let replayed = await F.failure { try await DirectStage.bind(replay, token: token) }
        #expect(replayed?.name == "org.ferry.Error.PermissionDenied", "a token works once")
        #expect(await stage.closes(replay))
        #expect(try await F.items(first).isEmpty, "the first binding stands")

        let (_, late) = try await stage.openDirect(bus)
        try await Task.sleep(for: .seconds(1))
        let expiredConnection = try await Connection(peer: address, speakingFor: bus.uniqueName)
        let expired = await F.failure { try await DirectStage.bind(expiredConnection, token: late) }
        #expect(expired?.name == "org.ferry.Error.PermissionDenied", "a token expires")
        #expect(expired?.message.contains("expired") == true)
        #expect(await stage.closes(expiredConnection))

        let overDirect = await F.failure { _ = try await first.call(destination: F.broker, path: F.path, interface: F.interface,
                                                                    member: "OpenDirect", body: [], timeout: .seconds(10)) }
        #expect(overDirect?.name == "org.ferry.Error.InvalidArgument", "tokens are asked for over the bus")
        await first.close()
        await bus.close()
    }

    @Test("promise callbacks: with callbacks, ferryd calls the source's Client1 over its direct connection, as the broker's bus name; without, over the bus")
    func promiseCallbacksGoDirect() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let reader = try await stage.fixture.connect()
        let broker = try #require(try await reader.owner(of: F.broker))
        let seen = Mutex<[(overBus: Bool, sender: String)]>([])
        func source(_ appID: String, manifest: String, text: String, callbacks: Bool) async throws -> (Connection, Connection) {
            let bus = try await stage.fixture.connect()
            try bus.export(Interface("org.ferry.Client1") {
                Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                       out: ["size": "t"]) { call in
                    seen.withLock { $0.append((call.connection === bus, call.sender.rawValue)) }
                    let fd = try call.argument(2, as: FileDescriptor.self)
                    try fd.write(all: Array(text.utf8))
                    fd.close()
                    return [.uint64(UInt64(text.utf8.count))]
                }
            }, at: "/org/ferry/Client")
            try await F.register(bus, appID, manifest: try F.manifest(manifest))
            let direct = try await stage.bind(bus, servingCallsFrom: broker, options: ["callbacks": .boolean(callbacks)])
            try await F.setItems(direct, [F.item([F.promised("public.utf8-plain-text")])])
            return (bus, direct)
        }
        let (notes, notesDirect) = try await source("org.ferry.notes", manifest: "Notes", text: "served directly", callbacks: true)
        #expect(try await F.read(reader, 0, "public.plain-text").bytes() == Array("served directly".utf8))
        let (gallery, galleryDirect) = try await source("org.ferry.gallery", manifest: "Gallery", text: "served over the bus",
                                                        callbacks: false)
        #expect(try await F.read(reader, 0, "public.plain-text").bytes() == Array("served over the bus".utf8))
        let calls = seen.withLock { $0 }
        #expect(calls.map(\.overBus) == [false, true], "the first over its direct connection, the second over the bus")
        #expect(calls.allSatisfy { $0.sender == broker.rawValue })
        for connection in [notesDirect, galleryDirect, notes, gallery, reader] { await connection.close() }
    }

    @Test("ProvideBytes: a source bound with provideBytes is asked for a small promise's bytes in the reply (no pipe); a load it kept is resumed by ProvideRepresentation; an unknown method falls back to the pipe; one bound without it is never asked")
    func provideBytesBeforeThePipe() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let reader = try await stage.fixture.connect()
        let broker = try #require(try await reader.owner(of: F.broker))
        /// How the source answers ProvideBytes: the bytes, a kept load, an unknown method, NotFound.
        enum Answer { case bytes, kept, unknown, notFound }
        let answer = Mutex(Answer.bytes)
        let calls = Mutex<[String]>([])
        func source(_ appID: String, manifest: String, text: String, provideBytes: Bool) async throws -> (Connection, Connection) {
            let bus = try await stage.fixture.connect()
            try bus.export(Interface("org.ferry.Client1") {
                Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                       out: ["size": "t"]) { call in
                    let (_, _, fd, options) = try call.arguments(String.self, String.self, FileDescriptor.self,
                                                                 VariantDictionary.self)
                    let resume = try options.valueIfPresent(forKey: "resume", as: String.self)
                    calls.withLock { $0.append("\(appID) ProvideRepresentation resume=\(resume ?? "-")") }
                    try fd.write(all: Array(text.utf8))
                    fd.close()
                    return [.uint64(UInt64(text.utf8.count))]
                }
                Method("ProvideBytes", in: ["item_id": "s", "type": "s", "limit": "u", "options": "a{sv}"],
                       out: ["done": "b", "bytes": "ay", "resume": "s"]) { call in
                    let (_, type, limit, options) = try call.arguments(String.self, String.self, UInt32.self,
                                                                       VariantDictionary.self)
                    #expect(type == "public.utf8-plain-text" && limit >= 1024)
                    #expect(try options.valueIfPresent(forKey: "paste", as: Bool.self) == true)
                    calls.withLock { $0.append("\(appID) ProvideBytes") }
                    switch answer.withLock({ $0 }) {
                    case .bytes: return [.boolean(true), .bytes(Array(text.utf8)), .string("")]
                    case .kept: return [.boolean(false), .bytes([]), .string("load-1")]
                    case .unknown: throw DBusError(.unknownMethod, "no ProvideBytes here")
                    case .notFound: throw DBusError("org.ferry.Error.NotFound", "no such item")
                    }
                }
            }, at: "/org/ferry/Client")
            try await F.register(bus, appID, manifest: try F.manifest(manifest))
            let direct = try await stage.bind(bus, servingCallsFrom: broker,
                                              options: ["callbacks": .boolean(true), "provideBytes": .boolean(provideBytes)])
            try await F.setItems(direct, [F.item([F.promised("public.utf8-plain-text", estimatedSize: 20)])])
            return (bus, direct)
        }
        func paste() async throws -> (calls: [String], result: F.ReadResult) {
            calls.withLock { $0 = [] }
            let result = try await F.read(reader, 0, "public.plain-text")
            return (calls.withLock { $0 }, result)
        }

        let (notes, notesDirect) = try await source("org.ferry.notes", manifest: "Notes", text: "no pipe at all", provideBytes: true)
        var (seen, read) = try await paste()
        #expect(seen == ["org.ferry.notes ProvideBytes"])
        #expect(read.transfer.isEmpty && read.data == .bytes(Array("no pipe at all".utf8)))
        answer.withLock { $0 = .kept }
        (seen, read) = try await paste()
        #expect(seen == ["org.ferry.notes ProvideBytes", "org.ferry.notes ProvideRepresentation resume=load-1"])
        #expect(read.transfer.isEmpty && read.data == .bytes(Array("no pipe at all".utf8)), "still inline, through the pipe")
        answer.withLock { $0 = .unknown }
        (seen, read) = try await paste()
        #expect(seen == ["org.ferry.notes ProvideBytes", "org.ferry.notes ProvideRepresentation resume=-"])
        #expect(read.data == .bytes(Array("no pipe at all".utf8)))
        answer.withLock { $0 = .notFound }
        let failure = await F.failure { _ = try await paste() }
        #expect(failure?.name == "org.ferry.Error.Unavailable")
        #expect(failure?.message.contains("no such item") == true)
        #expect(calls.withLock { $0 } == ["org.ferry.notes ProvideBytes"], "an error answer is not asked again with a pipe")

        answer.withLock { $0 = .bytes }
        let (gallery, galleryDirect) = try await source("org.ferry.gallery", manifest: "Gallery", text: "through the pipe",
                                                        provideBytes: false)
        (seen, read) = try await paste()
        #expect(seen == ["org.ferry.gallery ProvideRepresentation resume=-"], "bound without provideBytes: never asked")
        #expect(read.data == .bytes(Array("through the pipe".utf8)))
        for connection in [notesDirect, galleryDirect, notes, gallery, reader] { await connection.close() }
    }

    @Test("the direct connection closes when its client's bus connection leaves the bus")
    func closesWithTheBusConnection() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let direct = try await stage.bind(bus)
        #expect(try await F.items(direct).isEmpty)
        await bus.close()
        #expect(await stage.closes(direct))
        let after = await F.failure { _ = try await F.items(direct) }
        #expect(after?.name == "org.freedesktop.DBus.Error.Disconnected")
    }

    @Test("another user is refused: kept out by the 0700 folder, and by the kernel's peer credentials when the folder is opened")
    func anotherUserRefused() async throws {
        let (uid, gid) = try await DirectStage.otherUser()
        let stage = try await DirectStage()
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let (address, token) = try await stage.openDirect(bus)
        let script = """
            import dbus, sys
            try:
                c = dbus.connection.Connection(sys.argv[1])
                c.call_blocking(None, '/org/ferry/Direct', 'org.ferry.Direct1', 'Bind', 'aya{sv}', [dbus.ByteArray(bytes.fromhex(sys.argv[2])), {}])
                print('bound')
            except dbus.exceptions.DBusException as e:
                print('refused', e.get_dbus_name())
            """
        let hex = token.map { String(format: "%02x", $0) }.joined()
        func tryAsOtherUser() async throws -> String {
            try await ChildProcess.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups",
                                                           "/usr/bin/python3", "-c", script, address, hex],
                                       environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(20)).stdout
        }
        let closed = try await tryAsOtherUser()
        #expect(closed.hasPrefix("refused"), "\(closed)")

        chmod(stage.runtime, 0o755)
        chmod(stage.runtime + "/ferry", 0o755)
        chmod(stage.socketPath, 0o666)
        let opened = try await tryAsOtherUser()
        #expect(opened.hasPrefix("refused"), "\(opened)")
        let refusals = stage.daemon.standardError.split(separator: "\n").filter { $0.contains("warning: refused a direct connection of another user") }
        #expect(refusals.contains { $0.hasSuffix(" uid=\(uid)") }, "\(stage.daemon.standardError)")
        // The token was not spent by the refused attempts: its own user can still bind with it.
        let direct = try await Connection(peer: address, speakingFor: bus.uniqueName)
        try await DirectStage.bind(direct, token: token)
        await direct.close()
        await bus.close()
    }

    @Test("without XDG_RUNTIME_DIR, OpenDirect is Unavailable; a stale socket is replaced, a live one never")
    func socketLifecycle() async throws {
        let plain = try FerrydFixture()
        defer { plain.cleanUp() }
        var environment = plain.bus.environment()
        environment["XDG_RUNTIME_DIR"] = nil
        let daemon = try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                              ["--bus", plain.bus.address, "--state-dir", plain.stateDir.path], environment: environment)
        let bus = try await plain.connect()
        let none = await F.failure { _ = try await F.call(bus, "OpenDirect") }
        #expect(none?.name == "org.ferry.Error.Unavailable")
        await bus.close()
        daemon.stop()

        let stage = try await DirectStage()
        defer { stage.stop() }
        let first = try await stage.fixture.connect()
        _ = try await stage.bind(first)
        let socketPath = stage.socketPath
        await first.close()
        // SIGKILL: the socket stays behind, stale.
        kill(stage.daemon.pid, SIGKILL)
        _ = await stage.daemon.waitForExit()
        #expect(FileManager.default.fileExists(atPath: socketPath))
        let second = try await stage.restart()
        let bus2 = try await stage.fixture.connect()
        let rebound = try await stage.bind(bus2)
        #expect(try await F.items(rebound).isEmpty, "the stale socket was replaced")
        await rebound.close()
        await bus2.close()
        second.stop()
        _ = await second.waitForExit()
        #expect(!FileManager.default.fileExists(atPath: socketPath), "a ferryd that stops removes its socket")

        // A live socket (something listening there) is never replaced.
        unlink(socketPath)
        let listener = try DirectStage.listen(at: socketPath)
        defer { close(listener) }
        let inode = DirectStage.inode(socketPath)
        let third = try await stage.restart()
        defer { third.stop() }
        let bus3 = try await stage.fixture.connect()
        let taken = await F.failure { _ = try await F.call(bus3, "OpenDirect") }
        #expect(taken?.name == "org.ferry.Error.Unavailable")
        #expect(third.standardError.contains("another ferryd is listening"), "\(third.standardError)")
        #expect(inode != nil && DirectStage.inode(socketPath) == inode, "the live socket is still the listener's")
        await bus3.close()
    }

    @Test("a call whose variants nest past 64 levels is refused with InvalidArgs, and ferryd goes on")
    func deeplyNestedVariantsRefused() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        _ = try await stage.openDirect(bus)
        // Swift's and libdbus's writers refuse such a message, so it goes out as raw bytes. An
        // unbound connection may set Direct1's properties: (ssv), whose value is read first.
        let call = try Message.methodCall(destination: nil, path: "/org/ferry/Direct", interface: "org.freedesktop.DBus.Properties",
                                          member: "Set", body: [.string("org.ferry.Direct1"), .string("Version"), .variant(.int32(7))])
        let reply = try RawPeer.exchange(at: stage.socketPath, nestingVariants(in: try call.wireBytes(), levels: 100_000))
        #expect(reply.kind == .error && reply.errorName == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(stage.daemon.isRunning)
        let direct = try await stage.bind(bus)
        #expect(try await F.items(direct).isEmpty, "ferryd still answers")
        await direct.close()
        await bus.close()
    }

    @Test("Introspect of an unbound direct connection's /org/ferry/Direct matches org.ferry.Direct1.xml; Version 2")
    func directInterfaceContract() async throws {
        let stage = try await DirectStage()
        defer { stage.stop() }
        let bus = try await stage.fixture.connect()
        let (address, _) = try await stage.openDirect(bus)
        let unbound = try await Connection(peer: address, speakingFor: bus.uniqueName)
        let xml = try await unbound.call(destination: F.broker, path: "/org/ferry/Direct", interface: "org.freedesktop.DBus.Introspectable",
                                         member: "Introspect", body: [], timeout: .seconds(10))[0].get(String.self)
        let published = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("services/interfaces/org.ferry.Direct1.xml"),
                                   encoding: .utf8)
        let contract = try InterfaceShape.of(published, interface: "org.ferry.Direct1")
        #expect(contract.count == 2)
        #expect(try InterfaceShape.of(xml, interface: "org.ferry.Direct1") == contract)
        let version = try await unbound.call(destination: F.broker, path: "/org/ferry/Direct", interface: "org.freedesktop.DBus.Properties",
                                             member: "Get", body: [.string("org.ferry.Direct1"), "Version"], timeout: .seconds(10))
        #expect(version[0].unwrappingVariants == .uint32(2))
        await unbound.close()
        await bus.close()
    }
}

/// A private bus with a ferryd whose `XDG_RUNTIME_DIR` is a fresh folder of this test's own.
final class DirectStage: Sendable {
    let fixture: FerrydFixture
    let runtime: String
    let extra: [String]
    let daemon: ServiceProcess

    init(_ extra: [String] = []) async throws {
        fixture = try FerrydFixture()
        runtime = FileManager.default.temporaryDirectory.appendingPathComponent("fd-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        self.extra = extra
        daemon = try await Self.ferryd(fixture, runtime: runtime, extra)
    }

    static func ferryd(_ fixture: FerrydFixture, runtime: String, _ extra: [String]) async throws -> ServiceProcess {
        try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                 ["--bus", fixture.bus.address, "--state-dir", fixture.stateDir.path] + extra,
                                 environment: fixture.bus.environment(adding: ["XDG_RUNTIME_DIR": runtime]))
    }

    /// Another ferryd on the same bus, state and runtime folder (the first one gone).
    func restart() async throws -> ServiceProcess {
        try await Self.ferryd(fixture, runtime: runtime, extra)
    }

    /// The socket, as `OpenDirect` names it.
    var socketPath: String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/ferry")) ?? []
        return runtime + "/ferry/" + (names.first { $0.hasPrefix("direct-") } ?? "direct-missing")
    }

    /// `Broker1.OpenDirect` over `bus`.
    func openDirect(_ bus: Connection) async throws -> (address: String, token: [UInt8]) {
        let reply = try await FerrydFixture.call(bus, "OpenDirect")
        return (try reply[0].get(String.self), try reply[1].get([UInt8].self))
    }

    /// A direct connection bound to `bus`'s identity.
    func bind(_ bus: Connection) async throws -> Connection {
        let (address, token) = try await openDirect(bus)
        let direct = try await Connection(peer: address, speakingFor: bus.uniqueName)
        try await Self.bind(direct, token: token)
        return direct
    }

    /// A direct connection bound to `bus`'s identity with `options` (callbacks, provideBytes), on
    /// which the calls of `broker` reach `bus`'s objects.
    func bind(_ bus: Connection, servingCallsFrom broker: BusName, options: VariantDictionary) async throws -> Connection {
        let (address, token) = try await openDirect(bus)
        let direct = try await Connection(peer: address, speakingFor: bus.uniqueName, callsFrom: broker, serving: bus)
        try await Self.bind(direct, token: token, options: options)
        return direct
    }

    static func bind(_ direct: Connection, token: [UInt8], options: VariantDictionary = [:]) async throws {
        _ = try await direct.call(destination: FerrydFixture.broker, path: "/org/ferry/Direct", interface: "org.ferry.Direct1",
                                  member: "Bind", body: [.bytes(token), options.dbusValue], timeout: .seconds(10))
    }

    /// Whether `connection` is closed within a few seconds.
    func closes(_ connection: Connection) async -> Bool {
        await eventually(.seconds(5)) { !connection.isConnected }
    }

    func stop() {
        daemon.stop()
        fixture.cleanUp()
        try? FileManager.default.removeItem(atPath: runtime)
    }

    /// An unprivileged user for the other-uid test (created once).
    static func otherUser() async throws -> (uid_t, gid_t) {
        let name = "ferry-direct"
        if let entry = getpwnam(name) { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        _ = try await ChildProcess.run("useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent",
                                                   "--shell", "/usr/sbin/nologin", "--comment", "Ferry tests, direct connections", name])
        guard let entry = getpwnam(name) else { throw DirectStageError(description: "cannot create the user \(name)") }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// A unix socket listening at `path` (the caller closes it).
    static func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withSocketAddress(path) { Glibc.bind(fd, $0, $1) }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 4) == 0 else {
            throw DirectStageError(description: "cannot listen at \(path): errno \(errno)")
        }
        return fd
    }

    /// Calls `body` with the address of the unix socket at `path`.
    static func withSocketAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.enumerated() { buffer[i] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// The inode of the file at `path`, nil when there is none.
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return lstat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }
}

/// What a ``DirectStage`` could not set up.
struct DirectStageError: Error, CustomStringConvertible {
    var description: String
}

/// A peer that speaks to a direct-connection socket by hand: EXTERNAL authentication, one
/// message of raw bytes, its reply.
enum RawPeer {
    /// Sends `message` (marshalled) on a new connection to `path` and reads the one reply.
    static func exchange(at path: String, _ message: [UInt8]) throws -> Message {
        let socketFD = FileDescriptor(taking: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0))
        defer { socketFD.close() }
        let fd = socketFD.rawValue ?? -1
        guard DirectStage.withSocketAddress(path, { connect(fd, $0, $1) }) == 0 else { throw POSIXError(.ECONNREFUSED) }
        let uid = String(getuid()).utf8.map { String(format: "%02x", $0) }.joined()
        try socketFD.write(all: [0] + Array("AUTH EXTERNAL \(uid)\r\nBEGIN\r\n".utf8) + message)
        var input: [UInt8] = []
        // "OK <guid>\r\n", then the reply.
        while !input.contains(UInt8(ascii: "\n")) { input += try receive(fd) }
        let lineEnd = input.firstIndex(of: UInt8(ascii: "\n"))! + 1
        guard input.starts(with: Array("OK ".utf8)) else { throw POSIXError(.EACCES) }
        input.removeFirst(lineEnd)
        func length() -> Int? {
            guard input.count >= 16 else { return nil }
            func u32(_ at: Int) -> Int { input[at..<(at + 4)].reversed().reduce(0) { $0 << 8 | Int($1) } }
            return 16 + ((u32(12) + 7) & ~7) + u32(4)
        }
        while length().map({ input.count < $0 }) ?? true { input += try receive(fd) }
        return try Message(wireBytes: Array(input[..<length()!]))
    }

    private static func receive(_ fd: Int32) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw POSIXError(.ECONNRESET) }
        return Array(buffer[..<n])
    }
}

import DBus
import FerryTestSupport
import Foundation
import Testing

/// Which process serves `org.ferry.Peer1` for a test: Ferry's own `dbus-peer` in another
/// process (its bus connection served by this library's transport, or by libdbus), or an
/// independent implementation on python-dbus.
enum PeerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case swift
    case swiftOverLibdbus
    case python

    var testDescription: String {
        switch self {
        case .swift: "Swift dbus-peer process"
        case .swiftOverLibdbus: "Swift dbus-peer process, FERRY_BUS_TRANSPORT=libdbus"
        case .python: "python-dbus peer"
        }
    }
}

/// A peer process on the shared private bus, and a Swift client connection to it.
struct RunningPeer {
    static let path: ObjectPath = "/org/ferry/Peer"
    static let interface: InterfaceName = "org.ferry.Peer1"
    static let pythonPeer = TestPaths.packageRoot.appendingPathComponent("Tests/DBusTests/Peers/python_peer.py").path

    let name: BusName
    let process: ServiceProcess
    let client: Connection

    init(_ kind: PeerKind, quiet: Bool = true) async throws {
        let bus = try PrivateBus.shared()
        let name = "org.ferry.Peer.T\(UInt32.random(in: 0...UInt32.max))"
        switch kind {
        case .swift, .swiftOverLibdbus:
            process = try await ServiceProcess(
                BuiltProducts.executable("dbus-peer"), ["serve", "--name", name] + (quiet ? ["--quiet"] : []),
                environment: bus.environment(adding: kind == .swift ? [:] : ["FERRY_BUS_TRANSPORT": "libdbus"]))
        case .python:
            process = try await ServiceProcess("/usr/bin/python3", [Self.pythonPeer, name], environment: bus.environment())
        }
        self.name = try BusName(name)
        client = try await Connection(address: bus.address)
    }

    func call(_ member: MemberName, _ body: [DBusValue] = [], interface: InterfaceName = interface) async throws
        -> [DBusValue]
    {
        try await client.call(destination: name, path: Self.path, interface: interface, member: member, body: body,
                              timeout: .seconds(60))
    }

    func property(_ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await call(member, [.string(Self.interface.rawValue)] + body, interface: "org.freedesktop.DBus.Properties")
    }
}

/// The Swift layer against another process: its own `dbus-peer`, and python-dbus.
@Suite("Interop: calls, errors, signals, properties and fds between processes")
struct PeerInteropTests {
    /// Values of every type, with edge values, that must come back from `Echo(v)` unchanged.
    static let echoValues: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false),
        .int16(.min), .int16(.max), .uint16(.max), .int32(.min), .int32(.max), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(0), .uint64(.max), .double(-0.5), .double(1e300),
        .string(""), .string("grüße, 世界 🚢"), .string(String(repeating: "x", count: 100_000)),
        .objectPath("/"), .objectPath("/org/ferry/Pasteboard/general"), .signature("a{sv}(iay)"),
        .bytes([]), .bytes([0, 1, 2, 255]), .array(element: "s", elements: []), .array(element: "s", elements: ["a", "b"]),
        .array(element: "a{sv}", elements: []),
        .dictionary(key: "s", value: "v", entries: []),
        .variantDictionary(["text": "hi", "size": .uint64(3), "nested": .variantDictionary(["deep": .int32(-1)])]),
        .dictionary(key: "u", value: "as", entries: [DBusDictionaryEntry(key: .uint32(7), value: .array(element: "s", elements: ["x"]))]),
        .structure([.string("s"), .int32(1), .int64(2), .bytes([9])]),
        .array(element: "(su)", elements: [.structure(["a", .uint32(1)]), .structure(["b", .uint32(2)])]),
        .variant(.variant(.int32(5))),
    ]

    @Test("Echo(v) returns every kind of value unchanged", arguments: PeerKind.allCases)
    func echoEveryType(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        for value in Self.echoValues {
            let reply = try await peer.call("Echo", [.variant(value)])
            #expect(reply == [.variant(value)], "echo of \(value.signature)")
        }
    }

    @Test("the peer decodes each value with the signature we sent", arguments: PeerKind.allCases)
    func peerSeesOurSignatures(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        var options: [DBusDictionaryEntry] = []
        for (index, value) in Self.echoValues.enumerated() where value.signature.rawValue != "v" {
            options.append(DBusDictionaryEntry(key: .string("k\(index)"), value: .variant(value)))
        }
        let reply = try await peer.call("Signatures", [.dictionary(key: "s", value: "v", entries: options)])
        let seen = try reply[0].get([String: String].self)
        for entry in options {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else { continue }
            #expect(seen[key] == value.signature.rawValue, "\(key): sent \(value.signature)")
        }
    }

    @Test("typed methods and named errors", arguments: PeerKind.allCases)
    func methodsAndErrors(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        #expect(try await peer.call("Add", [.int64(2), .int64(40)]) == [.int64(42)])
        #expect(try await peer.call("Join", [.array(element: "s", elements: ["copy", "paste"])]) == ["copy|paste"])
        let structure = DBusValue.structure(["note", .int32(-7), .int64(.max), .bytes([1, 2, 3])])
        #expect(try await peer.call("EchoStruct", [structure]) == [structure])

        let error = await #expect(throws: DBusError.self) {
            _ = try await peer.call("Fail", ["org.ferry.Error.NotFound", "no item 3 on general"])
        }
        #expect(error?.name.rawValue == "org.ferry.Error.NotFound")
        #expect(error?.message == "no item 3 on general")

        let unknown = await #expect(throws: DBusError.self) { _ = try await peer.call("NoSuchMethod") }
        #expect(unknown?.name == .unknownMethod)
    }

    @Test("properties: Get, GetAll, Set with PropertiesChanged, read-only and unknown", arguments: PeerKind.allCases)
    func properties(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        #expect(try await peer.property("Get", ["Version"]) == [.variant(.uint32(1))])
        let changes = try await peer.client.subscribe(
            to: MatchRule(sender: peer.name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await peer.property("Set", ["Label", .variant("pasted")])
        var iterator = changes.makeAsyncIterator()
        let signal = try #require(try await iterator.next())
        #expect(try signal.body[0] == .string(RunningPeer.interface.rawValue))
        #expect(try signal.body[1] == .variantDictionary(["Label": "pasted"]))
        let all = try await peer.property("GetAll", [])
        #expect(all == [.variantDictionary(["Version": .uint32(1), "Label": "pasted"])]
            || all == [.variantDictionary(["Label": "pasted", "Version": .uint32(1)])])

        let readOnly = await #expect(throws: DBusError.self) { _ = try await peer.property("Set", ["Version", .variant(.uint32(2))]) }
        #expect(readOnly?.name == .propertyReadOnly)
        let unknown = await #expect(throws: DBusError.self) { _ = try await peer.property("Get", ["Colour"]) }
        #expect(unknown?.name == .unknownProperty)
    }

    @Test("a signal emitted by the peer reaches a matching subscription", arguments: PeerKind.allCases)
    func signals(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        let pings = try await peer.client.subscribe(to: MatchRule(sender: peer.name, interface: RunningPeer.interface, member: "Pinged"))
        let others = try await peer.client.subscribe(to: MatchRule(sender: peer.name, interface: RunningPeer.interface, member: "Other"))
        _ = try await peer.call("Emit", ["drag ended"])
        var iterator = pings.makeAsyncIterator()
        let signal = try #require(try await iterator.next())
        #expect(try signal.body == ["drag ended"])
        #expect(signal.sender?.isUnique == true)
        others.cancel()
        var otherIterator = others.makeAsyncIterator()
        #expect(try await otherIterator.next() == nil, "a non-matching subscription saw nothing")
    }

    static let pattern256MiBCRC: UInt32 = 2_679_254_303  // CRC-32 of 256 MiB of 0, 1, …, 255, 0, …
    static let size256MiB: UInt64 = 256 << 20

    @Test("a 256 MiB memfd passes to the peer, and one comes back", arguments: PeerKind.allCases)
    func bigFileDescriptorsBothWays(kind: PeerKind) async throws {
        let peer = try await RunningPeer(kind)
        defer { peer.process.stop() }
        let memfd = try FileDescriptor.memfd(name: "ferry-test", contents: [UInt8](), sealed: false)
        // One MiB of the pattern, plus 256 bytes so a comparison may start at any phase.
        let chunk = (0..<((1 << 20) + 256)).map { UInt8(truncatingIfNeeded: $0) }
        for _ in 0..<256 { try memfd.write(all: chunk[0..<(1 << 20)]) }
        let read = try await peer.call("ReadFD", [.unixFD(memfd)])
        #expect(read == [.uint64(Self.size256MiB), .uint32(Self.pattern256MiBCRC)])
        memfd.close()

        let received = try await peer.call("MakeFD", [.uint64(Self.size256MiB)])[0].get(FileDescriptor.self)
        var total: UInt64 = 0
        var mismatches = 0
        try received.withRawValue { fd in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                let offset = Int(total % 256)
                let same = buffer.withUnsafeBytes { got in
                    chunk.withUnsafeBytes { want in memcmp(got.baseAddress!, want.baseAddress! + offset, n) == 0 }
                }
                if !same { mismatches += 1 }
                total += UInt64(n)
            }
        }
        received.close()
        #expect(total == Self.size256MiB)
        #expect(mismatches == 0)
    }

    @Test("the Swift peer resolves its caller's pid through the bus")
    func callerCredentialsAcrossProcesses() async throws {
        let peer = try await RunningPeer(.swift, quiet: false)
        defer { peer.process.stop() }
        _ = try await peer.call("Add", [.int64(1), .int64(1)])
        #expect(await eventually { peer.process.standardOutput.contains("Add from \(peer.client.uniqueName) (pid \(getpid()))") },
                "\(peer.process.standardOutput)")
    }
}

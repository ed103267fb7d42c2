@testable import DBus
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Peer-to-peer connections this library serves itself (`WireTransport`): against independent
/// implementations on the other side (libdbus through python-dbus, GDBus), and against what a
/// broken or hostile peer sends.
@Suite("Peer-to-peer connections without libdbus")
struct WireTransportTests {
    static let peerScript = TestPaths.packageRoot.appendingPathComponent("Tests/DBusTests/Peers/p2p_peer.py").path
    static let path: ObjectPath = "/org/ferry/P2P"
    static let interface: InterfaceName = "org.ferry.P2P1"
    static let bytes = [UInt8]((0..<400).flatMap { _ in 0...255 })

    /// org.ferry.P2P1, as `p2p_peer.py` documents it.
    static let p2p = Interface(interface) {
        Method("Echo", in: ["value": "v"], out: ["value": "v"]) { call in call.arguments }
        Method("EchoBytes", in: ["data": "ay"], out: ["data": "ay"]) { call in call.arguments }
        Method("Write", in: ["fd": "h", "text": "s"]) { call in
            let (fd, text) = try call.arguments(FileDescriptor.self, String.self)
            try fd.write(all: Array(text.utf8))
            return []
        }
        Method("Open", in: ["text": "s"], out: ["fd": "h"]) { call in
            let (read, write) = try FileDescriptor.pipe()
            try write.write(all: Array(try call.argument(0, as: String.self).utf8))
            return [.unixFD(read)]
        }
        // Writes into the pipe whose write end came, closes every copy at once, and replies 1.5 s later.
        Method("WriteThenLinger", in: ["fd": "h", "text": "s"]) { call in
            let (fd, text) = try call.arguments(FileDescriptor.self, String.self)
            call.closeFileDescriptors()
            try fd.write(all: Array(text.utf8))
            fd.close()
            try await Task.sleep(for: .milliseconds(1_500))
            return []
        }
        Method("Sleep", in: ["ms": "u"]) { call in
            try await Task.sleep(for: .milliseconds(Int(try call.argument(0, as: UInt32.self))))
            return []
        }
    }

    /// A directory for sockets, removed by `body`'s end.
    static func withSocketDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wire-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory.path)
    }

    /// The connections a server accepted.
    final class Accepted: Sendable {
        private let connections = Mutex<[Connection]>([])
        var all: [Connection] { connections.withLock { $0 } }
        func add(_ connection: Connection) { connections.withLock { $0.append(connection) } }
    }

    /// A server exporting org.ferry.P2P1 on every connection it accepts (kept until it closes).
    static func server(in directory: String, authenticationTimeout: Duration = .seconds(30)) async throws
        -> (PeerServer, Accepted) {
        let accepted = Accepted()
        let server = try await PeerServer(listeningOn: "unix:path=\(directory)/socket", name: BusName(":0.0"),
                                          accepted: { connection in
                                              try? connection.export(p2p, at: path)
                                              accepted.add(connection)
                                          }, refused: { _ in }, authenticationTimeout: authenticationTimeout)
        return (server, accepted)
    }

    static func call(_ connection: Connection, _ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(destination: nil, path: path, interface: interface, member: member, body: body)
    }

    // MARK: Against other implementations

    @Test("libdbus and GDBus clients (GDBus in both byte orders) call a Swift server: values, 100 KiB, fds both ways",
          arguments: [["libdbus"], ["gdbus"], ["gdbus", "big-endian"]])
    func independentClients(_ client: [String]) async throws {
        try await Self.withSocketDirectory { directory in
            let (server, accepted) = try await Self.server(in: directory)
            let result = try await ChildProcess.run("/usr/bin/python3",
                                                    [Self.peerScript, "call", client[0], server.address] + client.dropFirst())
            #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout == "OK 4\n")
            #expect(!accepted.all.isEmpty)
            #expect(server.servesItself, "served without libdbus")
            await server.close()
        }
    }

    @Test("a Swift client calls libdbus and GDBus servers: values, 100 KiB, fds both ways",
          arguments: ["libdbus", "gdbus"])
    func independentServers(_ implementation: String) async throws {
        try await Self.withSocketDirectory { directory in
            let peer = try await ServiceProcess("/usr/bin/python3",
                                                [Self.peerScript, "serve", implementation, "unix:path=\(directory)/socket"],
                                                environment: ProcessInfo.processInfo.environment)
            let line = peer.standardOutput.split(separator: "\n").first { $0.hasPrefix("READY ") }
            let address = try #require(line.map { String($0.dropFirst(6)) })
            let client = try await Connection(peer: address, speakingFor: BusName(":1.1"))
            #expect(client.endpoint.wire != nil, "connected without libdbus")

            #expect(try await Self.call(client, "EchoBytes", [.bytes(Self.bytes)]) == [.bytes(Self.bytes)])
            let nested = DBusValue.dictionary(key: "s", value: "v", entries: [
                DBusDictionaryEntry(key: .string("name"), value: .variant(.string("grüße"))),
                DBusDictionaryEntry(key: .string("sizes"), value: .variant(.array(element: "t", elements: [.uint64(1), .uint64(3 << 40)]))),
            ])
            #expect(try await Self.call(client, "Echo", [.variant(nested)]) == [.variant(nested)])

            let (read, write) = try FileDescriptor.pipe()
            _ = try await Self.call(client, "Write", [.unixFD(write), .string("written by the server")])
            write.close()
            // Exactly that many bytes: GDBus keeps its copy of the write end (in the call's message)
            // open for a while after replying.
            var written = [UInt8](repeating: 0, count: 21)
            let count = try read.withRawValue { fd in written.withUnsafeMutableBytes { recvAll(fd, $0) } }
            #expect(String(decoding: written[..<count], as: UTF8.self) == "written by the server")
            let opened = try await Self.call(client, "Open", [.string("opened by the server")])
            guard case .unixFD(let fd)? = opened.first else {
                Issue.record("Open returned \(opened)")
                return
            }
            #expect(String(decoding: try fd.readAll(), as: UTF8.self) == "opened by the server")
            await client.close()
            peer.stop()
        }
    }

    // MARK: Swift on both sides

    @Test("8 MiB each way, calls in flight answered in any order, a timeout, a cancellation")
    func callsBetweenSwiftPeers() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let client = try await Connection(peer: server.address, speakingFor: BusName(":1.1"))
            var big = [UInt8](repeating: 0x5A, count: 8 << 20)
            big.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: bytes.count, by: 4093) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) }
            }
            #expect(try await Self.call(client, "EchoBytes", [.bytes(big)]) == [.bytes(big)])

            // A slow call does not hold up the quick ones sent after it.
            async let slow = Self.call(client, "Sleep", [.uint32(300)])
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await Self.call(client, "Echo", [.variant(.uint32(7))]) == [.variant(.uint32(7))])
            #expect(try await slow == [])

            let late = try Message.methodCall(destination: nil, path: Self.path, interface: Self.interface,
                                              member: "Sleep", body: [.uint32(400)])
            await #expect { _ = try await client.call(late, timeout: .milliseconds(100)) } throws: { error in
                (error as? DBusError)?.name == .noReply
            }
            let cancelled = Task { try await Self.call(client, "Sleep", [.uint32(2_000)]) }
            try await Task.sleep(for: .milliseconds(50))
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
            // The replies that come after the caller gave up are dropped; the connection goes on.
            try await Task.sleep(for: .milliseconds(400))
            #expect(try await Self.call(client, "Echo", [.variant(.string("still"))]) == [.variant(.string("still"))])
            await client.close()
            await server.close()
        }
    }

    @Test("a handler that closes the call's fds is the last holder: the reader sees end of file before the reply")
    func closingTheCallsFileDescriptors() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let client = try await Connection(peer: server.address, speakingFor: BusName(":1.1"))
            let (read, write) = try FileDescriptor.pipe()
            let call = Task { try await Self.call(client, "WriteThenLinger", [.unixFD(write), .string("early")]) }
            // The message took its own copy when it was built; ours goes once it is sent.
            try await Task.sleep(for: .milliseconds(100))
            write.close()
            let bytes = try Self.readToEnd(read, within: .seconds(1))
            #expect(bytes.map { String(decoding: $0, as: UTF8.self) } == "early", "no end of file until the reply")
            #expect(try await call.value == [])
            await client.close()
            await server.close()
        }
    }

    /// Everything `fd` gives until end of file, or nil when that takes longer than `limit`.
    static func readToEnd(_ fd: FileDescriptor, within limit: Duration) throws -> [UInt8]? {
        let deadline = ContinuousClock.now + limit
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            guard try readable(fd, before: deadline) else { continue }
            let n = try fd.withRawValue { raw in buffer.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) } }
            if n <= 0 { return bytes }
            bytes += buffer[0..<n]
        }
        return nil
    }

    /// Whether `fd` has something to read (bytes, or end of file) before `deadline`.
    static func readable(_ fd: FileDescriptor, before deadline: ContinuousClock.Instant) throws -> Bool {
        try fd.withRawValue { raw in
            var entry = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, Connection.milliseconds(deadline - .now)) > 0
        }
    }

    @Test("the server closing fails the client's calls in flight with Disconnected")
    func serverGoesAway() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, accepted) = try await Self.server(in: directory)
            let client = try await Connection(peer: server.address, speakingFor: BusName(":1.1"))
            _ = try await Self.call(client, "Echo", [.variant(.byte(1))])
            let inFlight = Task { try await Self.call(client, "Sleep", [.uint32(5_000)]) }
            try await Task.sleep(for: .milliseconds(50))
            for connection in accepted.all { await connection.close(gracePeriod: .zero) }
            await #expect { _ = try await inFlight.value } throws: { error in
                (error as? DBusError)?.name == .disconnected
            }
            #expect(await eventually { !client.isConnected })
            await server.close()
        }
    }

    // MARK: What a broken peer sends

    /// A raw socket connected to `server`, authenticated by hand.
    static func rawClient(_ server: PeerServer) throws -> FileDescriptor {
        let address = try #require(try PeerAddress(server.address))
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let socketFD = FileDescriptor(taking: fd)
        try address.withSocketAddress { pointer, length in
            guard connect(fd, pointer, length) == 0 else { throw DBusError.system("connect", errno: errno) }
        }
        return socketFD
    }

    /// A uid as EXTERNAL sends it: its decimal digits, each as two hex digits.
    static func hex(_ uid: UInt32) -> String { String(uid).utf8.map { String($0, radix: 16) }.joined() }

    /// ``rawClient(_:)`` that has authenticated as this user (BEGIN still to send).
    static func authenticatedRawClient(_ server: PeerServer) throws -> FileDescriptor {
        let socket = try rawClient(server)
        #expect(try exchange(socket, "\0AUTH EXTERNAL \(hex(geteuid()))\r\n").hasPrefix("OK "))
        return socket
    }

    static func exchange(_ fd: FileDescriptor, _ text: String) throws -> String {
        try fd.write(all: Array(text.utf8))
        var reply = [UInt8](repeating: 0, count: 512)
        let n = try fd.withRawValue { raw in reply.withUnsafeMutableBytes { recv(raw, $0.baseAddress, $0.count, 0) } }
        return n > 0 ? String(decoding: reply[..<n], as: UTF8.self) : ""
    }

    @Test("the handshake: EXTERNAL as this uid only, with or without an initial response; BEGIN too early closes")
    func handshake() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let own = Self.hex(geteuid()), other = Self.hex(geteuid() + 1)

            let first = try Self.rawClient(server)
            #expect(try Self.exchange(first, "\0AUTH\r\n") == "REJECTED EXTERNAL\r\n")
            #expect(try Self.exchange(first, "AUTH EXTERNAL \(other)\r\n") == "REJECTED EXTERNAL\r\n")
            #expect(try Self.exchange(first, "AUTH ANONYMOUS\r\n") == "REJECTED EXTERNAL\r\n")
            #expect(try Self.exchange(first, "AUTH EXTERNAL \(own)\r\n").hasPrefix("OK "))
            #expect(try Self.exchange(first, "NEGOTIATE_UNIX_FD\r\n") == "AGREE_UNIX_FD\r\n")

            let second = try Self.rawClient(server)
            #expect(try Self.exchange(second, "\0AUTH EXTERNAL\r\n") == "DATA\r\n")
            #expect(try Self.exchange(second, "DATA\r\n").hasPrefix("OK "), "no identity: the socket's")

            let early = try Self.rawClient(server)
            #expect(try Self.exchange(early, "\0BEGIN\r\n") == "", "closed")
            await server.close()
        }
    }

    @Test("a client that has not authenticated in time is closed; one that has stays")
    func authenticationTimeout() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory, authenticationTimeout: .milliseconds(300))
            let silent = try Self.rawClient(server)
            let halfway = try Self.rawClient(server)
            #expect(try Self.exchange(halfway, "\0AUTH EXTERNAL\r\n") == "DATA\r\n")
            let client = try await Connection(peer: server.address, speakingFor: BusName(":1.1"))
            for socket in [silent, halfway] {
                // End of file: the server closed it (an answer would be bytes; a wait, a timeout).
                try #require(try Self.readable(socket, before: .now + .seconds(5)), "still open after 5 s")
                #expect(try Self.exchange(socket, "") == "", "closed by the server")
            }
            #expect(try await Self.call(client, "Echo", [.variant(.string("later"))]) == [.variant(.string("later"))])
            await client.close()
            await server.close()
        }
    }

    @Test("out of fds, the server rests its listener instead of polling it in a loop, and accepts once fds are back")
    func listenerOutOfFileDescriptors() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let address = try #require(try PeerAddress(server.address))
            let socket = FileDescriptor(taking: Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0))
            let raw = try #require(socket.rawValue)

            // Every fd taken (under a lower limit, so that taking them is quick), then a client
            // waits in the backlog: the server cannot accept it.
            var saved = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved)
            var lowered = saved
            lowered.rlim_cur = min(saved.rlim_cur, 1024)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered)
            var taken: [Int32] = []
            defer {
                taken.forEach { _ = close($0) }
                setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved)
            }
            while case let fd = dup(raw), fd >= 0 { taken.append(fd) }
            try address.withSocketAddress { pointer, length in
                guard connect(raw, pointer, length) == 0 else { throw DBusError.system("connect", errno: errno) }
            }
            let before = Self.processCPU()
            usleep(500_000)  // not Task.sleep: libdispatch traps when it cannot get an fd
            let spent = Self.processCPU() - before
            #expect(spent < .milliseconds(150), "the server's thread kept polling: \(spent) of CPU in 500 ms")

            taken.forEach { _ = close($0) }
            taken = []
            try socket.write(all: Array("\0AUTH EXTERNAL \(Self.hex(geteuid()))\r\n".utf8))
            try #require(try Self.readable(socket, before: .now + .seconds(5)), "never accepted")
            #expect(try Self.exchange(socket, "").hasPrefix("OK "))
            await server.close()
        }
    }

    /// The CPU time this process has used (user and system).
    static func processCPU() -> Duration {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let total = { (time: timeval) in Duration.seconds(time.tv_sec) + .microseconds(time.tv_usec) }
        return total(usage.ru_utime) + total(usage.ru_stime)
    }

    @Test("a client that sends and does not read is no longer read past the backlog limit; once it reads, every reply comes")
    func backlogLimit() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let client = try Self.authenticatedRawClient(server)
            try client.write(all: Array("BEGIN\r\n".utf8))
            let raw = try #require(client.rawValue)
            _ = fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK)

            // Calls of 1 MiB each, whose replies are as large: twice the limit's worth.
            let calls = 2 * WireTransport.backlogLimit >> 20
            let payload = [UInt8](repeating: 0xA5, count: 1 << 20)
            var pending: [UInt8] = [], sent = 0, serials: [UInt32] = [], written = 0
            /// Writes what the socket takes now; false once it takes nothing more.
            func writeSome() throws -> Bool {
                if sent == pending.count, serials.count < calls {
                    let message = try Message.methodCall(destination: nil, path: Self.path, interface: Self.interface,
                                                         member: "EchoBytes", body: [.bytes(payload)])
                    serials.append(message.serial)
                    pending = try message.wireBytes()
                    sent = 0
                }
                guard sent < pending.count else { return false }
                let n = pending.withUnsafeBytes { send(raw, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return false }
                sent += n
                written += n
                return true
            }

            // Without reading: the server reads until its replies reach the limit, then stops.
            var stalledSince = ContinuousClock.now
            while ContinuousClock.now - stalledSince < .seconds(1) {
                if try writeSome() { stalledSince = .now } else { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(written < calls << 20, "the server kept reading: \(written) bytes taken")
            #expect(written > WireTransport.backlogLimit / 2, "it stopped early: \(written) bytes taken")

            // Reading now: every call is answered, in full (in any order: each runs as a task).
            var input = [UInt8](repeating: 0, count: 4 << 20), start = 0, end = 0, replies: [UInt32] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while replies.count < calls, ContinuousClock.now < deadline {
                _ = try writeSome()
                if end == input.count {
                    input.withUnsafeMutableBytes { _ = memmove($0.baseAddress!, $0.baseAddress! + start, end - start) }
                    (start, end) = (0, end - start)
                }
                let n = input.withUnsafeMutableBytes { recv(raw, $0.baseAddress! + end, $0.count - end, 0) }
                if n > 0 { end += n } else { try await Task.sleep(for: .milliseconds(1)) }
                while let length = try input.withUnsafeBytes({
                    try WireMessage.length(ofMessageStartingWith: UnsafeRawBufferPointer(rebasing: $0[start..<end]))
                }), length <= end - start {
                    let reply = try WireMessage(parsing: Array(input[start..<(start + length)]), fds: [])
                    start += length
                    guard case .bytes(let echoed)? = try reply.body().first else {
                        Issue.record("a reply that is not the bytes")
                        continue
                    }
                    #expect(echoed.count == payload.count && memcmp(echoed, payload, payload.count) == 0)
                    replies.append(reply.fields.header.replySerial ?? 0)
                }
            }
            #expect(replies.sorted() == serials.sorted())
            await server.close()
        }
    }

    @Test("a malformed message ends its sender's connection, and only that one")
    func malformedMessage() async throws {
        try await Self.withSocketDirectory { directory in
            let (server, _) = try await Self.server(in: directory)
            let good = try await Connection(peer: server.address, speakingFor: BusName(":1.1"))
            let bad = try Self.authenticatedRawClient(server)
            var message = try Message.methodCall(destination: nil, path: Self.path, interface: Self.interface,
                                                 member: "Echo", body: [.variant(.string("x"))]).wireBytes()
            message[3] = 2 // protocol version 2
            try bad.write(all: Array("BEGIN\r\n".utf8) + message)
            var byte: UInt8 = 0
            let n = try bad.withRawValue { raw in recv(raw, &byte, 1, 0) }
            #expect(n == 0, "the server closed it")
            #expect(try await Self.call(good, "Echo", [.variant(.byte(2))]) == [.variant(.byte(2))])
            await good.close()
            await server.close()
        }
    }

    // MARK: Parsing

    @Test("a message parses back to what was built, in either byte order and from libdbus's bytes",
          arguments: [Message.Marshaller.swift, .swiftBigEndian, .libdbus])
    func parsesWhatWasBuilt(_ marshaller: Message.Marshaller) throws {
        let body: [DBusValue] = [.string("grüße"), .objectPath("/a/b"), .signature("a{sv}"), .boolean(true),
                                 .double(-0.5), .bytes([1, 2, 3]),
                                 .dictionary(key: "s", value: "v", entries: [DBusDictionaryEntry(key: .string("k"), value: .variant(.int64(-9)))]),
                                 .structure([.uint16(7), .array(element: "s", elements: [.string("x")])])]
        let header = WireWriter.Header(kind: .methodCall, path: "/org/ferry/P2P", interface: "org.ferry.P2P1",
                                       member: "Echo", destination: ":1.9")
        let bytes = try Message.build(header, body: body, marshaller: marshaller).wireBytes()
        let parsed = try WireMessage(parsing: bytes, fds: [])
        #expect(parsed.fields.header.path == "/org/ferry/P2P")
        #expect(parsed.fields.header.interface == "org.ferry.P2P1")
        #expect(parsed.fields.header.member == "Echo")
        #expect(parsed.fields.header.destination == ":1.9")
        #expect(parsed.fields.signature == "sogbdaya{sv}(qas)")
        #expect(try parsed.body() == body)
        // The typed reader reads the same bytes straight into Swift values.
        let typed = try Message.build(header, body: [.string("grüße"), .uint32(7), .bytes([9, 8])], marshaller: marshaller)
        let (text, number, data) = try Message(WireMessage(parsing: typed.wireBytes(), fds: []))
            .arguments(as: String.self, UInt32.self, [UInt8].self)
        #expect(text == "grüße" && number == 7 && data == [9, 8])
    }

    @Test("a connection's header strings are reused only for the same bytes of the same field: anything else is checked")
    func headerStringsAreKeptPerField() throws {
        var strings = WireMessage.HeaderStrings()
        var fds: [FileDescriptor] = []
        // No interface: the member is the field read right after the path.
        let valid = try Message.methodCall(destination: nil, path: "/ab", interface: nil, member: "Abc", body: []).wireBytes()
        let parsed = try #require(try WireMessage(received: valid, takingFDsFrom: &fds, strings: &strings))
        #expect(parsed.fields.header.path == "/ab" && parsed.fields.header.member == "Abc")
        // Again: the same strings, from the kept ones.
        let again = try #require(try WireMessage(received: valid, takingFDsFrom: &fds, strings: &strings))
        #expect(again.fields.header.path == "/ab" && again.fields.header.member == "Abc")
        let member = try #require(valid.indices.first { Array(valid[$0..<min($0 + 4, valid.count)]) == Array("Abc\0".utf8) })
        // The path's bytes, kept as a valid path, are no valid member; nor is a changed member.
        for replacement in ["/ab", "A-c"] {
            var bytes = valid
            bytes.replaceSubrange(member..<(member + 3), with: Array(replacement.utf8))
            #expect(throws: DBusError.self, "member \(replacement)") {
                _ = try WireMessage(received: bytes, takingFDsFrom: &fds, strings: &strings)
            }
        }
    }

    /// Bytes of a valid call, patched by `change`, must be refused with a named error.
    static func refused(_ why: Comment, _ change: (inout [UInt8]) -> Void, body: [DBusValue] = [.string("x")]) throws {
        var bytes = try Message.methodCall(destination: nil, path: "/p", interface: "a.b", member: "M", body: body).wireBytes()
        change(&bytes)
        #expect(throws: DBusError.self, why) {
            let message = try WireMessage(parsing: bytes, fds: [])
            _ = try message.body()
        }
    }

    @Test("malformed headers and bodies are refused with a named error")
    func malformed() throws {
        try Self.refused("byte order") { $0[0] = UInt8(ascii: "x") }
        try Self.refused("version") { $0[3] = 2 }
        try Self.refused("serial 0") { $0.replaceSubrange(8..<12, with: [0, 0, 0, 0]) }
        try Self.refused("body length") { $0[4] &+= 1 }
        try Self.refused("truncated") { $0.removeLast() }
        try Self.refused("message type 0 with the fields of a call") { $0[1] = 0 }
        try Self.refused("the path field's type") { bytes in
            // The first field is the path: code 1, signature "o" at offset 17..19.
            bytes[18] = UInt8(ascii: "s")
        }
        try Self.refused("a string that is not UTF-8") { bytes in
            bytes[bytes.count - 2] = 0xFF
        }
        try Self.refused("a NUL inside a string") { bytes in
            bytes[bytes.count - 2] = 0
        }
        try Self.refused("a boolean of 2", { bytes in bytes[bytes.count - 4] = 2 }, body: [.boolean(true)])
        try Self.refused("declares a unix fd that did not come", { _ in }, body: [.unixFD(try FileDescriptor.pipe().read)])
    }

    @Test("variants nested past 64 levels are refused with a named error, not a stack overflow")
    func nestedVariants() throws {
        // 63 inside the argument's own variant: 64 levels, as deep as libdbus takes.
        let call = try Message.methodCall(destination: nil, path: "/p", interface: "a.b", member: "M", body: [.variant(.int32(7))])
        let deepest = try Message(WireMessage(parsing: nestingVariants(in: call.wireBytes(), levels: 63), fds: []))
        var value = try #require(try deepest.body.first)
        for _ in 0..<64 {
            guard case .variant(let inner) = value else { Issue.record("not a variant"); return }
            value = inner
        }
        #expect(value == .int32(7))
        // libdbus draws the line at the same place.
        _ = try Message(wireBytes: nestingVariants(in: call.wireBytes(), levels: 63))
        #expect(throws: DBusError.self) { _ = try Message(wireBytes: nestingVariants(in: call.wireBytes(), levels: 64)) }
        for levels in [64, 200_000] {
            let message = try Message(WireMessage(parsing: nestingVariants(in: call.wireBytes(), levels: levels), fds: []))
            let error = #expect(throws: DBusError.self) { _ = try message.body }
            #expect(error?.name == .invalidArgs && error?.message.contains("nested deeper than 64") == true)
            #expect(throws: DBusError.self) { _ = try message.arguments(as: DBusValue.self) }
        }
    }

    @Test("random corruption of a message is refused or parsed, never a crash")
    func corruption() throws {
        let bytes = try Message.methodCall(destination: ":1.2", path: "/org/ferry/P2P", interface: "org.ferry.P2P1",
                                           member: "Echo", body: [.variant(.dictionary(key: "s", value: "v", entries: [
                                               DBusDictionaryEntry(key: .string("k"), value: .variant(.array(element: "(ys)", elements: [.structure([.byte(1), .string("v")])])))
                                           ]))]).wireBytes()
        var random = SplitMix64(seed: 20)
        var refused = 0
        for _ in 0..<2_000 {
            let corrupt = random.corrupting(bytes)
            do {
                _ = try WireMessage(parsing: corrupt, fds: []).body()
            } catch is DBusError {
                refused += 1
            }
        }
        #expect(refused > 1_000)
    }
}

/// Reads until `buffer` is full or the stream ends; returns how many bytes came.
private func recvAll(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    var count = 0
    while count < buffer.count {
        let n = read(fd, buffer.baseAddress! + count, buffer.count - count)
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { break }
        count += n
    }
    return count
}

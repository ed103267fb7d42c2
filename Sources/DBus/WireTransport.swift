import CDBus
import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who serves peer-to-peer connections: this library's ``WireTransport`` for the unix-socket
/// addresses it knows, unless `FERRY_PEER_TRANSPORT=libdbus` asks for libdbus (to compare the
/// two, or to rule this one out); libdbus for every other address.
enum PeerTransport {
    static let servesItself: Bool = getenv("FERRY_PEER_TRANSPORT").map { String(cString: $0) } != "libdbus"
}

/// The socket of a connection this library serves itself (peer to peer, or a client's to the
/// bus), with nothing between the socket and its messages: the authentication (EXTERNAL, unix
/// fds negotiated), then ``WireMessage``s read and written on the connection's thread.
///
/// libdbus spends, per message, a validation when a message it did not build is handed to it,
/// a second one as it receives, a copy out for reading, and locks around each step; measured on
/// a peer-to-peer echo that was about half of a call's time on one CPU (docs/dbus.md). Here a
/// message is written once by ``WireWriter`` and sent as it is, and one received is checked once,
/// its header as it is parsed and its body as it is read.
///
/// A client authenticates as it connects, before its connection's loop serves it; the server's
/// side runs the handshake as bytes arrive (``ServerHandshake``), so a slow or silent client
/// holds no thread.
final class WireTransport: @unchecked Sendable {
    // Thread safety: made on one thread and handed to its connection's owner thread, then used
    // only there.
    let fd: Int32
    private var handshake: ServerHandshake?
    /// Whether the peer agreed to unix fds (NEGOTIATE_UNIX_FD).
    private(set) var passesFDs: Bool

    /// Bytes read and not yet taken: `input[inputStart..<inputEnd]`.
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd = 0
    /// fds received and not taken by a message yet, in the order they came.
    private var inputFDs: [FileDescriptor] = []
    /// The header strings received so far (``WireMessage/HeaderStrings``).
    private var headerStrings = WireMessage.HeaderStrings()
    /// What waits to be written, the first maybe in part.
    private var output: [Outgoing] = []
    private var outputHead = 0
    /// The bytes of `output` not written yet.
    private(set) var queuedBytes = 0
    /// Whether this is the server's side of a connection: its peer's messages are not read while
    /// more than ``backlogLimit`` waits to be written to it.
    private let limitsBacklog: Bool

    /// How much may wait to be written to a server's client before the server stops reading what
    /// the client sends: a client that sends calls and never reads their replies is no longer
    /// served, instead of filling the server's memory. It is read again once it has read.
    static let backlogLimit = 64 << 20

    private struct Outgoing {
        var bytes: [UInt8]
        /// Held until sent: the kernel passes its own references.
        var fds: [FileDescriptor]
        var sent = 0
    }

    /// The buffer's size while messages are small (it grows for a larger one), and the least room
    /// a read is given.
    private static let readChunk = 16 * 1024

    private init(fd: Int32, handshake: ServerHandshake?, passesFDs: Bool, limitsBacklog: Bool) {
        self.fd = fd
        self.handshake = handshake
        self.passesFDs = passesFDs
        self.limitsBacklog = limitsBacklog
        input = [UInt8](repeating: 0, count: Self.readChunk)
    }

    deinit { close(fd) }

    /// Whether messages flow (the server's side: the client has sent BEGIN).
    var isAuthenticated: Bool { handshake == nil }

    /// Whether something waits for the socket to take it.
    var wantsToWrite: Bool { outputHead < output.count }

    /// Whether the peer's messages wait unread (``backlogLimit``). Only the server's side pauses:
    /// were both to, two peers each sending more than they read would wait on each other.
    var pausesReading: Bool { limitsBacklog && queuedBytes >= Self.backlogLimit }

    // MARK: Connecting (client)

    /// Connects to `address` and authenticates, blocking the calling thread (the new
    /// connection's own, before it serves anything) for at most `timeout` milliseconds.
    /// - Throws: `DBusError` `.noServer` when nobody listens there, `.authFailed` when the server
    ///   refuses this user, `.timeout`, or a system error.
    static func connect(to address: PeerAddress, timeoutMs: Int32 = 25_000) throws -> WireTransport {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DBusError.system("socket", errno: errno) }
        do {
            try address.withSocketAddress { pointer, length throws in
                guard Glibc.connect(fd, pointer, length) == 0 else {
                    let code = errno
                    if code == ENOENT || code == ECONNREFUSED {
                        throw DBusError(.noServer, "nobody listens at \(address.description) (\(String(cString: strerror(code))))")
                    }
                    throw DBusError.system("connect", errno: code)
                }
            }
            var handshake = ClientHandshake(fd: fd, timeoutMs: timeoutMs, expectedGUID: address.guid)
            let passesFDs = try handshake.run()
            guard fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
                throw DBusError.system("fcntl", errno: errno)
            }
            return WireTransport(fd: fd, handshake: nil, passesFDs: passesFDs, limitsBacklog: false)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The server's side of a connection just accepted (non-blocking): it authenticates as the
    /// client's bytes arrive.
    /// - Parameter uid: the peer's uid from the kernel, the only one EXTERNAL accepts.
    static func accepted(_ fd: Int32, uid: UInt32, guid: String) -> WireTransport {
        WireTransport(fd: fd, handshake: ServerHandshake(uid: uid, guid: guid), passesFDs: false, limitsBacklog: true)
    }

    // MARK: Reading

    /// Reads what the socket holds and returns the messages now whole (none while the server's
    /// handshake runs; its replies are queued to write), and the failure that ended the reading,
    /// if one did: `.disconnected` at the end of the stream or on a socket error, `.invalidArgs`
    /// for a malformed message or handshake, `.authFailed` for a client that fails to
    /// authenticate. After a failure the connection is unusable; the messages before it stand.
    func readable() -> (messages: [WireMessage], failure: DBusError?) {
        var messages: [WireMessage] = []
        var readThisRound = 0
        do {
            while readThisRound < 1 << 20 {
                let (n, filled) = try receive()
                if n == 0 { break }
                readThisRound += n
                if handshake != nil { try continueHandshake() }
                if handshake == nil { try takeMessages(into: &messages) }
                // Less than there was room for: the socket is most likely empty, and asking again
                // would cost a recvmsg that fails. Whatever is left, poll reports at once.
                if !filled { break }
            }
        } catch {
            return (messages, DBusError(converting: error))
        }
        return (messages, nil)
    }

    /// One `recvmsg` into the buffer: how many bytes (0 when nothing is there now), and whether
    /// they filled the room there was.
    private func receive() throws -> (count: Int, filled: Bool) {
        if inputEnd == input.count { makeRoom(for: Self.readChunk) }
        let room = input.count - inputEnd
        var received: Int32 = 0, truncated: Int32 = 0
        let n = withUnsafeTemporaryAllocation(of: Int32.self, capacity: Int(CDBUS_MAXIMUM_PASSED_FDS)) { fds in
            let n = input.withUnsafeMutableBytes { buffer in
                cdbus_receive_with_fds(fd, buffer.baseAddress! + inputEnd, UInt(buffer.count - inputEnd), fds.baseAddress!,
                                       &received, &truncated)
            }
            for index in 0..<Int(received) { inputFDs.append(FileDescriptor(taking: fds[index])) }
            return n
        }
        if n < 0 {
            if let failure = Self.failure(errno) { throw failure }
            return (0, false)
        }
        guard n > 0 else { throw DBusError(.disconnected, "the peer closed the connection") }
        guard truncated == 0 else { throw WireMessage.malformed("more unix fds than a message may carry") }
        inputEnd += n
        return (n, n == room)
    }

    /// The error that ends the connection after a failed `recvmsg` or `sendmsg`; nil for an errno
    /// that means "not now" (the socket would block, or a signal came).
    private static func failure(_ code: Int32) -> DBusError? {
        guard code != EAGAIN, code != EWOULDBLOCK, code != EINTR else { return nil }
        return DBusError(.disconnected, "the peer's socket failed: \(String(cString: strerror(code)))")
    }

    /// Moves what is unread to the front, and grows the buffer until `count` more bytes fit.
    private func makeRoom(for count: Int) {
        if inputStart > 0 {
            input.withUnsafeMutableBytes { buffer in
                let base = buffer.baseAddress!
                memmove(base, base + inputStart, inputEnd - inputStart)
            }
            inputEnd -= inputStart
            inputStart = 0
        }
        if input.count - inputEnd < count {
            // An array, not `repeatElement`: appended as one block, not byte by byte (unoptimized
            // builds, the tests', took seconds to grow for a few large messages).
            input.append(contentsOf: [UInt8](repeating: 0, count: count - (input.count - inputEnd)))
        }
    }

    private func continueHandshake() throws {
        guard var state = handshake else { return }
        let (consumed, reply, done) = try input.withUnsafeBytes { buffer throws in
            try state.consume(UnsafeRawBufferPointer(rebasing: buffer[inputStart..<inputEnd]))
        }
        inputStart += consumed
        if !reply.isEmpty { try queue(Array(reply.utf8), fds: []) }
        if done {
            passesFDs = state.agreedToFDs
            handshake = nil
        } else {
            handshake = state
        }
    }

    /// Takes every whole message from the buffer, with the fds each declares.
    private func takeMessages(into messages: inout [WireMessage]) throws {
        while true {
            let available = inputEnd - inputStart
            let total = try input.withUnsafeBytes { buffer throws in
                try WireMessage.length(ofMessageStartingWith: UnsafeRawBufferPointer(rebasing: buffer[inputStart..<inputEnd]))
            }
            guard let total else { break }
            guard total <= available else {
                // Room for the rest of it, so that the next reads complete it.
                makeRoom(for: total - available)
                break
            }
            let bytes = Array(input[inputStart..<(inputStart + total)])
            inputStart += total
            if inputStart == inputEnd {
                inputStart = 0
                inputEnd = 0
                // A buffer a large message grew is not kept for the small ones after it.
                if input.count > 4 * Self.readChunk { input = [UInt8](repeating: 0, count: Self.readChunk) }
            }
            if let message = try WireMessage(received: bytes, takingFDsFrom: &inputFDs, strings: &headerStrings) {
                messages.append(message)
            }
        }
    }

    // MARK: Writing

    /// Sends `message`, or queues what the socket cannot take now.
    /// - Parameter markingNoReply: set NO_REPLY_EXPECTED on a method call first.
    /// - Throws: `DBusError` `.notSupported` for unix fds the peer did not agree to, `.disconnected`
    ///   when the socket failed or the peer has not authenticated yet.
    func send(_ message: WireMessage, markingNoReply: Bool = false) throws {
        guard handshake == nil else { throw DBusError(.disconnected, "the peer has not authenticated yet") }
        guard message.fds.isEmpty || passesFDs else {
            throw DBusError(.notSupported, "this connection cannot pass unix fds")
        }
        var bytes = message.bytes
        if markingNoReply, message.fields.header.kind == .methodCall {
            bytes[2] |= WireWriter.noReplyExpected
        }
        try queue(bytes, fds: message.fds)
    }

    private func queue(_ bytes: [UInt8], fds: [FileDescriptor]) throws {
        output.append(Outgoing(bytes: bytes, fds: fds))
        queuedBytes += bytes.count
        if output.count - outputHead == 1 { try writable() }
    }

    /// Writes what is queued until the socket takes no more.
    /// - Throws: `DBusError` `.disconnected` when the socket failed.
    func writable() throws {
        while outputHead < output.count {
            let n = try write(&output[outputHead])
            if n == 0 { return }
            queuedBytes -= n
            if output[outputHead].sent == output[outputHead].bytes.count {
                output[outputHead] = Outgoing(bytes: [], fds: [])
                outputHead += 1
            }
        }
        output.removeAll(keepingCapacity: true)
        outputHead = 0
    }

    /// One `sendmsg` of what is left of `item`, its fds with its first byte; 0 when the socket
    /// is full.
    private func write(_ item: inout Outgoing) throws -> Int {
        var raw: [Int32] = []
        if item.sent == 0, !item.fds.isEmpty {
            for descriptor in item.fds {
                guard let value = descriptor.rawValue else {
                    throw DBusError(.invalidArgs, "a unix fd of the message was closed before it was sent")
                }
                raw.append(value)
            }
        }
        let n = item.bytes.withUnsafeBytes { buffer in
            cdbus_send_with_fds(fd, buffer.baseAddress! + item.sent, UInt(buffer.count - item.sent), raw, Int32(raw.count))
        }
        if n < 0 {
            if let failure = Self.failure(errno) { throw failure }
            return 0
        }
        item.sent += n
        if item.sent == item.bytes.count { item.fds = [] }
        return n
    }

    /// Writes what is queued, waiting up to `timeoutMs` for the socket (a local close sends what
    /// its connection queued first, as libdbus's flush does).
    func flush(timeoutMs: Int32) {
        var pollEntry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while wantsToWrite {
            guard (try? writable()) != nil else { return }
            guard wantsToWrite, poll(&pollEntry, 1, timeoutMs) > 0 else { return }
        }
    }
}

/// A listening socket whose connections ``WireTransport`` serves: bound at a path (removed when
/// it closes) or an abstract name, non-blocking, close-on-exec.
final class WireListener {
    // Thread safety: used only on its server's owner thread.
    let fd: Int32
    /// The address clients connect to, with this server's guid.
    let address: String
    private let path: String?

    /// Listens at `address` (which must name no guid: the server makes its own).
    /// - Throws: `DBusError` `.addressInUse` when something is at the path, or a system error.
    init(_ address: PeerAddress) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw DBusError.system("socket", errno: errno) }
        do {
            try address.withSocketAddress { pointer, length in
                guard bind(fd, pointer, length) == 0 else {
                    let code = errno
                    if code == EADDRINUSE {
                        throw DBusError(.addressInUse, "something is already at \(address.description)")
                    }
                    throw DBusError.system("bind", errno: code)
                }
            }
            guard listen(fd, 128) == 0 else { throw DBusError.system("listen", errno: errno) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
        let guid = Self.newGUID()
        switch address.location {
        case .path(let path):
            self.path = path
            self.address = "unix:path=\(PeerAddress.escape(path)),guid=\(guid)"
        case .abstract(let name):
            path = nil
            self.address = "unix:abstract=\(PeerAddress.escape(name)),guid=\(guid)"
        }
        self.guid = guid
    }

    /// The server's guid, which its address names and its handshake gives.
    let guid: String

    deinit { close() }

    /// Accepts every connection waiting, each with its peer's credentials from the kernel (taken
    /// before anything is read from it), and says whether it stopped for want of fds or memory
    /// (the client then waits in the backlog, and the socket stays readable).
    func acceptAll() -> (sockets: [(Int32, PeerProcess?)], exhausted: Bool) {
        var sockets: [(Int32, PeerProcess?)] = []
        while true {
            let socket = cdbus_accept_nonblocking(fd)
            if socket < 0 {
                let code = errno
                if code == EINTR || code == ECONNABORTED { continue }
                return (sockets, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code))
            }
            sockets.append((socket, PeerProcess(socket: socket)))
        }
    }

    private var closed = false

    /// Stops listening and removes the socket file.
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
        if let path { unlink(path) }
    }

    /// 32 hex digits of randomness.
    private static func newGUID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

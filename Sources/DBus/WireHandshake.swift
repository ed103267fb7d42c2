#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A peer-to-peer address ``WireTransport`` connects to or listens on: `unix:path=…` or
/// `unix:abstract=…`, with the server's `guid` when the address names one.
struct PeerAddress: CustomStringConvertible {
    enum Location: Equatable {
        case path(String)
        case abstract(String)
    }

    var location: Location
    var guid: String?
    /// The address as given.
    let description: String

    /// The first entry of `address` (entries are separated by `;`) that is a unix socket by
    /// path or abstract name; nil when there is none (another transport, for libdbus).
    /// - Throws: `DBusError` `.badAddress` for a unix entry that cannot be used (an escape that
    ///   is not one, a path too long for a socket address).
    init?(_ address: String) throws {
        description = address
        for entry in address.split(separator: ";") {
            guard entry.hasPrefix("unix:") else { continue }
            var location: Location?
            var guid: String?
            for pair in entry.dropFirst(5).split(separator: ",") {
                guard let equals = pair.firstIndex(of: "=") else {
                    throw DBusError(.badAddress, "\"\(pair)\" in \(address) is not key=value")
                }
                let value = try Self.unescape(pair[pair.index(after: equals)...], in: address)
                switch pair[..<equals] {
                case "path": location = .path(value)
                case "abstract": location = .abstract(value)
                case "guid": guid = value
                default: break
                }
            }
            guard let location else { continue }
            let length = switch location {
            case .path(let path): path.utf8.count
            case .abstract(let name): name.utf8.count + 1
            }
            guard length < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
                throw DBusError(.badAddress, "the socket address in \(address) is too long")
            }
            self.location = location
            self.guid = guid
            return
        }
        return nil
    }

    /// A value of an address: bytes as they are, or `%` and two hex digits.
    private static func unescape(_ text: Substring, in address: String) throws -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                throw DBusError(.badAddress, "a % in \(address) is not followed by two hex digits")
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` as an address value: bytes outside `[-0-9A-Za-z_/.\\*]` as `%` and two hex digits.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"),
                 UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                escaped += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return escaped
    }

    /// The address's `sockaddr_un` and its length, for `connect` or `bind`.
    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) throws -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let (bytes, offset): ([UInt8], Int) = switch location {
        case .path(let path): (Array(path.utf8), 0)
        case .abstract(let name): (Array(name.utf8), 1) // a NUL first, and no NUL after
        }
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in bytes.enumerated() { sunPath[offset + index] = byte }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = socklen_t(pathOffset + offset + bytes.count + (offset == 0 ? 1 : 0))
        return try withUnsafePointer(to: &address) { pointer throws in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws in
                try body(address, length)
            }
        }
    }
}

/// The value of one hex digit; nil for another byte.
private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Where the first line from `start` in `bytes` ends: the index of its CR LF; nil while none came.
private func lineEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
    var index = start
    while index + 1 < bytes.count {
        if bytes[index] == 13, bytes[index + 1] == 10 { return index }
        index += 1
    }
    return nil
}

/// The identity EXTERNAL authenticates as: the uid in decimal, hex-encoded.
private func externalIdentity(_ uid: UInt32) -> String {
    String(uid).utf8.map { byte in
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }.joined()
}

/// The client's side of the authentication (the D-Bus specification's "Authentication
/// Protocol"), run blocking on a new connection's socket before its loop serves it: EXTERNAL as
/// this process's uid, then unix fds asked for.
struct ClientHandshake {
    let fd: Int32
    let timeoutMs: Int32
    /// The guid the address names: the server must give the same.
    let expectedGUID: String?
    private var received: [UInt8] = []
    private let deadline: ContinuousClock.Instant

    init(fd: Int32, timeoutMs: Int32, expectedGUID: String?) {
        self.fd = fd
        self.timeoutMs = timeoutMs
        self.expectedGUID = expectedGUID
        deadline = .now + .milliseconds(timeoutMs)
    }

    /// Authenticates; returns whether the server agreed to pass unix fds.
    /// - Throws: `DBusError` `.authFailed` when the server refuses this user or names another
    ///   guid, `.timeout`, `.disconnected`.
    mutating func run() throws -> Bool {
        try send("\0AUTH EXTERNAL \(externalIdentity(UInt32(geteuid())))\r\n")
        let reply = try line()
        guard reply.hasPrefix("OK ") else {
            throw DBusError(.authFailed, "the server refused EXTERNAL authentication as uid \(geteuid()): \(reply)")
        }
        let guid = String(reply.dropFirst(3))
        if let expectedGUID, guid != expectedGUID {
            throw DBusError(.authFailed, "the server's guid \(guid) is not the address's \(expectedGUID)")
        }
        try send("NEGOTIATE_UNIX_FD\r\n")
        let agreed = try line()
        guard agreed == "AGREE_UNIX_FD" || agreed.hasPrefix("ERROR") else {
            throw DBusError(.authFailed, "the server answered NEGOTIATE_UNIX_FD with \(agreed)")
        }
        try send("BEGIN\r\n")
        return agreed == "AGREE_UNIX_FD"
    }

    private func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT))
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DBusError(.disconnected, "the server closed the connection while authenticating")
            }
            sent += n
        }
    }

    /// The next line the server sends, without its CR LF.
    private mutating func line() throws -> String {
        while true {
            if let end = received.withUnsafeBytes({ lineEnd(in: $0, from: 0) }) {
                let text = String(decoding: received[..<end], as: UTF8.self)
                received.removeFirst(end + 2)
                return text
            }
            guard received.count < 16 * 1024 else {
                throw DBusError(.authFailed, "the server sent more than 16 KiB without ending its line")
            }
            try wait(for: Int16(POLLIN))
            var chunk = [UInt8](repeating: 0, count: 512)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            guard n > 0 else { throw DBusError(.disconnected, "the server closed the connection while authenticating") }
            received.append(contentsOf: chunk[..<n])
        }
    }

    private func wait(for events: Int16) throws {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let left = deadline - .now
            guard left > .zero else {
                throw DBusError(.timeout, "the server did not finish authenticating within \(timeoutMs) ms")
            }
            let ms = Int32(min(left / .milliseconds(1), Double(Int32.max)).rounded(.up))
            let n = poll(&entry, 1, ms)
            if n > 0 { return }
            if n < 0, errno != EINTR { throw DBusError.system("poll", errno: errno) }
        }
    }
}

/// The server's side of the authentication, fed the client's bytes as they arrive: EXTERNAL
/// only, as the uid the kernel gave for the socket; unix fds agreed to when asked.
struct ServerHandshake {
    let uid: UInt32
    let guid: String
    private(set) var agreedToFDs = false
    private var state = State.waitingForNul
    private var refusals = 0

    private enum State { case waitingForNul, waitingForAuth, waitingForData, authenticated }

    /// Refusals after which the client is disconnected.
    private static let refusalLimit = 8
    /// The longest line a client may send.
    private static let lineLimit = 16 * 1024

    init(uid: UInt32, guid: String) {
        self.uid = uid
        self.guid = guid
    }

    /// Reads the complete lines in `bytes` and answers them; stops after BEGIN, whose following
    /// bytes are the first message's.
    /// - Returns: how many bytes were read, what to send back, and whether BEGIN came.
    /// - Throws: `DBusError` `.authFailed` for a client that goes on after too many refusals,
    ///   sends BEGIN unauthenticated, or a line too long.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws -> (consumed: Int, reply: String, done: Bool) {
        var consumed = 0
        var reply = ""
        if state == .waitingForNul, !bytes.isEmpty {
            guard bytes[0] == 0 else { throw DBusError(.authFailed, "the client did not start with a NUL byte") }
            state = .waitingForAuth
            consumed = 1
        }
        while let end = lineEnd(in: bytes, from: consumed) {
            let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[consumed..<end]), as: UTF8.self)
            consumed = end + 2
            if try answer(line, into: &reply) { return (consumed, reply, true) }
        }
        guard bytes.count - consumed <= Self.lineLimit else {
            throw DBusError(.authFailed, "the client sent more than \(Self.lineLimit) bytes without ending its line")
        }
        return (consumed, reply, false)
    }

    /// Answers one command; true for the BEGIN that ends the handshake.
    private mutating func answer(_ line: String, into reply: inout String) throws -> Bool {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        let command = words.first.map(String.init) ?? ""
        switch (state, command) {
        case (.authenticated, "BEGIN"):
            return true
        case (_, "BEGIN"):
            throw DBusError(.authFailed, "the client began without authenticating")
        case (.authenticated, "NEGOTIATE_UNIX_FD"):
            agreedToFDs = true
            reply += "AGREE_UNIX_FD\r\n"
        case (.waitingForAuth, "AUTH") where words.count >= 2 && words[1] == "EXTERNAL":
            if words.count == 2 {
                state = .waitingForData
                reply += "DATA\r\n"
            } else {
                try accept(identity: String(words[2]), into: &reply)
            }
        case (.waitingForData, "DATA"):
            // No identity: the one the socket's credentials say.
            try accept(identity: words.count > 1 ? String(words[1]) : externalIdentity(uid), into: &reply)
        case (.waitingForAuth, "AUTH"), (_, "CANCEL"), (_, "ERROR"):
            try refuse(into: &reply)
        default:
            reply += "ERROR \"\(command) is not expected now\"\r\n"
        }
        return false
    }

    private mutating func accept(identity: String, into reply: inout String) throws {
        guard identity.lowercased() == externalIdentity(uid) else {
            try refuse(into: &reply)
            return
        }
        state = .authenticated
        reply += "OK \(guid)\r\n"
    }

    private mutating func refuse(into reply: inout String) throws {
        refusals += 1
        guard refusals <= Self.refusalLimit else {
            throw DBusError(.authFailed, "the client was refused \(Self.refusalLimit) times")
        }
        state = .waitingForAuth
        reply += "REJECTED EXTERNAL\r\n"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who serves bus connections: this library's ``WireTransport`` for the unix-socket addresses
/// it knows, unless `FERRY_BUS_TRANSPORT=libdbus` asks for libdbus (to compare the two, or to
/// rule this one out); libdbus for every other address (`tcp:`, `unixexec:`, …).
enum BusTransport {
    static let servesItself: Bool = getenv("FERRY_BUS_TRANSPORT").map { String(cString: $0) } != "libdbus"
}

extension WireTransport {
    /// Registers with the bus this transport just connected to: sends `Hello` and waits for its
    /// reply (blocking, on the thread that connected, before any loop polls the socket), as
    /// libdbus's `dbus_bus_register` does.
    /// - Parameter timeoutMs: how long to wait for the socket each time (25 s, libdbus's default).
    /// - Returns: the unique name the bus assigned, and the messages that came with the reply
    ///   (the bus's `NameAcquired`), for the loop to dispatch.
    /// - Throws: the bus's error reply as a `DBusError`; `.noReply` when it does not answer in
    ///   time; `.disconnected` when the socket fails.
    func register(timeoutMs: Int32 = 25_000) throws -> (name: String, received: [WireMessage]) {
        let hello = try Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus",
                                           interface: "org.freedesktop.DBus", member: "Hello").wireForm()
        try send(hello)
        flush(timeoutMs: timeoutMs)
        guard !wantsToWrite else { throw DBusError(.noReply, "the bus did not take Hello within \(timeoutMs) ms") }
        var received: [WireMessage] = []
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let (messages, failure) = readable()
            var name: String?
            for message in messages {
                guard message.fields.header.replySerial == hello.fields.header.serial else {
                    received.append(message)
                    continue
                }
                let reply = Message(message)
                if let error = reply.error { throw error }
                name = try reply.arguments(as: String.self)
            }
            if let name { return (name, received) }
            if let failure { throw failure }
            let ready = poll(&entry, 1, timeoutMs)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw DBusError(.noReply, "the bus did not answer Hello within \(timeoutMs) ms") }
        }
    }
}

import DBus
import FerryTestSupport
import Foundation
import Testing

/// `Pasteboard1.Read`'s reply — marshalled in Swift when it holds bytes, appended by libdbus when
/// it holds a descriptor — as independent clients read it: gdbus and GDBus sending the call in
/// either byte order, python-dbus reading the bytes inline and the memfd behind the option fd.
@Suite("ferryd: Read's reply as gdbus, GDBus big-endian and python-dbus read it")
struct ReadReplyInteropTests {
    static let glibPeer = TestPaths.packageRoot.appendingPathComponent("Tests/DBusTests/Peers/glib_peer.py").path
    static let general = "/org/ferry/Pasteboard/general"

    @Test("a held item read inline and through a descriptor, the call in either byte order")
    func readReplies() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let environment = fixture.bus.environment()
        let write = try await ChildProcess.run("gdbus", [
            "call", "--address", fixture.bus.address, "--dest", "org.ferry.Broker", "--object-path", Self.general,
            "--method", "org.ferry.Pasteboard1.SetItems",
            "[{'representations': <[<{'type': <'public.utf8-plain-text'>, 'data': <[byte 0x68, 0x00, 0xff]>}>]>}]", "{}",
        ], environment: environment)
        #expect(write.succeeded, "\(write.stderr)")

        let read = try await ChildProcess.run("gdbus", [
            "call", "--address", fixture.bus.address, "--dest", "org.ferry.Broker", "--object-path", Self.general,
            "--method", "org.ferry.Pasteboard1.Read", "0", "public.text", "{'user-action': <true>}",
        ], environment: environment)
        #expect(read.succeeded, "\(read.stderr)")
        #expect(read.stdout.contains("('public.utf8-plain-text', int64 3, <[byte 0x68, 0x00, 0xff]>, '')"), "\(read.stdout)")

        let bigEndian = try await ChildProcess.run("/usr/bin/python3", [
            Self.glibPeer, "call", "org.ferry.Broker", Self.general, "org.ferry.Pasteboard1", "Read", "usa{sv}",
            "(0, 'public.text', {'user-action': <true>})",
        ], environment: environment)
        #expect(bigEndian.succeeded, "\(bigEndian.stderr)")
        #expect(bigEndian.stdout.contains("l ('public.utf8-plain-text', int64 3, <[byte 0x68, 0x00, 0xff]>, '')"),
                "\(bigEndian.stdout)")

        // The option fd: a sealed memfd in the variant, which python-dbus reads to its end.
        let script = """
            import dbus, os, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            t, size, data, transfer = bus.call_blocking('org.ferry.Broker', sys.argv[2], 'org.ferry.Pasteboard1', 'Read',
                'usa{sv}', [0, 'public.text', dbus.Dictionary({'user-action': True, 'fd': True}, signature='sv')], timeout=30)
            fd = data.take()
            got = b''
            while True:
                chunk = os.read(fd, 4096)
                if not chunk: break
                got += chunk
            print('fd', t, int(size), got.hex(), repr(str(transfer)))
            t, size, data, transfer = bus.call_blocking('org.ferry.Broker', sys.argv[2], 'org.ferry.Pasteboard1', 'Read',
                'usa{sv}', [0, 'public.text', dbus.Dictionary({'user-action': True}, signature='sv')], timeout=30)
            print('inline', t, int(size), bytes(data).hex(), repr(str(transfer)))
            """
        let python = try await ChildProcess.run("/usr/bin/python3", ["-c", script, fixture.bus.address, Self.general],
                                                environment: environment, timeout: .seconds(60))
        #expect(python.succeeded, "\(python.stderr)")
        #expect(python.stdout.contains("fd public.utf8-plain-text 3 6800ff ''"), "\(python.stdout)")
        #expect(python.stdout.contains("inline public.utf8-plain-text 3 6800ff ''"), "\(python.stdout)")
        #expect(daemon.isRunning)
    }
}

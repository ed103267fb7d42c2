import DBus
import FerryTestSupport
import Foundation
import Testing

/// Malformed calls from independent clients (python-dbus, gdbus) get named errors; the daemon
/// stays up and keeps what it held.
@Suite("ferryd: malformed pasteboard calls from python-dbus and gdbus")
struct PasteboardErrorTests {
    typealias F = FerrydFixture

    static let script = #"""
        import dbus, os, sys
        bus = dbus.bus.BusConnection(sys.argv[1])
        DEST, GENERAL = "org.ferry.Broker", "/org/ferry/Pasteboard/general"
        def call(method, signature, args, path=GENERAL, iface="org.ferry.Pasteboard1"):
            return bus.call_blocking(DEST, path, iface, method, signature, args, timeout=30)
        def rep(**kw): return dbus.Dictionary(kw, signature="sv")
        def item(reps, **kw):
            d = dict(kw)
            d["representations"] = dbus.Array(reps, signature="v")
            return dbus.Dictionary(d, signature="sv")
        def set_items(*its): return call("SetItems", "aa{sv}a{sv}", [dbus.Array(its, signature="a{sv}"), {}])
        def text(t): return rep(type="public.utf8-plain-text", data=dbus.ByteArray(t))
        def fd(n): return dbus.types.UnixFd(n)
        def attempt(name, fn):
            try:
                fn()
                print(name, "OK")
            except dbus.DBusException as e:
                print(name, e.get_dbus_name(), e.get_dbus_message().replace("\n", " "))
            sys.stdout.flush()
        set_items(item([text(b"kept")]))
        attempt("badtype", lambda: set_items(item([rep(type="not a type", data=dbus.ByteArray(b"x"))])))
        attempt("wrongsig", lambda: call("SetItems", "s", ["x"]))
        attempt("missingreps", lambda: set_items(item([text(b"ok")]), dbus.Dictionary({"localOnly": True}, signature="sv")))
        attempt("missingtype", lambda: set_items(item([rep(data=dbus.ByteArray(b"x"))])))
        attempt("nosource", lambda: set_items(item([rep(type="public.png")])))
        attempt("twosources", lambda: set_items(item([rep(type="public.png", data=dbus.ByteArray(b"x"), promised=True)])))
        attempt("duptype", lambda: set_items(item([text(b"a"), text(b"b")])))
        attempt("visibility", lambda: set_items(item([rep(type="public.png", visibility="everyone", data=dbus.ByteArray(b"x"))])))
        attempt("wrongvaluetype", lambda: set_items(item([rep(type=dbus.Int32(5), data=dbus.ByteArray(b"x"))])))
        attempt("noreps", lambda: set_items(item([])))
        attempt("futurekey", lambda: set_items(item([text(b"kept")], future=dbus.Struct((1.0, 2.0), signature="dd"))))
        attempt("structflag", lambda: set_items(item([text(b"x")], localOnly=dbus.Struct((1.0, 2.0), signature="dd"))))
        attempt("toolarge", lambda: set_items(item([rep(type="public.data", data=dbus.ByteArray(b"x" * ((1 << 20) + 1)))])))
        attempt("toomany", lambda: set_items(*[item([text(b"x")]) for _ in range(1001)]))
        attempt("writeonly", lambda: set_items(item([rep(type="public.data", fd=fd(os.open("/dev/null", os.O_WRONLY)))])))
        attempt("directory", lambda: set_items(item([rep(type="public.data", fd=fd(os.open("/tmp", os.O_RDONLY)))])))
        r, w = os.pipe()
        attempt("offsetpipe", lambda: set_items(item([rep(type="public.data", fd=fd(r), offset=dbus.UInt64(4))])))
        attempt("silentpipe", lambda: set_items(item([rep(type="public.data", fd=fd(r))])))
        short = os.open(sys.argv[2], os.O_RDONLY)
        attempt("pastend", lambda: set_items(item([rep(type="public.data", fd=fd(short), offset=dbus.UInt64(0), length=dbus.UInt64(100))])))
        attempt("hugeoffset", lambda: set_items(item([rep(type="public.data", fd=fd(short), offset=dbus.UInt64(1 << 63))])))
        attempt("hugelength", lambda: set_items(item([rep(type="public.data", fd=fd(short), length=dbus.UInt64((1 << 64) - 1))])))
        attempt("hugeexpiry", lambda: set_items(item([text(b"x")], expirationDate=dbus.UInt64(1 << 63))))
        attempt("promise", lambda: set_items(item([rep(type="public.png", promised=True)])))
        attempt("unknownitem", lambda: call("Read", "usa{sv}", [99, "public.text", {}]))
        attempt("readbadtype", lambda: call("Read", "usa{sv}", [0, "no good", {}]))
        attempt("badoption", lambda: call("Read", "usa{sv}", [0, "public.text", dbus.Dictionary({"user-action": "yes"}, signature="sv")]))
        attempt("pattern", lambda: call("DetectPatterns", "as", [["nonsense"]]))
        attempt("fulfillid", lambda: call("Fulfill", "ssv", ["not-a-uuid", "public.png", dbus.ByteArray(b"x")]))
        attempt("fulfillnone", lambda: call("Fulfill", "ssv", ["5B2F8E38-6E4A-4C9B-9C56-0D5B4B6A1F00", "public.png", dbus.ByteArray(b"x")]))
        attempt("transfer", lambda: call("FinishTransfer", "s", ["nope"]))
        attempt("unknownboard", lambda: call("Items", "", [], path="/org/ferry/Pasteboard/nope"))
        attempt("removeunknown", lambda: call("RemovePasteboard", "s", ["nope"], path="/org/ferry/Broker", iface="org.ferry.Broker1"))
        attempt("badname", lambda: call("Pasteboard", "sa{sv}", ["../x", {}], path="/org/ferry/Broker", iface="org.ferry.Broker1"))
        got = call("Read", "usa{sv}", [0, "public.text", {}])
        print("kept", bytes(got[2]).decode())
        """#

    @Test("python-dbus: every malformed call gets its org.ferry.Error.* (key path named); what was held stays")
    func pythonMalformedCalls() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--descriptor-timeout", "1"])
        defer { daemon.stop() }
        let short = FileManager.default.temporaryDirectory.appendingPathComponent("ferryd-short-\(UUID().uuidString)")
        try Data("ten bytes!".utf8).write(to: short)
        defer { try? FileManager.default.removeItem(at: short) }
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", Self.script, fixture.bus.address, short.path],
                                                environment: fixture.bus.environment(), timeout: .seconds(60))
        #expect(result.succeeded, "\(result.stderr)")
        var lines: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { lines[String(parts[0])] = String(parts[1]) }
        }
        func expect(_ name: String, _ error: String, _ fragment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
            let line = lines[name] ?? "(no line)"
            #expect(line.hasPrefix(error + " ") || line == error, "\(name): \(line)", sourceLocation: sourceLocation)
            if !fragment.isEmpty { #expect(line.contains(fragment), "\(name): \(line)", sourceLocation: sourceLocation) }
        }
        let invalid = "org.ferry.Error.InvalidArgument"
        expect("badtype", invalid, "items[0].representations[0].type: \"not a type\" is not a type identifier")
        expect("wrongsig", "org.freedesktop.DBus.Error.InvalidArgs")
        expect("missingreps", invalid, "items[1].representations: required key is missing")
        expect("missingtype", invalid, "items[0].representations[0].type: required key is missing")
        expect("nosource", invalid, "items[0].representations[0]: needs one of data, fd or promised")
        expect("twosources", invalid, "more than one")
        expect("duptype", invalid, "items[0].representations[1].type")
        expect("visibility", invalid, "items[0].representations[0].visibility")
        expect("wrongvaluetype", invalid, "items[0].representations[0].type: expected a string (s), found i")
        expect("noreps", invalid, "at least one representation")
        // A key the broker does not know is never looked at, even holding what has no wire shape;
        // a known key holding it is named.
        #expect(lines["futurekey"] == "OK", "futurekey: \(lines["futurekey"] ?? "(no line)")")
        expect("structflag", invalid, "items[0].localOnly: expected a property-list value, found '(dd)'")
        expect("toolarge", "org.ferry.Error.TooLarge", "items[0].representations[0].data")
        expect("toomany", "org.ferry.Error.TooLarge", "1001 items")
        expect("writeonly", invalid, "items[0].representations[0].fd: the file descriptor is open for writing only")
        expect("directory", invalid, "is a directory")
        expect("offsetpipe", invalid, "cannot be read at an offset")
        expect("silentpipe", "org.ferry.Error.Timeout", "delivered no data")
        expect("pastend", invalid, "ended after 10 of 100 bytes")
        expect("hugeoffset", invalid, "items[0].representations[0].offset: 9223372036854775808 is too large: at most 9223372036854775807")
        expect("hugelength", invalid, "items[0].representations[0].length: 18446744073709551615 is too large: at most 9223372036854775807")
        expect("hugeexpiry", invalid, "items[0].expirationDate: 9223372036854775808 is too large")
        expect("promise", "org.ferry.Error.PermissionDenied", "registered app")
        expect("unknownitem", "org.ferry.Error.NotFound", "there is no item 99")
        expect("readbadtype", invalid, "type")
        expect("badoption", invalid, "options.user-action")
        expect("pattern", invalid, "patterns[0]")
        expect("fulfillid", invalid, "item_id")
        expect("fulfillnone", "org.ferry.Error.NotFound")
        expect("transfer", "org.ferry.Error.NotFound")
        expect("unknownboard", "org.freedesktop.DBus.Error.UnknownObject")
        expect("removeunknown", "org.ferry.Error.NotFound")
        expect("badname", invalid)
        #expect(lines["kept"] == "kept", "the held item survived every bad call")
        #expect(daemon.isRunning)
    }

    @Test("gdbus: a write and a read in GVariant text, and a bad type id named by its key path")
    func gdbusCalls() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        func gdbus(_ method: String, _ args: [String]) async throws -> ChildProcessResult {
            try await ChildProcess.run("gdbus", ["call", "--address", fixture.bus.address, "--dest", "org.ferry.Broker",
                                                 "--object-path", "/org/ferry/Pasteboard/general", "--method",
                                                 "org.ferry.Pasteboard1." + method] + args, environment: fixture.bus.environment())
        }
        let write = try await gdbus("SetItems", [
            "[{'representations': <[<{'type': <'public.utf8-plain-text'>, 'data': <[byte 0x68, 0x69]>}>]>, 'suggestedName': <'hi'>}]",
            "{}",
        ])
        #expect(write.succeeded, "\(write.stderr)")
        #expect(write.stdout.hasPrefix("(uint64 1, ['"))
        let read = try await gdbus("Read", ["0", "public.text", "{'user-action': <true>}"])
        #expect(read.succeeded, "\(read.stderr)")
        #expect(read.stdout.contains("'public.utf8-plain-text', int64 2"), "\(read.stdout)")
        let bad = try await gdbus("SetItems", [
            "[{'representations': <[<{'type': <'bad type'>, 'data': <[byte 0x68]>}>]>}]", "{}",
        ])
        #expect(!bad.succeeded)
        #expect(bad.stderr.contains("org.ferry.Error.InvalidArgument: items[0].representations[0].type"), "\(bad.stderr)")
        #expect(daemon.isRunning)
    }
}

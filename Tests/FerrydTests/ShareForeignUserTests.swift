import DBus
import FerryTestSupport
import Foundation
import Testing

/// A caller of another uid is refused by every Sharing1 method. The usual test bus admits only
/// its own user, so this test starts one that admits everybody (`<allow user="*"/>`) and calls
/// from python-dbus run as nobody (setpriv: the test must run as root).
@Suite("ferryd shares: another user", .serialized)
struct ShareForeignUserTests {
    static let script = ShareBus.pythonPrelude + #"""

        share = sys.argv[2]
        attempt("register", lambda: call("RegisterActivities", "aa{sv}", [[]]))
        attempt("begin", lambda: call("BeginShare", "a{sv}", [{}]))
        attempt("list", lambda: call("ListActivities", "s", [share]))
        attempt("perform", lambda: call("Perform", "ssa{sv}", [share, "org.ferry.activity.copy", {}]))
        attempt("end", lambda: call("EndShare", "s", [share]))
        """#

    @Test("every Sharing1 method refuses a caller of another uid with PermissionDenied", .enabled(if: getuid() == 0))
    func anotherUserRefused() async throws {
        let bus = try PrivateBus.admittingEveryUser()
        defer { bus.stop() }
        let fixture = try FerrydFixture(bus: bus)
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let tool = try await fixture.connect()
        let (share, _) = try await ShareBus.share(tool, [ShareBus.text])

        let result = try await ChildProcess.run("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", Self.script, bus.address, share,
        ], environment: bus.environment(), timeout: .seconds(60))
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map(String.init) == [
            "register org.ferry.Error.PermissionDenied",
            "begin org.ferry.Error.PermissionDenied",
            "list org.ferry.Error.PermissionDenied",
            "perform org.ferry.Error.PermissionDenied",
            "end org.ferry.Error.PermissionDenied",
        ], "\(result.stdout)")
        // The share of the right user is untouched.
        #expect(try await ShareBus.types(tool, share) == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"])
        await tool.close(gracePeriod: .zero)
    }
}

import DBus
import Ferry
import FerryModel
import FerryTerminal
import FerryTestSupport
import Foundation
import Testing
@testable import ferry
@testable import ferry_front

/// Issue #19, item 1: one table from error name to code to exit status. Every error name the
/// D-Bus contract names, and every bus error name the table maps, gives one exit status on every
/// path: the full CLI with a raw `DBusError`, the client library's `FerryError`, and the front.
@Suite("ErrorTable: one answer per error name on every path")
struct ErrorTableTests {
    /// The `org.ferry.Error.*` names in services/interfaces/*.xml: the ones spelled out, and the
    /// codes listed in parentheses after `org.ferry.Error.*`.
    private func contractNames() throws -> Set<String> {
        let folder = TestPaths.packageRoot.appendingPathComponent("services/interfaces")
        var names: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".xml") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                .replacingOccurrences(of: "\n", with: " ")
            for match in text.matches(of: /org\.ferry\.Error\.([A-Z][A-Za-z]+)/) {
                names.insert("org.ferry.Error." + match.1)
            }
            for match in text.matches(of: /org\.ferry\.Error\.\*\s*\(([^)]*)\)/) {
                for code in match.1.split(separator: ",") {
                    names.insert("org.ferry.Error." + code.trimmingCharacters(in: .whitespaces))
                }
            }
        }
        return names
    }

    /// The status each path gives a D-Bus error reply, and the status the table gives its code.
    private func statuses(_ name: String) throws -> [String: Int32] {
        let error = DBusError(try ErrorName(name), "went wrong")
        let library = FerryError(error)
        return [
            "table": ErrorTable.status(forErrorName: name).rawValue,
            "table code": ErrorTable.status(forCode: ErrorTable.code(forErrorName: name)).rawValue,
            "full CLI, DBusError": describe(error).0.rawValue,
            "full CLI, FerryError": describe(library).0.rawValue,
            "FerryError.Code": ExitStatus.of(library.code).rawValue,
            "front": FrontFailure(busErrorName: name, message: "went wrong").status,
        ]
    }

    @Test("every org.ferry.Error name in the contract is a code of the table and gives one status on every path")
    func contractNamesAgree() throws {
        let names = try contractNames()
        // The contract names these at least; a parse that finds fewer is broken.
        #expect(names.isSuperset(of: ["org.ferry.Error.InvalidArgument", "org.ferry.Error.NotFound",
                                      "org.ferry.Error.PermissionDenied", "org.ferry.Error.Unavailable",
                                      "org.ferry.Error.Timeout", "org.ferry.Error.TooLarge"]))
        for name in names {
            let code = String(name.dropFirst(ErrorTable.ferryPrefix.count))
            #expect(ErrorTable.statuses[code] != nil, "\(name) is on the wire but not in ErrorTable")
            #expect(!ErrorTable.localCodes.contains(code), "\(name) is a local code")
            #expect(ErrorTable.code(forErrorName: name) == code)
            #expect(FerryError(DBusError(try ErrorName(name), "x")).code.rawValue == code)
            let answers = try statuses(name)
            #expect(Set(answers.values).count == 1, "\(name): \(answers)")
        }
    }

    @Test("every name the table maps, and names it does not, give one status on every path")
    func busNamesAgree() throws {
        let names = Array(ErrorTable.busNames.keys) + ErrorTable.statuses.keys.map { ErrorTable.ferryPrefix + $0 } + [
            "org.freedesktop.DBus.Error.Spawn.ExecFailed", "org.freedesktop.DBus.Error.Failed",
            "org.ferry.Error.Unheard", "com.example.Error.Odd",
        ]
        for name in names {
            let answers = try statuses(name)
            #expect(Set(answers.values).count == 1, "\(name): \(answers)")
        }
    }

    @Test("the answers users see: what each kind of failure exits with")
    func statusesUsersSee() {
        // A named pasteboard removed meanwhile: not found, on every path (the full CLI's raw
        // D-Bus path said 69, "no broker", before the one table).
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.UnknownObject") == .notFound)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.ServiceUnknown") == .noBroker)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.Disconnected") == .noBroker)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.Spawn.ChildExited") == .noBroker)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.AccessDenied") == .permissionDenied)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.NoReply") == .timeout)
        #expect(ErrorTable.status(forErrorName: "org.freedesktop.DBus.Error.InvalidArgs") == .usage)
        #expect(ErrorTable.status(forErrorName: "org.ferry.Error.Cancelled") == .unavailable)
        #expect(ErrorTable.status(forErrorName: "org.ferry.Error.MultipleScenesNotSupported") == .failure)
        // The client's local codes are not taken from the wire: a reply named so is another bus error.
        #expect(ErrorTable.code(forErrorName: "org.ferry.Error.NoBroker") == "Bus")
        #expect(ErrorTable.status(forErrorName: "org.ferry.Error.NoBroker") == .failure)
    }

    @Test("FerryError.Code is open: a code the library does not name round-trips and exits 1")
    func openCode() {
        let code = FerryError.Code(rawValue: "SomethingNew")
        #expect(code != .bus && code.rawValue == "SomethingNew")
        #expect(ExitStatus.of(code) == .failure)
        #expect(ExitStatus.of(FerryError.Code.notFound) == .notFound)
    }
}

import FerryTestSupport
import Foundation
import Testing

/// Runs the built `ferry` executable for CLI tests.
///
/// The binary is found next to the running test bundle (`.build/<config>/ferry`), or in
/// `FERRY_BIN_DIR` when set. The environment is fixed (`COLUMNS=80`, `LINES=25`) so help text
/// wraps the same way everywhere.
enum FerryCLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let dir = ProcessInfo.processInfo.environment["FERRY_BIN_DIR"], !dir.isEmpty {
            candidates.append(URL(fileURLWithPath: dir))
        }
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        if !FileManager.default.fileExists(atPath: dir.path) { dir = Bundle.main.bundleURL }
        while dir.path != "/" {
            dir = dir.deletingLastPathComponent()
            candidates.append(dir)
            if dir.pathExtension != "xctest" && FileManager.default.fileExists(atPath: dir.appendingPathComponent("ferry").path) { break }
        }
        for candidate in candidates {
            let url = candidate.appendingPathComponent("ferry")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw CLITestError("the ferry executable is not built (looked in \(candidates.map(\.path)))")
    }

    /// Runs `ferry ARGUMENTS` and waits for it.
    static func run(_ arguments: String...) throws -> Result { try runArray(arguments) }

    /// Runs `ferry ARGUMENTS` and waits for it.
    static func runArray(_ arguments: [String]) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["COLUMNS"] = "80"
        env["LINES"] = "25"
        let child = try RunningProcess(try binary().path, arguments, environment: env)
        let (out, err) = child.readToEnd()
        return Result(status: child.waitUntilExit(), stdout: String(decoding: out, as: UTF8.self),
                      stderr: String(decoding: err, as: UTF8.self))
    }

    /// Parses standard output as one JSON object.
    static func jsonObject(_ result: Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        guard let dictionary = object as? [String: Any] else { throw CLITestError("not a JSON object: \(result.stdout)") }
        return dictionary
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Golden files in `Fixtures/cli/` (`FERRY_UPDATE_GOLDENS=1` rewrites them).
enum Goldens {
    static let files = GoldenFiles("cli")

    /// Expects `actual` to equal the golden file `name`.
    static func check(_ actual: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mismatch = try files.mismatch(actual, against: name)
        #expect(mismatch == nil, "\(mismatch ?? "")", sourceLocation: sourceLocation)
    }
}

import FerryTerminal
import FerryTestSupport
import Foundation
import Testing

/// `--version` on every executable: one number (`FerryVersion`), printed as `NAME NUMBER`.
@Suite("--version")
struct VersionTests {
    @Test("ferry (the front hands it to ferry-cli), ferry-cli, ferryd and ferry-demo print their name and the version",
          arguments: [("ferry", "ferry"), ("ferry-cli", "ferry"), ("ferryd", "ferryd"), ("ferry-demo", "ferry-demo")])
    func version(executable: String, name: String) async throws {
        let result = try await ChildProcess.run(try BuiltProducts.executable(executable), ["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(name) \(FerryVersion.number)\n")
        #expect(result.stderr.isEmpty)
    }

    @Test("the version is MAJOR.MINOR.PATCH, as a Debian package version must begin")
    func versionShape() {
        let parts = FerryVersion.number.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "\(FerryVersion.number)")
    }
}

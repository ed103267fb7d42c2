import Foundation

/// Golden files in a folder under `Fixtures/`. Run the tests with `FERRY_UPDATE_GOLDENS=1` to
/// rewrite them from the current output (then review the diff).
public struct GoldenFiles: Sendable {
    /// The folder holding the golden files.
    public let folder: URL

    /// The golden files in `Fixtures/<subfolder>`.
    public init(_ subfolder: String) {
        folder = TestPaths.fixtures.appendingPathComponent(subfolder)
    }

    /// Whether the tests rewrite the golden files instead of comparing.
    public static var updating: Bool { ProcessInfo.processInfo.environment["FERRY_UPDATE_GOLDENS"] == "1" }

    /// Compares `actual` with the golden file `name` (or rewrites it when updating).
    /// - Returns: nil when they are equal (or the file was rewritten), else a message for the test.
    /// - Throws: when the golden file cannot be read or written.
    public func mismatch(_ actual: String, against name: String) throws -> String? {
        let url = folder.appendingPathComponent(name)
        if Self.updating {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url)
            return nil
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        return actual == expected ? nil
            : "\(name) differs; regenerate with FERRY_UPDATE_GOLDENS=1 if the change is intended"
    }
}

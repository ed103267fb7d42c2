import Foundation

/// Paths shared by every test target.
public enum TestPaths {
    /// The package's root folder (found from this file's location).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `Fixtures/` folder at the package root.
    public static let fixtures: URL = packageRoot.appendingPathComponent("Fixtures")
}

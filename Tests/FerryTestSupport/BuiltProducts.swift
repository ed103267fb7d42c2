import Foundation

/// Where the package's built executables (`ferry`, `ferryd`, …) are.
public enum BuiltProducts {
    /// The folder holding the built products: `FERRY_BIN_DIR` if set, else the folder that
    /// contains the running test bundle (`.build/debug` under `swift test`).
    public static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["FERRY_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let path = FileManager.default.fileExists(atPath: exe.path)
            ? exe : URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // Walk up out of the test bundle (`X.xctest`, or `X.xctest/Contents/MacOS/X` on macOS).
        var dir = path
        while dir.path != "/" {
            if dir.pathExtension == "xctest" { return dir.deletingLastPathComponent() }
            dir = dir.deletingLastPathComponent()
        }
        return path.deletingLastPathComponent()
    }

    /// The path of the built executable `name`.
    ///
    /// - Throws: `ChildProcessError` if it has not been built.
    public static func executable(_ name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ChildProcessError(description: "\(name) is not built in \(directory.path)")
        }
        return url.path
    }
}

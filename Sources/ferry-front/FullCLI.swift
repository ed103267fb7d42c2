#if canImport(Glibc)
import Glibc
#endif

/// The full CLI, `ferry-cli`, in the same directory as this executable (symbolic links to the
/// front resolved): every command the front does not handle runs there.
enum FullCLI {
    /// The full CLI's file name.
    static let fileName = "ferry-cli"

    /// Replaces this process with the full CLI, given the same arguments (`argv[0]` included) and
    /// environment. Returns only to exit with status 1 when it cannot be run.
    static func exec() -> Never {
        guard let path = location() else {
            exit(FrontFailure(status: 1, message: "cannot run \(fileName): cannot tell which folder this ferry is in").report())
        }
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        exit(FrontFailure(status: 1, message: "cannot run \(path): " + reason).report())
    }

    /// `<directory of /proc/self/exe>/ferry-cli`; when that link cannot be read, the directory of
    /// `argv[0]`.
    static func location() -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { readlink("/proc/self/exe", $0.baseAddress!, Int(PATH_MAX)) }
        }
        let executable = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : (CommandLine.arguments.first ?? "")
        return location(besides: executable)
    }

    /// `ferry-cli` in the directory of `executable`; nil when `executable` names no directory (an
    /// `argv[0]` found on `PATH`): `execv` of a bare name would run a `ferry-cli` in the current
    /// directory, whoever put it there.
    static func location(besides executable: String) -> String? {
        guard let slash = executable.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return String(executable[...slash]) + fileName
    }
}

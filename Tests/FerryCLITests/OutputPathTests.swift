import FerryTestSupport
import Foundation
import Testing

/// `ferry paste -o PATH` and `ferry desktop --svg/--png PATH` treat PATH as the shell's `>` does:
/// special files and symbolic links are written through, never replaced by a regular file; an
/// existing file keeps its mode, owner and hard links; `-` is standard output.
@Suite("output paths are written as the shell's > writes them", .serialized)
struct OutputPathTests {
    /// The file type bits of `path` itself (not what a link names); nil when it does not exist.
    static func kind(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    static func status(_ path: String) throws -> stat {
        var info = stat()
        guard stat(path, &info) == 0 else { throw CLITestError("cannot stat \(path): \(String(cString: strerror(errno)))") }
        return info
    }

    @Test("a FIFO is written through: its reader gets the bytes and it stays a FIFO")
    func fifo() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "through the pipe").succeeded)
            let fifo = broker.folder.appendingPathComponent("pipe").path
            #expect(mkfifo(fifo, 0o600) == 0)
            // A reader that does not block opening, so the writer's open succeeds at once.
            let reader = open(fifo, O_RDONLY | O_NONBLOCK)
            #expect(reader >= 0)
            defer { close(reader) }
            let paste = try await broker.ferry("paste", "-o", fifo, timeout: .seconds(20))
            #expect(paste.succeeded, "\(paste.summary)")
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = read(reader, &buffer, buffer.count)
            #expect(count > 0 && String(decoding: buffer[..<max(0, count)], as: UTF8.self) == "through the pipe")
            #expect(Self.kind(fifo) == S_IFIFO)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: broker.folder.path).filter { $0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        }
    }

    @Test("a symbolic link is followed: the file it names gets the bytes and the link stays; a link to /dev/null stays too")
    func symbolicLink() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "new text").succeeded)
            let target = try broker.file("target.txt", Data("old".utf8)).path
            let link = broker.folder.appendingPathComponent("link.txt").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target.txt")
            let paste = try await broker.ferry("paste", "-o", link)
            #expect(paste.succeeded, "\(paste.summary)")
            #expect(Self.kind(link) == S_IFLNK)
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "new text")

            // /dev/null only through a link in the scratch folder: the test never asks to write
            // /dev/null itself, so it cannot replace it even when the CLI is wrong.
            let null = broker.folder.appendingPathComponent("null").path
            try FileManager.default.createSymbolicLink(atPath: null, withDestinationPath: "/dev/null")
            let discarded = try await broker.ferry("paste", "-o", null)
            #expect(discarded.succeeded, "\(discarded.summary)")
            #expect(Self.kind(null) == S_IFLNK)
            #expect(Self.kind("/dev/null") == S_IFCHR)

            // A dangling link: the file it names is created, as `>` does.
            let dangling = broker.folder.appendingPathComponent("dangling").path
            try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "created.txt")
            #expect(try await broker.ferry("paste", "-o", dangling).succeeded)
            #expect(Self.kind(dangling) == S_IFLNK)
            #expect(try String(contentsOfFile: broker.folder.appendingPathComponent("created.txt").path, encoding: .utf8) == "new text")
        }
    }

    @Test("-o - writes standard output, not a file named -")
    func dash() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "to the terminal").succeeded)
            let stray = FileManager.default.currentDirectoryPath + "/-"
            let existedBefore = FileManager.default.fileExists(atPath: stray)
            let paste = try await broker.ferry("paste", "-o", "-")
            defer { if !existedBefore { unlink(stray) } }
            #expect(paste.succeeded, "\(paste.summary)")
            #expect(paste.stdout == "to the terminal")
            #expect(existedBefore || !FileManager.default.fileExists(atPath: stray))
        }
    }

    @Test("an existing file keeps its mode, its owner and its hard links")
    func existingFile() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "a secret").succeeded)
            let secret = try broker.file("secret.txt", Data("old".utf8)).path
            #expect(chmod(secret, 0o600) == 0)
            // Root can give the file another owner; the replacement must take it too.
            let owner: uid_t = geteuid() == 0 ? 65534 : geteuid(), group: gid_t = geteuid() == 0 ? 65534 : getegid()
            #expect(chown(secret, owner, group) == 0)
            let paste = try await broker.ferry("paste", "-o", secret)
            #expect(paste.succeeded, "\(paste.summary)")
            let info = try Self.status(secret)
            #expect(info.st_mode & 0o7777 == 0o600)
            #expect(info.st_uid == owner && info.st_gid == group)
            #expect(try String(contentsOfFile: secret, encoding: .utf8) == "a secret")

            let original = try broker.file("original.txt", Data("old".utf8)).path
            let second = broker.folder.appendingPathComponent("second.txt").path
            #expect(link(original, second) == 0)
            #expect(try await broker.ferry("paste", "-o", second).succeeded)
            #expect(try String(contentsOfFile: original, encoding: .utf8) == "a secret")
            #expect(try Self.status(original).st_ino == Self.status(second).st_ino)

            // A new file: mode 0666 less the umask, as a redirection makes it.
            let mask = umask(0o022)
            umask(mask)
            let fresh = broker.folder.appendingPathComponent("fresh.txt").path
            #expect(try await broker.ferry("paste", "-o", fresh).succeeded)
            #expect(try Self.status(fresh).st_mode & 0o7777 == 0o666 & ~mask)

            let folder = try await broker.ferry("paste", "-o", broker.folder.path)
            #expect(folder.status == 64 && folder.stderr.contains("is a folder"), "\(folder.summary)")
            #expect(Self.kind(broker.folder.path) == S_IFDIR)
        }
    }

    @Test("desktop --svg follows a link and writes through a FIFO")
    func desktop() async throws {
        try await CLIBroker.with { broker in
            let target = try broker.file("desktop.svg", Data("old".utf8)).path
            let link = broker.folder.appendingPathComponent("link.svg").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let drawn = try await broker.ferry("desktop", "--svg", link)
            #expect(drawn.succeeded, "\(drawn.summary)")
            #expect(Self.kind(link) == S_IFLNK)
            #expect(try String(contentsOfFile: target, encoding: .utf8).contains("<svg"))

            let fifo = broker.folder.appendingPathComponent("pipe").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let reader = open(fifo, O_RDONLY | O_NONBLOCK)
            #expect(reader >= 0)
            defer { close(reader) }
            let piped = try await broker.ferry("desktop", "--svg", fifo, timeout: .seconds(20))
            #expect(piped.succeeded, "\(piped.summary)")
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(reader, &buffer, buffer.count)
            #expect(count > 0 && String(decoding: buffer[..<max(0, count)], as: UTF8.self).contains("<svg"))
            #expect(Self.kind(fifo) == S_IFIFO)
        }
    }
}

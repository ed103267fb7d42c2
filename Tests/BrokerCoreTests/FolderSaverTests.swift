import BrokerCore
import FerryModel
import Foundation
import Testing

/// save-to-folder's file system part: fresh names, never over a file, never outside the folder.
@Suite("FolderSaver")
struct FolderSaverTests {
    /// A fresh directory, removed at the end.
    final class Folder {
        let path: String

        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("folder-saver-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// The names in the folder, sorted.
        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

        func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))) }
    }

    static func file(_ name: String?, _ extensions: [String] = ["png"], _ text: String = "x") -> FolderSaver.File {
        FolderSaver.File(suggestedName: name, filenameExtensions: extensions, bytes: Data(text.utf8))
    }

    /// The error `body` throws (nil when none).
    static func error(_ body: () throws -> Void) -> FerryModelError? {
        do {
            try body()
            return nil
        } catch let error as FerryModelError {
            return error
        } catch {
            Issue.record("not a FerryModelError: \(error)")
            return nil
        }
    }

    @Test("a taken name gets a number: a.png, then \"a 2.png\", then \"a 3.png\"; the bytes are written, nothing is overwritten")
    func collisions() throws {
        let folder = try Folder()
        let first = try FolderSaver.save([Self.file("a", ["png"], "one")], in: folder.path)
        let second = try FolderSaver.save([Self.file("a", ["png"], "two")], in: folder.path)
        let third = try FolderSaver.save([Self.file("a.png", ["png"], "three")], in: folder.path)
        #expect(first == [folder.path + "/a.png"])
        #expect(second == [folder.path + "/a 2.png"])
        #expect(third == [folder.path + "/a 3.png"])
        #expect(try folder.names() == ["a 2.png", "a 3.png", "a.png"])
        #expect(try folder.bytes("a.png") == Array("one".utf8))
        #expect(try folder.bytes("a 2.png") == Array("two".utf8))
        #expect(try folder.bytes("a 3.png") == Array("three".utf8))
        // Several files of one call collide with each other too.
        let batch = try FolderSaver.save([Self.file("b"), Self.file("b"), Self.file(nil), Self.file(nil)], in: folder.path)
        #expect(batch.map { ($0 as NSString).lastPathComponent } == ["b.png", "b 2.png", "Item.png", "Item 2.png"])
    }

    @Test("names cannot escape the folder or hide: ../x, /etc/x, a/b, .hidden, NUL and control characters are cleaned")
    func escapes() throws {
        let folder = try Folder()
        let unique = "x-\(UUID().uuidString)"
        let names: [String?] = ["../" + unique, "/etc/x", "a/b", ".hidden", "nul\u{0}here", "bell\u{7}\ttab\nline\u{1B}[31m", "..", "/", "   ",
                                "photo\u{202E}gnp.exe", nil]
        let paths = try FolderSaver.save(names.map { Self.file($0, ["txt"]) }, in: folder.path)
        #expect(paths.map { ($0 as NSString).lastPathComponent }
                == [unique + ".txt", "etcx.txt", "ab.txt", "hidden.txt", "nulhere.txt", "belltabline[31m.txt", "Item.txt", "Item 2.txt",
                    "Item 3.txt", "photognp.exe.txt", "Item 4.txt"])
        for path in paths { #expect((path as NSString).deletingLastPathComponent == folder.path) }
        #expect(try folder.names().count == names.count, "every file is in the folder itself")
        #expect(!FileManager.default.fileExists(atPath: (folder.path as NSString).deletingLastPathComponent + "/\(unique).txt"))
    }

    @Test("a very long name is cut to 200 bytes on a character boundary, and a numbered name still fits in 255 bytes")
    func longName() throws {
        let folder = try Folder()
        let long = String(repeating: "é", count: 300)  // 600 bytes
        #expect(FolderSaver.cleanName(long).utf8.count == 200)
        let (base, ext) = FolderSaver.fileName(suggestedName: long, filenameExtensions: ["png"])
        #expect(base == String(repeating: "é", count: 100) && ext == "png")
        let paths = try FolderSaver.save([Self.file(long), Self.file(long)], in: folder.path)
        #expect(paths.map { ($0 as NSString).lastPathComponent } == [base + ".png", base + " 2.png"])
        // A long extension leaves less room for the name: "name 1000.ext" ≤ 255 bytes.
        let longExtension = String(repeating: "e", count: 120)
        let cut = FolderSaver.fileName(suggestedName: String(repeating: "n", count: 300), filenameExtensions: [longExtension])
        #expect(cut.base.utf8.count + " 1000.".utf8.count + longExtension.utf8.count == 255)
        _ = try FolderSaver.save([Self.file(String(repeating: "n", count: 300), [longExtension])], in: folder.path)
    }

    @Test("a symbolic link planted under the target name is never followed nor overwritten: the file gets the next name")
    func plantedSymlink() throws {
        let folder = try Folder()
        let outside = try Folder()
        let victim = outside.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/a.png", withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/b.png", withDestinationPath: outside.path + "/missing")
        let paths = try FolderSaver.save([Self.file("a", ["png"], "new"), Self.file("b", ["png"], "new")], in: folder.path)
        #expect(paths == [folder.path + "/a 2.png", folder.path + "/b 2.png"])
        #expect(try outside.bytes("victim") == Array("precious".utf8))
        #expect(try outside.names() == ["victim"], "a dangling link is not followed to create its target")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.path + "/a.png") == victim)
        #expect(try folder.bytes("a 2.png") == Array("new".utf8))
    }

    @Test("the folder must be an absolute path to an existing directory, not a file nor a symbolic link")
    func badFolders() throws {
        let folder = try Folder()
        let file = folder.path + "/file"
        try Data("f".utf8).write(to: URL(fileURLWithPath: file))
        let link = folder.path + "/link"
        let target = try Folder()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target.path)
        let cases: [(String, String)] = [
            (file, "is not a folder"), (link, "is a symbolic link"), ("relative/dir", "must be an absolute path"),
            (folder.path + "/missing", "does not exist"), ("", "not empty"), (folder.path + "\u{0}x", "NUL"),
            (file + "/below", "not a folder"),
            // A trailing slash, ".", or ".." would make the kernel follow the link at the end.
            (link + "/", "is a symbolic link"), (link + "//", "is a symbolic link"),
            (link + "/.", "not end in '.' or '..'"), (link + "/./", "not end in '.' or '..'"),
            (link + "/..", "not end in '.' or '..'"),
        ]
        for (path, reason) in cases {
            let error = Self.error { try FolderSaver.checkDirectory(path) }
            #expect(error?.code == .invalidArgument, "\(path)")
            #expect(error?.keyPath == "options.to")
            #expect(error?.message.contains(reason) == true, "\(path): \(error?.message ?? "no error")")
            #expect(Self.error { _ = try FolderSaver.save([Self.file("a")], in: path) }?.code == .invalidArgument)
        }
        #expect(try target.names().isEmpty, "nothing written through the link")
        try FolderSaver.checkDirectory(folder.path + "/")
        #expect(try FolderSaver.save([Self.file("t")], in: target.path + "//") == [target.path + "/t.png"])
    }

    @Test("extensions: none for a type without one, the name's own when it already ends with one of the type's")
    func extensions() throws {
        #expect(FolderSaver.fileName(suggestedName: "notes", filenameExtensions: []) == ("notes", nil))
        #expect(FolderSaver.fileName(suggestedName: "photo.png", filenameExtensions: ["png"]) == ("photo", "png"))
        #expect(FolderSaver.fileName(suggestedName: "PHOTO.PNG", filenameExtensions: ["png"]) == ("PHOTO", "PNG"))
        #expect(FolderSaver.fileName(suggestedName: "cat.jpg", filenameExtensions: ["jpeg", "jpg"]) == ("cat", "jpg"))
        #expect(FolderSaver.fileName(suggestedName: "cat.txt", filenameExtensions: ["png"]) == ("cat.txt", "png"))
        #expect(FolderSaver.fileName(suggestedName: ".png", filenameExtensions: ["png"]) == ("png", "png"))
        #expect(FolderSaver.fileName(suggestedName: "x", filenameExtensions: ["a/b", ""]) == ("x", nil), "unusable extensions are ignored")
        let folder = try Folder()
        let paths = try FolderSaver.save([Self.file("notes", []), Self.file("notes", []), Self.file("photo.png")], in: folder.path)
        #expect(try folder.names() == ["notes", "notes 2", "photo.png"])
        #expect(paths.count == 3)
    }

    @Test("a failure removes what the call created: nothing half-saved remains")
    func cleanupOnFailure() throws {
        let folder = try Folder()
        // A name taken 1000 times over makes the second file fail after the first was created.
        try Data().write(to: URL(fileURLWithPath: folder.path + "/full.txt"))
        for n in 2...FolderSaver.maximumAttempts { try Data().write(to: URL(fileURLWithPath: folder.path + "/full \(n).txt")) }
        let before = try folder.names()
        let error = Self.error { _ = try FolderSaver.save([Self.file("fresh", ["txt"]), Self.file("full", ["txt"])], in: folder.path) }
        #expect(error?.code == .io)
        #expect(try folder.names() == before, "fresh.txt was removed again")

        guard getuid() != 0 else { return }  // root writes anywhere: a read-only folder cannot refuse it
        let locked = try Folder()
        chmod(locked.path, 0o500)
        defer { chmod(locked.path, 0o700) }
        let denied = Self.error { _ = try FolderSaver.save([Self.file("a")], in: locked.path) }
        #expect(denied?.code == .permissionDenied)
        #expect(denied?.message.contains("cannot create \"a.png\"") == true)
    }
}

import FerryTerminal
import FerryTestSupport
import Foundation
import Testing

/// `make install`, `make uninstall` and `make deb` as a user meets them: the installed binaries
/// run without the Swift toolchain, the bus starts ferryd from the installed service file, every
/// file lands in its standard place with the installed paths, and removing Ferry leaves nothing.
@Suite("make install, uninstall and deb", .serialized, InstalledTree.enabled)
struct InstallTests {
    @Test("under a scratch PREFIX: self-contained binaries, --version, ferryd started by the bus from the installed file")
    func installedRunsWithoutToolchain() async throws {
        let scratch = try InstalledTree.scratch("prefix")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("ferry")
        let install = try await InstalledTree.make(["install", "PREFIX=\(prefix.path)",
                                                    "AUTOSTARTDIR=\(prefix.path)/etc/xdg/autostart"])
        try #require(install.succeeded, "\(install.stdout)\(install.stderr)")

        for program in try await InstalledTree.programs() {
            let (ldd, swift) = try await InstalledTree.swiftLibraries(of: prefix.path + "/bin/" + program)
            #expect(swift.isEmpty, "\(program) needs the toolchain: \(ldd)")
        }

        let work = scratch.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let (lines, result) = try await InstalledTree.runInstalled(
            bin: prefix.path + "/bin", serviceDirectory: prefix.path + "/share/dbus-1/services", work: work)
        #expect(result.succeeded, "\(result.outcome)")
        #expect(InstalledTree.wrongVersions(in: lines, programs: try await InstalledTree.programs()).isEmpty, "\(result.stdout)")
        #expect(lines["ferryd-exe"] == [prefix.path + "/bin/ferryd"], "\(result.stdout)")
        #expect(lines["ferryd-swift-libraries"] == ["0"], "\(result.stdout)")
        #expect(lines["paste"] == ["shipped by Ferry"], "\(result.stdout)")

        let uninstall = try await InstalledTree.make(["uninstall", "PREFIX=\(prefix.path)",
                                                      "AUTOSTARTDIR=\(prefix.path)/etc/xdg/autostart"])
        #expect(uninstall.succeeded, "\(uninstall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: prefix.path), "left: \(InstalledTree.contents(of: prefix))")
    }

    @Test("with DESTDIR: every file in its place with the installed paths; uninstall removes exactly that")
    func stagedInstallAndUninstall() async throws {
        let destination = try InstalledTree.scratch("destdir")
        defer { try? FileManager.default.removeItem(at: destination) }
        let prefix = "/opt/ferry-test"
        let variables = ["DESTDIR=\(destination.path)", "PREFIX=\(prefix)", "AUTOSTARTDIR=/etc/xdg/autostart"]
        let install = try await InstalledTree.make(["install"] + variables)
        try #require(install.succeeded, "\(install.stdout)\(install.stderr)")
        let staged = destination.path + prefix
        let files = FileManager.default

        let programs = try await InstalledTree.programs()
        for program in programs {
            #expect(files.isExecutableFile(atPath: "\(staged)/bin/\(program)"), "\(program)")
        }

        // Service files: each one installed where its kind belongs, naming installed programs.
        let services = TestPaths.packageRoot.appendingPathComponent("services")
        let sources = try files.contentsOfDirectory(atPath: services.path)
            .filter { $0.hasSuffix(".service") || $0.hasSuffix(".desktop") }
        #expect(sources.contains("org.ferry.Broker.service") && sources.contains("ferryd.service"))
        for name in sources {
            let source = try String(contentsOf: services.appendingPathComponent(name), encoding: .utf8)
            let folder = name.hasSuffix(".desktop") ? destination.path + "/etc/xdg/autostart"
                : source.contains("[D-BUS Service]") ? staged + "/share/dbus-1/services" : staged + "/lib/systemd/user"
            let installed = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            #expect(!installed.contains("/usr/local"), "\(name) keeps the source's paths:\n\(installed)")
            let commands = installed.split(separator: "\n").filter { $0.hasPrefix("Exec=") || $0.hasPrefix("ExecStart=") }
            #expect(!commands.isEmpty, "\(name) runs nothing")
            for line in commands {
                let executable = String(line.split(separator: "=", maxSplits: 1)[1].split(separator: " ")[0])
                #expect(executable.hasPrefix(prefix + "/bin/") && files.isExecutableFile(atPath: destination.path + executable),
                        "\(name): \(line)")
            }
        }

        // The interface XML, as it is in the repository.
        let interfaces = services.appendingPathComponent("interfaces")
        for name in try files.contentsOfDirectory(atPath: interfaces.path) where name.hasSuffix(".xml") {
            let installed = try Data(contentsOf: URL(fileURLWithPath: "\(staged)/share/dbus-1/interfaces/\(name)"))
            #expect(installed == (try Data(contentsOf: interfaces.appendingPathComponent(name))), "\(name)")
        }

        // A man page for every command and subcommand the installed ferry has, and ferryd's.
        let man = staged + "/share/man/man1/"
        let dump = try await ChildProcess.run("\(staged)/bin/ferry-cli", ["--experimental-dump-help"])
        let tree = try #require(try JSONSerialization.jsonObject(with: dump.standardOutput) as? [String: Any])
        let root = try #require(tree["command"] as? [String: Any])
        let paths = Self.commandPaths(root)
        #expect(paths.count >= 20, "\(paths)")
        for path in paths {
            #expect(files.fileExists(atPath: man + path.joined(separator: ".") + ".1"), "no man page for \(path.joined(separator: " "))")
        }
        #expect(files.fileExists(atPath: man + "ferryd.1"))
        let ferryPage = try String(contentsOfFile: man + "ferry.1", encoding: .utf8)
        #expect(ferryPage.contains("EXIT STATUS") && ferryPage.contains("-version"), "ferry.1 lacks the root's help")
        let topLevel = paths.filter { $0.count == 2 }.map { $0[1] }.filter { $0 != "help" }
        for (name, file) in [("bash", "bash-completion/completions/ferry"), ("zsh", "zsh/site-functions/_ferry"),
                             ("fish", "fish/vendor_completions.d/ferry.fish"), ("man", "man/man1/ferry.1")] {
            let text = try String(contentsOfFile: "\(staged)/share/\(file)", encoding: .utf8)
            let missing = topLevel.filter { !text.contains($0) }
            #expect(missing.isEmpty, "\(name) (\(file)) does not mention \(missing)")
        }
        let ferrydPage = try String(contentsOfFile: man + "ferryd.1", encoding: .utf8)
        #expect(ferrydPage.contains("state-dir") && ferrydPage.contains("replace"))

        // Uninstall removes what install put there and keeps what someone else put beside it.
        let foreign = "\(staged)/bin/other-tool"
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: foreign))
        let uninstall = try await InstalledTree.make(["uninstall"] + variables)
        #expect(uninstall.succeeded, "\(uninstall.stderr)")
        #expect(files.fileExists(atPath: foreign))
        #expect(uninstall.stderr.contains("kept \(staged)/bin"), "\(uninstall.stderr)")
        #expect(InstalledTree.contents(of: destination) == ["opt", "opt/ferry-test", "opt/ferry-test/bin", "opt/ferry-test/bin/other-tool"])

        // Without an install there is nothing to remove, and uninstall says so.
        try files.removeItem(atPath: foreign)
        let again = try await InstalledTree.make(["uninstall"] + variables)
        #expect(again.status != 0 && again.stderr.contains("nothing to uninstall"), "\(again.outcome)")
    }

    @Test("make deb: Depends derived from the binaries; dpkg installs it in a scratch root, the bus starts it, dpkg removes it")
    func debianPackage() async throws {
        let scratch = try InstalledTree.scratch("deb")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let build = try await InstalledTree.make(["deb", "DEBDIR=\(scratch.path)/out"])
        try #require(build.succeeded, "\(build.stdout)\(build.stderr)")
        let deb = try #require(build.stdout.split(separator: "\n").last.map(String.init))
        #expect(deb.hasSuffix("_\(FerryVersion.number)_amd64.deb") || deb.hasSuffix("_\(FerryVersion.number)_arm64.deb"), "\(deb)")

        let control = try await ChildProcess.run("dpkg-deb", ["--field", deb, "Package", "Version", "Depends"])
        let fields = control.stdout
        #expect(fields.contains("Package: ferry") && fields.contains("Version: \(FerryVersion.number)"), "\(fields)")
        // ferryd links libdbus-1 and SQLite (GRDB); every binary links libc.
        for package in ["libdbus-1-3 (>=", "libsqlite3-0 (>=", "libc6 (>="] {
            #expect(fields.contains(package), "Depends lacks \(package): \(fields)")
        }
        #expect(!fields.lowercased().contains("swift"), "\(fields)")

        // A scratch root whose package database holds this machine's entries of the packages
        // Depends names, and nothing else: dpkg installs only if Depends names real packages.
        let root = scratch.appendingPathComponent("root")
        let admin = root.appendingPathComponent("var/lib/dpkg")
        for folder in ["info", "updates", "triggers"] {
            try FileManager.default.createDirectory(at: admin.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let dependsLine = try #require(fields.split(separator: "\n").first { $0.hasPrefix("Depends: ") })
        var status = ""
        for dependency in dependsLine.dropFirst("Depends: ".count).split(separator: ",") {
            let name = String(dependency.split(separator: " ")[0])
            let entry = try await ChildProcess.run("dpkg-query", ["--status", name])
            try #require(entry.succeeded, "Depends names \(name), which is not installed here: \(entry.stderr)")
            status += entry.stdout.hasSuffix("\n\n") ? entry.stdout : entry.stdout + "\n"
            let listed = try await ChildProcess.run("dpkg-query", ["--show", "--showformat=${binary:Package}", name])
            try Data().write(to: admin.appendingPathComponent("info/\(listed.stdout).list"))
        }
        try status.write(to: admin.appendingPathComponent("status"), atomically: true, encoding: .utf8)
        let dpkgInstall = try await ChildProcess.run("dpkg", ["--root=\(root.path)", "--install", deb])
        try #require(dpkgInstall.succeeded, "\(dpkgInstall.outcome)")
        #expect(FileManager.default.fileExists(atPath: root.path + "/usr/share/man/man1/ferry.1.gz"))
        #expect(FileManager.default.fileExists(atPath: root.path + "/usr/share/bash-completion/completions/ferry"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/usr/share/ferry"), "the package carries an install manifest")

        // The package's /usr laid over this machine's, as if installed: the bus starts /usr/bin/ferryd.
        let work = scratch.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let (lines, result) = try await InstalledTree.runInstalled(
            bin: "/usr/bin", serviceDirectory: "/usr/share/dbus-1/services", overlayUsr: root.path + "/usr", work: work)
        #expect(result.succeeded, "\(result.outcome)")
        #expect(InstalledTree.wrongVersions(in: lines, programs: try await InstalledTree.programs()).isEmpty, "\(result.stdout)")
        #expect(lines["ferryd-exe"] == ["/usr/bin/ferryd"], "\(result.stdout)")
        #expect(lines["paste"] == ["shipped by Ferry"], "\(result.stdout)")

        let dpkgRemove = try await ChildProcess.run("dpkg", ["--root=\(root.path)", "--purge", "ferry"])
        #expect(dpkgRemove.succeeded, "\(dpkgRemove.outcome)")
        let left = InstalledTree.contents(of: root).filter { !$0.hasPrefix("var") }
        #expect(left.isEmpty, "dpkg --purge left \(left)")
    }

    /// Every command path of a `--experimental-dump-help` command tree: `["ferry"]`,
    /// `["ferry", "copy"]`, `["ferry", "history", "list"]`, ….
    static func commandPaths(_ command: [String: Any], above: [String] = []) -> [[String]] {
        guard let name = command["commandName"] as? String else { return [] }
        let path = above + [name]
        let subcommands = command["subcommands"] as? [[String: Any]] ?? []
        return [path] + subcommands.flatMap { commandPaths($0, above: path) }
    }
}

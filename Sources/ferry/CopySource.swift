import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of one representation `ferry copy` writes, once its input has been looked at.
struct CopySource {
    /// Where the bytes are.
    enum Bytes {
        /// In memory (`--text`, small standard input).
        case inline([UInt8])
        /// A regular file read from its start: a named file, standard input redirected from a file
        /// (`/proc/self/fd/0`) or standard input copied into a memfd (`/proc/self/fd/N`).
        case file(path: String, size: UInt64)
    }

    var bytes: Bytes
    /// The type the content suggests (the first 64 KiB and the name), nil when not sniffed.
    var sniffed: ContentType?
    /// The file's name without its extension, for `suggestedName`.
    var suggestedName: String?
    /// A regular file's identity when it was looked at: a `--lazy` copy serves it only while it
    /// is unchanged.
    var identity: FileIdentity?

    /// Data at most this long from standard input is sent inline (the bus's inline/fd crossover).
    static let inlineLimit = 16 * 1024

    var size: UInt64 {
        switch bytes {
        case .inline(let data): UInt64(data.count)
        case .file(_, let size): size
        }
    }

    /// `--text S`.
    static func text(_ text: String) -> CopySource {
        // Bytes of the argument that are not UTF-8 become U+FFFD: the type says UTF-8 text.
        CopySource(bytes: .inline(Array(RawArguments.lossy(text).utf8)), sniffed: .utf8PlainText, suggestedName: nil)
    }

    /// A named file: checked readable now, sniffed unless `sniff` is false (a `--type` was given).
    /// A FIFO or a device is read now, once, and sniffed from what was read: opening it a second
    /// time to sniff it would take its first bytes, or wait for a writer that has gone.
    /// - Throws: `CLIFailure` (status 2) when it is missing, unreadable or a folder (`verb` says
    ///   what could not be done with a folder).
    ///   A name that is not UTF-8 is read by its exact bytes; its suggested name and the name it
    ///   is sniffed by show those bytes as U+FFFD.
    static func file(_ argument: PathArgument, sniff: Bool, verb: String = "copy") throws -> CopySource {
        let shown = argument.display
        guard !argument.bytes.isEmpty, !argument.bytes.contains(0) else { throw CLIFailure("cannot read '\(shown)': invalid path") }
        guard let path = argument.systemPath() else { throw CLIFailure("cannot read '\(shown)': \(LinuxCalls.reason(errno))") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIFailure("cannot read '\(shown)': \(LinuxCalls.reason(errno))") }
        defer { close(fd) }
        guard let info = LinuxCalls.status(of: fd) else { throw CLIFailure("cannot read '\(shown)': \(LinuxCalls.reason(errno))") }
        if LinuxCalls.isDirectory(info) { throw CLIFailure("cannot \(verb) '\(shown)': it is a folder") }
        let base = argument.fileName
        var name = base
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { name = String(base[..<dot]) }
        guard LinuxCalls.isRegularFile(info) else {
            // A FIFO or a device: read it now, like standard input.
            return try read(fd, name: "'\(shown)'", sniff: sniff, suggestedName: name)
        }
        var type: ContentType?
        if sniff {
            do {
                type = try TypeDatabase.shared.sniff(fileAtPath: path, filename: shown).type
            } catch {
                throw CLIFailure(error.description)
            }
        }
        let size = UInt64(max(0, info.st_size))
        return CopySource(bytes: .file(path: path, size: size), sniffed: type, suggestedName: name.isEmpty ? nil : name,
                          identity: FileIdentity(descriptor: fd))
    }

    /// Standard input: a regular file is passed on as it is; anything else (a pipe, a terminal) is
    /// read to end of file, into memory when short, otherwise into a memfd.
    static func standardInput(sniff: Bool) throws -> CopySource {
        if let info = LinuxCalls.status(of: 0), LinuxCalls.isRegularFile(info), lseek(0, 0, SEEK_CUR) == 0 {
            var type: ContentType?
            if sniff {
                var prefix = [UInt8](repeating: 0, count: 64 * 1024)
                let n = prefix.withUnsafeMutableBytes { pread(0, $0.baseAddress, $0.count, 0) }
                type = ContentType.sniff(data: prefix.prefix(max(0, n)), filename: nil).type
            }
            return CopySource(bytes: .file(path: "/proc/self/fd/0", size: UInt64(max(0, info.st_size))), sniffed: type,
                              identity: FileIdentity(descriptor: 0))
        }
        return try read(0, name: "standard input", sniff: sniff, suggestedName: nil)
    }

    /// Reads `fd` to end of file: the first 64 KiB into memory (for sniffing), the whole into a
    /// memfd when it is longer than `inlineLimit`, with a progress bar past 8 MiB.
    private static func read(_ fd: Int32, name: String, sniff: Bool, suggestedName: String?) throws -> CopySource {
        var prefix: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while prefix.count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count - prefix.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(.failure, "cannot read \(name): \(LinuxCalls.reason(errno))")
            }
            if n == 0 { break }
            prefix += buffer[..<n]
        }
        let type = sniff ? ContentType.sniff(data: prefix, filename: nil).type : nil
        if prefix.count <= inlineLimit {
            return CopySource(bytes: .inline(prefix), sniffed: type, suggestedName: suggestedName)
        }
        let memfd: Int32
        do {
            // Not closed: it stays open for the life of the process (see below).
            memfd = try LinuxCalls.memoryFile(name: "ferry-copy", contents: [], sealed: false)
        } catch let error as CLIFailure {
            throw CLIFailure(.failure, "cannot buffer \(name): \(error.message)")
        }
        let sink = OutputFile(fd: memfd, name: "a memory file")
        try sink.write(prefix)
        let progress = ProgressBar.make(label: "reading", total: nil)
        progress?.advance(by: prefix.count)
        defer { progress?.finish() }
        let rest = try ByteCopier(source: fd, sourceName: name, destination: sink, inactivityTimeout: nil, progress: progress).run()
        // The descriptor stays open for the life of the process: the library reopens it by path.
        return CopySource(bytes: .file(path: "/proc/self/fd/\(memfd)", size: UInt64(prefix.count) + rest),
                          sniffed: type, suggestedName: suggestedName)
    }

    /// Reads the bytes (for a promise being served): a file only while it is the one that was
    /// copied, so a paste gets what `types` announced or a clear error, never another version.
    /// - Throws: `FerryModelError` `.unavailable` when the file is gone, changed since it was
    ///   copied or changed while it was read; `.io` when it cannot be read.
    func load() throws -> Data {
        switch bytes {
        case .inline(let data):
            return Data(data)
        case .file(let path, _):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == ENOENT { throw FerryModelError(.unavailable, "'\(path)' was removed after it was copied") }
                throw FerryModelError(.io, "cannot read '\(path)': \(LinuxCalls.reason(errno))")
            }
            defer { close(fd) }
            try checkUnchanged(fd, path: path, when: "after it was copied")
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw FerryModelError(.io, "cannot read '\(path)': \(LinuxCalls.reason(errno))")
                }
                if n == 0 { break }
                data.append(contentsOf: buffer[..<n])
            }
            try checkUnchanged(fd, path: path, when: "while it was read")
            return data
        }
    }

    /// Refuses the open file `fd` when it is not the file that was copied (another file now at
    /// `path`, another size or modification time).
    private func checkUnchanged(_ fd: Int32, path: String, when: String) throws {
        guard let identity else { return }
        guard let now = FileIdentity(descriptor: fd) else {
            throw FerryModelError(.unavailable, "'\(path)' is no longer a regular file")
        }
        guard let change = now.change(since: identity) else { return }
        throw FerryModelError(.unavailable, "'\(path)' changed \(when) (\(change)); it is no longer served: copy it again")
    }
}

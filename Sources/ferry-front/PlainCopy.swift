import CDBus
import FerryTerminal
#if canImport(Glibc)
import Glibc
#endif

/// `ferry copy` in the plain forms the front handles itself: `copy --text TEXT`, and `copy` of
/// standard input (a pipe) with `-t`/`--type` — each with `-p`/`--pasteboard`, `--bus`,
/// `--local-only` and `--sensitive`, each at most once, values as the next argument. Both write one
/// item with one representation, as the full CLI's `CopyCommand` writes it: the same `SetItems`
/// call and options, nothing printed on success, the same errors and statuses.
///
/// `--type` must be one of `PlainPaste.knownTypes` or `text` (any case: public.utf8-plain-text,
/// as `WrittenType` reads it). Standard input without `--type` is typed by its content (the type
/// database the front does not link), so it goes to the full CLI, as does everything else:
/// files, `-`, `--rep`, `--json`, `--verbose`, `--lazy`, `--paste-once`, `--expires`,
/// `--primary`, help, `--opt=value`, an argument that is not UTF-8 (the full CLI keeps its bytes).
///
/// Standard input is taken only when it is a pipe in blocking mode and standard error is not a
/// terminal (where more than 8 MiB shows the full CLI's progress bars): anything else is handed
/// over before a byte is read. Once standard input is read nothing can be handed over, so from
/// there the front reports every failure itself, with the full CLI's message and status.
struct PlainCopy {
    /// Where the bytes come from.
    enum Source: Equatable {
        /// `--text TEXT`.
        case text(String)
        /// Standard input, read to its end.
        case standardInput
    }

    var source = Source.standardInput
    /// The type identifier sent to the broker; nil when none was given.
    var type: String?
    /// The pasteboard's name (checked as `PasteboardName.validate` does).
    var pasteboard = "general"
    var localOnly = false
    var sensitive = false
    /// The bus address; nil for the session bus.
    var bus: String?

    /// Standard input up to this many bytes is sent inline, larger in a memory file: the client
    /// library's `ItemEncoder.inlineLimit` (and `CopySource.inlineLimit`).
    static let inlineLimit = 16 * 1024

    /// The plain copy `arguments` (without the program name) ask for; nil for any other command line.
    init?(arguments: ArraySlice<String>) {
        guard arguments.first == "copy" else { return nil }
        // An array, not a Set: see the note on FerryFront.
        var seen: [String] = []
        var rest = arguments.dropFirst()
        var text: String?
        while let option = rest.popFirst() {
            let key: String
            switch option {
            case "--local-only":
                key = "local-only"; localOnly = true
            case "--sensitive":
                key = "sensitive"; sensitive = true
            default:
                guard let value = rest.popFirst(), !value.hasPrefix("-") || value.utf8.count == 1 else { return nil }
                switch option {
                case "--text":
                    key = "text"; text = value
                case "-t", "--type":
                    if value.lowercased() == "text" {
                        type = "public.utf8-plain-text"
                    } else {
                        guard PlainPaste.knownTypes.contains(value) else { return nil }
                        type = value
                    }
                    key = "type"
                default:
                    guard let shared = PlainPaste.sharedOption(option, value, pasteboard: &pasteboard, bus: &bus) else {
                        return nil
                    }
                    key = shared
                }
            }
            guard !seen.contains(key) else { return nil }
            seen.append(key)
        }
        if let text {
            source = .text(text)
        } else if type == nil {
            return nil  // standard input typed by its content
        }
    }

    /// Copies; hands over (before anything was read or written) what the full CLI must do.
    func run() -> PlainPaste.Outcome {
        // A closed standard input, output or error would be the number of the next descriptor
        // opened — the bus connection. The full CLI reports a closed one.
        guard PlainPaste.isOpen(0), PlainPaste.isOpen(1), PlainPaste.isOpen(2), Self.commandLineIsUTF8() else { return .handOver }
        if source == .standardInput {
            guard Self.standardInputIsPlainPipe(), isatty(2) != 1 else { return .handOver }
        }
        guard let link = PlainPaste.withBusAddress(bus, { BrokerLink(address: $0) }) else { return .handOver }
        defer { link.close() }
        switch source {
        case .text(let text):
            let bytes = Array(text.utf8)
            if bytes.count <= Self.inlineLimit { return copy(.bytes(bytes), over: link, handingOverRefusals: true) }
            // As the client library places bytes over 16 KiB: in a sealed memory file.
            guard let fd = Self.sealedMemoryFile(named: "ferry-" + (type ?? "public.utf8-plain-text"), bytes) else { return .handOver }
            defer { _ = Glibc.close(fd) }
            return copy(.descriptor(fd), over: link, handingOverRefusals: true)
        case .standardInput:
            let read = Self.readStandardInput()
            switch read {
            case .failure(let failure):
                return .finished(failure.report())
            case .success(let payload):
                defer { if case .descriptor(let fd) = payload { _ = Glibc.close(fd) } }
                return copy(payload, over: link, handingOverRefusals: false)
            }
        }
    }

    /// Resolves the pasteboard and writes the item. A refusal is handed over when
    /// `handingOverRefusals` (nothing was consumed), else reported.
    private func copy(_ payload: BrokerLink.Payload, over link: BrokerLink, handingOverRefusals: Bool) -> PlainPaste.Outcome {
        func ended(_ failure: FrontFailure, refused: Bool) -> PlainPaste.Outcome {
            refused && handingOverRefusals ? .handOver : .finished(failure.report())
        }
        var path = "/org/ferry/Pasteboard/general"
        if pasteboard != "general" {
            switch link.pasteboardPath(pasteboard, create: true) {
            case .answered(let named): path = named
            case .refused(let failure): return ended(failure, refused: true)
            case .failed(let failure): return ended(failure, refused: false)
            }
        }
        let item = BrokerLink.OneItem(type: type ?? "public.utf8-plain-text", payload: payload, localOnly: localOnly, sensitive: sensitive)
        switch link.setItems(path: path, item: item) {
        case .answered: return .finished(0)
        case .refused(let failure): return ended(failure, refused: true)
        case .failed(let failure): return ended(failure, refused: false)
        }
    }

    /// A memory file holding `bytes`, at offset 0, sealed against every change (the client
    /// library's `FileDescriptor.memfd(name:contents:sealed: true)`); nil when one cannot be made.
    static func sealedMemoryFile(named name: String, _ bytes: [UInt8]) -> Int32? {
        let fd = cdbus_memfd_create(name)
        guard fd >= 0 else { return nil }
        let file = StandardOutput(fd: fd, name: "a memory file")
        let seals = CDBUS_F_SEAL_SHRINK | CDBUS_F_SEAL_GROW | CDBUS_F_SEAL_WRITE | CDBUS_F_SEAL_SEAL
        guard file.write(bytes) == nil, lseek(fd, 0, SEEK_SET) == 0, cdbus_add_seals(fd, seals) == 0 else {
            _ = Glibc.close(fd)
            return nil
        }
        return fd
    }

    /// Whether every argument is valid UTF-8 (the full CLI keeps the bytes of one that is not,
    /// and writes them into text as U+FFFD its own way).
    static func commandLineIsUTF8() -> Bool {
        (0..<Int(CommandLine.argc)).allSatisfy { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return true }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)).bindMemory(to: UInt8.self)
            return String(validating: bytes, as: UTF8.self) != nil
        }
    }

    /// Whether standard input is a pipe (or FIFO) in blocking mode: what the full CLI reads to its
    /// end the same way. A regular file is passed on as a file there, a terminal is interactive,
    /// and a non-blocking pipe makes its reads fail with EAGAIN.
    static func standardInputIsPlainPipe() -> Bool {
        var info = stat()
        guard fstat(0, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return false }
        let flags = fcntl(0, F_GETFL)
        return flags >= 0 && flags & O_NONBLOCK == 0
    }

    /// Standard input to its end, as the full CLI's `CopySource` reads it: up to `inlineLimit`
    /// bytes inline, more into a memory file, which is sent as a descriptor of its own opened by
    /// `/proc/self/fd/N` (as the client library opens a file). The memory file stays open for
    /// the life of the process, as there.
    static func readStandardInput() -> Result<BrokerLink.Payload, FrontFailure> {
        var prefix: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: inlineLimit + 1)
        while prefix.count <= inlineLimit {
            let wanted = inlineLimit + 1 - prefix.count
            let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(FrontFailure(status: 1, message: "cannot read standard input: " + StandardOutput.reason(errno)))
            }
            if n == 0 { break }
            prefix += buffer[..<n]
        }
        if prefix.count <= inlineLimit { return .success(.bytes(prefix)) }
        let memfd = cdbus_memfd_create("ferry-copy")
        guard memfd >= 0 else {
            let code = errno
            return .failure(FrontFailure(status: 1, message: "cannot buffer standard input: org.ferry.DBus.Error.SystemError: memfd_create failed: "
                                         + StandardOutput.reason(code) + " (errno \(code))"))
        }
        let sink = StandardOutput(fd: memfd, name: "a memory file")
        if let failure = sink.write(prefix) { return .failure(failure) }
        if case .failure(let failure) = sink.copy(from: 0, sourceName: "standard input", inactivityTimeout: nil, progress: nil) {
            return .failure(failure)
        }
        let path = "/proc/self/fd/\(memfd)"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let name = code == ENOENT ? "org.ferry.Error.NotFound" : code == EACCES ? "org.ferry.Error.PermissionDenied" : "org.ferry.Error.IO"
            return .failure(FrontFailure(busErrorName: name, message: "cannot open \(path): " + StandardOutput.reason(code)))
        }
        return .success(.descriptor(fd))
    }
}

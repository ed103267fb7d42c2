import FerryTerminal
#if canImport(Glibc)
import Glibc
#endif

/// `ferry paste` in the plain forms the front handles itself: `paste` followed by `-t`/`--type`,
/// `-i`/`--item`, `-p`/`--pasteboard`, `--timeout` and `--bus`, each at most once and with its
/// value as the next argument, and `--primary` (the pasteboard `primary`; not with `-p`) —
/// writing to standard output.
///
/// The front cannot link ArgumentParser (its start-up is what the front saves), so this is the
/// one hand parser of `paste`; the full CLI's is `PasteCommand`, through ArgumentParser alone.
/// Whatever this accepts, `PasteCommand` must accept with the same meaning: `PasteParsersTests`
/// runs one table of argument lists through both (and through both executables).
///
/// Standard output a terminal is left to the full CLI too (`run` hands over before reading): it
/// refuses to write an image there without `--force`.
///
/// Anything else is left to the full CLI (the initializer returns nil): help, `--type=x`, `-o`,
/// `--into`, an unknown option, a number that is not one, a pasteboard name that is not valid, a
/// `--type` that is not one of `knownTypes` (a MIME type or another identifier needs the type
/// database to resolve or reject it), an empty `--bus`.
struct PlainPaste {
    /// The type identifier sent to the broker (`public.item` when none was asked for, as the
    /// full CLI sends).
    var type = "public.item"
    /// The item's index.
    var item: UInt32 = 0
    /// The pasteboard's name (checked as `PasteboardName.validate` does).
    var pasteboard = "general"
    /// Seconds promised data may stall.
    var timeout = 60
    /// The bus address; nil for the session bus.
    var bus: String?

    /// Identifiers of the built-in system types that the full CLI resolves to themselves
    /// (`ContentType(id)?.identifier == id`, which FrontPasteTests checks), so sending the text
    /// as it is sends what the full CLI would.
    static let knownTypes = [
        "public.item", "public.content", "public.data", "public.text", "public.plain-text",
        "public.utf8-plain-text", "public.utf16-plain-text", "public.html", "public.rtf", "public.xml",
        "public.json", "public.url", "public.file-url", "public.image", "public.png", "public.jpeg",
        "public.svg-image", "com.adobe.pdf",
    ]

    /// The plain paste `arguments` (without the program name) ask for; nil for any other command line.
    init?(arguments: ArraySlice<String>) {
        guard arguments.first == "paste" else { return nil }
        // An array, not a Set: see the note on FerryFront.
        var seen: [String] = []
        var rest = arguments.dropFirst()
        while let option = rest.popFirst() {
            if option == "--primary" {
                // A flag: it names a pasteboard, so it and -p cannot both be given.
                guard !seen.contains("pasteboard") else { return nil }
                seen.append("pasteboard")
                pasteboard = "primary"
                continue
            }
            guard let value = rest.popFirst(), !value.hasPrefix("-") || value.utf8.count == 1 else { return nil }
            let key: String
            switch option {
            case "-t", "--type":
                guard Self.knownTypes.contains(value) else { return nil }
                key = "type"; type = value
            case "-i", "--item":
                guard let n = Int(value), n >= 0, let index = UInt32(exactly: n) else { return nil }
                key = "item"; item = index
            case "--timeout":
                guard let n = Int(value), n > 0 else { return nil }
                key = "timeout"; timeout = n
            default:
                guard let shared = Self.sharedOption(option, value, pasteboard: &pasteboard, bus: &bus) else { return nil }
                key = shared
            }
            guard !seen.contains(key) else { return nil }
            seen.append(key)
        }
    }

    /// The options every plain command takes: `-p`/`--pasteboard NAME` (checked as
    /// ``isValidPasteboardName(_:)``) and `--bus ADDRESS` (not empty). Sets the one `option`
    /// names and returns its key for the caller's once-only check; nil for another option or a
    /// value refused.
    static func sharedOption(_ option: String, _ value: String, pasteboard: inout String, bus: inout String?) -> String? {
        switch option {
        case "-p", "--pasteboard":
            guard isValidPasteboardName(value) else { return nil }
            pasteboard = value
            return "pasteboard"
        case "--bus":
            guard !value.isEmpty else { return nil }
            bus = value
            return "bus"
        default:
            return nil
        }
    }

    /// `PasteboardName.validate` without the messages: 1–128 ASCII letters, digits, `.`, `_` and
    /// `-`, starting with a letter or digit.
    static func isValidPasteboardName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 128, isAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    /// What became of a paste.
    enum Outcome: Equatable {
        /// Done, successfully or not (the error line is printed): exit with this status.
        case finished(Int32)
        /// Nothing was pasted and nothing printed: the full CLI should do it (and explain).
        case handOver
    }

    /// Pastes to standard output.
    func run() -> Outcome {
        // A closed standard output or error would be the number of the next descriptor opened —
        // the bus connection — and the pasted bytes (or the error line) would go to the bus. The
        // full CLI reports a closed output.
        guard Self.isOpen(1), Self.isOpen(2) else { return .handOver }
        // A terminal is no hot path, and what may be written to one (text, or anything with
        // --force) is the full CLI's decision: it looks at the types before reading.
        guard isatty(1) != 1 else { return .handOver }
        guard let link = Self.withBusAddress(bus, { BrokerLink(address: $0) }) else { return .handOver }
        defer { link.close() }
        let path: String
        if pasteboard == "general" {
            path = "/org/ferry/Pasteboard/general"
        } else {
            // As the full CLI does: a paste never creates a named pasteboard; one that does not
            // exist is handed over, and the full CLI reports NotFound.
            switch link.pasteboardPath(pasteboard, create: false) {
            case .answered(let named): path = named
            case .refused: return .handOver
            case .failed(let failure): return .finished(failure.report())
            }
        }
        let read: BrokerLink.Read
        switch link.read(path: path, item: item, type: type) {
        case .delivered(let delivered): read = delivered
        case .refused: return .handOver
        case .failed(let failure): return .finished(failure.report())
        }
        let output = StandardOutput()
        switch read.content {
        case .bytes(let bytes, _):
            defer { read.content.release() }
            if let failure = output.write(bytes) { return .finished(failure.report()) }
            return .finished(0)
        case .stream(let fd):
            return .finished(copy(read, from: fd, to: output, link: link, path: path).map { $0.report() } ?? 0)
        }
    }

    /// Copies a descriptor's bytes to the end and, for a promised read, confirms the transfer.
    private func copy(_ read: BrokerLink.Read, from fd: Int32, to output: StandardOutput, link: BrokerLink,
                      path: String) -> FrontFailure? {
        let promised = !read.transfer.isEmpty
        let progress = ProgressBar.make(label: "pasting", total: read.size < 0 ? nil : UInt64(read.size))
        let copied = output.copy(from: fd, sourceName: promised ? "the source app" : "the pasteboard",
                                 inactivityTimeout: promised ? timeout : nil, progress: progress)
        progress?.finish()
        _ = Glibc.close(fd)
        let total: UInt64
        switch copied {
        case .success(let n): total = n
        case .failure(let failure): return failure
        }
        guard promised else { return nil }
        switch link.finishTransfer(path: path, transfer: read.transfer) {
        case .success(let written):
            guard written == total else {
                return FrontFailure(status: 4, message: "the source app wrote \(written) bytes but \(total) arrived")
            }
            return nil
        case .failure(let failure):
            return failure
        }
    }

    /// Whether `fd` is an open descriptor.
    static func isOpen(_ fd: Int32) -> Bool {
        fcntl(fd, F_GETFD) != -1 || errno != EBADF
    }

    /// Calls `body` with the bus address: `bus` (from `--bus`), else `DBUS_SESSION_BUS_ADDRESS`,
    /// else `unix:path=$XDG_RUNTIME_DIR/bus` (as the DBus module's `Connection.session()`); nil
    /// when there is none. A C string, never a Swift string made from the environment: the first
    /// native Swift string the front frees costs it a metadata instantiation (see `FerryFront`).
    static func withBusAddress<R>(_ bus: String?, _ body: (UnsafePointer<CChar>) -> R?) -> R? {
        if let bus { return bus.withCString(body) }
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS"), address[0] != 0 { return body(address) }
        guard let runtime = getenv("XDG_RUNTIME_DIR"), runtime[0] != 0 else { return nil }
        let prefix = "unix:path=", suffix = "/bus"
        let length = prefix.utf8.count + strlen(runtime) + suffix.utf8.count + 1
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length) { buffer in
            strcpy(buffer.baseAddress!, prefix)
            strcat(buffer.baseAddress!, runtime)
            strcat(buffer.baseAddress!, suffix)
            return body(buffer.baseAddress!)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only place FerryModel calls GIO's content-type API. Every result is converted to Swift
/// values before it leaves a function; GLib locks its MIME database internally, so these are
/// safe to call from any thread.
///
/// GIO is loaded with `dlopen` on first use rather than linked: linking it costs every process
/// that imports FerryModel about 2 ms at start (measured: a C hello starts in 0.8 ms, 3.6 ms with
/// GIO linked), and most processes — `ferry paste`, an app that never sniffs — never need it.
/// Without the library every query answers "unknown" and the type database keeps its built-in
/// table and the shared-mime-info files.
enum GIOContentTypes {
    /// `g_content_types_get_registered`: every registered MIME type (GIO spells them in lower case).
    static func registered() -> [String] {
        guard let gio = GIO.library, let list = gio.getRegistered() else { return [] }
        var result: [String] = []
        var node: UnsafeMutableRawPointer? = list
        while let n = node {
            // GList is { gpointer data; GList *next; GList *prev; }.
            if let data = n.load(as: UnsafeMutableRawPointer?.self) {
                result.append(String(cString: data.assumingMemoryBound(to: CChar.self)))
                gio.free(data)
            }
            node = n.load(fromByteOffset: MemoryLayout<UnsafeMutableRawPointer?>.stride, as: UnsafeMutableRawPointer?.self)
        }
        gio.listFree(list)
        return result
    }

    /// `g_content_type_get_description`. Pass the lower-case name: GIO finds the description by
    /// the XML file name, which is lower case.
    static func description(of mimeType: String) -> String? {
        guard !mimeType.utf8.contains(0), let gio = GIO.library, let p = gio.getDescription(mimeType) else { return nil }
        defer { gio.free(p) }
        return String(cString: p)
    }

    /// `g_content_type_is_a` (transitive, with GIO's implicit rules).
    static func isA(_ type: String, _ supertype: String) -> Bool {
        guard let gio = GIO.library else { return type == supertype }
        return gio.isA(type, supertype) != 0
    }

    /// `g_content_type_guess` by filename, by data, or both. Returns the MIME type and whether GIO
    /// was certain.
    static func guess(filename: String?, data: [UInt8]?) -> (mimeType: String, isCertain: Bool) {
        guard let gio = GIO.library else { return ("application/octet-stream", false) }
        var uncertain: Int32 = 0
        let name = filename.flatMap { $0.utf8.contains(0) ? nil : $0 }
        let result: UnsafeMutablePointer<CChar>?
        if let data {
            result = data.withUnsafeBufferPointer { buffer in
                gio.guess(name, buffer.baseAddress, buffer.count, &uncertain)
            }
        } else {
            result = gio.guess(name, nil, 0, &uncertain)
        }
        guard let result else { return ("application/octet-stream", false) }
        defer { gio.free(result) }
        return (String(cString: result), uncertain == 0)
    }
}

/// The GIO functions FerryModel uses, resolved once from `libgio-2.0.so.0`.
private struct GIO: Sendable {
    let getRegistered: @convention(c) () -> UnsafeMutableRawPointer?
    let listFree: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let getDescription: @convention(c) (UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?
    let isA: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let guess: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int32>?)
        -> UnsafeMutablePointer<CChar>?

    /// The library, loaded on first use; nil when it is not installed.
    static let library: GIO? = {
        guard let handle = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<F>(_ name: String, as type: F.Type) -> F? {
            dlsym(handle, name).map { unsafeBitCast($0, to: type) }
        }
        guard let getRegistered = symbol("g_content_types_get_registered", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
              let listFree = symbol("g_list_free", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
              let free = symbol("g_free", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
              let getDescription = symbol("g_content_type_get_description",
                                          as: (@convention(c) (UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?).self),
              let isA = symbol("g_content_type_is_a",
                               as: (@convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self),
              let guess = symbol("g_content_type_guess",
                                 as: (@convention(c) (UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int32>?)
                                     -> UnsafeMutablePointer<CChar>?).self)
        else { return nil }
        return GIO(getRegistered: getRegistered, listFree: listFree, free: free, getDescription: getDescription,
                   isA: isA, guess: guess)
    }()
}

extension SharedMIMEInfo {
    /// The shared-mime-info database installed on this machine.
    ///
    /// The list of MIME types comes from GIO (`g_content_types_get_registered`); their canonical
    /// spelling, aliases, direct parents and globs come from the `types`, `aliases`, `subclasses`
    /// and `globs2` files of each `mime/` folder under `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`
    /// (earlier folders first). GIO lists names in lower case; the `types` file restores the
    /// canonical case (`audio/AMR`), which is the spelling `g_content_type_is_a` needs.
    public static func load() -> SharedMIMEInfo {
        var info = SharedMIMEInfo(types: [], describesWithGIO: true)
        for directory in mimeDirectories() {
            let types = readFile(directory + "/types")
            guard let types else { continue }
            info.absorb(types: types, aliases: readFile(directory + "/aliases") ?? [],
                        subclasses: readFile(directory + "/subclasses") ?? [], globs2: readFile(directory + "/globs2") ?? [])
        }
        // GIO is the authority on which types exist; the files give their spelling.
        var canonical: [String: String] = [:]
        canonical.reserveCapacity(info.types.count)
        for type in info.types { canonical[type.fastLowercased] = type }
        let registered = registered()
        if !registered.isEmpty {
            info.types = registered.map { canonical[$0] ?? canonical[$0.fastLowercased] ?? $0 }
        }
        return info
    }

    /// The registered types GIO reports (lower case), or `[]` when GIO finds none.
    static func registered() -> [String] { GIOContentTypes.registered() }

    /// `mime/` folders in XDG precedence order.
    static func mimeDirectories() -> [String] {
        var dirs: [String] = []
        if let home = environment("XDG_DATA_HOME"), home.hasPrefix("/") {
            dirs.append(home)
        } else if let home = environment("HOME"), !home.isEmpty {
            dirs.append(home + "/.local/share")
        }
        let system = environment("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        dirs += system.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var seen = Set<String>()
        return dirs.filter { seen.insert($0).inserted }.map { $0 + "/mime" }
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// The whole file, or nil when it cannot be read.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }
}

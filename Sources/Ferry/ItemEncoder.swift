import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns item providers into `SetItems` dictionaries, following the writing rules:
///
/// - bytes in memory up to 16 KiB travel inline (`data`), larger ones in a sealed memfd (`fd`);
/// - a file travels as an `O_RDONLY` descriptor of the file itself (a folder as a zip archive);
/// - a loader is promised (`promised`) when the client is a registered app, otherwise loaded now;
/// - a message carries at most 16 descriptors (libdbus counts each occurrence, so representations
///   cannot share one): past 16, a representation of at most 1 MiB goes inline, a larger one is
///   promised when the client is registered, and is `TooLarge` otherwise.
struct ItemEncoder {
    static let inlineLimit = 16 * 1024
    static let inlineMaximum = 1 << 20
    static let maximumFDs = 16
    /// What all inline bytes of one message may add up to (an array is at most 64 MiB).
    static let inlineBudget = 48 << 20

    /// Whether loaders (and representations that do not fit) may be promised.
    let canPromise: Bool
    private var fds = 0
    private var inlineBytes = 0
    /// The files opened for file representations, as handed to the broker (it reads these open
    /// files, so their offsets show how far it got).
    private(set) var files: [FileDescriptor] = []

    init(canPromise: Bool) { self.canPromise = canPromise }

    /// One encoded item: its dictionary and the identifiers of its promised types.
    struct Encoded {
        var dictionary: DBusValue
        var promised: Set<String>
    }

    mutating func encode(_ provider: ItemProvider, localOnly: Bool, expirationDate: Date?, sensitive: Bool, origin: String?)
        async throws(FerryError) -> Encoded {
        guard !provider.representations.isEmpty else {
            throw FerryError(.invalidArgument, "an item needs at least one representation")
        }
        var representations: [DBusValue] = []
        var promised: Set<String> = []
        for representation in provider.representations {
            var entry: [String: DBusValue] = [
                "type": .string(representation.contentType.identifier),
                "visibility": .string(representation.visibility.rawValue),
            ]
            switch try await payload(representation) {
            case .inline(let bytes): entry["data"] = .bytes(bytes)
            case .fd(let fd): entry["fd"] = .unixFD(fd)
            case .promised:
                entry["promised"] = .boolean(true)
                if let size = representation.estimatedSize { entry["estimatedSize"] = .int64(size) }
                promised.insert(representation.contentType.identifier)
            }
            representations.append(.variant(entry.dbusValue))
        }
        var item: [String: DBusValue] = ["representations": .array(of: .variant, representations)]
        if let name = provider.suggestedName { item["suggestedName"] = .string(name) }
        if localOnly { item["localOnly"] = .boolean(true) }
        if let expirationDate { item["expirationDate"] = .int64(WireBridge.microseconds(expirationDate)) }
        if sensitive { item["sensitive"] = .boolean(true) }
        if let origin { item["origin"] = .string(origin) }
        return Encoded(dictionary: item.dbusValue, promised: promised)
    }

    enum Payload {
        case inline([UInt8])
        case fd(FileDescriptor)
        case promised
    }

    private mutating func payload(_ representation: ItemProvider.Representation) async throws(FerryError) -> Payload {
        switch representation.source {
        case .data(let data):
            return try place(data, representation)
        case .file(let url, _) where !representation.isFolder:
            if fds < Self.maximumFDs {
                fds += 1
                let file = try Self.openForReading(url)
                files.append(file)
                return .fd(file)
            }
            if let size = representation.estimatedSize, size <= Self.inlineMaximum {
                return try place(try await Self.load(representation), representation)
            }
            return try promiseOrRefuse(representation)
        case .file, .loader, .stream:
            if canPromise { return .promised }
            return try place(try await Self.load(representation), representation)
        }
    }

    /// Inline when small, else a memfd while descriptors remain, else inline up to 1 MiB, else promised.
    private mutating func place(_ bytes: Data, _ representation: ItemProvider.Representation) throws(FerryError) -> Payload {
        if bytes.count <= Self.inlineLimit, inlineBytes + bytes.count <= Self.inlineBudget {
            inlineBytes += bytes.count
            return .inline([UInt8](bytes))
        }
        if fds < Self.maximumFDs {
            fds += 1
            return .fd(try FerryError.bridgingSync {
                try FileDescriptor.memfd(name: "ferry-\(representation.contentType.identifier)", contents: bytes, sealed: true)
            })
        }
        if bytes.count <= Self.inlineMaximum, inlineBytes + bytes.count <= Self.inlineBudget {
            inlineBytes += bytes.count
            return .inline([UInt8](bytes))
        }
        return try promiseOrRefuse(representation)
    }

    private func promiseOrRefuse(_ representation: ItemProvider.Representation) throws(FerryError) -> Payload {
        guard canPromise else {
            throw FerryError(.tooLarge, "more than \(Self.maximumFDs) large representations in one write "
                             + "(\(representation.contentType.identifier)); register the client so they can be promised")
        }
        return .promised
    }

    /// The representation's bytes (a folder as a zip archive, a loader run now).
    static func load(_ representation: ItemProvider.Representation) async throws(FerryError) -> Data {
        var single = ItemProvider()
        single.register(representation)
        do {
            return try await single.loadData(for: representation.contentType).data
        } catch {
            throw FerryError.converting(error)
        }
    }

    /// An `O_RDONLY` descriptor of the file at `url`.
    static func openForReading(_ url: URL) throws(FerryError) -> FileDescriptor {
        let raw = open(url.path, O_RDONLY | O_CLOEXEC)
        guard raw >= 0 else {
            let code: FerryError.Code = errno == ENOENT ? .notFound : errno == EACCES ? .permissionDenied : .io
            throw FerryError(code, "cannot open \(url.path): \(String(cString: strerror(errno)))")
        }
        return FileDescriptor(taking: raw)
    }
}

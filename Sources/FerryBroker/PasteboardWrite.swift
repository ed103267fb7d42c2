#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel

/// A checked `org.ferry.Pasteboard1.SetItems` call: every item and representation validated
/// (types, visibility, sizes, descriptors) before anything is read or written, so that nothing
/// is written when any item is invalid.
struct PasteboardWrite: Sendable {
    /// At most this many items per write.
    static let maximumItems = 1000
    /// At most this many representations per item.
    static let maximumRepresentations = 64
    /// At most this many representations per write, in all: the cost of a write (parsing it,
    /// storing it, and listing it to every reader afterwards) grows with its representations,
    /// not its bytes — 60,000 of them kept other clients' calls waiting for seconds.
    static let maximumRepresentationsInAll = 4096
    /// Inline `data` is at most 1 MiB; larger bytes travel as an fd.
    static let maximumInlineData = 1 << 20
    /// Inline `data` of one write is at most 48 MiB in all (the client library's budget), well
    /// below the bus's 64 MiB array limit; more travels as fds or promises.
    static let maximumInlineDataInAll = 48 << 20
    /// The bytes of a write kept in memory only (a sensitive item's) are at most 16 MiB.
    static let maximumVolatileSize = 16 << 20
    /// KDE's clipboard convention: a representation of this type whose bytes are `secret` marks
    /// its item as a password manager's copy.
    static let passwordManagerHint = "x-kde-passwordManagerHint"

    /// Whether a password manager hint's bytes say `secret`: in any case, with any whitespace
    /// (a trailing newline, a NUL terminator) around it, as password managers write it.
    static func hintSaysSecret(_ data: Data) -> Bool {
        guard data.count <= 64, let text = String(data: data, encoding: .utf8) else { return false }
        let padding: (Unicode.Scalar) -> Bool = { $0.properties.isWhitespace || $0 == "\u{0}" }
        let scalars = text.unicodeScalars.drop(while: padding).reversed().drop(while: padding).reversed()
        return String(String.UnicodeScalarView(scalars)).lowercased() == "secret"
    }

    /// Where a representation's bytes come from.
    enum Source: Sendable {
        case bytes(Data)
        case descriptor(FileDescriptor, offset: Int64?, length: Int64?)
        case promised(estimatedSize: Int64?)
    }

    struct Representation: Sendable {
        var contentType: ContentType
        var visibility: ItemProvider.Visibility
        var source: Source

        var isPasswordManagerHint: Bool {
            contentType.identifier.lowercased() == PasteboardWrite.passwordManagerHint.lowercased()
        }
    }

    struct Item: Sendable {
        var id = UUID()
        var options: StoredItem.Options
        var suggestedName: String?
        var representations: [Representation]

        /// Sensitive by its flag or by KDE's hint (the hint's bytes already read).
        var isSensitive: Bool {
            options.sensitive || representations.contains { representation in
                guard representation.isPasswordManagerHint, case .bytes(let data) = representation.source else { return false }
                return PasteboardWrite.hintSaysSecret(data)
            }
        }
    }

    /// The items, in order.
    var items: [Item]
    /// The writer.
    var writer: PasteboardCaller

    /// The descriptors the writer handed over, in the order they are read.
    var descriptors: [FileDescriptor] {
        items.flatMap { item in
            item.representations.compactMap { representation in
                if case .descriptor(let fd, _, _) = representation.source { fd } else { nil }
            }
        }
    }

    /// Checks a SetItems argument.
    /// - Throws: `FerryModelError`: `.invalidArgument` naming the key path of the first bad
    ///   value (`items[2].representations[0].type`), `.tooLarge` past the limits,
    ///   `.permissionDenied` for a promise from a caller that is not a registered app.
    init(parsing items: [VariantDictionary], writer: PasteboardCaller) throws {
        guard items.count <= Self.maximumItems else {
            throw FerryModelError(.tooLarge, "\(items.count) items; at most \(Self.maximumItems)", keyPath: "items")
        }
        self.writer = writer
        var representations = 0, inlineBytes = 0
        self.items = try items.enumerated().map { index, entries in
            let item = try Self.item(entries, path: "items[\(index)]", writer: writer)
            representations += item.representations.count
            guard representations <= Self.maximumRepresentationsInAll else {
                throw FerryModelError(.tooLarge, "more than \(Self.maximumRepresentationsInAll) representations in one write",
                                      keyPath: "items[\(index)]")
            }
            for representation in item.representations {
                if case .bytes(let data) = representation.source { inlineBytes += data.count }
            }
            guard inlineBytes <= Self.maximumInlineDataInAll else {
                throw FerryModelError(.tooLarge, "more than \(Self.maximumInlineDataInAll) bytes inline in one write (send large data as fd)",
                                      keyPath: "items[\(index)]")
            }
            return item
        }
    }

    /// One item of SetItems; its representations are read from the D-Bus dictionaries themselves,
    /// since an fd has no wire shape.
    private static func item(_ dictionary: VariantDictionary, path: String, writer: PasteboardCaller) throws -> Item {
        let item = WireReader(dbus: dictionary, path: path)
        guard let list = dictionary["representations"] else { throw item.missing("representations") }
        let entries = try WireReader.variantDictionaries(list, path: item.keyPath("representations"))
        guard !entries.isEmpty else {
            throw FerryModelError(.invalidArgument, "an item needs at least one representation",
                                  keyPath: item.keyPath("representations"))
        }
        guard entries.count <= maximumRepresentations else {
            throw FerryModelError(.tooLarge, "\(entries.count) representations; at most \(maximumRepresentations)",
                                  keyPath: item.keyPath("representations"))
        }
        var seen: Set<String> = []
        let representations = try entries.enumerated().map { index, entry in
            let entryPath = item.keyPath("representations") + "[\(index)]"
            let representation = try Self.representation(entry, path: entryPath, writer: writer)
            guard seen.insert(representation.contentType.identifier.lowercased()).inserted else {
                throw FerryModelError(.invalidArgument, "\(representation.contentType.identifier) appears twice in the item",
                                      keyPath: entryPath + ".type")
            }
            return representation
        }
        let expiration = try item.int64("expirationDate").map { Date(timeIntervalSince1970: Double($0) / 1_000_000) }
        let origin = try item.string("origin")
        if let origin, !StoredItem.isValidOrigin(origin) {
            throw FerryModelError(.invalidArgument,
                                  "an origin is 1–\(StoredItem.maximumOriginLength) bytes of printable ASCII",
                                  keyPath: item.keyPath("origin"))
        }
        let options = StoredItem.Options(localOnly: try item.bool("localOnly") ?? false, expirationDate: expiration,
                                         sensitive: try item.bool("sensitive") ?? false, origin: origin)
        return Item(options: options, suggestedName: try item.string("suggestedName"), representations: representations)
    }

    private static func representation(_ dictionary: VariantDictionary, path: String,
                                       writer: PasteboardCaller) throws -> Representation {
        let entry = WireReader(dbus: dictionary, path: path)
        guard let identifier = try entry.string("type") else { throw entry.missing("type") }
        let type = try Self.contentType(identifier, keyPath: entry.keyPath("type"))
        var visibility = ItemProvider.Visibility.all
        if let name = try entry.string("visibility") {
            guard let known = ItemProvider.Visibility(rawValue: name) else {
                throw FerryModelError(.invalidArgument, "expected \"all\" or \"ownApp\", found \"\(name)\"",
                                      keyPath: entry.keyPath("visibility"))
            }
            visibility = known
        }
        let data = try entry.bytes("data")
        let descriptor = try dictionary.descriptor("fd", keyPath: entry.keyPath("fd"))
        let promised = try entry.bool("promised") ?? false
        let given = [data != nil, descriptor != nil, promised].filter { $0 }.count
        guard given == 1 else {
            throw FerryModelError(.invalidArgument,
                                  given == 0 ? "needs one of data, fd or promised" : "has more than one of data, fd and promised",
                                  keyPath: entry.path)
        }
        let offset = try entry.int64("offset"), length = try entry.int64("length")
        if descriptor == nil, offset != nil || length != nil {
            throw FerryModelError(.invalidArgument, "offset and length go with fd", keyPath: entry.keyPath(offset != nil ? "offset" : "length"))
        }
        let source: Source
        if let data {
            guard data.count <= maximumInlineData else {
                throw FerryModelError(.tooLarge, "\(data.count) bytes inline; at most \(maximumInlineData) (send larger data as fd)",
                                      keyPath: entry.keyPath("data"))
            }
            source = .bytes(Data(data))
        } else if let descriptor {
            for (key, value) in [("offset", offset), ("length", length)] where (value ?? 0) < 0 {
                throw FerryModelError(.invalidArgument, "must not be negative", keyPath: entry.keyPath(key))
            }
            try Self.checkReadable(descriptor, positional: offset != nil, keyPath: entry.keyPath("fd"))
            source = .descriptor(descriptor, offset: offset, length: length)
        } else {
            guard writer.app != nil else {
                throw FerryModelError(.permissionDenied,
                                      "only a registered app can promise a representation (call org.ferry.Broker1.RegisterApp first)",
                                      keyPath: entry.keyPath("promised"))
            }
            let size = try entry.int64("estimatedSize")
            if let size, size < 0 {
                throw FerryModelError(.invalidArgument, "must not be negative", keyPath: entry.keyPath("estimatedSize"))
            }
            source = .promised(estimatedSize: size)
        }
        return Representation(contentType: type, visibility: visibility, source: source)
    }

    /// The type an identifier names: a declared or dynamic type, or an identifier nothing here
    /// declares (another app's exported type, KDE's hint), kept as it is.
    /// - Throws: `FerryModelError` `.invalidArgument` when it is not a type identifier.
    static func contentType(_ identifier: String, keyPath: String) throws -> ContentType {
        guard let type = ContentType(importedAs: identifier) else {
            throw FerryModelError(.invalidArgument,
                                  "\"\(identifier)\" is not a type identifier (1–255 ASCII letters, digits, '.', '-', '_')",
                                  keyPath: keyPath)
        }
        return type
    }

    /// Refuses descriptors that cannot be read: closed, write-only, a directory, or (with an
    /// offset) one that cannot seek.
    static func checkReadable(_ descriptor: FileDescriptor, positional: Bool, keyPath: String) throws {
        let problem: String?
        do {
            problem = try descriptor.withRawValue { fd -> String? in
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0 else { return "is not open (errno \(errno))" }
            if flags & O_ACCMODE == O_WRONLY { return "is open for writing only" }
            if flags & 0o10000000 != 0 {  // O_PATH (not exported by Glibc to Swift)
                return "is an O_PATH descriptor, which cannot be read" }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return "cannot be examined (errno \(errno))" }
            if info.st_mode & S_IFMT == S_IFDIR { return "is a directory" }
            if positional, lseek(fd, 0, SEEK_CUR) < 0 { return "cannot be read at an offset (a pipe or socket)" }
            return nil
            }
        } catch {
            problem = "is closed"
        }
        if let problem {
            throw FerryModelError(.invalidArgument, "the file descriptor \(problem)", keyPath: keyPath)
        }
    }
}

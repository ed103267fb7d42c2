#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An item offered for exchange (copy, drag, share) as a list of typed representations: Apple's
/// `NSItemProvider` as a value.
///
/// It is a promise: nothing is read until a consumer loads a representation. Representations are
/// kept in registration order, which is the fidelity order (highest first); registering a type
/// that is already there keeps the first registration.
public struct ItemProvider: Sendable {
    /// The representations, highest fidelity first.
    public private(set) var representations: [Representation] = []
    /// A name for the item without extension, used for files made from it (`Groceries`).
    public var suggestedName: String?
    /// The size the item prefers to be shown at, in points; `.zero` means unknown.
    public var preferredPresentationSize: Size = .zero

    /// An empty item provider.
    public init() {}

    /// An item provider for a file or folder: one file representation whose type comes from the
    /// file's extension (a folder is `public.folder`, an unknown extension a dynamic type conforming
    /// to `public.data`, no extension `public.data`); the file
    /// name without extension becomes ``suggestedName``.
    /// - Parameters:
    ///   - url: a `file:` URL.
    ///   - contentType: the type to use instead of the one derived from the extension.
    ///   - openInPlace: whether readers get this file itself rather than a copy.
    ///   - visibility: who may see the representation.
    /// - Throws: `FerryModelError` `.invalidArgument` for a non-file URL, `.notFound` when nothing is there.
    public init(contentsOf url: URL, contentType: ContentType? = nil, openInPlace: Bool = false,
                visibility: Visibility = .all) throws {
        guard url.isFileURL else { throw FerryModelError.invalid("\(url.absoluteString) is not a file URL") }
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FerryModelError(.notFound, "no file at \(url.path)")
        }
        let type = contentType ?? (isDirectory ? .folder : ItemProvider.contentType(forFileAt: url))
        registerFileRepresentation(for: type, visibility: visibility, openInPlace: openInPlace, fileAt: url)
        let name = url.deletingPathExtension().lastPathComponent
        suggestedName = name.isEmpty ? nil : name
    }

    /// Adds a representation unless one of the same type is registered already.
    /// - Returns: whether it was added.
    @discardableResult
    public mutating func register(_ representation: Representation) -> Bool {
        guard !representations.contains(where: { $0.contentType == representation.contentType }) else { return false }
        representations.append(representation)
        return true
    }

    /// Registers bytes already in memory.
    @discardableResult
    public mutating func registerDataRepresentation(for type: ContentType, visibility: Visibility = .all,
                                                    data: Data) -> Bool {
        register(Representation(contentType: type, visibility: visibility, source: .data(data)))
    }

    /// Registers bytes produced on demand (Apple's `registerDataRepresentation(for:visibility:loadHandler:)`).
    ///
    /// When the client library serves a paste, a loader whose estimated size is under 16 KiB
    /// starts on the thread of the connection the request came in on, and leaves it at its first
    /// suspension: keep its work before the first `await` short (a quick answer is what makes a
    /// small promised paste fast). Any other loader runs on the global pool.
    /// - Parameters:
    ///   - estimatedSize: a size hint for readers, nil when unknown.
    ///   - loader: produces the bytes; reports progress and may poll cancellation through its argument.
    @discardableResult
    public mutating func registerDataRepresentation(
        for type: ContentType, visibility: Visibility = .all, estimatedSize: Int64? = nil,
        loader: @escaping @Sendable (Progress) async throws -> Data
    ) -> Bool {
        register(Representation(contentType: type, visibility: visibility, source: .loader(loader),
                                estimatedSize: estimatedSize))
    }

    /// Registers bytes a writer streams into a descriptor on demand (``Source/stream(_:)``): a
    /// promise served without holding its bytes in memory, however large.
    /// - Parameters:
    ///   - estimatedSize: a size hint for readers, nil when unknown.
    ///   - writer: writes the bytes into the descriptor it is given, closes it, and returns the count.
    @discardableResult
    public mutating func registerStreamRepresentation(
        for type: ContentType, visibility: Visibility = .all, estimatedSize: Int64? = nil,
        writer: @escaping @Sendable (_ descriptor: Int32) async throws -> UInt64
    ) -> Bool {
        register(Representation(contentType: type, visibility: visibility, source: .stream(writer),
                                estimatedSize: estimatedSize))
    }

    /// Registers a file or folder (Apple's `registerFileRepresentation(for:visibility:openInPlace:…)`).
    @discardableResult
    public mutating func registerFileRepresentation(for type: ContentType, visibility: Visibility = .all,
                                                    openInPlace: Bool = false, fileAt url: URL) -> Bool {
        register(Representation(contentType: type, visibility: visibility, source: .file(url, openInPlace: openInPlace)))
    }

    /// The registered types in fidelity order.
    public var registeredContentTypes: [ContentType] { representations.map(\.contentType) }

    /// The registered types that conform to `type`, in fidelity order.
    public func registeredContentTypes(conformingTo type: ContentType) -> [ContentType] {
        registeredContentTypes.filter { $0.conforms(to: type) }
    }

    /// The registered types a reader may open in place.
    public var registeredContentTypesForOpenInPlace: [ContentType] {
        representations.filter(\.isOpenInPlace).map(\.contentType)
    }

    /// Whether some representation conforms to `type`.
    public func hasRepresentationConforming(to type: ContentType) -> Bool {
        representations.contains { $0.contentType.conforms(to: type) }
    }

    /// Whether ``loadData(for:progress:)`` and ``loadFile(for:progress:_:)`` can deliver `type`:
    /// a conforming representation exists (a folder loads as a file, or as data in a zip archive).
    public func canLoad(as type: ContentType) -> Bool {
        hasRepresentationConforming(to: type)
    }

    /// The first representation, in fidelity order, whose type conforms to `type`.
    public func firstRepresentation(conformingTo type: ContentType) -> Representation? {
        representations.first { $0.contentType.conforms(to: type) }
    }

    /// The representations a process may see: all of them for the item's own app, only `.all`
    /// ones for any other.
    public func representations(visibleTo isOwnApp: Bool) -> [Representation] {
        isOwnApp ? representations : representations.filter { $0.visibility == .all }
    }

    /// This item as another process may see it: `.ownApp` representations removed.
    public func visible(toOwnApp isOwnApp: Bool) -> ItemProvider {
        var copy = self
        copy.representations = representations(visibleTo: isOwnApp)
        return copy
    }

    /// The type for a file from its extension (a dynamic type for an unknown extension,
    /// `public.data` for none).
    static func contentType(forFileAt url: URL) -> ContentType {
        let ext = url.pathExtension
        guard !ext.isEmpty else { return .data }
        return ContentType(filenameExtension: ext) ?? .data
    }
}

extension ItemProvider.Representation {
    /// Whether this is a folder (a file representation of a type conforming to `public.directory`,
    /// or a directory on disk).
    public var isFolder: Bool {
        guard case .file(let url, _) = source else { return false }
        if contentType.conforms(to: .directory) || contentType == .folder { return true }
        var isDirectory = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory
    }
}

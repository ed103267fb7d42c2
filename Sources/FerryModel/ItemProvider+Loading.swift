#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ItemProvider {
    /// Bytes delivered by a load, and the type of the representation they came from.
    public struct LoadedData: Sendable {
        /// The bytes.
        public let data: Data
        /// The registered type that was delivered (e.g. `public.png` when `public.image` was asked for).
        public let contentType: ContentType
    }

    /// A file delivered by a load.
    public struct LoadedFile: Sendable {
        /// Where the file is. Unless ``isInPlace``, it is a temporary copy deleted when the body returns.
        public let url: URL
        /// The registered type that was delivered.
        public let contentType: ContentType
        /// Whether this is the registrant's own file (opened in place) rather than a copy.
        public let isInPlace: Bool
    }

    /// Loads the first representation, in fidelity order, whose type conforms to `type`
    /// (asking for `public.image` on a PNG+JPEG item gives the PNG).
    ///
    /// A file representation is read; a folder is delivered as a zip archive of the folder, as
    /// Apple does (stored, not compressed; at most 1 GiB; symbolic links left out), with
    /// ``LoadedData/contentType`` still the folder's type.
    /// - Parameters:
    ///   - type: the type wanted.
    ///   - progress: receives progress; cancelling it cancels the load.
    /// - Throws: `FerryModelError`: `.notFound` when no representation conforms; `.cancelled` when
    ///   the task or `progress` is cancelled; `.unavailable` when the loader or the file read fails
    ///   (the loader's own `FerryModelError` passes through unchanged); `.tooLarge` for a folder
    ///   over 1 GiB.
    public func loadData(for type: ContentType, progress: Progress = Progress()) async throws -> LoadedData {
        let representation = try requireRepresentation(conformingTo: type)
        let data = try await representation.loadData(progress: progress)
        return LoadedData(data: data, contentType: representation.contentType)
    }

    /// Loads the first representation conforming to `type` as a file and gives it to `body`.
    ///
    /// Data is written to a temporary file named ``suggestedName`` (or `item`) plus the type's
    /// preferred extension (or its nearest supertype's); a file is copied unless registered to open in place. The temporary
    /// file, and the folder made for it, are deleted when `body` returns or throws — copy what
    /// you need to keep (Apple's `loadFileRepresentation` lifetime).
    /// - Returns: what `body` returns.
    /// - Throws: what ``loadData(for:progress:)`` throws, `.unavailable` when the temporary file
    ///   cannot be written, and whatever `body` throws.
    public func loadFile<Result>(for type: ContentType, progress: Progress = Progress(),
                                 _ body: (LoadedFile) async throws -> Result) async throws -> Result {
        let representation = try requireRepresentation(conformingTo: type)
        if case .file(let url, true) = representation.source {
            try ItemProvider.checkCancelled(progress)
            progress.finish(byteCount: representation.estimatedSize ?? 0)
            return try await body(LoadedFile(url: url, contentType: representation.contentType, isInPlace: true))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-load-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw FerryModelError(.unavailable, "cannot make a temporary folder: \(error)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let target: URL
        switch representation.source {
        case .file(let url, _):
            try ItemProvider.checkCancelled(progress)
            target = folder.appendingPathComponent(url.lastPathComponent)
            do {
                try FileManager.default.copyItem(at: url, to: target)
            } catch {
                throw FerryModelError(.unavailable, "cannot copy \(url.path): \(error)")
            }
            progress.finish(byteCount: representation.estimatedSize ?? 0)
        case .stream(let writer):
            // Straight into the file: a streamed representation is never held in memory.
            try ItemProvider.checkCancelled(progress)
            target = folder.appendingPathComponent(temporaryFileName(for: representation.contentType))
            let written = try await StreamCollector.write(contentType: representation.contentType, writer: writer, to: target)
            progress.finish(byteCount: Int64(written))
        case .data, .loader:
            let data = try await representation.loadData(progress: progress)
            target = folder.appendingPathComponent(temporaryFileName(for: representation.contentType))
            do {
                try data.write(to: target)
            } catch {
                throw FerryModelError(.unavailable, "cannot write a temporary file: \(error)")
            }
        }
        return try await body(LoadedFile(url: target, contentType: representation.contentType, isInPlace: false))
    }

    /// Loads the item's ``UserActivity`` (its ``ContentType/userActivity`` representation).
    /// - Throws: what ``loadData(for:progress:)`` throws, and `.invalidArgument` for a bad archive.
    public func loadUserActivity(progress: Progress = Progress()) async throws -> UserActivity {
        try UserActivity(archivedData: try await loadData(for: .userActivity, progress: progress).data)
    }

    /// `suggestedName` + `.` + the type's preferred extension, made safe as a single path component.
    func temporaryFileName(for type: ContentType) -> String {
        var base = String((suggestedName ?? "item").map { $0 == "/" || $0 == "\0" ? "_" : $0 })
        if base.isEmpty || base == "." || base == ".." { base = "item" }
        if let ext = type.inheritedFilenameExtensions.first, !ext.isEmpty,
           !base.lowercased().hasSuffix("." + ext.lowercased()) {
            base += "." + ext
        }
        return base
    }

    private func requireRepresentation(conformingTo type: ContentType) throws -> Representation {
        guard let representation = firstRepresentation(conformingTo: type) else {
            let registered = registeredContentTypes.map(\.identifier).joined(separator: ", ")
            throw FerryModelError(.notFound, "no representation conforms to \(type.identifier) (registered: \(registered))")
        }
        return representation
    }

    static func checkCancelled(_ progress: Progress) throws {
        if Task.isCancelled || progress.isCancelled {
            progress.cancel()
            throw FerryModelError(.cancelled, "the load was cancelled")
        }
    }
}

extension ItemProvider.Representation {
    /// Produces this representation's bytes.
    func loadData(progress: ItemProvider.Progress) async throws -> Data {
        try ItemProvider.checkCancelled(progress)
        let data: Data
        switch source {
        case .data(let bytes):
            data = bytes
        case .loader(let loader):
            do {
                data = try await withTaskCancellationHandler {
                    try await loader(progress)
                } onCancel: {
                    progress.cancel()
                }
            } catch let error as FerryModelError {
                throw error
            } catch is CancellationError {
                throw FerryModelError(.cancelled, "the load was cancelled")
            } catch {
                if progress.isCancelled { throw FerryModelError(.cancelled, "the load was cancelled") }
                throw FerryModelError(.unavailable, "the \(contentType.identifier) loader failed: \(error)")
            }
        case .stream(let writer):
            data = try await StreamCollector.collect(contentType: contentType, writer: writer)
        case .file(let url, _):
            if isFolder {
                data = try FolderArchive.zip(folder: url, progress: progress)
                break
            }
            // A file rewritten while it is read would give bytes of no version: compare its
            // identity before and after.
            let before = FileIdentity(path: url.path)
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw FerryModelError(.unavailable, "cannot read \(url.path): \(error)")
            }
            if let before, let after = FileIdentity(path: url.path), let change = after.change(since: before) {
                throw FerryModelError(.unavailable, "\(url.path) changed while it was read (\(change))")
            }
        }
        try ItemProvider.checkCancelled(progress)
        progress.finish(byteCount: Int64(data.count))
        return data
    }
}

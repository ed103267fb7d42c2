import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Gallery's renditions: the same picture kept in other formats, as a photo library keeps them
/// (Ferry does not transcode). A photo's renditions are `<state dir>/renditions/<photo id>/<file>`
/// (`renditions/lake.png/lake.jpg`), copied on the first run from `Content/Renditions/<photo id>/`
/// with the photo; a photo pasted or dropped into Gallery has none. A drag of the photo offers
/// the original first, then one rendition per other image type.
extension ContentLibrary {
    /// One stored rendition of a photo.
    struct Rendition: Sendable, Hashable {
        /// Its file name (`lake.jpg`).
        var name: String
        /// Its image type, from the file's extension (`public.jpeg`).
        var type: ContentType
        /// The file.
        var url: URL
    }

    /// The folder of `Content/` that holds the renditions, one folder per photo id.
    static let contentRenditionsFolder = "Renditions"

    /// `<state dir>/renditions`, one folder per photo that has any.
    var renditionsDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("renditions", isDirectory: true)
    }

    /// The folder holding a photo's renditions.
    func renditionFolder(of photo: String) -> URL {
        renditionsDirectory.appendingPathComponent(photo, isDirectory: true)
    }

    /// A Gallery photo's renditions, in file-name order, at most one per type and never one of
    /// the photo's own type: files whose name is a valid id with an image type's extension. Empty
    /// for a note, a bad id, a photo that does not exist or has none.
    func renditions(of photo: String) -> [Rendition] {
        guard kind == .gallery, contains(photo), let own = Self.imageType(ofFileNamed: photo) else { return [] }
        let folder = renditionFolder(of: photo)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var seen: Set<ContentType> = [own]
        var found: [Rendition] = []
        for name in names.sorted() where Self.isValidID(name) {
            guard let type = Self.imageType(ofFileNamed: name), seen.insert(type).inserted else { continue }
            let url = folder.appendingPathComponent(name)
            guard (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType == .typeRegular
            else { continue }
            found.append(Rendition(name: name, type: type, url: url))
        }
        return found
    }

    /// The image type a file name's extension names (`lake.jpg` → `public.jpeg`), nil otherwise.
    static func imageType(ofFileNamed name: String) -> ContentType? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
              let type = ContentType(filenameExtension: String(name[name.index(after: dot)...])),
              type.conforms(to: .image) else { return nil }
        return type
    }

    /// Copies `content/Renditions/<photo>/` of each of `photos` into `staging/<photo>/` (first run).
    /// Folders of other names and files that are not images are left out.
    /// - Throws: what copying throws.
    static func stageRenditions(from content: URL, photos: [String], into staging: URL) throws {
        let files = FileManager.default
        let source = content.appendingPathComponent(contentRenditionsFolder, isDirectory: true)
        try files.createDirectory(at: staging, withIntermediateDirectories: true)
        for photo in photos {
            let folder = source.appendingPathComponent(photo, isDirectory: true)
            let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
            let images = names.filter { isValidID($0) && imageType(ofFileNamed: $0) != nil }.sorted()
            guard !images.isEmpty else { continue }
            let target = staging.appendingPathComponent(photo, isDirectory: true)
            try files.createDirectory(at: target, withIntermediateDirectories: true)
            for name in images {
                try files.copyItem(at: folder.appendingPathComponent(name), to: target.appendingPathComponent(name))
            }
        }
    }
}

import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoApp {
    /// The item provider a drag of `item` carries (nil when there is no such item):
    /// - Notes: the note's text as `public.utf8-plain-text`, then the `org.ferry.notes.open-note`
    ///   activity (`noteID` in userInfo, as opening the note does); suggested name: the note's id.
    /// - Gallery: the photo's bytes in its own format (`public.png` for `lake.png`), then each of
    ///   its renditions in another format (``ContentLibrary/renditions(of:)``: `public.jpeg`), each
    ///   loaded only when read — so promised, not sent, when large — then the
    ///   `org.ferry.gallery.view-photo` activity; suggested name: the file name without extension.
    func dragProvider(for item: String) -> ItemProvider? {
        itemProvider(for: item, captioned: false)
    }

    /// The item provider a share of `item` carries (Apple's activity item; nil when there is no
    /// such item): the drag's (``dragProvider(for:)``), a Gallery photo's with its caption
    /// (``ContentLibrary/caption(of:)``, `lake.png`) as `public.utf8-plain-text` after the
    /// renditions, before the activity — so the photo also conforms to `public.plain-text`
    /// and text activities (Notes' "Append to Note") are offered for it. A drag does not carry
    /// the caption: dropped on a text, a photo is a picture, not its name.
    func shareProvider(for item: String) -> ItemProvider? {
        itemProvider(for: item, captioned: true)
    }

    /// A drag's or a share's item provider: `captioned` adds a photo's caption.
    private func itemProvider(for item: String, captioned: Bool) -> ItemProvider? {
        guard library.contains(item) else { return nil }
        var provider = ItemProvider()
        switch kind {
        case .notes:
            guard let text = library.text(of: item) else { return nil }
            provider.registerDataRepresentation(for: .utf8PlainText, data: Data(text.utf8))
            provider.suggestedName = item
        case .gallery:
            guard let type = ContentLibrary.imageType(ofFileNamed: item) else { return nil }
            let url = library.url(of: item)
            Self.registerFile(url, as: type, in: &provider)
            for rendition in library.renditions(of: item) {
                Self.registerFile(rendition.url, as: rendition.type, in: &provider)
            }
            if captioned, let caption = library.caption(of: item) {
                provider.registerDataRepresentation(for: .utf8PlainText, data: Data(caption.utf8))
            }
            let stem = url.deletingPathExtension().lastPathComponent
            provider.suggestedName = stem.isEmpty ? item : stem
        }
        // The activity is built from constants and a checked id; it always validates.
        try? provider.registerObject(kind.activity(for: item, appName: appName))
        return provider
    }

    /// Registers the bytes of the file at `url` as `type`, read only when asked for, with the
    /// file's size as the estimate (the library promises a large one rather than sending it).
    private static func registerFile(_ url: URL, as type: ContentType, in provider: inout ItemProvider) {
        let size = ContentLibrary.fileSize(url)
        provider.registerDataRepresentation(for: type, estimatedSize: size.map(Int64.init)) { progress in
            let data = try Data(contentsOf: url)
            progress.completedUnitCount = Int64(data.count)
            return data
        }
    }
}

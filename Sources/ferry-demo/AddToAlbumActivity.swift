import Ferry
import FerryModel

/// Gallery's "Add to Album" (`org.ferry.gallery.add-to-album`, an action accepting
/// `public.image`): each shared image is kept as a photo — the library's own when it already has
/// those bytes (Gallery sharing its shown photo), else a new one named after the item's suggested
/// name, as a paste makes it — and added to the album `Shared` (``GalleryAlbums``). Prints
/// `activity-began` and `activity-performed` (or `activity-failed`).
struct AddToAlbumActivity: ApplicationActivity {
    /// The activity's type.
    static let type: ActivityType = "org.ferry.gallery.add-to-album"

    let app: DemoApp

    var activity: ActivityDescription {
        ActivityDescription(type: Self.type, title: "Add to Album", category: .action, acceptableTypes: [.image])
    }

    /// Returns one `["album": "Shared", "photo": id]` per item; the message names the photos and
    /// the album's new count.
    func perform(with items: ActivityItems) async throws -> ActivityResult {
        do {
            try await app.activityBegan(Self.type, items)
            var photos: [String] = []
            var added: [String] = []
            var count = app.albums.photos(in: GalleryAlbums.shared).count
            for provider in items.itemProviders {
                let image = try await provider.loadObject(ofClass: ImageItem.self)
                let kept = try app.library.addSharedPhoto(image.data, type: image.contentType, suggestedName: provider.suggestedName)
                if kept.new { added.append(kept.photo) }
                count = try app.albums.add(kept.photo, to: GalleryAlbums.shared).count
                photos.append(kept.photo)
            }
            var details: [(key: String, value: DemoEvent.Value)] = [("album", .string(GalleryAlbums.shared)),
                                                                     ("photos", .strings(photos)), ("count", .int(count))]
            if !added.isEmpty { details.append(("new", .strings(added))) }
            app.activityPerformed(Self.type, items, details)
            return ActivityResult(message: "Added \(photos.joined(separator: ", ")) to \(GalleryAlbums.shared) (\(count) \(count == 1 ? "photo" : "photos"))",
                                  returnedItems: photos.map { ["album": GalleryAlbums.shared, "photo": $0] })
        } catch {
            throw app.activityFailed(Self.type, items, error)
        }
    }
}

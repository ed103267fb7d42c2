import Ferry
import FerryModel

/// What the demo apps' share activities have in common: the `activity-began`, `activity-performed`
/// and `activity-failed` event lines, and the hidden `--perform-delay`.
extension DemoApp {
    /// The activities this app performs for anyone's share: Gallery's "Add to Album", Notes'
    /// "Append to Note".
    func applicationActivities(for application: Application) -> [any ApplicationActivity] {
        switch kind {
        case .gallery: [AddToAlbumActivity(app: self)]
        case .notes: [AppendToNoteActivity(app: self, application: application)]
        }
    }

    /// Prints `activity-began` (the share, its item count and types, the source app), then waits
    /// out `--perform-delay` when given.
    /// - Throws: `CancellationError` when the wait is cancelled.
    func activityBegan(_ type: ActivityType, _ items: ActivityItems) async throws {
        var details: [(key: String, value: DemoEvent.Value)] = [("share", .string(items.share)), ("items", .int(items.count)),
                                                                 ("types", .strings(items.contentTypes.map(\.identifier)))]
        if let source = items.sourceApp { details.append(("from", .string(source))) }
        printer.print(DemoEvent("activity-began", headline: ("activityType", type.rawValue), details))
        if let performDelay { try await Task.sleep(for: performDelay) }
    }

    /// Prints `activity-performed` with `details` after the share's id.
    func activityPerformed(_ type: ActivityType, _ items: ActivityItems, _ details: [(key: String, value: DemoEvent.Value)]) {
        printer.print(DemoEvent("activity-performed", headline: ("activityType", type.rawValue), [("share", .string(items.share))] + details))
    }

    /// Prints `activity-failed` and makes the error the sharer's completion fails with: a
    /// `FerryError` as it is (an item that could not be read), anything else — the library could
    /// not keep the items — under the app's own error name `<app id>.Error.Failed`
    /// (`org.ferry.gallery.Error.Failed`).
    func activityFailed(_ type: ActivityType, _ items: ActivityItems, _ error: any Error) -> FerryError {
        let failure = (error as? FerryError)
            ?? FerryError(.bus, (error as? DemoFailure)?.message ?? "\(error)", dbusErrorName: Self.failureName(app: folder.manifest.bundleIdentifier))
        printer.print(DemoEvent("activity-failed", headline: ("activityType", type.rawValue),
                                [("share", .string(items.share)), ("message", .string(failure.message))]))
        return failure
    }

    /// The D-Bus error name of a failed activity of app `app`: `<app>.Error.Failed`.
    static func failureName(app: String) -> String {
        "\(app).Error.Failed"
    }
}

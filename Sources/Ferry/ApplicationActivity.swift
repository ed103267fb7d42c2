import FerryModel

/// An activity this app performs for anyone's share (Apple's `UIActivity` subclass): the app's
/// delegate returns it from ``ApplicationDelegate/applicationActivities(for:)`` and the library
/// registers it with the broker, which lists it in share sheets whose items it accepts.
///
/// ```swift
/// struct AddToAlbum: ApplicationActivity {
///     let activity = ActivityDescription(type: "org.example.add-to-album", title: "Add to Album",
///                                        acceptableTypes: [.image])
///     func perform(with items: ActivityItems) async throws -> ActivityResult {
///         for provider in items.itemProviders { _ = try await provider.loadData(for: .image) }
///         return ActivityResult(message: "Added \(items.itemProviders.count) photos")
///     }
/// }
/// ```
public protocol ApplicationActivity: Sendable {
    /// What the activity is and what it accepts (registered with the broker, which matches the
    /// items' types and count against it before asking ``canPerform(with:)``).
    ///
    /// D-Bus: an entry of `org.ferry.Sharing1.RegisterActivities`.
    var activity: ActivityDescription { get }

    /// Whether the activity can perform with these items beyond the type match the broker
    /// already did (Apple's `canPerform(withActivityItems:)`). Called on the client connection's
    /// thread: answer at once from `items` alone, never block (the broker waits 250 ms and lists
    /// nothing it has not heard). `items.itemProviders` is empty here. The default is true.
    ///
    /// D-Bus: `org.ferry.Client1.CanPerformActivities`.
    func canPerform(with items: ActivityItems) -> Bool

    /// Performs the activity (Apple's `perform()`): load the items from `items.itemProviders`
    /// (their loaders read the share pasteboard as a user action, only during this call) and do
    /// the work, within the broker's 30 s: after them the task is cancelled (the sharer has its
    /// Timeout completion by then), so let `CancellationError` through.
    /// - Returns: whether the work was done, a one-line message and what it made.
    /// - Throws: any error; the sharer's completion then fails with it: a `FerryError` keeps its
    ///   `org.ferry.Error.*` name (with code `.bus`, its own `dbusErrorName`, such as
    ///   `org.example.Error.AlbumFull`), any other error is `org.freedesktop.DBus.Error.Failed`
    ///   with the error's description.
    ///
    /// D-Bus: `org.ferry.Client1.PerformActivity`.
    func perform(with items: ActivityItems) async throws -> ActivityResult
}

extension ApplicationActivity {
    /// True: the broker's type and count match is enough.
    public func canPerform(with items: ActivityItems) -> Bool { true }
}

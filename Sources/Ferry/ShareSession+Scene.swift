import FerryModel

extension Scene {
    /// Shares the scene's activity items (its Share button): the scene delegate's
    /// ``SceneDelegate/activityItemsConfiguration(for:)``, written by this app itself on the
    /// share pasteboard (the broker does not call back, so this may run inside any delegate
    /// call). The configuration's supported interactions decide what the broker offers: without
    /// `.copy`, `org.ferry.activity.copy` is not listed; without `.share`, only it is listed and
    /// performed. The scene delegate hears the completion
    /// (``SceneDelegate/scene(_:shareDidComplete:share:)``) when the returned session performs or
    /// ends (a share the broker ends by itself — 120 s without a perform — reaches it when
    /// ``ShareSession/perform(_:folder:)`` or ``ShareSession/end()`` is called, which then fails
    /// with `.notFound`).
    ///
    /// The configuration's title and per-item metadata go with the items (activities see them).
    /// - Parameter options: the excluded activity types (added to the ones above).
    /// - Returns: the running share.
    /// - Throws: `FerryError`: `.notFound` "nothing to share" (no configuration, no items, or
    ///   neither interaction), what ``FerryClient/beginShare(_:options:)`` throws.
    ///
    /// D-Bus: `org.ferry.Sharing1.BeginShare`, then `org.ferry.Pasteboard1.SetItems`.
    public func share(options: ShareOptions = .init()) async throws(FerryError) -> ShareSession {
        guard let configuration = delegate.activityItemsConfiguration(for: self),
              !configuration.itemProviders.isEmpty,
              !configuration.supportedInteractions.intersection(.all).isEmpty else {
            throw FerryError(.notFound, "nothing to share: the scene \(persistentIdentifier) has no activity items")
        }
        return try await client.beginShare(configuration.itemProviders, options: options, described: configuration,
                                           origin: ShareSession.Origin(scene: self))
    }
}

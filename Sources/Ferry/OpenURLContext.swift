#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A URL sent to a scene that is already connected, and who sent it (Apple's
/// `UIOpenURLContext`), handed to ``SceneDelegate/scene(_:openURLContexts:)``.
public struct OpenURLContext: Sendable, Hashable {
    /// The URL to open (absolute).
    public var url: URL
    /// The bundle identifier of the app that asked, when it may be told (Apple's
    /// `options.sourceApplication`).
    public var sourceApplication: String?

    /// Makes a context.
    public init(url: URL, sourceApplication: String? = nil) {
        self.url = url
        self.sourceApplication = sourceApplication
    }
}

/// What a foreign owner offers on one selection: the names of its types, as offered.
///
/// On Wayland the names are MIME types (and whatever else the source chose to offer: wl-copy
/// offers X11 names such as `UTF8_STRING` too); on X11 they are the names of the target atoms the
/// owner lists in `TARGETS`, minus the protocol targets (`TARGETS`, `MULTIPLE`, `TIMESTAMP`, …)
/// that are not data. Mapping names to content types is the bridge's business, not the backend's.
public struct DesktopOffer: Sendable, Hashable, CustomStringConvertible {
    /// Unique for the backend's life, increasing: a later offer has a larger id.
    public let id: UInt64
    /// The selection this offer is on.
    public let selection: DesktopSelection
    /// The type names, in the owner's order, without duplicates.
    public let types: [String]

    /// Makes an offer (backends do).
    public init(id: UInt64, selection: DesktopSelection, types: [String]) {
        self.id = id
        self.selection = selection
        self.types = types
    }

    /// `CLIPBOARD #7 [text/plain, image/png]`.
    public var description: String { "\(selection) #\(id) [\(types.joined(separator: ", "))]" }
}

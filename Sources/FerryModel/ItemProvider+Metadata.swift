extension ItemProvider {
    /// What can be said about a representation without loading it: what other processes are told.
    public struct RepresentationInfo: Sendable, Hashable {
        /// The type of the bytes.
        public var contentType: ContentType
        /// Who may see it.
        public var visibility: Visibility
        /// A size hint in bytes, nil when unknown.
        public var estimatedSize: Int64?
        /// Whether the bytes live in a file (or folder).
        public var isFile: Bool
        /// Whether readers may open that file in place.
        public var openInPlace: Bool

        /// Makes representation metadata.
        public init(contentType: ContentType, visibility: Visibility = .all, estimatedSize: Int64? = nil,
                    isFile: Bool = false, openInPlace: Bool = false) {
            self.contentType = contentType
            self.visibility = visibility
            self.estimatedSize = estimatedSize
            self.isFile = isFile
            self.openInPlace = openInPlace
        }
    }

    /// An item described without its data: its representations' metadata, name and size hint.
    public struct Metadata: Sendable, Hashable {
        /// The representations, highest fidelity first.
        public var representations: [RepresentationInfo]
        /// The item's suggested name.
        public var suggestedName: String?
        /// The preferred presentation size; `.zero` means unknown.
        public var preferredPresentationSize: Size

        /// Makes item metadata.
        public init(representations: [RepresentationInfo], suggestedName: String? = nil,
                    preferredPresentationSize: Size = .zero) {
            self.representations = representations
            self.suggestedName = suggestedName
            self.preferredPresentationSize = preferredPresentationSize
        }

        /// The types in fidelity order.
        public var contentTypes: [ContentType] { representations.map(\.contentType) }
    }

    /// The metadata of every representation, or only of those another app may see.
    /// - Parameter isOwnApp: false leaves out `.ownApp` representations.
    public func metadata(visibleTo isOwnApp: Bool = true) -> Metadata {
        Metadata(
            representations: representations(visibleTo: isOwnApp).map { r in
                RepresentationInfo(contentType: r.contentType, visibility: r.visibility, estimatedSize: r.estimatedSize,
                                   isFile: r.isFile, openInPlace: r.isOpenInPlace)
            },
            suggestedName: suggestedName, preferredPresentationSize: preferredPresentationSize)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ItemProvider {
    /// Who may see a representation. Enforced by whoever hands items to another process
    /// (``ItemProvider/representations(visibleTo:)``).
    public enum Visibility: String, Sendable, Hashable, CaseIterable {
        /// Every process (Apple's `.all`).
        case all
        /// Only the app that made the item (Apple's `.ownProcess`).
        case ownApp
    }

    /// Where a representation's bytes come from.
    public enum Source: Sendable {
        /// Bytes in memory.
        case data(Data)
        /// Bytes produced on demand. The closure reports progress through the reporter, may check
        /// its `isCancelled`, and runs at most once per load.
        case loader(@Sendable (Progress) async throws -> Data)
        /// A file or folder. Unless `openInPlace`, a reader asking for a file gets a copy.
        case file(URL, openInPlace: Bool)
        /// Bytes written on demand into a descriptor, never held in memory: the closure gets the
        /// write end of a pipe (or a file), which it owns from then on and closes when done (on
        /// failure too), and returns how many bytes it wrote. Runs at most once per load.
        case stream(@Sendable (_ descriptor: Int32) async throws -> UInt64)
    }

    /// One way of delivering an item: a content type and where its bytes come from.
    public struct Representation: Sendable {
        /// The type of the bytes (`public.png`).
        public let contentType: ContentType
        /// Who may see this representation.
        public var visibility: Visibility
        /// Where the bytes come from.
        public let source: Source
        /// A size hint in bytes: exact for data and files, the registrant's estimate for loaders,
        /// nil when unknown.
        public var estimatedSize: Int64?

        /// Makes a representation.
        public init(contentType: ContentType, visibility: Visibility = .all, source: Source, estimatedSize: Int64? = nil) {
            self.contentType = contentType
            self.visibility = visibility
            self.source = source
            switch source {
            case .data(let data): self.estimatedSize = estimatedSize ?? Int64(data.count)
            case .file(let url, _): self.estimatedSize = estimatedSize ?? Representation.fileSize(url)
            case .loader, .stream: self.estimatedSize = estimatedSize
            }
        }

        /// Whether the bytes live in a file (so a file load needs no temporary copy of data).
        public var isFile: Bool { if case .file = source { true } else { false } }

        /// Whether the representation is a file the reader may open in place.
        public var isOpenInPlace: Bool { if case .file(_, let inPlace) = source { inPlace } else { false } }

        static func fileSize(_ url: URL) -> Int64? {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                  (attributes[.type] as? FileAttributeType) != .typeDirectory,
                  let size = attributes[.size]
            else { return nil }
            switch size {
            case let n as UInt: return Int64(clamping: n)
            case let n as Int: return Int64(n)
            case let n as UInt64: return Int64(clamping: n)
            case let n as Int64: return n
            default: return Int64(String(describing: size))
            }
        }
    }
}

import Logging
import Synchronization

/// What a `Logger` was told, kept for a test to read: the broker's services and the paste policy
/// file log through swift-log, and a test that cares what they said reads it here.
///
///     let log = CapturedLog()
///     let file = PastePolicyFile(path: path, logger: log.logger())
///     #expect(log.messages(atLeast: .warning) == ["paste policy: …"])
public final class CapturedLog: Sendable {
    /// One message as the logger received it.
    public struct Entry: Sendable, Equatable {
        /// Its level.
        public var level: Logger.Level
        /// Its text.
        public var message: String
        /// The logger's and the call's metadata, merged (the call's win), as text.
        public var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    /// An empty log.
    public init() {}

    /// A logger whose every message, at `level` and above, lands in this log.
    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    /// Everything logged so far, oldest first.
    public var all: [Entry] { entries.withLock { $0 } }

    /// The texts of the messages at `level` or more severe, oldest first.
    public func messages(atLeast level: Logger.Level = .trace) -> [String] {
        all.filter { $0.level >= level }.map(\.message)
    }

    fileprivate func append(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: event.message.description,
                             metadata: merged.mapValues { "\($0)" }))
        }
    }
}

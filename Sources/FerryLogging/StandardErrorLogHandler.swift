import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Ferry's swift-log handler: one line per message on standard error, written in one `write` so
/// that lines from several tasks never interleave.
///
/// A line reads `2026-11-27T01:50:00.123Z ferryd: registered org.ferry.notes …`: the time (UTC,
/// milliseconds; left out under systemd, whose journal stamps every line itself), the logger's
/// label (the program), the level when it is a warning or worse (`ferryd: warning: …`), the
/// message, and the metadata as `key=value` pairs.
public struct StandardErrorLogHandler: LogHandler {
    /// The logger's label: the program's name, which starts every line.
    public let label: String
    /// The least severe level written.
    public var logLevel: Logger.Level
    /// Metadata every line of this logger carries.
    public var metadata: Logger.Metadata = [:]
    /// Whether lines start with the time.
    public let timestamps: Bool

    /// A handler for `label` writing `level` and worse; `timestamps` defaults to "unless standard
    /// error is the systemd journal" (`$JOURNAL_STREAM` is set).
    public init(label: String, level: Logger.Level = .info, timestamps: Bool = !Self.isJournal) {
        self.label = label
        self.logLevel = level
        self.timestamps = timestamps
    }

    /// Whether standard error goes to the systemd journal.
    public static var isJournal: Bool { getenv("JOURNAL_STREAM") != nil }

    /// The metadata value under `key`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line (see the type's description); an error given to the logger follows the
    /// message after a colon.
    public func log(event: LogEvent) {
        let message = event.error.map { "\(event.message): \($0)" } ?? event.message.description
        writeToStandardError(Self.line(label: label, level: event.level, message: message,
                                       metadata: metadata.merging(event.metadata ?? [:]) { $1 },
                                       time: timestamps ? Self.now() : nil))
    }

    /// The text of one line, newline included.
    static func line(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata,
                     time: String?) -> String {
        var text = time.map { "\($0) " } ?? ""
        text += "\(label): "
        switch level {
        case .warning: text += "warning: "
        case .error, .critical: text += "error: "
        case .trace, .debug, .info, .notice: break
        }
        text += message
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        return text + "\n"
    }

    /// The time now, UTC, as `2026-11-27T01:50:00.123Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))T"
            + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2))."
            + "\(padded(Int32(spec.tv_nsec / 1_000_000), 3))Z"
    }
}

/// Writes `text` to fd 2 in one `write` where it can (lines from several tasks do not interleave).
public func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Bootstrapping the logging system of a Ferry program.
public enum FerryLogging {
    /// Makes every `Logger` of this process write through ``StandardErrorLogHandler`` at `level`
    /// and worse. Call once, first thing in `main` (swift-log allows one bootstrap per process).
    public static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level) }
    }
}

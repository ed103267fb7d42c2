import FerryModel
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One thing that happened in a demo app, printed as one line.
struct DemoEvent: Sendable, Equatable {
    /// A detail of an event: `note=groceries`, or a bare word such as `restored`.
    enum Value: Sendable, Equatable {
        case string(String)
        case int(Int)
        case flag
        case strings([String])
    }

    /// The event's name: `registered`, `connect`, `state`, `continue`, `open-urls`, `refresh`, `disconnect`,
    /// `discard`, `paste`, `paste-declined`, the drag-* and drop-* events, `share-provided`,
    /// `share-completed`, `activity-began`, `activity-performed`, `activity-failed`, `saved`,
    /// `error`, `exit` (docs/demo-apps.md).
    var name: String
    /// The scene's persistent identifier, for scene events.
    var session: String?
    /// A word that follows the session in text lines (the configuration, the new state, the
    /// activity type), also a JSON key of its own.
    var headline: (key: String, value: String)?
    /// Further details, in order.
    var details: [(key: String, value: Value)]

    init(_ name: String, session: String? = nil, headline: (key: String, value: String)? = nil,
         _ details: [(key: String, value: Value)] = []) {
        self.name = name
        self.session = session
        self.headline = headline
        self.details = details
    }

    static func == (a: DemoEvent, b: DemoEvent) -> Bool {
        a.name == b.name && a.session == b.session && a.headline?.key == b.headline?.key && a.headline?.value == b.headline?.value
            && a.details.map(\.key) == b.details.map(\.key) && a.details.map(\.value) == b.details.map(\.value)
    }

    /// `org.ferry.notes: connect 0F3A… Editor note=groceries restored`: always one line, control
    /// characters in values (an error message's newline) shown as `\n`, `\t`, `\r`, `\u{1B}`.
    func textLine(app: String) -> String {
        words(app: app).joined(separator: " ").printableLine()
    }

    private func words(app: String) -> [String] {
        var words = ["\(app):", name]
        if let session { words.append(session) }
        if let headline { words.append(headline.value) }
        for (key, value) in details {
            switch value {
            case .string(let text): words.append("\(key)=\(text)")
            case .int(let number): words.append("\(key)=\(number)")
            case .flag: words.append(key)
            case .strings(let list): words.append("\(key)=\(list.joined(separator: ","))")
            }
        }
        return words
    }

    /// `{"event":"connect","app":"org.ferry.notes","session":"0F3A…","configuration":"Editor",…}`:
    /// keys in that order, flags as `true`.
    func jsonLine(app: String) -> String {
        var fields: [(String, String)] = [("event", JSON.string(name)), ("app", JSON.string(app))]
        if let session { fields.append(("session", JSON.string(session))) }
        if let headline { fields.append((headline.key, JSON.string(headline.value))) }
        for (key, value) in details {
            switch value {
            case .string(let text): fields.append((key, JSON.string(text)))
            case .int(let number): fields.append((key, String(number)))
            case .flag: fields.append((key, "true"))
            case .strings(let list): fields.append((key, "[" + list.map(JSON.string).joined(separator: ",") + "]"))
            }
        }
        return "{" + fields.map { "\(JSON.string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }
}

/// Prints events on standard output, one line each, in text or JSON, each line written and
/// flushed whole (lines from concurrent tasks never interleave).
final class EventPrinter: Sendable {
    /// The app id every line names.
    let app: String
    /// JSON lines instead of text lines.
    let json: Bool
    private let output: Int32
    private let lock = Mutex(())

    init(app: String, json: Bool, output: Int32 = 1) {
        self.app = app
        self.json = json
        self.output = output
    }

    /// The line for `event` in this printer's format.
    func line(for event: DemoEvent) -> String {
        json ? event.jsonLine(app: app) : event.textLine(app: app)
    }

    /// Prints `event`.
    func print(_ event: DemoEvent) {
        write(line(for: event))
    }

    /// Prints `READY`, the line tests and scripts wait for (in both formats).
    func ready() {
        write("READY")
    }

    /// Writes `line` and a newline with `write(2)`, whole.
    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        lock.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = Glibc.write(output, buffer.baseAddress! + offset, buffer.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
    }
}

/// The little JSON this program writes.
enum JSON {
    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

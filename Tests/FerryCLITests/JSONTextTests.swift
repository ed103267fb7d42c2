@testable import ferry
import FerryModel
import FerryTestSupport
import Testing

/// `ferry scenes --json` writes its report with `JSONText`, which must give exactly the bytes
/// `JSONEncoder` (`jsonLine`) gives for the same report.
@Suite("ferry internals: JSON written directly")
struct JSONTextTests {
    /// Text with what JSON escapes (quotes, backslashes, every control character), slashes,
    /// DEL, U+2028 and characters outside the BMP.
    private static func text(_ random: inout SplitMix64) -> String {
        let pieces = ["a", "\"", "\\", "/", "\u{7F}", "\u{2028}", "é", "😀", "Notes", " "]
            + (0..<32).map { String(UnicodeScalar(UInt8($0))) }
        return (0..<random.next(upTo: 12)).map { _ in pieces[random.next(upTo: pieces.count)] }.joined()
    }

    private static func number(_ random: inout SplitMix64) -> Double {
        switch random.next(upTo: 6) {
        case 0: return Double(Int(random.next(upTo: 4000)) - 2000)                      // integral
        case 1: return Double(random.next(upTo: 100_000)) / 8                            // halves, eighths
        case 2: return Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)         // any finite magnitude
        case 3: return -Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
        case 4: return [0.0, -0.0, 1e21, 1e-7, 1e16, .leastNonzeroMagnitude, .greatestFiniteMagnitude][random.next(upTo: 7)]
        default: return Double(random.next(upTo: 1000)) / 3
        }
    }

    @Test("random reports: JSONText and JSONEncoder write the same bytes")
    func sameAsTheEncoder() throws {
        var random = SplitMix64(seed: 0x15_0A)
        for _ in 0..<200 {
            let entries = (0..<random.next(upTo: 6)).map { _ in
                let frame = random.next(upTo: 4) == 0 ? nil : Rect(x: Self.number(&random), y: Self.number(&random),
                                                                    width: Self.number(&random), height: Self.number(&random))
                return ScenesCommand.Entry(SceneCommand.Session(
                    persistentIdentifier: Self.text(&random), app: Self.text(&random),
                    configuration: random.next(upTo: 3) == 0 ? nil : Self.text(&random),
                    state: [.unattached, .foregroundActive, .background][random.next(upTo: 3)],
                    title: random.next(upTo: 3) == 0 ? nil : Self.text(&random), frame: frame,
                    screen: random.next(upTo: 3), stackIndex: random.next(upTo: 1000)))
            }
            let report = ScenesCommand.Report(scenes: entries)
            #expect(try report.jsonLine() == jsonLine(report))
        }
    }

    @Test("a frame JSONEncoder refuses (not finite) is refused as it refuses it")
    func notFinite() {
        let entry = ScenesCommand.Entry(SceneCommand.Session(persistentIdentifier: "p", app: "a",
                                                             frame: Rect(x: .nan, y: 0, width: 1, height: 1)))
        #expect(throws: EncodingError.self) { try ScenesCommand.Report(scenes: [entry]).jsonLine() }
    }
}

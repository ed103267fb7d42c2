import FerryTestSupport
import Foundation
import Testing

/// `ferry detect` against a real ferryd: patterns are not a paste, `--values` is one.
@Suite("ferry detect against a real ferryd")
struct DetectCLITests {
    static let text = "Flight LH 400 on 2026-11-26 at 15:30 costs $120; mail ada@example.org"

    @Test("patterns per item without a paste; --values prints each value and is logged")
    func patternsThenValues() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", Self.text).succeeded)

            let patterns = try await broker.ferry("detect")
            #expect(patterns.status == 0, "\(patterns.summary)")
            #expect(patterns.stdout == "0  probableWebSearch emailAddress calendarEvent flightNumber moneyAmount\n")
            #expect(try await broker.ferry("detect", "link", "shipmentTrackingNumber").stdout == "0  -\n")
            let json = try jsonObject(try await broker.ferry("detect", "flightNumber", "number", "--json"))
            #expect(json["pasteboard"] as? String == "general")
            let items = try #require(json["items"] as? [[String: Any]])
            #expect(items.count == 1 && items.first?["patterns"] as? [String] == ["flightNumber"])
            let before = try jsonObject(try await broker.ferry("log", "--json"))
            #expect((before["entries"] as? [Any])?.isEmpty == true, "detecting patterns is not a paste: \(before)")

            let values = try await broker.ferry("detect", "--values", "moneyAmount", "flightNumber", "calendarEvent")
            #expect(values.status == 0, "\(values.summary)")
            #expect(values.stdout == "0  calendarEvent  2026-11-26 at 15:30\n0  flightNumber  LH 400\n0  moneyAmount  120 USD\n")
            let valuesJSON = try jsonObject(try await broker.ferry("detect", "--values", "moneyAmount", "--json"))
            let first = try #require((valuesJSON["items"] as? [[String: Any]])?.first?["values"] as? [String: Any])
            let money = try #require((first["moneyAmount"] as? [[String: Any]])?.first)
            #expect((money["amount"] as? NSNumber)?.doubleValue == 120 && money["currency"] as? String == "USD")
            let after = try jsonObject(try await broker.ferry("log", "--json"))
            #expect((after["entries"] as? [Any])?.count == 2, "each --values run is a paste of item 0: \(after)")
        }
    }

    @Test("an unknown pattern is a usage error naming it; a missing pasteboard is status 2")
    func refusals() async throws {
        try await CLIBroker.with { broker in
            let unknown = try await broker.ferry("detect", "zipCode")
            #expect(unknown.status == 64, "\(unknown.summary)")
            #expect(unknown.stderr.contains("Unknown pattern 'zipCode'"), "\(unknown.stderr)")
            let missing = try await broker.ferry("detect", "-p", "nothing-here")
            #expect(missing.status == 2, "\(missing.summary)")
            #expect(try await broker.ferry("pasteboards").stdout == "general\n")
        }
    }
}

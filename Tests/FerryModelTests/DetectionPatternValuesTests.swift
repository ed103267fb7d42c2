import FerryModel
import Testing

/// iOS 15's patterns and `detectValues`: what each recogniser finds, what it leaves alone.
@Suite struct DetectionPatternValuesTests {
    private func matches(_ pattern: DetectionPattern, in text: String) -> [String] {
        guard case .matches(let found)? = DetectionPattern.detectValues([pattern], in: text)[pattern] else { return [] }
        return found
    }

    private func detects(_ pattern: DetectionPattern, in text: String) -> Bool {
        DetectionPattern.detect([pattern], in: text).contains(pattern)
    }

    @Test func links() {
        #expect(matches(.link, in: "see https://example.com/a?b=1. and (www.example.org)") == ["https://example.com/a?b=1", "www.example.org"])
        #expect(matches(.link, in: "mail mailto:ann@example.com or ftp://files.example.com/x") == ["mailto:ann@example.com", "ftp://files.example.com/x"])
        for text in ["ann@example.com", "file.txt and README.md", "3.14 or 1.2.3", "https://", "javascript:alert(1)"] {
            #expect(!detects(.link, in: text), "\(text)")
        }
    }

    @Test func emailAddressesAndPhoneNumbers() {
        #expect(matches(.emailAddress, in: "write to <ann@example.com>, or mailto:bo@example.org.") == ["ann@example.com", "bo@example.org"])
        #expect(matches(.emailAddress, in: "a@@b.com @example.com ann@") == [])
        #expect(matches(.phoneNumber, in: "call +1 (555) 123-4567 or 030 1234567; not 2026-11-26")
                == ["+1 (555) 123-4567", "030 1234567"])
    }

    @Test func postalAddresses() {
        #expect(matches(.postalAddress, in: "Apple, 1 Infinite Loop, Cupertino, CA 95014") == ["1 Infinite Loop, Cupertino, CA 95014"])
        #expect(matches(.postalAddress, in: "Sherlock lives at 221B Baker Street.") == ["221B Baker Street"])
        #expect(matches(.postalAddress, in: "Ferry GmbH\nHauptstraße 5\n10115 Berlin") == ["Hauptstraße 5, 10115 Berlin"])
        #expect(matches(.postalAddress, in: "12 rue de la Paix, Paris") == ["12 rue de la Paix, Paris"])
        for text in ["I bought 3 apples on the way", "Main Street is long", "Buy 2 street food snacks"] {
            #expect(!detects(.postalAddress, in: text), "\(text)")
        }
    }

    @Test func calendarEvents() {
        #expect(matches(.calendarEvent, in: "Meet 2026-11-26 at 15:30 in the lobby") == ["2026-11-26 at 15:30"])
        #expect(matches(.calendarEvent, in: "Due Nov 26, 2026 3:30 PM; party on 24.12.2026") == ["Nov 26, 2026 3:30 PM", "24.12.2026"])
        #expect(matches(.calendarEvent, in: "call me tomorrow at 3pm") == ["tomorrow at 3pm"])
        #expect(matches(.calendarEvent, in: "born 26 November 1990 and 02/29/2024") == ["26 November 1990", "02/29/2024"])
        for text in ["2026-02-30", "31.04.2026", "version 1.2.3", "may I come", "13/13/2026", "tomorrow is fine"] {
            #expect(!detects(.calendarEvent, in: text), "\(text)")
        }
    }

    @Test func shipmentTrackingNumbers() {
        #expect(matches(.shipmentTrackingNumber, in: "UPS: 1Z999AA10123456784, post RR123456785DE.")
                == ["1Z999AA10123456784", "RR123456785DE"])
        // A wrong check digit is not a tracking number.
        for text in ["1Z999AA10123456785", "RR123456784DE", "123456789012", "1z999aa10123456784"] {
            #expect(!detects(.shipmentTrackingNumber, in: text), "\(text)")
        }
    }

    @Test func flightNumbers() {
        #expect(matches(.flightNumber, in: "My flight is LH 400 to New York, then flight BA2490.") == ["LH 400", "BA2490"])
        #expect(matches(.flightNumber, in: "Flug U2 1234") == ["U2 1234"])
        for text in ["LH 400", "A4 paper, flight tomorrow", "flight 12 34", "the flight was fine"] {
            #expect(!detects(.flightNumber, in: text), "\(text)")
        }
    }

    @Test func moneyAmounts() {
        let values = DetectionPattern.detectValues([.moneyAmount], in: "Lunch $12.50, dinner 12,50 € and EUR 1.234,56; 1,299 USD")
        #expect(values[.moneyAmount] == .moneyAmounts([
            MoneyAmount(amount: 12.5, currency: "USD"), MoneyAmount(amount: 12.5, currency: "EUR"),
            MoneyAmount(amount: 1234.56, currency: "EUR"), MoneyAmount(amount: 1299, currency: "USD"),
        ]))
        #expect(DetectionPattern.detectValues([.moneyAmount], in: "£3 and ¥500")[.moneyAmount]
                == .moneyAmounts([MoneyAmount(amount: 3, currency: "GBP"), MoneyAmount(amount: 500, currency: "JPY")]))
        for text in ["12.50", "USD", "$", "EUR twelve", "1e6 USD"] {
            #expect(!detects(.moneyAmount, in: text), "\(text)")
        }
    }

    @Test func wholeTextValues() {
        let values = DetectionPattern.detectValues([.probableWebURL, .probableWebSearch, .number], in: "  example.com/a  ")
        #expect(values == [.probableWebURL: .text("example.com/a")])
        #expect(DetectionPattern.detectValues([.number, .probableWebSearch], in: "1.234,5")
                == [.number: .number(1234.5), .probableWebSearch: .text("1.234,5")])
        #expect(DetectionPattern.detectValues([.number], in: "-3.5")[.number] == .number(-3.5))
        #expect(DetectionPattern.detectValues([.number], in: "1e6")[.number] == .number(1_000_000))
    }

    @Test("only the patterns asked for are reported, and only those found")
    func onlyAsked() {
        let text = "flight LH 400 on 2026-11-26 at 15:30 costs $120"
        #expect(DetectionPattern.detect(Set(DetectionPattern.allCases), in: text)
                == [.flightNumber, .calendarEvent, .moneyAmount, .probableWebSearch])
        #expect(DetectionPattern.detectValues([.link, .moneyAmount], in: text).keys.sorted { $0.rawValue < $1.rawValue }
                == [.moneyAmount])
    }
}

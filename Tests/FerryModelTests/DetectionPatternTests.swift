import FerryModel
import Foundation
import Testing

@Suite struct DetectionPatternTests {
    private func detects(_ pattern: DetectionPattern, in text: String) -> Bool {
        DetectionPattern.detect([pattern], in: text).contains(pattern)
    }

    @Test(arguments: [
        "https://example.com", "http://example.com/a/b?c=d#e", "  https://www.apple.com/iphone/\n",
        "HTTPS://EXAMPLE.COM", "http://localhost:8080/x", "http://192.168.1.10/admin",
        "https://[::1]:8443/", "https://user:pw@host.example.org/", "example.com", "example.com/path?q=1",
        "www.example.org", "www.example.zz", "sub.domain.co.uk", "github.com/apple/swift", "bücher.de",
        "docs.rs/serde", "example.com:8080", "example.com.", "https://example.com/ä?x=ü",
    ])
    func webURLs(text: String) {
        #expect(detects(.probableWebURL, in: text))
        #expect(!detects(.probableWebSearch, in: text), "a URL is not a web search")
    }

    @Test(arguments: [
        "", "   ", "hello", "hello world", "example", "file.txt", "index.html", "main.rs", "README.md",
        "e.g.", "Mr.Smith", "john@example.com", "mailto:john@example.com", "ftp://example.com/file",
        "https://", "https:// example.com", "https://exa mple.com", "example.com is great",
        "see https://example.com", "http://-bad-.com", "3.14", "1.2.3.4", "https://example.com:99999/",
        "javascript:alert(1)", "example..com", "https://example.com\nhttps://example.org",
    ])
    func notWebURLs(text: String) {
        #expect(!detects(.probableWebURL, in: text))
    }

    @Test(arguments: [
        "swift concurrency tutorial", "weather", "  best pizza near me  ", "42", "what is 2+2?",
        "Café crème", "東京 天気", "john@example.com", "file.txt",
    ])
    func webSearches(text: String) {
        #expect(detects(.probableWebSearch, in: text))
    }

    @Test(arguments: [
        "", "   \n\t", "first line\nsecond line", "a\r\nb", "https://example.com", "example.com/path",
        "!!! ??? ...", String(repeating: "word ", count: 60),
    ])
    func notWebSearches(text: String) {
        #expect(!detects(.probableWebSearch, in: text))
    }

    @Test(arguments: [
        "0", "42", "-3.5", "+7", "1e6", "6.02e23", "-1.5E-3", "1,234.5", "1.234,5", "1,234,567",
        "1.234.567", "1 234 567", "1'234'567.89", " 3,5 ", ".5", "-.25", "\u{2212}12", "1\u{00A0}000",
        "007", "1,5",
    ])
    func numbers(text: String) {
        #expect(detects(.number, in: text))
    }

    @Test(arguments: [
        "", "-", "+", ".", "1.", "1e", "e5", "1,2,3", "1.2.3", "192.168.1.1", "12 34", "1,23,456",
        "1,234.567,8", "1.234.5", "12a", "one", "0x1F", "1/2", "50%", "555-1234", "1..2", "1,,000",
        "1 000 00", "--1", "1e5e5", "$5",
    ])
    func notNumbers(text: String) {
        #expect(!detects(.number, in: text))
    }

    @Test(arguments: [
        "john@example.com", "Write to jane.doe+tag@mail.example.co.uk today.", "a@b.io",
        "contact: <info@example.org>", "ping support@example.com.", "x_y-z@sub-domain.example.net",
        "user@bücher.de",
    ])
    func emailAddresses(text: String) {
        #expect(detects(.emailAddress, in: text))
    }

    @Test(arguments: [
        "john@", "@example.com", "john@localhost", "john@example", "john@example.c", "john..doe@example.com",
        ".@example.com", "john.@example.com", "john@-example.com", "john@example-.com", "no at sign here",
        "john @ example.com", "john@exa_mple.com", "@@@@", "john@example.123",
    ])
    func notEmailAddresses(text: String) {
        #expect(!detects(.emailAddress, in: text))
    }

    @Test(arguments: [
        "+1 (555) 123-4567", "Call me at 555-123-4567 tonight", "555.123.4567", "+44 20 7946 0958",
        "030 1234567", "5551234567", "(030) 12345678", "+33 1 23 45 67 89", "tel: +49-30-1234567",
        "1-800-555-0199", "2024-01-15 555-123-4567",
    ])
    func phoneNumbers(text: String) {
        #expect(detects(.phoneNumber, in: text))
    }

    @Test(arguments: [
        "123456", "1234567890123456", "3.14159265", "2024-01-15", "15.01.2024", "1 2 3 4 5 6 7",
        "abc5551234567", "5551234567abc", "555)1234567", "+1 (55) (12) 34567",
        "version 10.15.7", "555 -- -- -- 1234", "1+1=2", "no digits",
    ])
    func notPhoneNumbers(text: String) {
        #expect(!detects(.phoneNumber, in: text))
    }

    @Test func onlyTheAskedPatternsAreReported() {
        let all = Set(DetectionPattern.allCases)
        #expect(DetectionPattern.detect(all, in: "https://example.com") == [.probableWebURL, .link])
        #expect(DetectionPattern.detect(all, in: "42") == [.number, .probableWebSearch])
        #expect(DetectionPattern.detect(all, in: "mail bob@example.com or call +1 555 123 4567")
            == [.emailAddress, .phoneNumber, .probableWebSearch])
        #expect(DetectionPattern.detect([.number], in: "https://example.com").isEmpty)
        #expect(DetectionPattern.detect([], in: "42").isEmpty)
    }

    @Test func rawValuesAreTheBusNames() {
        #expect(DetectionPattern.allCases.map(\.rawValue)
            == ["probableWebURL", "probableWebSearch", "number", "emailAddress", "phoneNumber", "link", "postalAddress",
                "calendarEvent", "shipmentTrackingNumber", "flightNumber", "moneyAmount"])
    }

    @Test func longTextsAreJudgedOnTheirFirst64KiB() {
        let filler = String(repeating: "lorem ipsum ", count: 6000)  // 72,000 bytes
        let early = "bob@example.com " + filler
        let late = filler + " bob@example.com"
        #expect(detects(.emailAddress, in: early))
        #expect(!detects(.emailAddress, in: late), "past 64 KiB nothing is looked at")
        let digits = String(repeating: "1", count: 70_000)
        #expect(!detects(.number, in: digits), "a truncated text is never a whole-text pattern")
        // A multi-byte character across the cut does not confuse the scanner.
        let cut = String(repeating: "a", count: DetectionPattern.scanLimit - 1) + "é" + " x@y.zz"
        #expect(!detects(.emailAddress, in: cut))
    }

    @Test func hostileInputsStayLinear() {
        // Shapes that make naive scanners quadratic: many "@", many separators, many dots.
        let inputs = [
            String(repeating: "a@", count: 40_000), String(repeating: "1-", count: 40_000),
            String(repeating: "a.", count: 40_000), String(repeating: "1,", count: 40_000) + "1",
            String(repeating: "(1", count: 40_000), "https://" + String(repeating: "a.", count: 40_000) + "com",
        ]
        // Measured in this thread's CPU time, which the other processes sharing the cores do not
        // stretch as they stretch the wall clock; a quadratic scan of 80,000 characters takes
        // many seconds of it.
        for text in inputs {
            let start = Self.threadCPUTime()
            _ = DetectionPattern.detect(Set(DetectionPattern.allCases), in: text)
            let elapsed = Self.threadCPUTime() - start
            #expect(elapsed < .seconds(1), "\(text.prefix(10))… took \(elapsed) of CPU time")
        }
    }

    /// The CPU time the calling thread has used so far.
    static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}

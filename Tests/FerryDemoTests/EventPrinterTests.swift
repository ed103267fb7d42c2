@testable import ferry_demo
import Foundation
import Testing

@Suite("ferry-demo event lines")
struct EventPrinterTests {
    @Test("a connect event: the contract's text line, and a JSON object with event, app and session first")
    func connectLine() throws {
        let event = DemoEvent("connect", session: "0F3A", headline: ("configuration", "Editor"),
                              [("note", .string("groceries")), ("restored", .flag)])
        #expect(event.textLine(app: "org.ferry.notes") == "org.ferry.notes: connect 0F3A Editor note=groceries restored")
        let json = event.jsonLine(app: "org.ferry.notes")
        #expect(json == #"{"event":"connect","app":"org.ferry.notes","session":"0F3A","configuration":"Editor","note":"groceries","restored":true}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["note"] as? String == "groceries" && object["restored"] as? Bool == true)
    }

    @Test("JSON strings escape quotes, backslashes and control characters; lists and numbers stay typed")
    func jsonEscaping() throws {
        let event = DemoEvent("error", session: nil, [("message", .string("a \"b\" \\ c\n\u{1}")), ("types", .strings(["x", "y"])),
                                                      ("bytes", .int(12))])
        let json = event.jsonLine(app: "org.ferry.notes")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "a \"b\" \\ c\n\u{1}")
        #expect(object["types"] as? [String] == ["x", "y"])
        #expect(object["bytes"] as? Int == 12)
        #expect(!json.contains("\n"))
        // Text lines stay one line: control characters are shown escaped.
        #expect(event.textLine(app: "a") == #"a: error message=a "b" \ c\n\u{1} types=x,y bytes=12"#)
        let hostile = DemoEvent("error", session: "S", [("message", .string("bad\r\nfake: exit\u{1B}[2J\tx\u{2028}"))])
        #expect(hostile.textLine(app: "a") == #"a: error S message=bad\r\nfake: exit\u{1B}[2J\tx\u{2028}"#)
    }

    @Test("the printer writes whole lines to its descriptor, JSON or text, and READY in both")
    func printerWritesLines() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let printer = EventPrinter(app: "org.ferry.gallery", json: true, output: ends[1])
        printer.print(DemoEvent("refresh", session: "S1", [("photo", .string("lake.png"))]))
        printer.ready()
        close(ends[1])
        let text = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self)
        #expect(text == #"{"event":"refresh","app":"org.ferry.gallery","session":"S1","photo":"lake.png"}"# + "\nREADY\n")
    }
}

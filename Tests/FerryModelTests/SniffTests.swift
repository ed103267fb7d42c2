import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("Content sniffing")
struct SniffTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        + [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    static let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0]
    static let pdf: [UInt8] = Array("%PDF-1.4\n%\u{E2}\u{E3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".utf8)
    static let zip: [UInt8] = Array("PK".utf8) + [3, 4, 20, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 20)

    let db = TypeDatabase.shared

    @Test("PNG bytes named x.txt are a PNG: a certain content match beats the extension")
    func pngNamedTxt() {
        let result = db.sniff(data: Self.png, filename: "x.txt")
        #expect(result.type == .png)
        #expect(result.byName == .plainText)
        #expect(result.byContent == .png)
        #expect(result.isContentCertain)
        #expect(result.rule == .contentOverrides)
    }

    @Test("image, PDF and markup signatures are found without a name")
    func signatures() {
        #expect(db.sniff(data: Self.png, filename: nil).type == .png)
        #expect(db.sniff(data: Self.jpeg, filename: nil).type == .jpeg)
        #expect(db.sniff(data: Self.gif, filename: nil).type == .gif)
        #expect(db.sniff(data: Self.pdf, filename: nil).type == .pdf)
        #expect(db.sniff(data: Array("<!DOCTYPE html><html><body>hi</body></html>".utf8), filename: nil).type == .html)
        #expect(db.sniff(data: Array("{\\rtf1\\ansi hello}".utf8), filename: nil).type == .rtf)
        #expect(db.sniff(data: Array("BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nEND:VCARD\n".utf8), filename: nil).type == .vCard)
        #expect(db.sniff(data: Self.pdf, filename: nil).rule == .content)
    }

    @Test("plain text: UTF-8 with or without BOM, UTF-16 with either BOM")
    func text() {
        #expect(db.sniff(data: Array("hello, wörld\n".utf8), filename: nil).type == .utf8PlainText)
        #expect(db.sniff(data: [0xEF, 0xBB, 0xBF] + Array("hi\n".utf8), filename: nil).type == .utf8PlainText)
        #expect(db.sniff(data: [0xFF, 0xFE, 0x68, 0, 0x69, 0], filename: nil).type == .utf16PlainText)
        #expect(db.sniff(data: [0xFE, 0xFF, 0, 0x68, 0, 0x69], filename: nil).type == .utf16PlainText)
        let named = db.sniff(data: [0xFF, 0xFE, 0x68, 0, 0x69, 0], filename: "notes.txt")
        #expect(named.type == .utf16PlainText)
        #expect(named.rule == .contentRefines)
    }

    @Test("text formats are told apart by name: CSV bytes in a .csv file are CSV")
    func textByName() {
        let csv = db.sniff(data: Array("a,b,c\n1,2,3\n".utf8), filename: "table.csv")
        #expect(csv.type == .commaSeparatedText)
        #expect(csv.byContent == .utf8PlainText)
        let python = db.sniff(data: Array("print('hi')\n".utf8), filename: "/tmp/tool.py")
        #expect(python.type.conforms(to: .pythonScript))
    }

    @Test("a name more specific than the content wins: a .docx is a ZIP")
    func nameRefines() throws {
        let result = db.sniff(data: Self.zip, filename: "report.docx")
        #expect(result.byContent == .zip)
        #expect(result.type == result.byName)
        #expect(result.type.conforms(to: .zip))
        #expect(result.type != .zip)
    }

    @Test("property lists: an XML .plist is an XML property list, bplist bytes are a binary one")
    func propertyLists() {
        let xml = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict/></plist>\n".utf8)
        let named = db.sniff(data: xml, filename: "Info.plist")
        #expect(named.byName == .propertyList)
        #expect(named.byContent == .xml)
        #expect(named.type == .xmlPropertyList)
        #expect(named.type.conforms(to: .xml) && named.type.conforms(to: .propertyList))
        let binary = Array("bplist00".utf8) + [0xD0, 0x08, 0, 0, 0, 0, 0, 0, 1, 1]
        #expect(db.sniff(data: binary, filename: nil).type == .binaryPropertyList)
        #expect(db.sniff(data: binary, filename: "a.plist").type == .binaryPropertyList)
        #expect(ContentType(filenameExtension: "plist") == .propertyList)
    }

    @Test("no data: the name decides; no name and unknown bytes: public.data")
    func fallbacks() {
        #expect(db.sniff(data: [UInt8](), filename: "a.png").type == .png)
        #expect(db.sniff(data: [UInt8](), filename: nil).type == .data)
        let junk = db.sniff(data: [0x01, 0x02, 0x03, 0x00, 0x05, 0xFF], filename: nil)
        #expect(junk.type == .data && !junk.isContentCertain)
        let named = db.sniff(data: [0x01, 0x02, 0x03, 0x00, 0x05, 0xFF], filename: "a.ferryunknown")
        #expect(named.type.isDynamic && named.type.conforms(to: .data))
        #expect(db.sniff(data: [UInt8](), filename: "Makefile").type.conforms(to: .plainText))
        #expect(db.sniff(data: [UInt8](), filename: "a.tar.gz").type.conforms(to: .gzip))
    }

    @Test("files: a directory is a folder, a missing file is a named error")
    func files() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-sniff-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try db.sniff(fileAtPath: dir.path).type == .folder)
        let file = dir.appendingPathComponent("picture.txt")
        try Data(Self.png).write(to: file)
        #expect(try db.sniff(fileAtPath: file.path).type == .png)
        #expect(throws: SniffError.self) { try db.sniff(fileAtPath: dir.appendingPathComponent("missing").path) }
    }

    @Test("payload fixtures, when present, sniff as their extension says")
    func payloadFixtures() throws {
        let folder = TestPaths.fixtures.appendingPathComponent("Payloads")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let expected: [String: ContentType] = [
            "png": .png, "jpg": .jpeg, "jpeg": .jpeg, "gif": .gif, "pdf": .pdf, "html": .html, "rtf": .rtf,
            "vcf": .vCard, "csv": .commaSeparatedText,
        ]
        for name in names {
            guard let ext = name.split(separator: ".").last.map(String.init), let type = expected[ext.lowercased()] else { continue }
            let result = try db.sniff(fileAtPath: folder.appendingPathComponent(name).path)
            #expect(result.type.conforms(to: type), "\(name) sniffed as \(result.type)")
        }
    }
}

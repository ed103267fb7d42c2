import Foundation
import FerryModel
import FerryTestSupport
import Testing

@Suite struct PropertyListValueTests {
    let sample: PropertyListValue = [
        "noteID": "notes/groceries", "revision": 7, "pinned": true, "score": 0.75,
        "created": .date(Date(timeIntervalSince1970: 1_795_336_200)),  // 2026-11-22T08:30:00Z
        "thumbnail": .data(Data([0x00, 0x01, 0x02, 0xFF])), "tags": ["home", "shopping"],
        "owner": ["name": "Anna Müller", "id": 42],
    ]

    @Test func parsesTheXMLAndBinaryFixtures() throws {
        for name in ["sample.plist", "sample-binary.plist"] {
            let data = try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Payloads/\(name)"))
            #expect(try PropertyListValue(propertyListData: data) == sample, "\(name)")
        }
    }

    @Test(arguments: [PropertyListValue.Format.xml, .binary])
    func roundTripsEveryKind(format: PropertyListValue.Format) throws {
        let data = try sample.propertyListData(format: format)
        #expect(try PropertyListValue(propertyListData: data) == sample)
        if format == .binary { #expect(data.starts(with: Array("bplist00".utf8))) }
        if format == .xml { #expect(String(decoding: data, as: UTF8.self).contains("<key>created</key>")) }
    }

    @Test func rejectsBytesThatAreNotAPropertyList() throws {
        let error = #expect(throws: FerryModelError.self) {
            try PropertyListValue(propertyListData: Data("This is not a property list.".utf8))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("not a property list") == true)
    }

    @Test func convertsSwiftValuesIncludingURLsUUIDsAndSets() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let value = try PropertyListValue(converting: [
            "url": URL(string: "https://example.org/a")!, "id": uuid, "tags": Set(["x"]), "n": UInt8(3), "f": Float(0.5),
        ] as [String: Any])
        #expect(value == ["url": "https://example.org/a", "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                          "tags": ["x"], "n": 3, "f": 0.5])
    }

    @Test func nonPlistValuesAreErrorsNamingTheKeyPath() throws {
        struct NotAPlist {}
        let error = #expect(throws: FerryModelError.self) {
            try PropertyListValue(converting: ["owner": ["avatars": [1, NotAPlist()]]] as [String: Any])
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.keyPath == "owner.avatars[1]")
        #expect(error?.message.contains("NotAPlist") == true)

        let big = #expect(throws: FerryModelError.self) { try PropertyListValue(converting: UInt64.max) }
        #expect(big?.code == .invalidArgument)
        let none: String? = nil
        #expect(throws: FerryModelError.self) { try PropertyListValue(converting: ["k": none as Any]) }
    }

    @Test func errorCodesMapOneToOneOntoDBusNames() {
        let codes: [FerryModelError.Code] = [.invalidArgument, .notFound, .permissionDenied, .unavailable, .cancelled, .timeout, .tooLarge]
        #expect(Set(codes.map(\.dbusErrorName)).count == codes.count)
        #expect(FerryModelError.Code.tooLarge.dbusErrorName == "org.ferry.Error.TooLarge")
        for code in codes { #expect(FerryModelError.Code(dbusErrorName: code.dbusErrorName) == code) }
        #expect(FerryModelError.Code(dbusErrorName: "org.freedesktop.DBus.Error.Failed") == nil)
        #expect(FerryModelError(.invalidArgument, "expected a string", keyPath: "a[1].b").description
                == "InvalidArgument: a[1].b: expected a string")
    }
}

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

    /// A binary property list (2-byte references, 4-byte offsets) of `objects`, object 0 the top.
    static func binaryPlist(_ objects: [[UInt8]]) -> Data {
        var out = Array("bplist00".utf8), offsets: [Int] = []
        for object in objects { offsets.append(out.count); out += object }
        let table = out.count
        for offset in offsets { out += (0..<4).reversed().map { UInt8(offset >> ($0 * 8) & 0xFF) } }
        func be64(_ n: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(n >> ($0 * 8) & 0xFF) } }
        return Data(out + [0, 0, 0, 0, 0, 0, 4, 2] + be64(objects.count) + be64(0) + be64(table))
    }

    @Test func refusesCyclesSharedReferenceBombsAndDeepNestingAtOnce() throws {
        let leaf: [UInt8] = [0x54] + Array("leaf".utf8)
        func reference(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] }
        var bomb: [[UInt8]] = [], deep: [[UInt8]] = []
        for i in 0..<49 { bomb.append([0xA2] + reference(i + 1) + reference(i + 1)) }
        bomb.append(leaf)
        for i in 0..<2999 { deep.append([0xA1] + reference(i + 1)) }
        deep.append([0xA0])
        let deepXML = "<plist version=\"1.0\">" + String(repeating: "<array>", count: 10_000)
            + String(repeating: "</array>", count: 10_000) + "</plist>"
        var hostile: [(String, Data)] = []
        hostile.append(("an array holding itself", Self.binaryPlist([[0xA1, 0, 0]])))
        hostile.append(("a cycle through a dictionary", Self.binaryPlist([[0xA1, 0, 1], [0xD1, 0, 2, 0, 0], leaf])))
        hostile.append(("2^50 values once expanded", Self.binaryPlist(bomb)))
        hostile.append(("binary arrays 3000 deep", Self.binaryPlist(deep)))
        hostile.append(("XML arrays 10000 deep", Data(deepXML.utf8)))
        for (name, data) in hostile {
            let started = ContinuousClock.now
            let error = #expect(throws: FerryModelError.self, "\(name)") { try PropertyListValue(propertyListData: data) }
            #expect(error?.code == .invalidArgument, "\(name)")
            #expect(ContinuousClock.now - started < .seconds(2), "\(name) was refused at once")
        }
        // 64 levels, and a value shared by many places, are fine.
        var levels: [[UInt8]] = []
        for i in 0..<63 { levels.append([0xA1] + reference(i + 1)) }
        levels.append(leaf)
        let nested64 = Self.binaryPlist(levels)
        var value = try PropertyListValue(propertyListData: nested64), depth = 0
        while case .array(let inner) = value { value = inner[0]; depth += 1 }
        #expect(depth == 63 && value == "leaf")
        let shared = try PropertyListValue(propertyListData: Self.binaryPlist([[0xA3, 0, 1, 0, 1, 0, 1], leaf]))
        #expect(shared == ["leaf", "leaf", "leaf"])
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

import DBus
import FerryTestSupport
import Foundation
import Testing

/// `Pasteboard1.DetectValues` (iOS 15's `detectValues(for:)`): the values leave the broker, so it
/// is a paste — policy-checked and logged — while `DetectPatterns` of the same text is not.
@Suite("ferryd: DetectValues and iOS 15's detection patterns", .serialized)
struct PasteboardDetectValuesTests {
    typealias F = FerrydFixture

    static let every: [String] = ["probableWebURL", "probableWebSearch", "number", "link", "phoneNumber", "emailAddress",
                                  "postalAddress", "calendarEvent", "shipmentTrackingNumber", "flightNumber", "moneyAmount"]
    static let letter = """
        Flight LH 400 on 2026-11-26 at 15:30 costs $120, call +1 (555) 123-4567.
        See https://swift.org or write to ada@example.org; parcel 1Z999AA10123456784.
        1 Infinite Loop, Cupertino
        """

    static func values(_ connection: Connection, _ patterns: [String],
                       _ options: [String: DBusValue] = [:]) async throws -> [VariantDictionary] {
        try await F.pasteboard(connection, "DetectValues", [.array(of: .string, patterns.map(DBusValue.string)), options.dbusValue])[0]
            .get([VariantDictionary].self)
    }

    static func log(_ connection: Connection) async throws -> [VariantDictionary] {
        try await F.call(connection, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
    }

    @Test("every pattern's values come back per item; DetectValues is logged per item handed over, DetectPatterns is not")
    func everyPattern() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        try await F.setItems(client, [
            F.item([F.representation("public.utf8-plain-text", Self.letter)]),
            F.item([F.representation("public.utf8-plain-text", "42")]),
            F.item([F.representation("public.png", [0x89, 0x50])]),
        ])
        let detected = try await F.pasteboard(client, "DetectPatterns", [.array(of: .string, Self.every.map(DBusValue.string))])
        #expect(try detected[0].get([[String]].self) == [
            ["calendarEvent", "emailAddress", "flightNumber", "link", "moneyAmount", "phoneNumber", "postalAddress",
             "shipmentTrackingNumber"],
            ["number", "probableWebSearch"], [],
        ])
        #expect(try await Self.log(client).isEmpty, "detecting patterns is not a paste")

        let values = try await Self.values(client, Self.every)
        #expect(values.count == 3)
        let letter = try #require(values.first)
        #expect(Set(letter.keys) == ["calendarEvent", "emailAddress", "flightNumber", "link", "moneyAmount", "phoneNumber",
                                     "postalAddress", "shipmentTrackingNumber"])
        #expect(try letter.value(forKey: "flightNumber", as: [String].self) == ["LH 400"])
        #expect(try letter.value(forKey: "calendarEvent", as: [String].self) == ["2026-11-26 at 15:30"])
        #expect(try letter.value(forKey: "phoneNumber", as: [String].self) == ["+1 (555) 123-4567"])
        #expect(try letter.value(forKey: "link", as: [String].self) == ["https://swift.org"])
        #expect(try letter.value(forKey: "emailAddress", as: [String].self) == ["ada@example.org"])
        #expect(try letter.value(forKey: "shipmentTrackingNumber", as: [String].self) == ["1Z999AA10123456784"])
        #expect(try letter.value(forKey: "postalAddress", as: [String].self) == ["1 Infinite Loop, Cupertino"])
        #expect(letter["moneyAmount"]?.unwrappingVariants == .array(of: "(ds)", [.structure([.double(120), .string("USD")])]))
        #expect(values[1]["number"]?.unwrappingVariants == .double(42))
        #expect(values[1]["probableWebSearch"]?.unwrappingVariants == .string("42"))
        #expect(values[2].isEmpty)

        let log = try await Self.log(client)
        #expect(log.count == 2, "items 0 and 1 handed values over, the picture none: \(log)")
        #expect(try Set(log.map { try $0.value(forKey: "item", as: UInt32.self) }) == [0, 1])
        #expect(try log.allSatisfy { try $0.value(forKey: "type", as: String.self) == "public.utf8-plain-text" })

        let unknown = await F.failure { _ = try await Self.values(client, ["link", "zipCode"]) }
        #expect(unknown?.name == "org.ferry.Error.InvalidArgument")
        #expect(unknown?.message.contains("zipCode") == true && unknown?.message.contains("patterns[1]") == true, "\(String(describing: unknown))")
        await client.close()
    }

    @Test("an app without a user action or a foreground scene may detect patterns but not values; with one it may")
    func policy() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let cli = try await fixture.connect()
        let gallery = try await fixture.connect()
        try await F.register(gallery, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        try await F.setItems(cli, [F.item([F.representation("public.utf8-plain-text", "pay €15 to ann@example.com")])])

        let detected = try await F.pasteboard(gallery, "DetectPatterns", [.array(of: .string, ["moneyAmount", "emailAddress"])])
        #expect(try detected[0].get([[String]].self) == [["emailAddress", "moneyAmount"]])
        let denied = await F.failure { _ = try await Self.values(gallery, ["moneyAmount", "emailAddress"]) }
        #expect(denied?.name == "org.ferry.Error.PermissionDenied")
        #expect(denied?.message.contains("org.ferry.gallery may not paste") == true, "\(String(describing: denied))")
        #expect(try await Self.log(cli).isEmpty, "a refusal is not a paste")

        let values = try await Self.values(gallery, ["moneyAmount", "emailAddress"], ["user-action": .boolean(true)])
        #expect(try values.first?.value(forKey: "emailAddress", as: [String].self) == ["ann@example.com"])
        #expect(values.first?["moneyAmount"]?.unwrappingVariants == .array(of: "(ds)", [.structure([.double(15), .string("EUR")])]))
        let log = try await Self.log(cli)
        #expect(log.count == 1)
        #expect(try log.first?.value(forKey: "app-id", as: String.self) == "org.ferry.gallery")
        await cli.close()
        await gallery.close()
    }
}

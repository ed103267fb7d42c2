import Foundation
import FerryModel
import Testing

/// The paste consent request is one record for the broker and the client: its wire shape
/// (docs/wire.md) round-trips, and a malformed one names its key.
@Suite("PasteConsentRequest: one record, one wire reader and writer")
struct PasteConsentRequestTests {
    func failure(_ read: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> FerryModelError? {
        #expect(throws: FerryModelError.self, sourceLocation: sourceLocation) { try read() }
    }

    @Test func pasteConsentRequestRoundTripsAndNamesWhatIsMissing() throws {
        let request = PasteConsentRequest(id: 3, readerApp: "org.example.Reader", readerUniqueName: ":1.42", readerPID: 4242,
                                          readerProcess: "reader", sourceApp: nil, pasteboard: "general",
                                          types: ["public.utf8-plain-text", "public.html"],
                                          asked: Date(timeIntervalSince1970: 1_795_336_200.25),
                                          expires: Date(timeIntervalSince1970: 1_795_336_230.25))
        let wire = try request.wireDictionary()
        #expect(wire["source-app"] == nil, "an absent source app is left out, not sent empty")
        #expect(wire["reader-pid"] == .int32(4242) && wire["id"] == .uint64(3) && wire["asked"] == .int64(1_795_336_200_250_000))
        #expect(try PasteConsentRequest(wireDictionary: wire) == request)
        for key in ["id", "reader-app", "pasteboard", "asked", "expires"] {
            var broken = wire
            broken[key] = nil
            let error = failure { _ = try PasteConsentRequest(wireDictionary: broken) }
            #expect(error?.keyPath == key && error?.message == "required key is missing", "\(key)")
        }
        var optional = wire
        for key in ["reader-unique-name", "reader-pid", "reader-process", "types"] { optional[key] = nil }
        let bare = try PasteConsentRequest(wireDictionary: optional)
        #expect(bare.readerUniqueName == "" && bare.readerPID == 0 && bare.readerProcess == nil && bare.types == [])
        #expect(failure { _ = try PasteConsentRequest(wireDictionary: wire.merging(["types": .int32(1)]) { $1 }) }?.keyPath == "types")
    }
}

import Testing
@testable import DBus

@Suite struct SignatureTests {
    @Test(arguments: ["", "y", "a{sv}", "sia(ii)", "aay", "a{oa{sa{sv}}}", "(ybnqiuxtdsoghv)", "a(s(i(x)))", "h"])
    func validSignaturesAreAccepted(_ text: String) throws {
        #expect(try Signature(text).rawValue == text)
    }

    @Test(arguments: [
        "a", "a{vs}", "((", "(", ")", "()", "{sv}", "a{sv", "a{s}", "a{sii}", "a{(i)s}", "z", "ai)",
        "a{sv}}", "(i}", "a{ss)",
    ])
    func invalidSignaturesAreRejected(_ text: String) {
        expectDBusError(.invalidSignature) { _ = try Signature(text) }
        #expect(Signature(rawValue: text) == nil)
    }

    @Test func lengthLimitIs255() throws {
        _ = try Signature(String(repeating: "i", count: 255))
        let message = expectDBusError(.invalidSignature) { _ = try Signature(String(repeating: "i", count: 256)) }
        #expect(message?.contains("255") == true)
    }

    @Test func nestingLimitIs32ArraysAnd32Structs() throws {
        _ = try Signature(String(repeating: "a", count: 32) + "i")
        expectDBusError(.invalidSignature) { _ = try Signature(String(repeating: "a", count: 33) + "i") }
        _ = try Signature(String(repeating: "(", count: 32) + "i" + String(repeating: ")", count: 32))
        expectDBusError(.invalidSignature) {
            _ = try Signature(String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33))
        }
        // 32 arrays inside 32 structs is allowed: the limits are separate.
        _ = try Signature(String(repeating: "(", count: 32) + String(repeating: "a", count: 32) + "i"
                          + String(repeating: ")", count: 32))
    }

    @Test func completeTypesSplitASequence() throws {
        let signature: Signature = "sia(ii)a{sv}v"
        #expect(signature.completeTypes.map(\.rawValue) == ["s", "i", "a(ii)", "a{sv}", "v"])
        #expect(!signature.isSingleCompleteType)
        #expect(Signature("a{sv}").isSingleCompleteType)
        #expect(!Signature.empty.isSingleCompleteType)
    }

    @Test("a type node's signature is its text, for every basic code, v and containers")
    func typeNodeSignatures() throws {
        let every = "ybnqiuxtdsoghv" + "ayasa{sv}a{ia(ii)}(sv)"
        #expect(Signature(unchecked: every).completeTypes.map(\.rawValue)
            == ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v", "ay", "as", "a{sv}", "a{ia(ii)}", "(sv)"])
        for code in "ybnqiuxtdsoghv".utf8 {
            #expect(Signature(typeCode: code).rawValue == String(decoding: [code], as: UTF8.self))
        }
    }

    @Test func buildersValidate() throws {
        #expect(try Signature.array(of: "s") == "as")
        #expect(try Signature.dictionary(key: "s", value: "v") == "a{sv}")
        #expect(try Signature.structure(["i", "as"]) == "(ias)")
        expectDBusError(.invalidSignature) { _ = try Signature.array(of: "ii") }
        expectDBusError(.invalidSignature) { _ = try Signature.dictionary(key: "v", value: "s") }
        expectDBusError(.invalidSignature) { _ = try Signature.structure([]) }
    }

    @Test func valuesKnowTheirSignature() {
        #expect(DBusValue.bytes([1]).signature == "ay")
        #expect(DBusValue.variantDictionary(["a": .int32(1)]).signature == "a{sv}")
        #expect(DBusValue.array(element: "(is)", elements: []).signature == "a(is)")
        #expect(DBusValue.structure([.string("a"), .variant(.byte(1))]).signature == "(sv)")
    }
}

import Testing
@testable import DBus

/// Expects `body` to throw a `DBusError` named `name`; returns its message.
@discardableResult
func expectDBusError(
    _ name: ErrorName, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> String? {
    do {
        try body()
        Issue.record("expected \(name), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        #expect(error.name == name, "\(error)", sourceLocation: sourceLocation)
        return error.message
    } catch {
        Issue.record("expected a DBusError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

private func call(_ body: [DBusValue]) throws -> Message {
    try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M", body: body)
}

@Suite struct ValueRejectionTests {
    @Test func invalidUTF8IsRejected() throws {
        expectDBusError(.invalidValue) { _ = try DBusValue.string(utf8: [0x61, 0xFF, 0x62]) }
        // An encoded surrogate: libdbus aborts on it, Swift refuses it.
        expectDBusError(.invalidValue) { _ = try DBusValue.string(utf8: [0xED, 0xA0, 0x80]) }
        #expect(try DBusValue.string(utf8: Array("ok ✓".utf8)) == .string("ok ✓"))
    }

    @Test func stringWithNULIsRejectedBeforeLibdbus() {
        let message = expectDBusError(.invalidValue) { _ = try call([.string("a\0b")]) }
        #expect(message?.contains("NUL") == true)
        expectDBusError(.invalidValue) { _ = try DBusValue.string(utf8: [0x61, 0x00]) }
        // Nested deep inside containers too.
        expectDBusError(.invalidValue) {
            _ = try call([.variant(.variantDictionary(["k": .array(element: "s", elements: ["\0"])]))])
        }
    }

    @Test func wrongElementTypeIsRejected() {
        let message = expectDBusError(.invalidValue) {
            _ = try call([.array(element: "s", elements: ["a", .int32(1)])])
        }
        #expect(message?.contains("'i'") == true)
        expectDBusError(.invalidValue) {
            _ = try call([.dictionary(key: "s", value: "v", entries: [.init(key: "k", value: "not a variant")])])
        }
        expectDBusError(.invalidValue) {
            _ = try call([.dictionary(key: "s", value: "i", entries: [.init(key: .int32(1), value: .int32(1))])])
        }
        expectDBusError(.invalidValue) { _ = try call([.structure([])]) }
    }

    @Test func invalidDeclaredTypesAreRejected() {
        expectDBusError(.invalidSignature) { _ = try call([.array(element: Signature(unchecked: "a"), elements: [])]) }
        expectDBusError(.invalidSignature) {
            _ = try call([.dictionary(key: Signature(unchecked: "v"), value: "s", entries: [])])
        }
        expectDBusError(.invalidSignature) { _ = try call([.array(element: Signature(unchecked: "ii"), elements: [])]) }
    }

    @Test func oversizedByteArrayIsRejectedNotAborted() {
        let tooBig = [UInt8](repeating: 1, count: (64 << 20) + 1)
        let message = expectDBusError(.limitsExceeded) { _ = try call([.bytes(tooBig)]) }
        #expect(message?.contains("67108864") == true)
        // The same size as an array of bytes built element by element.
        expectDBusError(.limitsExceeded) {
            _ = try call([.variant(.bytes(tooBig))])
        }
    }

    @Test func arraysOfExactlyTheLimitAreAccepted() throws {
        // libdbus aborts one byte past 2^26; the size computation must be exact.
        let limit = 1 << 26
        _ = try call([.bytes([UInt8](repeating: 2, count: limit))])
        // One (tay) element: 8 bytes of t, 4 of length, then the bytes.
        let fits = DBusValue.structure([.uint64(1), .bytes([UInt8](repeating: 3, count: limit - 12))])
        _ = try call([.array(element: "(tay)", elements: [fits])])
        let over = DBusValue.structure([.uint64(1), .bytes([UInt8](repeating: 3, count: limit - 11))])
        expectDBusError(.limitsExceeded) { _ = try call([.array(element: "(tay)", elements: [over])]) }
    }

    @Test func oversizedArrayOfStructsIsRejected() {
        // 64 structs of (t, 1 MiB of bytes) exceed 2^26 bytes only through their headers and
        // padding; 63 fit.
        let element = DBusValue.structure([.uint64(1), .bytes([UInt8](repeating: 0, count: 1 << 20))])
        let fits = [DBusValue](repeating: element, count: 63)
        #expect(throws: Never.self) { _ = try call([.array(element: "(tay)", elements: fits)]) }
        let over = [DBusValue](repeating: element, count: 64)
        expectDBusError(.limitsExceeded) { _ = try call([.array(element: "(tay)", elements: over)]) }
    }

    @Test func oversizedMessageIsRejected() {
        let half = [UInt8](repeating: 7, count: 64 << 20)
        expectDBusError(.limitsExceeded) { _ = try call([.bytes(half), .bytes(half)]) }
    }

    @Test func tooManyFileDescriptorsAreRejected() throws {
        let (r, w) = try FileDescriptor.pipe()
        defer { r.close(); w.close() }
        let sixteen = [DBusValue](repeating: .unixFD(r), count: 16)
        let ok = try call(sixteen)
        #expect(ok.signature.rawValue == String(repeating: "h", count: 16))
        let message = expectDBusError(.limitsExceeded) {
            _ = try call(sixteen + [.unixFD(w)])
        }
        #expect(message?.contains("16") == true)
    }

    @Test func closedFileDescriptorIsRejected() throws {
        let (r, w) = try FileDescriptor.pipe()
        w.close()
        expectDBusError(.invalidValue) { _ = try call([.unixFD(w)]) }
        r.close()
    }

    @Test func overlongBodySignatureIsRejected() {
        let values = [DBusValue](repeating: .int32(1), count: 256)
        expectDBusError(.invalidSignature) { _ = try call(values) }
    }

    @Test func tooDeepVariantNestingIsRejected() {
        var value = DBusValue.int32(1)
        for _ in 0..<70 { value = .variant(value) }
        expectDBusError(.invalidValue) { _ = try call([value]) }
    }
}

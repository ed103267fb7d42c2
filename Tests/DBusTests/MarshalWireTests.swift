import Testing
@testable import DBus

@Suite struct MarshalWireTests {
    private func sampleBytes() throws -> [UInt8] {
        try Message.methodCall(
            destination: "org.ferry.Test", path: "/org/ferry/Test", interface: "org.ferry.Test1",
            member: "Echo", body: [.string("hello"), .variantDictionary(["n": .int32(4)])]
        ).wireBytes()
    }

    @Test func garbageBytesGiveAnError() {
        for bytes in [[], [0x6C], [UInt8](repeating: 0xFF, count: 64), Array("hello world, not D-Bus".utf8)] {
            #expect(throws: DBusError.self) { _ = try Message(wireBytes: bytes) }
        }
    }

    @Test func truncatedMessageGivesAnError() throws {
        let bytes = try sampleBytes()
        #expect(try Message(wireBytes: bytes).body.count == 2)
        for cut in [bytes.count - 1, bytes.count / 2, 16, 12] {
            #expect(throws: DBusError.self) { _ = try Message(wireBytes: Array(bytes[..<cut])) }
        }
    }

    @Test func corruptedBytesNeverCrash() throws {
        let bytes = try sampleBytes()
        var rejected = 0
        // Flip every byte in turn; each result must parse or throw, never abort.
        for i in bytes.indices {
            var copy = bytes
            copy[i] ^= 0xA5
            do {
                let message = try Message(wireBytes: copy)
                _ = try? message.body
            } catch is DBusError {
                rejected += 1
            }
        }
        #expect(rejected > bytes.count / 4)
    }

    @Test func fileDescriptorsAreReadFromTheSameMessageButNotFromBytes() throws {
        let memfd = try FileDescriptor.memfd(name: "wire", contents: Array("fd payload".utf8), sealed: true)
        let message = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M",
                                             body: [.unixFD(memfd), .string("meta")])
        // libdbus duplicated it: closing ours leaves the message's copy usable.
        memfd.close()
        let body = try message.body
        guard case .unixFD(let received) = body[0] else { Issue.record("no fd"); return }
        #expect(received.isOpen)
        #expect(try received.readAll() == Array("fd payload".utf8))
        received.close()

        // The wire format carries only the fd's index: parsing bytes that declare an fd fails.
        let bytes = try message.wireBytes()
        expectDBusError(.invalidArgs) { _ = try Message(wireBytes: bytes) }
    }
}

import FerryModel
import Testing

@Suite("ObjectPathElement and session object paths")
struct ObjectPathElementTests {
    @Test(arguments: [
        ("0F3A-9", "0F3A_2d9"),
        ("", ""),
        ("abcXYZ019", "abcXYZ019"),
        ("a_b", "a_5fb"),
        ("a b/c", "a_20b_2fc"),
        ("é", "_c3_a9"),
        ("\u{1F600}", "_f0_9f_98_80"),
    ])
    func escapesEveryByteOutsideLettersAndDigits(text: String, element: String) {
        #expect(ObjectPathElement.escape(text) == element)
        #expect(ObjectPathElement.unescape(Substring(element)) == text)
    }

    @Test func everyASCIIByteRoundTrips() {
        for byte in UInt8(1)...127 {
            let text = String(decoding: [byte], as: UTF8.self)
            let element = ObjectPathElement.escape(text)
            // An object path element may hold only [A-Za-z0-9_].
            #expect(element.utf8.allSatisfy { ObjectPathElement.isAlphanumeric($0) || $0 == 0x5F }, "\(byte)")
            #expect(ObjectPathElement.unescape(Substring(element)) == text, "\(byte)")
        }
    }

    @Test func isAlphanumericIsExactlyASCIILettersAndDigits() {
        for byte in UInt8.min...UInt8.max {
            let expected = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            #expect(ObjectPathElement.isAlphanumeric(byte) == expected, "\(byte)")
        }
    }

    @Test(arguments: [
        "_",  // a stray underscore
        "a_2",  // one hex digit
        "_2D",  // upper-case hex is another spelling
        "_zz",  // not hex
        "_+f",  // a sign is not a hex digit, though integer parsing accepts it
        "_-0",
        "_41",  // "A" is written unescaped
        "_ff",  // not UTF-8
        "_c3",  // truncated UTF-8
        "a-b",  // '-' cannot appear in an element
    ])
    func foreignSpellingsAreRefused(element: String) {
        #expect(ObjectPathElement.unescape(Substring(element)) == nil)
    }

    @Test func sessionPathsRoundTrip() throws {
        let uuid = SceneSession.makePersistentIdentifier()
        for id in [uuid, "note-1", "é x", String(repeating: "z", count: 255)] {
            let path = SceneSession.objectPath(id)
            #expect(path.hasPrefix("/org/ferry/Scenes/"))
            #expect(SceneSession.persistentIdentifier(fromObjectPath: path) == id)
        }
        #expect(SceneSession.objectPath("0F3A-9") == "/org/ferry/Scenes/0F3A_2d9")
        #expect(SceneSession.makePersistentIdentifier() != uuid)
    }

    @Test(arguments: [
        "/org/ferry/Scenes", "/org/ferry/Scenes/", "/org/ferry/ScenesX/abc", "/org/ferry/Pasteboard/abc",
        "/org/ferry/Scenes/a_2", "/org/ferry/Scenes/_00",  // a NUL is not a persistent identifier
        "/org/ferry/Scenes/" + String(repeating: "z", count: 256),  // longer than 255 bytes
    ])
    func foreignPathsNameNoSession(path: String) {
        #expect(SceneSession.persistentIdentifier(fromObjectPath: path) == nil)
    }

    @Test func persistentIdentifiersAreChecked() {
        for bad in ["", "a\u{0}b", String(repeating: "z", count: 256)] {
            let error = #expect(throws: FerryModelError.self) {
                _ = try SceneSession(persistentIdentifier: bad, bundleIdentifier: "org.example.App")
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.keyPath == "persistentIdentifier")
        }
        #expect(throws: Never.self) {
            _ = try SceneSession(persistentIdentifier: String(repeating: "é", count: 127), bundleIdentifier: "org.example.App")
        }
    }
}

import FerryModel
import Testing

@Suite struct PasteboardNameTests {
    @Test(arguments: [
        ("general", "/org/ferry/Pasteboard/general"),
        ("my.board", "/org/ferry/Pasteboard/my_2eboard"),
        ("a_b-c", "/org/ferry/Pasteboard/a_5fb_2dc"),
        ("Z9", "/org/ferry/Pasteboard/Z9"),
    ])
    func objectPathsAreEscapedOneToOne(name: String, path: String) throws {
        try PasteboardName.validate(name)
        #expect(PasteboardName.objectPath(name) == path)
        #expect(PasteboardName.name(fromObjectPath: path) == name)
    }

    @Test(arguments: ["", ".hidden", "-x", "_x", "a/b", "a b", "é", String(repeating: "a", count: 129)])
    func badNamesAreRefused(name: String) {
        #expect(throws: FerryModelError.self) { try PasteboardName.validate(name) }
    }

    @Test(arguments: ["/org/ferry/Pasteboard/a_2", "/org/ferry/Pasteboard/a_zz", "/org/ferry/Pasteboard/_2ex",
                      "/org/ferry/Broker", "/org/ferry/Pasteboard/a_41"])
    func foreignPathsNameNoPasteboard(path: String) {
        // "_41" decodes to "A", which would be written unescaped: not a path the broker serves.
        #expect(PasteboardName.name(fromObjectPath: path) == nil)
    }
}

import Testing
@testable import DBus

@Suite struct NameValidationTests {
    @Test func objectPaths() throws {
        for good in ["/", "/a", "/org/ferry/Broker", "/a_b/C9/_"] { _ = try ObjectPath(good) }
        for bad in ["", "a/b", "/a//b", "/a/", "//", "/a-b", "/é", "/a b", "/a.b"] {
            expectDBusError(.invalidObjectPath) { _ = try ObjectPath(bad) }
        }
        let path: ObjectPath = "/org/ferry/Pasteboard/general"
        #expect(path.elements == ["org", "ferry", "Pasteboard", "general"])
        #expect(path.parent == "/org/ferry/Pasteboard")
        #expect(ObjectPath.root.parent == nil)
        #expect(try ObjectPath.root.appending("x") == "/x")
        #expect(path.isDescendant(of: "/org/ferry"))
        #expect(!path.isDescendant(of: "/org/fer"))
        expectDBusError(.invalidObjectPath) { _ = try path.appending("a/b") }
    }

    @Test func busNames() throws {
        for good in ["org.ferry.Broker", ":1.42", ":1.0", "a.b", "org.ferry-x.App_2", ":a.1b", "_.-"] {
            let name = try BusName(good)
            #expect(name.isUnique == good.hasPrefix(":"))
        }
        for bad in ["", "org", ".org.ferry", "org..ferry", "org.ferry.", "org.1ferry", ":1", "org.fé.x",
                    "org/ferry.x", String(repeating: "a.", count: 128) + "a"] {
            expectDBusError(.invalidName) { _ = try BusName(bad) }
        }
    }

    @Test func interfaceAndErrorNames() throws {
        for good in ["org.ferry.Pasteboard1", "a.b", "_a._b", "org.freedesktop.DBus.Error.Failed"] {
            _ = try InterfaceName(good)
            _ = try ErrorName(good)
        }
        for bad in ["", "org", "org.1ferry", "org.fer-ry", ":1.2", "org..a", "org.a.", ".org.a",
                    String(repeating: "a.", count: 128) + "a"] {
            expectDBusError(.invalidName) { _ = try InterfaceName(bad) }
            expectDBusError(.invalidName) { _ = try ErrorName(bad) }
        }
    }

    @Test func memberNames() throws {
        for good in ["Get", "_x", "PropertiesChanged", "a1"] { _ = try MemberName(good) }
        for bad in ["", "1a", "a.b", "a-b", "é", String(repeating: "a", count: 256)] {
            expectDBusError(.invalidName) { _ = try MemberName(bad) }
        }
        _ = try MemberName(String(repeating: "a", count: 255))
    }

    @Test func wellKnownErrorNamesAreValid() throws {
        for name: ErrorName in [.failed, .unknownMethod, .unknownObject, .unknownInterface, .unknownProperty,
                                .propertyReadOnly, .invalidArgs, .invalidSignature, .noReply, .timeout,
                                .serviceUnknown, .nameHasNoOwner, .accessDenied, .limitsExceeded,
                                .disconnected, .notSupported, .invalidValue, .invalidObjectPath,
                                .invalidName, .systemError] {
            #expect(try ErrorName(name.rawValue) == name)
        }
        #expect(DBusError(.failed, "boom").description == "org.freedesktop.DBus.Error.Failed: boom")
    }
}

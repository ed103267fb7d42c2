import DBus
import Foundation
import FerryTestSupport
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("Exported objects")
struct ExportedObjectTests {
    static let gadget = Interface("org.ferry.Test.Gadget") {
        Method("Rename", in: ["old_name": "s", "new_name": "s"], out: ["ok": "b"]) { _ in [.boolean(true)] }
        Method("Reset") { _ in [] }
        Property("Name", "s", get: { _ in .string("gizmo") })
        Property("Volume", "u", get: { _ in .uint32(3) }, set: { _, _ in })
        Signal("Renamed", ["old_name": "s", "new_name": "s"])
    }

    @Test("Introspect describes a nested tree: interfaces, arguments, properties, signals, children")
    func introspectTree() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Self.gadget, at: "/org/ferry/Tree/a")
        try service.export(Interface("org.ferry.Test.Leaf") { Method("Touch") { _ in [] } }, at: "/org/ferry/Tree/a/b")
        try service.export(Interface("org.ferry.Test.Leaf") { Method("Touch") { _ in [] } }, at: "/org/ferry/Tree/c")

        func introspect(_ path: ObjectPath) async throws -> IntrospectedNode {
            let reply = try await client.call(destination: service.uniqueName, path: path,
                                              interface: "org.freedesktop.DBus.Introspectable", member: "Introspect",
                                              returning: String.self)
            #expect(reply.hasPrefix("<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\""))
            return try IntrospectedNode.parse(reply)
        }

        let root = try await introspect("/")
        #expect(root.children == ["org"])
        let tree = try await introspect("/org/ferry/Tree")
        #expect(tree.children == ["a", "c"])
        #expect(!tree.interfaces.keys.contains("org.ferry.Test.Gadget"))

        let a = try await introspect("/org/ferry/Tree/a")
        #expect(a.children == ["b"])
        let gadget = try #require(a.interfaces["org.ferry.Test.Gadget"])
        #expect(gadget.methods["Rename"] == ["in s old_name", "in s new_name", "out b ok"])
        #expect(gadget.methods["Reset"] == [])
        #expect(gadget.properties == ["Name": "s read", "Volume": "u readwrite"])
        #expect(gadget.signals["Renamed"] == ["s old_name", "s new_name"])
        for standard in ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                         "org.freedesktop.DBus.Peer"] {
            #expect(a.interfaces[standard] != nil, "missing \(standard)")
        }
        #expect(a.interfaces["org.freedesktop.DBus.Properties"]?.methods["Get"]
            == ["in s interface_name", "in s property_name", "out v value"])

        let b = try await introspect("/org/ferry/Tree/a/b")
        #expect(b.children.isEmpty)
        #expect(b.interfaces["org.ferry.Test.Leaf"]?.methods["Touch"] == [])

        // Unexporting prunes the tree.
        #expect(service.unexport("/org/ferry/Tree/c"))
        #expect(try await introspect("/org/ferry/Tree").children == ["a"])
        await client.close()
        await service.close()
    }

    @Test("Exporting a standard interface or the same interface twice is refused")
    func duplicateExport() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        try service.export(Self.gadget, at: "/dup")
        #expect(throws: DBusError.self) { try service.export(Self.gadget, at: "/dup") }
        #expect(throws: DBusError.self) {
            try service.export(Interface("org.freedesktop.DBus.Properties") {}, at: "/dup2")
        }
        await service.close()
    }

    @Test("Peer Ping and GetMachineId answer on any path")
    func peer() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let ping = try await client.call(destination: service.uniqueName, path: "/anywhere",
                                         interface: "org.freedesktop.DBus.Peer", member: "Ping")
        #expect(ping.isEmpty)
        let id = try await client.call(destination: service.uniqueName, path: "/",
                                       interface: "org.freedesktop.DBus.Peer", member: "GetMachineId",
                                       returning: String.self)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        await client.close()
        await service.close()
    }

    @Test("A unix fd passes both ways through a call: a memfd written by one side is read by the other")
    func fdBothWays() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Interface("org.ferry.Test.Files") {
            Method("Reverse", in: ["input": "h"], out: ["output": "h"]) { call in
                let input = try call.argument(0, as: FileDescriptor.self)
                let bytes = try input.readAll()
                return [.unixFD(try FileDescriptor.memfd(name: "reversed", contents: bytes.reversed(), sealed: true))]
            }
        }, at: "/files")
        let payload = Array("hello, ferry".utf8)
        let reply = try await client.call(
            destination: service.uniqueName, path: "/files", interface: "org.ferry.Test.Files", member: "Reverse",
            body: [.unixFD(try FileDescriptor.memfd(name: "input", contents: payload, sealed: false))],
            returning: FileDescriptor.self)
        #expect(try firstDifference(reply.readAll(), payload.reversed()) == nil)
        #expect(reply.seals != nil && reply.seals != 0)
        reply.close()
        await client.close()
        await service.close()
    }
}

/// What a test needs from an introspection document.
struct IntrospectedNode {
    struct InterfaceInfo {
        /// Method name → ["in s name", …].
        var methods: [String: [String]] = [:]
        /// Signal name → ["s name", …].
        var signals: [String: [String]] = [:]
        /// Property name → "type access".
        var properties: [String: String] = [:]
    }

    var interfaces: [String: InterfaceInfo] = [:]
    var children: [String] = []

    static func parse(_ xml: String) throws -> IntrospectedNode {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        guard parser.parse() else {
            throw DBusError(.failed, "unparsable XML: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        return delegate.node
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var node = IntrospectedNode()
        var depth = 0
        var interface: String?
        var member: (kind: String, name: String)?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            defer { depth += 1 }
            switch name {
            case "node" where depth == 1:
                node.children.append(attributes["name"] ?? "")
            case "interface":
                interface = attributes["name"]
                node.interfaces[interface!] = InterfaceInfo()
            case "method", "signal":
                member = (name, attributes["name"] ?? "")
                if name == "method" { node.interfaces[interface!]!.methods[member!.name] = [] }
                else { node.interfaces[interface!]!.signals[member!.name] = [] }
            case "property":
                node.interfaces[interface!]!.properties[attributes["name"] ?? ""] =
                    "\(attributes["type"] ?? "") \(attributes["access"] ?? "")"
            case "arg":
                guard let interface, let member else { break }
                let type = attributes["type"] ?? "", argName = attributes["name"] ?? ""
                if member.kind == "method" {
                    let direction = attributes["direction"] ?? "in"
                    node.interfaces[interface]!.methods[member.name]!.append("\(direction) \(type) \(argName)")
                } else {
                    node.interfaces[interface]!.signals[member.name]!.append("\(type) \(argName)")
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            if name == "method" || name == "signal" { member = nil }
            if name == "interface" { interface = nil }
        }
    }
}

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An interface in introspection XML reduced to what a caller depends on: one sorted line per
/// method, signal and property with its names, types, directions and access. Two XML texts
/// describe the same contract exactly when their shapes are equal (comments and order aside).
public enum InterfaceShape {
    /// The shape of interface `name` in `xml`.
    /// - Throws: `ChildProcessError` when the XML is not well-formed (XMLDocument alone recovers
    ///   from errors such as `--` inside a comment, which gdbus-codegen and every strict reader
    ///   refuse) or has not exactly one such interface.
    public static func of(_ xml: String, interface name: String) throws -> [String] {
        let strict = XMLParser(data: Data(xml.utf8))
        guard strict.parse() else {
            throw ChildProcessError(description: "the XML of \(name) is not well-formed: line \(strict.lineNumber), "
                                    + "\(strict.parserError.map { "\($0)" } ?? "unknown error")")
        }
        let document = try XMLDocument(xmlString: xml, options: [])
        let interfaces = try document.nodes(forXPath: "//interface[@name='\(name)']")
        guard interfaces.count == 1, let interface = interfaces.first as? XMLElement else {
            throw ChildProcessError(description: "expected one <interface name=\"\(name)\">, found \(interfaces.count)")
        }
        var lines: [String] = []
        for case let member as XMLElement in interface.children ?? [] {
            guard let kind = member.name, ["method", "signal", "property"].contains(kind) else { continue }
            let memberName = member.attribute(forName: "name")?.stringValue ?? "?"
            if kind == "property" {
                let type = member.attribute(forName: "type")?.stringValue ?? "?"
                let access = member.attribute(forName: "access")?.stringValue ?? "?"
                lines.append("property \(memberName) \(type) \(access)")
                continue
            }
            let args = member.elements(forName: "arg").map { arg in
                let direction = arg.attribute(forName: "direction")?.stringValue ?? (kind == "method" ? "in" : "out")
                let type = arg.attribute(forName: "type")?.stringValue ?? "?"
                return "\(direction) \(type) \(arg.attribute(forName: "name")?.stringValue ?? "")"
            }
            lines.append("\(kind) \(memberName)(\(args.joined(separator: ", ")))")
        }
        return lines.sorted()
    }
}

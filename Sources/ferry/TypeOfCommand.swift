import ArgumentParser
import FerryModel
#if canImport(Glibc)
import Glibc
#endif

/// `ferry type of`: sniff a file.
struct TypeOfCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "of",
        abstract: "Tell a file's type by its name and by its content, and the verdict.",
        discussion: """
            When name and content disagree, the more specific type wins if one conforms to the \
            other, or a type with the file's extension that conforms to the content's type (an \
            XML .plist is an XML property list); if both are text the name wins; otherwise a \
            certain content match wins (a PNG named x.txt is a PNG) and an uncertain one loses to \
            the name.

            A dynamic type is shown by the MIME type or extension it came from.

            JSON keys: file (string), byName, byContent (identifiers or null), byNameMIME, \
            byContentMIME (their MIME types or null), contentCertain (bool), type (the \
            identifier), mime (its MIME type or null), rule (name, content, agree, name-refines, content-refines, \
            text-by-name, content-overrides, name-overrides).
            """)

    @Argument(help: "The file to inspect.")
    var file: String

    @OptionGroup var output: OutputOptions

    struct Report: Encodable {
        var file: String
        var byName: TypeReport?
        var byContent: TypeReport?
        var contentCertain: Bool
        var type: TypeReport
        var rule: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(file, forKey: .file)
            try c.encode(byName?.identifier, forKey: .byName)
            try c.encode(byName?.mime, forKey: .byNameMIME)
            try c.encode(byContent?.identifier, forKey: .byContent)
            try c.encode(byContent?.mime, forKey: .byContentMIME)
            try c.encode(contentCertain, forKey: .contentCertain)
            try type.encode(into: &c, identifier: .type, mime: .mime)
            try c.encode(rule, forKey: .rule)
        }

        enum CodingKeys: String, CodingKey {
            case file, byName, byNameMIME, byContent, byContentMIME, contentCertain, type, mime, rule
        }
    }

    func run() throws {
        // A name that is not UTF-8 is read by its exact bytes and shown with U+FFFD.
        let path = PathArgument(file), shown = path.display
        guard let system = path.systemPath() else { throw CLIFailure("cannot read '\(shown)': \(LinuxCalls.reason(errno))") }
        let result = try Self.sniff(system, shown: shown)
        let report = Report(file: shown, byName: result.byName.map(TypeReport.init), byContent: result.byContent.map(TypeReport.init),
                            contentCertain: result.isContentCertain, type: TypeReport(result.type), rule: result.rule.rawValue)
        if output.json { return try printJSON(report) }
        print("file:       \(shown)")
        print("by name:    \(result.byName.map(typeName) ?? "-")")
        print("by content: \(result.byContent.map { "\(typeName($0)) (\(report.contentCertain ? "certain" : "uncertain"))" } ?? "-")")
        print("type:       \(typeName(result.type)) (\(report.rule))")
    }

    /// The file's type by name and content.
    /// - Throws: `CLIFailure` (status 2) when it cannot be read.
    private static func sniff(_ path: String, shown: String) throws -> SniffResult {
        do {
            return try TypeDatabase.shared.sniff(fileAtPath: path, filename: shown)
        } catch {
            throw CLIFailure(error.description)
        }
    }
}

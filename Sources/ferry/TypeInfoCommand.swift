import ArgumentParser
import FerryModel

/// `ferry type info`: what the database knows about one type.
struct TypeInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a type's identifier, kind, description, supertypes and tags.",
        discussion: """
            Give a type identifier, or look the type up with --mime or --extension (an unknown \
            but valid tag gives a dynamic type conforming to public.data). Types that \
            registered apps declare (exported or imported) are known while the broker runs: \
            for a type the machine does not know it is asked, never started, and a broker that \
            does not answer within 0.5 s is skipped with a warning.

            JSON keys: identifier (string), declared (bool), dynamic (bool), public (bool), \
            description (string or null), parents, supertypes (sorted), filenameExtensions, \
            mimeTypes (arrays of strings, preferred first).
            """)

    @Argument(help: "A type identifier, e.g. public.png.")
    var identifier: String?

    @Option(name: .customLong("mime"), help: ArgumentHelp("Look the type up by MIME type.", valueName: "mime-type"))
    var mimeType: String?

    @Option(name: .customLong("extension"), help: ArgumentHelp("Look the type up by filename extension.", valueName: "ext"))
    var filenameExtension: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        let given = [identifier, mimeType, filenameExtension].compactMap { $0 }.count
        guard given == 1 else { throw ValidationError("Give exactly one of <identifier>, --mime, --extension.") }
    }

    func run() async throws {
        let type = try await AppTypes.resolving(bus: nil) { try resolveType() }
        let info = ContentTypeInfo(type)
        if output.json { return try printJSON(info) }
        print("identifier:  \(info.identifier)")
        let kind = [info.declared ? "declared" : nil, info.dynamic ? "dynamic" : nil, info.public ? "public" : nil]
        print("kind:        \(kind.compactMap { $0 }.joined(separator: ", "))")
        print("description: \(info.description ?? "-")")
        print("parents:     \(list(info.parents))")
        print("supertypes:  \(list(info.supertypes))")
        print("extensions:  \(list(info.filenameExtensions))")
        print("MIME types:  \(list(info.mimeTypes))")
    }

    private func resolveType() throws -> ContentType {
        if let identifier { return try lookUpType(identifier) }
        if let mimeType {
            return try byTag(mimeType, .mimeType, "MIME type")
        }
        let ext = filenameExtension ?? ""
        return try byTag(ext.hasPrefix(".") ? String(ext.dropFirst()) : ext, .filenameExtension, "filename extension")
    }

    /// The preferred declared type for a tag, whatever it conforms to; else the dynamic type.
    private func byTag(_ tag: String, _ tagClass: ContentType.TagClass, _ what: String) throws -> ContentType {
        let declared = ContentType.types(tag: tag, tagClass: tagClass, conformingTo: nil).first { $0.isDeclared }
        guard let type = declared ?? ContentType(tag: tag, tagClass: tagClass, conformingTo: .data) else {
            throw CLIFailure("invalid \(what) '\(tag)'")
        }
        return type
    }

    private func list(_ items: [String]) -> String { items.isEmpty ? "-" : items.joined(separator: ", ") }
}

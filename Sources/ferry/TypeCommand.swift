import ArgumentParser
import FerryModel

/// `ferry type …`: inspect content types.
struct TypeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "type",
        abstract: "Inspect content types: identifiers, conformance, tags, and what a file is.",
        discussion: """
            Types are uniform type identifiers (public.png, com.adobe.pdf), types derived from \
            the machine's shared-mime-info database (org.freedesktop.mime.text.x-python3), and \
            dynamic types (dyn.…) for tags nothing declares.
            """,
        subcommands: [TypeInfoCommand.self, TypeOfCommand.self, TypeConformsCommand.self])
}

/// Options shared by the `type` subcommands.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false
}

/// Looks up a type identifier or fails with exit status 2.
func lookUpType(_ identifier: String) throws -> ContentType {
    guard ContentType.isValidIdentifier(identifier) else { throw CLIFailure("invalid type identifier '\(identifier)'") }
    guard let type = ContentType(identifier) else { throw CLIFailure("unknown type identifier '\(identifier)'") }
    return type
}

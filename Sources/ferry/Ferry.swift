import ArgumentParser

@main
struct Ferry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move items between apps.",
        discussion: """
            EXIT STATUS
              0   success (for 'type conforms': the type conforms)
              1   'type conforms': the type does not conform
              2   error: unknown or invalid type, MIME type or extension; unreadable file
              64  usage error: bad or missing arguments

            Errors are reported as one line on standard error.
            """,
        subcommands: [TypeCommand.self])
}

import ArgumentParser

/// Usage errors as the README promises them: one line on standard error (`ferry: MESSAGE (see
/// 'ferry copy --help')`) and status 64, instead of ArgumentParser's three or four lines of
/// error, help and usage.
enum UsageError {
    /// The line for `error` when it is a usage error ArgumentParser would print (a bad or
    /// missing argument, a failed `validate()`); nil for anything else (help, errors already
    /// reported as an `ExitCode`).
    static func line(for error: any Error, arguments: [String]) -> String? {
        guard !(error is ExitCode), !(error is CleanExit), Ferry.exitCode(for: error) == .validationFailure else { return nil }
        // A message of several lines (a list of choices) joined into one.
        let message = Ferry.message(for: error).split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
            .filter { !$0.isEmpty }.joined(separator: " ")
        return "\(message) (see '\((["ferry"] + commandPath(arguments)).joined(separator: " ")) --help')"
    }

    /// The subcommand names `arguments` start with (`["history", "restore"]`).
    static func commandPath(_ arguments: [String]) -> [String] {
        var command: any ParsableCommand.Type = Ferry.self
        var path: [String] = []
        for argument in arguments {
            guard let next = subcommand(named: argument, of: command) else { break }
            path.append(argument)
            command = next
        }
        return path
    }

    /// `ferry help TOPIC…` names commands that exist: ArgumentParser shows the top help with
    /// status 0 for a topic it does not know, which reads as success to a script.
    /// - Throws: `ValidationError` naming the first word that is no command there.
    static func checkHelpTopic(_ arguments: [String]) throws {
        guard arguments.first == "help" else { return }
        var command: any ParsableCommand.Type = Ferry.self
        var path = ["ferry"]
        for topic in arguments.dropFirst() where !topic.hasPrefix("-") {
            guard let next = subcommand(named: topic, of: command) else {
                let known = command.configuration.subcommands.compactMap { $0.configuration.commandName }
                throw ValidationError("'\(path.joined(separator: " ")) \(topic)' is no command; there are: \(known.joined(separator: ", "))")
            }
            path.append(topic)
            command = next
        }
    }

    private static func subcommand(named name: String, of command: any ParsableCommand.Type) -> (any ParsableCommand.Type)? {
        command.configuration.subcommands.first { $0.configuration.commandName == name || $0.configuration.aliases.contains(name) }
    }
}

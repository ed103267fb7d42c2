import ArgumentParser
import FerryModel

/// `ferry type conforms`: test conformance.
struct TypeConformsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conforms",
        abstract: "Exit 0 when <type> conforms to <supertype>, 1 when it does not.",
        discussion: """
            Conformance is reflexive and transitive; every type conforms to public.item. \
            Unknown or invalid identifiers exit with status 2.

            JSON keys: type (string), supertype (string), conforms (bool).
            """)

    @Argument(help: "The type identifier to test, e.g. public.png.")
    var type: String

    @Argument(help: "The supertype identifier, e.g. public.image.")
    var supertype: String

    @OptionGroup var output: OutputOptions

    struct Report: Encodable {
        var type: String
        var supertype: String
        var conforms: Bool
    }

    func run() throws {
        var conforms = false
        try reportingFailures {
            let a = try lookUpType(type), b = try lookUpType(supertype)
            conforms = a.conforms(to: b)
            if output.json { return try printJSON(Report(type: a.identifier, supertype: b.identifier, conforms: conforms)) }
            print("\(a.identifier) \(conforms ? "conforms" : "does not conform") to \(b.identifier)")
        }
        if !conforms { throw ExitCode(1) }
    }
}

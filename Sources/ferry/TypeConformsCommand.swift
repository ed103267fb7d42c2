import ArgumentParser
import FerryModel

/// `ferry type conforms`: test conformance.
struct TypeConformsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conforms",
        abstract: "Exit 0 when <type> conforms to <supertype>, 1 when it does not.",
        discussion: """
            Conformance is reflexive and transitive; every type conforms to public.item. \
            Either type may also be a MIME type (image/png) or one of the words text \
            (public.plain-text) and image (public.image), as --type takes them. Unknown or \
            invalid identifiers and invalid MIME types exit with status 2. Types that \
            registered apps declare are known while the broker runs (it is asked, never \
            started).

            A dynamic type is shown by the MIME type it came from.

            JSON keys: type (the identifier), mime (its MIME type or null), supertype, \
            supertypeMIME (likewise), conforms (bool).
            """)

    @Argument(help: "The type to test, e.g. public.png or image/png.")
    var type: String

    @Argument(help: "The supertype, e.g. public.image, image or text/plain.")
    var supertype: String

    @OptionGroup var output: OutputOptions

    struct Report: Encodable {
        var type: TypeReport
        var supertype: TypeReport
        var conforms: Bool

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try type.encode(into: &c, identifier: .type, mime: .mime)
            try supertype.encode(into: &c, identifier: .supertype, mime: .supertypeMIME)
            try c.encode(conforms, forKey: .conforms)
        }

        enum CodingKeys: String, CodingKey { case type, mime, supertype, supertypeMIME, conforms }
    }

    func run() async throws {
        let a = try await AppTypes.resolving(bus: nil) { try resolveTypeArgument(type) }
        let b = try await AppTypes.resolving(bus: nil) { try resolveTypeArgument(supertype) }
        let conforms = a.conforms(to: b)
        if output.json {
            try printJSON(Report(type: TypeReport(a), supertype: TypeReport(b), conforms: conforms))
        } else {
            print("\(typeName(a)) \(conforms ? "conforms" : "does not conform") to \(typeName(b))")
        }
        if !conforms { throw ExitCode(1) }
    }
}

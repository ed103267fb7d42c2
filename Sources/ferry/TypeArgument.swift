import FerryModel

/// Reads a `--type` value: a type identifier (`public.png`), or a MIME type (`image/png`, anything
/// with a slash; an unknown one gives a dynamic type, as `ferry type info --mime` does).
/// - Throws: `CLIFailure` (status 2) for an invalid or unknown identifier or an invalid MIME type.
func resolveTypeArgument(_ text: String) throws -> ContentType {
    if text.contains("/") {
        let declared = ContentType.types(tag: text, tagClass: .mimeType, conformingTo: nil).first { $0.isDeclared }
        guard let type = declared ?? ContentType(mimeType: text) else { throw CLIFailure("invalid MIME type '\(text)'") }
        return type
    }
    return try lookUpType(text)
}

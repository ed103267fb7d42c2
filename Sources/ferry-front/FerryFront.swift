#if canImport(Glibc)
import Glibc
#endif

/// The installed `ferry`: a small executable that starts in about half the time of the full CLI.
///
/// It does two things itself — plain `ferry paste` to standard output (see `PlainPaste`) and
/// plain `ferry copy` of a text or of standard input (see `PlainCopy`), the commands scripts,
/// editors and clipboard watchers run most — over raw libdbus, with no Foundation, ArgumentParser or
/// type database. Every other command line, and every paste that does not go the ordinary way
/// (an error reply from the broker, a bus it cannot reach), it hands to the full CLI, `ferry-cli`
/// beside it, with the same arguments (`FullCLI.exec`): every message, exit status and help text
/// lives there. A refused Read changes nothing in the broker (it logs only pastes it delivers),
/// so the full CLI may do it again. What happens after the broker delivered, and the two replies
/// where asking again would be wrong (no reply in time; a broker the bus cannot start), the front
/// reports itself, with the full CLI's message and status (`FrontFailure`).
///
/// Kept free of what makes a static Swift binary slow to start: no `print`, no dynamic casts, no
/// `Set` or `Dictionary`, no existential errors; it only calls C and moves bytes. On a plain
/// paste it also never looks up a type's metadata by mangled name: the first such lookup in a
/// process costs about 0.1 ms (it scans the executable's protocol conformances), the later ones
/// tens of µs each, a seventh of the paste in all (BENCHMARKS.md, "The front's metadata
/// lookups"). So a paste makes no array of its bytes (they are written from the reply), frees
/// no native Swift string (the bus address stays a C string) and destroys no optional command
/// (each branch of `main` ends the process).
@main
enum FerryFront {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        // Each branch ends the process, so no optional command is ever destroyed: destroying one
        // instantiates `Optional`'s metadata, a lookup by mangled name (tens of µs).
        if let paste = PlainPaste(arguments: arguments) { finish(paste.run()) }
        if let copy = PlainCopy(arguments: arguments) { finish(copy.run()) }
        FullCLI.exec()
    }

    private static func finish(_ outcome: PlainPaste.Outcome) -> Never {
        switch outcome {
        case .handOver:
            FullCLI.exec()
        case .finished(let status):
            exit(status)
        }
    }
}

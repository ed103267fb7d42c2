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
/// `Set` or `Dictionary`, no existential errors; it only calls C and moves bytes.
@main
enum FerryFront {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        let outcome: PlainPaste.Outcome
        if let paste = PlainPaste(arguments: arguments) {
            outcome = paste.run()
        } else if let copy = PlainCopy(arguments: arguments) {
            outcome = copy.run()
        } else {
            FullCLI.exec()
        }
        switch outcome {
        case .handOver:
            FullCLI.exec()
        case .finished(let status):
            exit(status)
        }
    }
}

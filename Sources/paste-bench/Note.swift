#if canImport(Glibc)
import Glibc
#endif

/// A note for the log (stderr): the table script passes non-JSON lines through to stderr anyway.
func note(_ text: String) {
    let line = Array("paste-bench: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}


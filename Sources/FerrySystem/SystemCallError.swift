#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system call that failed, with the `errno` it set: what the modules above turn into their
/// own named errors (`FerryError` `.io`, `FerryModelError` `.unavailable`).
package struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The call, as its manual page names it (`poll`, `pipe2`).
    package var call: String
    /// The `errno` it set.
    package var code: Int32

    /// The failure of `call` with the current `errno` (or `code`).
    package init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    /// "poll failed: Bad address".
    package var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

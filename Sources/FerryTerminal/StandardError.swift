import FerryText
#if canImport(Glibc)
import Glibc
#endif

/// The one writer to standard error of `ferry`: the full CLI's error lines and notes, the
/// front's error lines and the progress bar all go through it.
///
/// Each text goes out in one `write` where the kernel takes it whole (lines from two processes
/// sharing the terminal do not interleave), the rest after it; an interrupted write is retried,
/// a standard error opened non-blocking is waited for. A closed or failing standard error drops
/// the text: there is nowhere left to report that. No Foundation: the front links this module.
public enum StandardError {
    /// Writes `text` as it is (no newline added) to `descriptor`, standard error unless given.
    public static func write(_ text: String, descriptor: Int32 = 2) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0, errno == EINTR {
                    continue
                } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    if poll(&ready, 1, -1) < 0, errno != EINTR { return }
                } else {
                    return
                }
            }
        }
    }

    /// Writes `ferry: MESSAGE` and a newline: `message` on one line, its control characters
    /// escaped (``PrintableText/line(_:limit:)``), as every error of `ferry` is reported.
    public static func report(_ message: String) {
        write("ferry: " + PrintableText.line(message) + "\n")
    }
}

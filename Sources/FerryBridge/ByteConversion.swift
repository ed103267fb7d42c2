/// How the bytes of a desktop type are turned into (or made from) the one UTF-8 text Ferry
/// stores, or into the list of file URLs a file manager offers.
package enum ByteConversion: String, Sendable, Hashable {
    /// The bytes as they are.
    case none
    /// ISO-8859-1 (X11 `STRING`) to UTF-8.
    case latin1ToUTF8
    /// UTF-16 (a byte-order mark decides, little-endian without one) to UTF-8.
    case utf16ToUTF8
    /// UTF-8 to ISO-8859-1, characters outside it as `?` (offering X11 `STRING`).
    case utf8ToLatin1
    /// `x-special/gnome-copied-files` (`copy` or `cut`, then one URI a line) to a
    /// `text/uri-list` (CRLF-terminated lines).
    case gnomeCopiedFilesToURIList
    /// A `text/uri-list` (or one URL) to `x-special/gnome-copied-files` (`copy`, then one URI a line).
    case uriListToGnomeCopiedFiles
}

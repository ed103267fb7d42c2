/// Why handing files to xdg-desktop-portal's FileTransfer failed: a code a program can switch
/// on, a message for people, and the path concerned when there is one.
public struct FileTransferPortalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name, as `description` prints it.
        public let rawValue: String

        /// Makes a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The document portal (`org.freedesktop.portal.Documents` with the FileTransfer
        /// interface) is not on the session bus and cannot be activated there.
        public static let unavailable = Code(rawValue: "Unavailable")
        /// A path names something other than a regular file (a folder, a device, a FIFO):
        /// the portal transfers regular files only.
        public static let notARegularFile = Code(rawValue: "NotARegularFile")
        /// A path cannot be opened (missing, or not searchable by this process).
        public static let cannotOpen = Code(rawValue: "CannotOpen")
        /// No paths were given: there is nothing to transfer.
        public static let noFiles = Code(rawValue: "NoFiles")
        /// The portal answered with an error (its D-Bus error name is in the message).
        public static let refused = Code(rawValue: "Refused")

        /// The code's name.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// What happened, for people.
    public var message: String
    /// The path concerned, when one is.
    public var path: String?

    /// Makes an error.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// `Code: message`.
    public var description: String { "\(code): \(message)" }
}

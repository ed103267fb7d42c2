/// The version of Ferry: one number for every executable (`ferry`, `ferry-cli`, `ferryd`,
/// `ferry-demo`, `ferry-bridge`) and for the Debian package `make deb` builds, which reads it
/// from `ferryd --version`.
public enum FerryVersion {
    /// The release number, `MAJOR.MINOR.PATCH`.
    public static let number = "0.2.0"

    /// What `COMMAND --version` prints: the command's name and the number (`ferryd 0.2.0`).
    /// - Parameter command: the name the executable is installed as.
    public static func line(for command: String) -> String {
        command + " " + number
    }
}

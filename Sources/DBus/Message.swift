// PROVISIONAL SEAM — owned by the values/marshalling work, which fills it in. The connection work
// relies only on `init(taking:)` and `raw`, which must stay.
import CDBus

/// A D-Bus message. Owns one reference to the underlying libdbus message.
public final class Message: @unchecked Sendable {
    // Safe to share: libdbus locks a message once it has been sent, and this class exposes no
    // mutation after construction.
    let raw: OpaquePointer

    /// Takes ownership of one reference to `raw`.
    init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { dbus_message_unref(raw) }
}

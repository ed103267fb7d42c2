/// An error that knows its D-Bus name, so that an exported method handler may throw it as it is.
///
/// The reply to a handler's thrown error is the `DBusError` itself, this conversion for a
/// conforming error, and otherwise `org.freedesktop.DBus.Error.Failed` with the description.
/// Layers above `DBus` adopt it for their own error types (the broker does for the item
/// model's errors), so no handler has to translate errors by hand.
public protocol DBusErrorConvertible: Error {
    /// The error as D-Bus names it.
    var dbusError: DBusError { get }
}

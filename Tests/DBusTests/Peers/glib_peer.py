#!/usr/bin/python3
"""A GLib (GDBus) peer for Ferry's typed-codec interop tests: it speaks big-endian.

libdbus, python-dbus and Ferry send little-endian messages on this machine; GDBus can be told
to send a message in either order (g_dbus_message_set_byte_order), so this peer is how the tests
get big-endian bytes from an independent implementation onto a real bus.

  glib_peer.py serve NAME
      Owns NAME on the bus in DBUS_SESSION_BUS_ADDRESS and exports /org/ferry/GLibPeer with
      org.ferry.GLibPeer1; every reply is sent big-endian. Prints READY once the name is owned.
        Echo3(u s a{sv}) -> (u s a{sv})   the three values back
        EchoBytes(ay)    -> (ay)          the bytes back
        Numbers()        -> (y b n q i u x t d s o g)   edge values

  glib_peer.py call DEST PATH INTERFACE MEMBER SIGNATURE GVARIANT-TEXT
      Calls MEMBER with the arguments parsed from the GVariant text (a tuple of SIGNATURE), sent
      big-endian; prints the reply's byte order (B or l) and its body as GVariant text.
"""
import os
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

IFACE = "org.ferry.GLibPeer1"
INTROSPECTION = """
<node>
  <interface name="org.ferry.GLibPeer1">
    <method name="Echo3">
      <arg direction="in" type="u"/><arg direction="in" type="s"/><arg direction="in" type="a{sv}"/>
      <arg direction="out" type="u"/><arg direction="out" type="s"/><arg direction="out" type="a{sv}"/>
    </method>
    <method name="EchoBytes">
      <arg direction="in" type="ay"/><arg direction="out" type="ay"/>
    </method>
    <method name="Numbers">
      <arg direction="out" type="y"/><arg direction="out" type="b"/><arg direction="out" type="n"/>
      <arg direction="out" type="q"/><arg direction="out" type="i"/><arg direction="out" type="u"/>
      <arg direction="out" type="x"/><arg direction="out" type="t"/><arg direction="out" type="d"/>
      <arg direction="out" type="s"/><arg direction="out" type="o"/><arg direction="out" type="g"/>
    </method>
  </interface>
</node>
"""

NUMBERS = GLib.Variant(
    "(ybnqiuxtdsog)",
    (255, True, -32768, 65535, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
     -0.5, "grüße 🚢", "/org/ferry/Pasteboard/general", "a{sv}(iay)"),
)


def connect():
    return Gio.DBusConnection.new_for_address_sync(
        os.environ["DBUS_SESSION_BUS_ADDRESS"],
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)


def serve(name):
    connection = connect()
    loop = GLib.MainLoop()
    connection.connect("closed", lambda *_: loop.quit())  # never outlive the bus
    info = Gio.DBusNodeInfo.new_for_xml(INTROSPECTION).interfaces[0]

    def on_call(conn, sender, path, interface, member, parameters, invocation):
        if member == "Numbers":
            body = NUMBERS
        else:
            body = parameters  # Echo3 and EchoBytes answer what they got
        reply = Gio.DBusMessage.new_method_reply(invocation.get_message())
        reply.set_body(body)
        reply.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
        conn.send_message(reply, Gio.DBusSendMessageFlags.NONE)

    connection.register_object("/org/ferry/GLibPeer", info, on_call, None, None)
    reply = connection.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                 "RequestName", GLib.Variant("(su)", (name, 4)), GLib.VariantType("(u)"),
                                 Gio.DBusCallFlags.NONE, -1, None)
    if reply.unpack()[0] != 1:
        print("could not own " + name, file=sys.stderr)
        sys.exit(1)
    print("READY", flush=True)
    loop.run()


def call(destination, path, interface, member, signature, text):
    connection = connect()
    message = Gio.DBusMessage.new_method_call(destination, path, interface, member)
    message.set_body(GLib.Variant.parse(GLib.VariantType("(" + signature + ")"), text, None, None))
    message.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
    reply, _ = connection.send_message_with_reply_sync(message, Gio.DBusSendMessageFlags.NONE, 30000, None)
    if reply.get_message_type() == Gio.DBusMessageType.ERROR:
        print(reply.get_error_name() + ": " + reply.get_body().unpack()[0], file=sys.stderr)
        sys.exit(2)
    order = "B" if reply.get_byte_order() == Gio.DBusMessageByteOrder.BIG_ENDIAN else "l"
    body = reply.get_body()
    print(order + " " + (body.print_(True) if body is not None else "()"), flush=True)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) == 8 and sys.argv[1] == "call":
        call(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()

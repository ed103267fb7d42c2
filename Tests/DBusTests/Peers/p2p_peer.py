#!/usr/bin/python3
"""Peer-to-peer D-Bus peers for Ferry's transport tests: independent implementations on both
sides of a connection without a bus (libdbus through python-dbus, and GDBus through GIO).

Every side speaks org.ferry.P2P1 at /org/ferry/P2P:
    Echo(v) -> v                the value back
    EchoBytes(ay) -> ay         the bytes back
    Write(h fd, s text)         writes text into fd
    Open(s text) -> h           a pipe's read end that gives text, then end of file

  p2p_peer.py serve libdbus|gdbus unix:path=SOCKET
      Listens (a python-dbus server, or a GDBusServer) and serves every connection; prints
      "ADDRESS <address with guid>" once listening.

  p2p_peer.py call libdbus|gdbus ADDRESS [big-endian]
      Connects (python-dbus, or GDBus authenticating as a client), calls each method, checks
      every answer, and prints "OK <calls>"; GDBus sends big-endian messages when asked.
"""
import os
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

PATH = "/org/ferry/P2P"
IFACE = "org.ferry.P2P1"
INTROSPECTION = """
<node>
  <interface name="org.ferry.P2P1">
    <method name="Echo"><arg direction="in" type="v"/><arg direction="out" type="v"/></method>
    <method name="EchoBytes"><arg direction="in" type="ay"/><arg direction="out" type="ay"/></method>
    <method name="Write"><arg direction="in" type="h"/><arg direction="in" type="s"/></method>
    <method name="Open"><arg direction="in" type="s"/><arg direction="out" type="h"/></method>
  </interface>
</node>
"""
BYTES = bytes(range(256)) * 400  # 100 KiB: several reads on the way in and out
NESTED = {"name": GLib.Variant("s", "grüße"), "sizes": GLib.Variant("at", [1, 2, 3 << 40]),
          "pair": GLib.Variant("(ob)", ("/org/ferry/x", True))}


def pipe_with(text):
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    return read


def read_exactly(fd, count):
    """`count` bytes: the server's copy of a write end passed to it may stay open after the call
    (in its message), so the caller cannot wait for the end of the stream."""
    data = b""
    while len(data) < count:
        chunk = os.read(fd, count - len(data))
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return data.decode()


def read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode()


# --- libdbus (python-dbus) ---

def libdbus_serve(address):
    import dbus
    import dbus.server
    import dbus.service
    from dbus.mainloop.glib import DBusGMainLoop

    DBusGMainLoop(set_as_default=True)

    class P2P(dbus.service.Object):
        @dbus.service.method(IFACE, in_signature="v", out_signature="v")
        def Echo(self, value):
            return value

        @dbus.service.method(IFACE, in_signature="ay", out_signature="ay", byte_arrays=True)
        def EchoBytes(self, data):
            return dbus.ByteArray(data)

        @dbus.service.method(IFACE, in_signature="hs", out_signature="")
        def Write(self, fd, text):
            raw = fd.take()
            os.write(raw, text.encode())
            os.close(raw)

        @dbus.service.method(IFACE, in_signature="s", out_signature="h")
        def Open(self, text):
            read = pipe_with(text)
            handle = dbus.types.UnixFd(read)
            os.close(read)
            return handle

    objects = []

    class Server(dbus.server.Server):
        def connection_added(self, connection):
            objects.append(P2P(connection, PATH))

    server = Server(address)
    print("READY", server.address, flush=True)
    GLib.MainLoop().run()


def libdbus_call(address):
    import dbus

    connection = dbus.connection.Connection(address)
    proxy = connection.get_object(None, PATH, introspect=False)
    p2p = dbus.Interface(proxy, IFACE)
    assert bytes(p2p.EchoBytes(dbus.ByteArray(BYTES), byte_arrays=True)) == BYTES, "EchoBytes"
    value = dbus.Dictionary({"name": "grüße", "sizes": dbus.Array([1, 2, 3 << 40], signature="t")}, signature="sv")
    echoed = p2p.Echo(value, signature="v")
    assert echoed["name"] == "grüße" and list(echoed["sizes"]) == [1, 2, 3 << 40], f"Echo {echoed!r}"
    read, write = os.pipe()
    p2p.Write(dbus.types.UnixFd(write), "written by the server")
    os.close(write)
    assert read_exactly(read, len("written by the server")) == "written by the server", "Write"
    assert read_all(p2p.Open("opened by the server").take()) == "opened by the server", "Open"
    print("OK 4", flush=True)


# --- GDBus ---

def gdbus_reply(invocation, method, parameters):
    message = invocation.get_message()
    if method == "Echo":
        invocation.return_value(parameters)
    elif method == "EchoBytes":
        invocation.return_value(parameters)
    elif method == "Write":
        fds = message.get_unix_fd_list()
        raw = fds.get(parameters.unpack()[0])
        os.write(raw, parameters.unpack()[1].encode())
        os.close(raw)
        invocation.return_value(None)
    elif method == "Open":
        fds = Gio.UnixFDList.new()
        read = pipe_with(parameters.unpack()[0])
        index = fds.append(read)
        os.close(read)
        invocation.return_value_with_unix_fd_list(GLib.Variant("(h)", (index,)), fds)


def gdbus_serve(address):
    info = Gio.DBusNodeInfo.new_for_xml(INTROSPECTION).interfaces[0]
    server = Gio.DBusServer.new_sync(address, Gio.DBusServerFlags.NONE, Gio.dbus_generate_guid(), None, None)

    connections = []

    def new_connection(_server, connection):
        connections.append(connection)  # GDBus closes a connection nobody holds
        connection.register_object(PATH, info,
                                   lambda _c, _s, _p, _i, method, parameters, invocation:
                                   gdbus_reply(invocation, method, parameters), None, None)
        return True

    server.connect("new-connection", new_connection)
    server.start()
    print("READY", server.get_client_address(), flush=True)
    GLib.MainLoop().run()


def gdbus_call(address, big_endian):
    connection = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None)

    def call(method, parameters, fds=None):
        message = Gio.DBusMessage.new_method_call(None, PATH, IFACE, method)
        message.set_body(parameters)
        if fds is not None:
            message.set_unix_fd_list(fds)
        if big_endian:
            message.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
        reply, _ = connection.send_message_with_reply_sync(message, Gio.DBusSendMessageFlags.NONE, 10000, None)
        if reply.get_message_type() == Gio.DBusMessageType.ERROR:
            raise RuntimeError(f"{method}: {reply.get_error_name()} {reply.get_body()}")
        return reply

    reply = call("EchoBytes", GLib.Variant("(ay)", (BYTES,)))
    assert bytes(reply.get_body().unpack()[0]) == BYTES, "EchoBytes"
    reply = call("Echo", GLib.Variant("(v)", (GLib.Variant("a{sv}", NESTED),)))
    assert reply.get_body().unpack()[0] == GLib.Variant("a{sv}", NESTED).unpack(), f"Echo {reply.get_body()}"
    read, write = os.pipe()
    fds = Gio.UnixFDList.new()
    fds.append(write)
    os.close(write)
    call("Write", GLib.Variant("(hs)", (0, "written by the server")), fds)
    del fds
    assert read_exactly(read, len("written by the server")) == "written by the server", "Write"
    reply = call("Open", GLib.Variant("(s)", ("opened by the server",)))
    assert read_all(reply.get_unix_fd_list().get(reply.get_body().unpack()[0])) == "opened by the server", "Open"
    print("OK 4", flush=True)


def main():
    command, implementation, address = sys.argv[1:4]
    if command == "serve":
        (libdbus_serve if implementation == "libdbus" else gdbus_serve)(address)
    elif implementation == "libdbus":
        libdbus_call(address)
    else:
        gdbus_call(address, big_endian=sys.argv[4:] == ["big-endian"])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""An independent D-Bus peer (python-dbus, GLib main loop) for Ferry's interop tests.

Owns the bus name given as the first argument on the bus in DBUS_SESSION_BUS_ADDRESS and exports
/org/ferry/Peer with interface org.ferry.Peer1. Prints READY on stdout once the name is owned.
"""
import zlib
import os
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.ferry.Peer1"
PROPS = "org.freedesktop.DBus.Properties"


class PeerError(dbus.DBusException):
    def __init__(self, name, message):
        super().__init__(message, name=name)


class Peer(dbus.service.Object):
    def __init__(self, bus, loop):
        super().__init__(bus, "/org/ferry/Peer")
        self.loop = loop
        self.label = "initial"

    @dbus.service.method(IFACE, in_signature="v", out_signature="v")
    def Echo(self, value):
        return value

    @dbus.service.method(IFACE, in_signature="xx", out_signature="x")
    def Add(self, a, b):
        return a + b

    @dbus.service.method(IFACE, in_signature="as", out_signature="s")
    def Join(self, parts):
        return "|".join(parts)

    @dbus.service.method(IFACE, in_signature="a{sv}", out_signature="a{ss}")
    def Signatures(self, options):
        """For each entry, the D-Bus signature of the value python-dbus decoded."""
        return {k: _signature(v) for k, v in options.items()}

    @dbus.service.method(IFACE, in_signature="(sixay)", out_signature="(sixay)")
    def EchoStruct(self, value):
        return dbus.Struct(value, signature="sixay")

    @dbus.service.method(IFACE, in_signature="ss", out_signature="")
    def Fail(self, name, message):
        raise PeerError(name, message)

    @dbus.service.method(IFACE, in_signature="h", out_signature="tu")
    def ReadFD(self, fd):
        """Reads the fd from its start to its end: (bytes read, CRC-32 of them)."""
        raw = fd.take()
        crc = 0
        total = 0
        if _seekable(raw):
            os.lseek(raw, 0, os.SEEK_SET)
        with os.fdopen(raw, "rb", closefd=True) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
                crc = zlib.crc32(chunk, crc)
        return dbus.UInt64(total), dbus.UInt32(crc)

    @dbus.service.method(IFACE, in_signature="t", out_signature="h")
    def MakeFD(self, size):
        """A memfd holding `size` bytes of the pattern 0, 1, …, 255, 0, 1, …"""
        fd = os.memfd_create("ferry-peer")
        pattern = bytes(range(256)) * 4096
        left = size
        while left > 0:
            n = os.write(fd, pattern[: min(left, len(pattern))])
            left -= n
        os.lseek(fd, 0, os.SEEK_SET)
        result = dbus.types.UnixFd(fd)
        os.close(fd)
        return result

    @dbus.service.method(IFACE, in_signature="s", out_signature="")
    def Emit(self, text):
        self.Pinged(text)

    @dbus.service.signal(IFACE, signature="s")
    def Pinged(self, text):
        pass

    @dbus.service.method(IFACE, in_signature="", out_signature="")
    def Quit(self):
        GLib.idle_add(self.loop.quit)

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name] if name in self.GetAll(interface) else _unknown(name)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != IFACE:
            raise PeerError("org.freedesktop.DBus.Error.UnknownInterface", interface)
        return {"Version": dbus.UInt32(1), "Label": dbus.String(self.label)}

    @dbus.service.method(PROPS, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        if name == "Version":
            raise PeerError("org.freedesktop.DBus.Error.PropertyReadOnly", name)
        if name != "Label":
            _unknown(name)
        self.label = str(value)
        self.PropertiesChanged(IFACE, {"Label": dbus.String(self.label)}, [])

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


_BASIC = [
    (dbus.Boolean, "b"), (dbus.Byte, "y"), (dbus.Int16, "n"), (dbus.UInt16, "q"), (dbus.Int32, "i"),
    (dbus.UInt32, "u"), (dbus.Int64, "x"), (dbus.UInt64, "t"), (dbus.Double, "d"),
    (dbus.ObjectPath, "o"), (dbus.Signature, "g"), (dbus.String, "s"), (dbus.types.UnixFd, "h"),
]


def _signature(value):
    """The D-Bus type of a value as python-dbus decoded it (variant levels unwrapped)."""
    if isinstance(value, dbus.Dictionary):
        return "a{" + value.signature + "}"
    if isinstance(value, dbus.Array):
        return "a" + value.signature
    if isinstance(value, dbus.ByteArray):
        return "ay"
    if isinstance(value, dbus.Struct):
        return "(" + "".join(_signature(v) for v in value) + ")"
    for kind, code in _BASIC:
        if isinstance(value, kind):
            return code
    return "?" + type(value).__name__


def _unknown(name):
    raise PeerError("org.freedesktop.DBus.Error.UnknownProperty", name)


def _seekable(fd):
    try:
        os.lseek(fd, 0, os.SEEK_CUR)
        return True
    except OSError:
        return False


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "org.ferry.PyPeer"
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    loop = GLib.MainLoop()
    bus.call_on_disconnection(lambda _: loop.quit())  # never outlive the bus
    peer = Peer(bus, loop)
    bus_name = dbus.service.BusName(name, bus, do_not_queue=True)
    print("READY", flush=True)
    loop.run()
    del bus_name, peer


if __name__ == "__main__":
    main()

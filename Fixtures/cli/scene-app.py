#!/usr/bin/python3
"""A minimal scene app for the CLI tests (Tests/FerryCLITests/Scene*Tests.swift).

Registers an Info.plist with org.ferry.Broker1.RegisterApp (scenes=true) and exports
org.ferry.Client1 at /org/ferry/Client on the raw bus (python3-dbus), answering the broker's
scene calls the way the contract (services/interfaces/org.ferry.Client1.xml) asks:

- ChooseConfiguration: "Editor" for the activity type given with --editor-activity, else "Default";
- ConnectScene, SceneChanged, ContinueActivity, RefreshScene, DisconnectScene,
  DiscardSceneSessions: recorded, one line each on stdout;
- PerformPaste: accepted when --accept-paste is given (types: the --paste-type values),
  else declined with the reason "this scene accepts only public.image".

Prints READY once registered. Run with /usr/bin/python3 (python3-dbus, python3-gi).
"""
import argparse
import os

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

CLIENT_PATH = "/org/ferry/Client"


def say(*words):
    print(" ".join(str(w) for w in words), flush=True)


class Client(dbus.service.Object):
    def __init__(self, bus, options):
        super().__init__(bus, CLIENT_PATH)
        self.options = options

    @dbus.service.method("org.ferry.Client1", in_signature="a{sv}a{sv}", out_signature="s")
    def ChooseConfiguration(self, session, options):
        activities = options.get("userActivities", [])
        kind = activities[0].get("activityType", "") if activities else ""
        chosen = "Editor" if kind and kind == self.options.editor_activity else "Default"
        say("choose", session["persistentIdentifier"], kind or "-", chosen)
        return chosen

    @dbus.service.method("org.ferry.Client1", in_signature="a{sv}a{sv}", out_signature="")
    def ConnectScene(self, session, options):
        activities = options.get("userActivities", [])
        info = dict(activities[0].get("userInfo", {})) if activities else {}
        shown = ",".join("%s=%s:%s" % (k, type(v).__name__, v) for k, v in sorted(info.items()))
        say("connect", session["persistentIdentifier"], session.get("configurationName", "-"), shown or "-")

    @dbus.service.method("org.ferry.Client1", in_signature="sa{sv}", out_signature="")
    def SceneChanged(self, persistent_id, changes):
        if "state" in changes:
            say("state", persistent_id, int(changes["state"]))

    @dbus.service.method("org.ferry.Client1", in_signature="sa{sv}", out_signature="")
    def ContinueActivity(self, persistent_id, activity):
        say("continue", persistent_id, activity.get("targetContentIdentifier", "-"))

    @dbus.service.method("org.ferry.Client1", in_signature="s", out_signature="")
    def RefreshScene(self, persistent_id):
        say("refresh", persistent_id)

    @dbus.service.method("org.ferry.Client1", in_signature="sa{sv}", out_signature="")
    def DisconnectScene(self, persistent_id, options):
        say("disconnect", persistent_id, options.get("reason", "-"), options.get("animation", "-"))

    @dbus.service.method("org.ferry.Client1", in_signature="as", out_signature="")
    def DiscardSceneSessions(self, persistent_ids):
        say("discard", *persistent_ids)

    @dbus.service.method("org.ferry.Client1", in_signature="ssa{sv}", out_signature="a{sv}")
    def PerformPaste(self, persistent_id, pasteboard, options):
        say("paste", persistent_id, pasteboard)
        if self.options.accept_paste:
            types = self.options.paste_type or ["public.plain-text"]
            return dbus.Dictionary({
                "accepted": dbus.Boolean(True),
                "configuration": dbus.Array(types, signature="s"),
                "types": dbus.Array(types, signature="s"),
                "message": dbus.String("pasted into %s" % persistent_id[:8]),
            }, signature="sv")
        return dbus.Dictionary({
            "accepted": dbus.Boolean(False),
            "configuration": dbus.Array(["public.image"], signature="s"),
            "reason": dbus.String("this scene accepts only public.image"),
            "message": dbus.String(""),
        }, signature="sv")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bus", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--editor-activity", default="")
    parser.add_argument("--accept-paste", action="store_true")
    parser.add_argument("--paste-type", action="append")
    options = parser.parse_args()

    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(options.bus)
    client = Client(bus, options)
    with open(options.manifest, "rb") as f:
        manifest = f.read()
    app_id = manifest.split(b"<key>CFBundleIdentifier</key>", 1)[1].split(b"<string>", 1)[1].split(b"</string>", 1)[0]
    loop = GLib.MainLoop()

    def registered():
        say("READY", app_id.decode())

    def failed(error):
        say("register failed:", error)
        os._exit(1)

    broker = bus.get_object("org.ferry.Broker", "/org/ferry/Broker", introspect=False)
    broker.RegisterApp(app_id.decode(), dbus.ByteArray(manifest), dbus.ObjectPath(CLIENT_PATH),
                       dbus.Dictionary({"scenes": dbus.Boolean(True)}, signature="sv"),
                       dbus_interface="org.ferry.Broker1", reply_handler=registered, error_handler=failed)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, 15, loop.quit)
    loop.run()
    del client


if __name__ == "__main__":
    main()

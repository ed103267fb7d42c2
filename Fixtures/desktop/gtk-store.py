#!/usr/bin/python3
# A GTK3 app that copies text and hands it to the clipboard manager as it quits (SAVE_TARGETS),
# as GTK apps do. Usage: DISPLAY=:N /usr/bin/python3 gtk-store.py TEXT
# Prints READY before the hand-over and STORED once the manager answered (or GTK gave up).
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

clipboard = Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD)
clipboard.set_text(sys.argv[1], -1)
print("READY", flush=True)
clipboard.store()
print("STORED", flush=True)

#!/usr/bin/python3
# Asks the clipboard manager to save CLIPBOARD (SAVE_TARGETS on CLIPBOARD_MANAGER, listing the
# given targets) and waits for the answer, as an exiting app does. Needs python3-xlib.
# Usage: DISPLAY=:N /usr/bin/python3 save-targets-request.py TARGET...
# Prints READY once it asked, then "saved" or "refused" and the seconds the answer took.
import sys
import time

from Xlib import X, display

d = display.Display()
window = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, X.InputOnly, X.CopyFromParent)
prop = d.intern_atom("FERRY_SAVE")
window.change_property(prop, d.intern_atom("ATOM"), 32, [d.intern_atom(n) for n in sys.argv[1:]])
started = time.monotonic()
window.convert_selection(d.intern_atom("CLIPBOARD_MANAGER"), d.intern_atom("SAVE_TARGETS"), prop, X.CurrentTime)
d.flush()
print("READY", flush=True)
while True:
    event = d.next_event()
    if event.type == X.SelectionNotify:
        break
print("refused" if event.property == X.NONE else "saved", "%.1f" % (time.monotonic() - started), flush=True)

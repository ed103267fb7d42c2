#!/usr/bin/python3
# A reader that hangs in the middle of an INCR transfer (ICCCM 2.7.2): converts CLIPBOARD to
# TARGET, starts the INCR by deleting the property, reads and deletes the first chunk, then
# takes nothing more. Needs python3-xlib.
# Usage: DISPLAY=:N /usr/bin/python3 incr-stall-request.py TARGET
# Prints "READY incr SIZE chunk BYTES" (the size the owner announced, -1 for none as xclip
# sends; the first chunk's length)
# once the first chunk is deleted, or "not-incr" / "refused" and exits 1; then sleeps until
# killed.
import sys
import time

from Xlib import X, display

d = display.Display()
window = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, X.InputOnly, X.CopyFromParent,
                                       event_mask=X.PropertyChangeMask)
prop = d.intern_atom("FERRY_STALL")
incr = d.intern_atom("INCR")
window.convert_selection(d.intern_atom("CLIPBOARD"), d.intern_atom(sys.argv[1]), prop, X.CurrentTime)
d.flush()
while True:
    event = d.next_event()
    if event.type == X.SelectionNotify:
        break
if event.property == X.NONE:
    print("refused", flush=True)
    sys.exit(1)
announced = window.get_full_property(prop, X.AnyPropertyType)
if announced is None or announced.property_type != incr:
    print("not-incr", flush=True)
    sys.exit(1)
window.delete_property(prop)
d.flush()
while True:
    event = d.next_event()
    if event.type == X.PropertyNotify and event.atom == prop and event.state == X.PropertyNewValue:
        break
chunk = window.get_full_property(prop, X.AnyPropertyType, sizehint=1 << 20)
window.delete_property(prop)
d.flush()
size = announced.value[0] if len(announced.value) > 0 else -1
print("READY incr %d chunk %d" % (size, len(chunk.value)), flush=True)
while True:
    time.sleep(60)

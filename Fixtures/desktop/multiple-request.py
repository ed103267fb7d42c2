#!/usr/bin/python3
# Asks the CLIPBOARD owner for several targets in one MULTIPLE conversion (ICCCM 2.6.2), as
# clipboard managers do. Needs python3-xlib.
# Usage: DISPLAY=:N /usr/bin/python3 multiple-request.py TARGET...
# Prints one line per target: the name, then the bytes as hex (format 8), the atom names joined
# by commas (format 32), or "refused" when the owner set that pair's property to None.
import sys

from Xlib import X, display

d = display.Display()
window = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, X.InputOnly, X.CopyFromParent,
                                       event_mask=X.PropertyChangeMask)
names = sys.argv[1:]
pairs = []
for i, name in enumerate(names):
    pairs += [d.intern_atom(name), d.intern_atom("FERRY_PART_%d" % i)]
multiple = d.intern_atom("FERRY_MULTIPLE")
window.change_property(multiple, d.intern_atom("ATOM_PAIR"), 32, pairs)
window.convert_selection(d.intern_atom("CLIPBOARD"), d.intern_atom("MULTIPLE"), multiple, X.CurrentTime)
d.flush()
while True:
    event = d.next_event()
    if event.type == X.SelectionNotify:
        break
if event.property == X.NONE:
    print("MULTIPLE refused")
    sys.exit(1)
answer = window.get_full_property(multiple, X.AnyPropertyType).value
for i, name in enumerate(names):
    part = answer[2 * i + 1]
    value = window.get_full_property(part, X.AnyPropertyType) if part != X.NONE else None
    if value is None:
        print(name, "refused")
    elif value.format == 8:
        print(name, bytes(value.value).hex())
    else:
        print(name, ",".join(d.get_atom_name(a) for a in value.value))

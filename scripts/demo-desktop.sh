# Sourced by scripts/demo.sh: chapter 8, Ferry as the desktop's clipboard, on a real X server
# (Xvfb) and a real Wayland compositor (headless sway). Each half has its own private bus and
# ferryd, so nothing here touches the caller's session. Uses demo.sh's bin, logs, pids, chapter,
# run and await_ready.

# Starts a private bus for USER (root when empty) in DIR: its address in DIR/address, its pid added
# to pids, so the demo's cleanup stops it. Not in a command substitution: that subshell's pids
# would be lost, and the bus left running.
desk_bus() {  # desk_bus DIR [USER] [CONFIG]
  local dir=$1 user=${2:-} config=${3:-$PWD/Fixtures/dbus/session.conf}
  local as=(); [ -n "$user" ] && as=(runuser -u "$user" --)
  "${as[@]}" dbus-daemon --config-file="$config" --address="unix:dir=$dir" \
    --print-address=3 --print-pid=4 --fork 3>"$dir/address" 4>"$dir/pid"
  pids+=("$(head -n1 "$dir/pid")")
}

# Stops what ran as the Wayland user in this chapter's runtime directory (wl-copy forks servers
# that outlive the command): by pid, only processes whose XDG_RUNTIME_DIR is ours.
desk_cleanup() {
  [ -n "${rt:-}" ] || return 0
  for p in $(pgrep -u ferry-wl 2>/dev/null); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "XDG_RUNTIME_DIR=$rt" && kill "$p" 2>/dev/null
  done
  return 0
}

chapter "8. The desktop's clipboard: every app's copy lands in Ferry, typed, and outlives its app"
x11=$(mktemp -d); chmod 755 "$x11"
Xvfb -displayfd 5 -screen 0 640x480x24 -nolisten tcp 5>"$x11/display" 2>"$x11/xvfb.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$x11/display" ] && break; sleep 0.1; done
export DISPLAY=":$(head -n1 "$x11/display")"
desk_bus "$x11"
xbus=$(head -n1 "$x11/address")
"$bin/ferryd" --bus "$xbus" --state-dir "$x11/state" >"$x11/ferryd" 2>&1 &
pids+=($!)
await_ready "$x11/ferryd"
"$bin/ferry-bridge" --bus "$xbus" --backend x11 >"$x11/bridge" 2>&1 &
pids+=($!)
await_ready "$x11/bridge"
xf() { DBUS_SESSION_BUS_ADDRESS=$xbus "$bin/ferry" "$@"; }
echo "-- X11 (Xvfb $DISPLAY): ferry-bridge watches CLIPBOARD and PRIMARY and is the clipboard manager:"
run xf bridge status

echo "-- xclip copies an HTML snippet, and quits:"
printf '<b>bold</b> words' | xclip -quiet -selection clipboard -t text/html -i >/dev/null 2>&1 &
xclip_pid=$!
for _ in $(seq 100); do xf types 2>/dev/null | grep -q html && break; sleep 0.1; done
run xf types
for _ in $(seq 100); do xf bridge status --json 2>/dev/null | grep -q '"complete":true' && break; sleep 0.1; done
kill "$xclip_pid"; wait "$xclip_pid" 2>/dev/null || true
sleep 0.3
echo "-- its copy outlived it: xclip and ferry both paste it"
run xclip -o -selection clipboard -t text/html; echo
run xf paste -t text/html; echo

echo "-- ferry copies; every X11 app sees it, with the text aliases toolkits look for:"
run xf copy --text "copied through Ferry"
sleep 0.3
run xclip -o -selection clipboard -t TARGETS
run xclip -o -selection clipboard; echo

echo "-- a password manager (Tk) marks its copy secret: proxied while it lives, never kept:"
wish Fixtures/desktop/tk-offer.tcl x-kde-passwordManagerHint secret UTF8_STRING hunter2 >"$x11/tk" 2>&1 &
tk_pid=$!
await_ready "$x11/tk"
for _ in $(seq 100); do xf bridge status --json 2>/dev/null | grep -q '"sensitive":true' && break; sleep 0.1; done
run xf paste; echo
kill "$tk_pid"; wait "$tk_pid" 2>/dev/null || true
sleep 0.3
echo "   after the password manager quit:"
run xclip -o -selection clipboard 2>/dev/null && echo || echo "   → the clipboard is empty: nothing restored"
xf history --json | grep -q hunter2 && echo "   → in history (wrong!)" || echo "   → and nothing of it in ferry history"

echo "-- a file manager copies a file as a URI list; it is a file in Ferry:"
printf 'file://%s/Fixtures/Payloads/sample.png\n' "$PWD" | xclip -quiet -selection clipboard -t text/uri-list -i >/dev/null 2>&1 &
uri_pid=$!
for _ in $(seq 100); do xf types 2>/dev/null | grep -q file-url && break; sleep 0.1; done
run xf types
kill "$uri_pid" 2>/dev/null; wait "$uri_pid" 2>/dev/null || true

echo "-- a GTK app copies, quits, and hands its clipboard to the manager on the way out (SAVE_TARGETS):"
run /usr/bin/python3 Fixtures/desktop/gtk-store.py "saved by GTK as it quit"
sleep 0.3
run xclip -o -selection clipboard; echo
unset DISPLAY

# Wayland: sway refuses to run as root, so the compositor, the bus, ferryd, the bridge and the
# peers all run as an unprivileged user made for this (ferryd serves only its own user).
user=ferry-wl
id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
wl=$(mktemp -d); chmod 755 "$wl"
rt="$wl/run"; mkdir -m 700 "$rt"; chown "$user" "$rt"
printf 'output HEADLESS-1 resolution 1280x720\nxwayland disable\n' >"$wl/sway.conf"; chmod 644 "$wl/sway.conf"
mkdir -m 700 "$wl/bus"; chown "$user" "$wl/bus"
# The user may not reach this checkout (a home folder is 700): what it runs and reads is staged
# in $wl, hard-linked where the file system allows.
stage="$wl/stage"; mkdir -m 755 "$stage"
for f in "$bin/ferry" "$bin/ferry-cli" "$bin/ferryd" "$bin/ferry-bridge" Fixtures/dbus/session.conf \
         Fixtures/Payloads/sample.png; do
  ln "$f" "$stage/" 2>/dev/null || cp -p "$f" "$stage/"
done
runuser -u "$user" -- env XDG_RUNTIME_DIR="$rt" WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 \
  WLR_RENDERER=pixman sway -c "$wl/sway.conf" >"$wl/sway.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do ls "$rt"/wayland-[0-9] >/dev/null 2>&1 && break; sleep 0.1; done
socket=$(basename "$(ls "$rt"/wayland-[0-9] | head -n1)")
desk_bus "$wl/bus" "$user" "$stage/session.conf"
wbus=$(head -n1 "$wl/bus/address")
as_user() { runuser -u "$user" -- env XDG_RUNTIME_DIR="$rt" WAYLAND_DISPLAY="$socket" DBUS_SESSION_BUS_ADDRESS="$wbus" "$@"; }
as_user "$stage/ferryd" --state-dir "$rt/state" >"$wl/ferryd" 2>&1 &
pids+=($!)
await_ready "$wl/ferryd"
as_user "$stage/ferry-bridge" >"$wl/bridge" 2>&1 &
pids+=($!)
await_ready "$wl/bridge"
wf() { as_user "$stage/ferry" "$@"; }
echo
echo "-- Wayland (headless sway, user $user): the bridge speaks data-control:"
run wf bridge status
echo "-- wl-copy copies an image; the wl-copy process is killed:"
as_user sh -c "wl-copy -t image/png < '$stage/sample.png'" >/dev/null 2>&1
for _ in $(seq 100); do wf types 2>/dev/null | grep -q png && break; sleep 0.1; done
for _ in $(seq 100); do wf bridge status --json 2>/dev/null | grep -q '"complete":true' && break; sleep 0.1; done
wl_copy=$(pgrep -u "$user" -n -x wl-copy || true)
[ -n "$wl_copy" ] && kill "$wl_copy"
sleep 0.5
echo "   (on Wayland a quit and a clear look the same; the bridge restores after either)"
as_user wl-paste -t image/png >"$wl/pasted.png" && cmp -s "$wl/pasted.png" Fixtures/Payloads/sample.png \
  && echo "   → wl-paste got the PNG back byte for byte after its source died"
wf paste -t image/png -o - | cmp -s - Fixtures/Payloads/sample.png && echo "   → and so did ferry paste"
echo "-- ferry copies; wl-paste lists and pastes it:"
run wf copy --text "from Ferry to Wayland"
sleep 0.3
run as_user wl-paste -l
run as_user wl-paste
echo "-- PRIMARY: what was last selected, in Ferry's pasteboard 'primary':"
as_user wl-copy -p "selected with the mouse" >/dev/null 2>&1
sleep 0.6
run wf paste --primary; echo
desk_cleanup

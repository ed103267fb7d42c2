#!/usr/bin/env bash
# Runs installed Ferry binaries the way a user's session would, for InstallTests. Started inside
# private mount and pid namespaces (`unshare --mount --pid --fork --kill-child --mount-proc`), so
# its mounts are seen by nothing else and every process it starts dies with it.
#
# Environment:
#   HIDE         directories to cover with an empty tmpfs (the Swift toolchain's): what the
#                binaries run without
#   OVERLAY_USR  optional: a scratch root's usr/, laid over /usr (a Debian package installed
#                with dpkg --root appears where it would on a real system)
#   PROGRAMS     the installed programs (`make programs`), each asked for --version
#   FERRY_BIN    the directory holding them
#   BUS_CONFIG   the private bus's configuration; its only service directory is the installed one
#   WORK         a scratch directory: the bus socket, ferryd's state, HOME
#
# Prints `key value` lines for the test to check.
set -euo pipefail

for dir in $HIDE; do
  mount -t tmpfs -o size=1m,mode=755 ferry-hidden "$dir"
done
if [ -n "${OVERLAY_USR:-}" ]; then
  mount -t overlay ferry-package -o "lowerdir=$OVERLAY_USR:/usr" /usr
fi

export PATH=/usr/bin:/bin HOME="$WORK/home" XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config"
unset LD_LIBRARY_PATH DBUS_SESSION_BUS_ADDRESS
mkdir -p "$HOME"

bus_pid="" ferryd_pid=""
cleanup() {
  if [ -n "$ferryd_pid" ]; then kill -TERM "$ferryd_pid" 2>/dev/null || true; fi
  if [ -n "$bus_pid" ]; then kill -KILL "$bus_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

for program in $PROGRAMS; do
  echo "version $program $("$FERRY_BIN/$program" --version)"
done

dbus-daemon --config-file="$BUS_CONFIG" --nofork --print-address=3 --address="unix:dir=$WORK" \
  3>"$WORK/address" </dev/null 2>"$WORK/bus.log" &
bus_pid=$!
for _ in $(seq 100); do [ -s "$WORK/address" ] && break; sleep 0.05; done
[ -s "$WORK/address" ] || { echo "dbus-daemon printed no address: $(cat "$WORK/bus.log")" >&2; exit 1; }
DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$WORK/address")
export DBUS_SESSION_BUS_ADDRESS

# Nothing owns org.ferry.Broker yet: the copy makes the bus start ferryd from the service file.
"$FERRY_BIN/ferry" copy --text "shipped by Ferry"
ferryd_pid=$(dbus-send --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
  org.freedesktop.DBus.GetConnectionUnixProcessID string:org.ferry.Broker | awk '{ print $2 }')
echo "ferryd-exe $(readlink "/proc/$ferryd_pid/exe")"
echo "ferryd-swift-libraries $(grep -cE 'libswift|libFoundation|/opt/swift' "/proc/$ferryd_pid/maps" || true)"
echo "paste $("$FERRY_BIN/ferry" paste)"
echo "types $("$FERRY_BIN/ferry" types | tr '\n' ' ')"

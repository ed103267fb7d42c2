#!/usr/bin/env bash
# The Ferry demo: what works today, told as a story on the session bus (a private one if none).
# Run through `make demo`, which builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
export FERRY_PRIVATE_BUS=${FERRY_PRIVATE_BUS:-0}
. scripts/private-bus.sh
start_private_bus
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_private_bus
}
trap cleanup EXIT

chapter() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }
run() { printf '\033[2m$ %s\033[0m\n' "$*"; "$@"; }
# Waits for a background process's READY line in its log.
await_ready() {
  for _ in $(seq 100); do grep -q READY "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "demo: $1 never became ready" >&2; cat "$1" >&2; return 1
}

echo "bus: $DBUS_SESSION_BUS_ADDRESS${FERRY_BUS_PID:+ (private dbus-daemon, pid $FERRY_BUS_PID)}"
logs=$(mktemp -d)

chapter "1. Two processes talk through Ferry's Swift D-Bus layer"
"$bin/dbus-peer" serve --name org.ferry.Peer >"$logs/serve" 2>&1 &
pids+=($!)
await_ready "$logs/serve"
run "$bin/dbus-peer" demo --name org.ferry.Peer
sleep 0.2
echo "-- what the serving process saw:"
sed 's/^/   /' "$logs/serve"

chapter "2. Independent peers agree: gdbus calls the Swift service, Swift calls a python-dbus service"
"$bin/dbus-peer" serve --name org.ferry.Peer --quiet >"$logs/serve2" 2>&1 &
pids+=($!)
await_ready "$logs/serve2"
run gdbus call --session --dest org.ferry.Peer --object-path /org/ferry/Peer --method org.ferry.Peer1.Join "['copy', 'paste', 'drag']"
run gdbus call --session --dest org.ferry.Peer --object-path /org/ferry/Peer --method org.ferry.Peer1.Fail org.ferry.Error.Unavailable "the source quit" || true
run dbus-send --session --print-reply --dest=org.ferry.Peer /org/ferry/Peer org.freedesktop.DBus.Properties.Get string:org.ferry.Peer1 string:Version
gdbus call --session --dest org.ferry.Peer --object-path /org/ferry/Peer --method org.ferry.Peer1.Quit >/dev/null
python3=/usr/bin/python3
"$python3" Tests/DBusTests/Peers/python_peer.py org.ferry.PyPeer >"$logs/py" 2>&1 &
pids+=($!)
await_ready "$logs/py"
run "$bin/dbus-peer" demo --name org.ferry.PyPeer --fd-bytes 1048576

chapter "3. Content types: UTType semantics over the machine's shared-mime-info"
run "$bin/ferry" type info public.png
run "$bin/ferry" type info --mime text/x-python
run "$bin/ferry" type of Fixtures/Payloads/sample.png
if run "$bin/ferry" type conforms public.png public.image; then echo "   → public.png conforms to public.image (exit 0)"; fi
if ! run "$bin/ferry" type conforms public.png public.text; then echo "   → public.png does not conform to public.text (exit 1)"; fi

printf '\nThe demo is done.\n'

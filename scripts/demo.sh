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

chapter "4. Pasteboards: copy in one process, quit it, paste in another — through ferryd"
# Its own daemon and state, so the demo never touches a broker already running on this bus.
if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
     org.freedesktop.DBus.NameHasOwner string:org.ferry.Broker 2>/dev/null | grep -q 'boolean true'; then
  echo "(org.ferry.Broker already runs on this bus: skipping this chapter; FERRY_PRIVATE_BUS=1 make demo runs it)"
else
  state="$logs/state"
  start_ferryd() {
    "$bin/ferryd" --state-dir "$state" >"$logs/ferryd" 2>>"$logs/ferryd.err" &
    ferryd_pid=$!
    pids+=("$ferryd_pid")
    await_ready "$logs/ferryd"
  }
  start_ferryd
  ferry() { "$bin/ferry" "$@"; }
  "$bin/ferry" watch >"$logs/watch" 2>&1 &
  pids+=($!)
  echo "-- one process copies a text file and a PNG (two items), then quits:"
  run ferry copy Fixtures/Payloads/utf8.txt Fixtures/Payloads/sample.png
  run ferry types
  echo "-- another process pastes both:"
  run ferry paste --item 0
  run ferry paste --item 1 --type public.image -o "$logs/pasted.png"
  cmp -s Fixtures/Payloads/sample.png "$logs/pasted.png" && echo "   → the PNG arrived byte for byte ($(stat -c %s "$logs/pasted.png") bytes)"

  echo "-- a lazy copy promises its data and serves each paste itself, through a pipe:"
  "$bin/ferry" copy --lazy --verbose --text "Served on demand by a process that has since quit." 2>"$logs/lazy" &
  lazy=$!
  for _ in $(seq 100); do grep -q 'copied' "$logs/lazy" 2>/dev/null && break; sleep 0.1; done
  run ferry types
  run ferry paste; echo
  echo "-- SIGTERM: it hands the data to ferryd on its way out (as X11's SAVE_TARGETS does), and the paste still works:"
  kill -TERM "$lazy"; wait "$lazy" 2>/dev/null || true
  run ferry paste; echo

  echo "-- ferryd is killed with SIGKILL and restarted: the pasteboard and its history are still there:"
  kill -9 "$ferryd_pid"; wait "$ferryd_pid" 2>/dev/null || true
  start_ferryd
  run ferry paste; echo
  run ferry history
  run ferry log --limit 4
  echo "-- an independent client (gdbus) reads the metadata — not a paste — and gets named errors:"
  run gdbus call --session --dest org.ferry.Broker --object-path /org/ferry/Pasteboard/general \
    --method org.ferry.Pasteboard1.DetectPatterns "['probableWebURL', 'probableWebSearch', 'number']"
  run gdbus call --session --dest org.ferry.Broker --object-path /org/ferry/Pasteboard/general \
    --method org.ferry.Pasteboard1.Read 7 public.text "{}" || true
  echo "-- what 'ferry watch' printed meanwhile (one line per change):"
  sed 's/^/   /' "$logs/watch"
  echo "-- what ferryd logged:"
  sed 's/^/   /' "$logs/ferryd.err"
fi

printf '\nThe demo is done.\n'

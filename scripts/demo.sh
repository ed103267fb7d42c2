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
  declare -F desk_cleanup >/dev/null && desk_cleanup
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

# Chapters 4 to 7 run their own ferryd with its own state, so the demo never touches a broker
# already running on this bus.
if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
     org.freedesktop.DBus.NameHasOwner string:org.ferry.Broker 2>/dev/null | grep -q 'boolean true'; then
  echo "(org.ferry.Broker already runs on this bus: skipping chapters 4 to 7; FERRY_PRIVATE_BUS=1 make demo runs them)"
else
  chapter "4. Pasteboards: copy in one process, quit it, paste in another — through ferryd"
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

  chapter "5. Scenes: windows are sessions that outlive their apps, and come back as they were"
  out=${FERRY_DEMO_OUT:-$PWD/.build/demo}
  mkdir -p "$out"
  start_app() {  # start_app Notes|Gallery: a demo app with its own state, ready once its first scene has a title
    "$bin/ferry-demo" "Fixtures/Apps/$1" --state-dir "$logs/$1" >>"$logs/$1.log" 2>&1 &
    pids+=($!)
    eval "${1}_pid=$!"
  }
  # Waits until N scenes are connected (not unattached) and titled.
  await_scenes() {
    for _ in $(seq 100); do
      [ "$("$bin/ferry" scenes --json | python3 -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)["scenes"] if s["state"] != "unattached" and s["title"]))')" -ge "$1" ] && return 0
      sleep 0.1
    done
    echo "demo: fewer than $1 scenes connected" >&2; return 1
  }
  scene_of() {  # scene_of APP CONFIGURATION: the persistent id of the app's first scene with that configuration
    "$bin/ferry" scenes --app "$1" --json | python3 -c 'import json,sys; print(next(s["persistentIdentifier"] for s in json.load(sys.stdin)["scenes"] if s["configuration"] == sys.argv[1]))' "$2"
  }
  # What identifies a scene's look: id, configuration, title, frame (not its state, which changes).
  layout() { "$bin/ferry" scenes --json | python3 -c 'import json,sys; [print(s["persistentIdentifier"], s["configuration"], s["title"], s["frame"]) for s in json.load(sys.stdin)["scenes"]]'; }

  echo "-- Notes and Gallery start (ferry-demo, driven by Fixtures/Apps/*/Info.plist); launching opens a first scene each:"
  start_app Notes; start_app Gallery
  await_scenes 2
  run ferry apps
  run ferry scenes
  echo "-- a user activity chooses the configuration: org.ferry.notes.open-note → Editor, in the right half of the screen"
  echo "   (the scene beneath takes the left half):"
  run ferry scene open org.ferry.notes --activity org.ferry.notes.open-note --info noteID=groceries --placement right
  echo "-- org.ferry.gallery.view-photo → Viewer:"
  run ferry scene open org.ferry.gallery --activity org.ferry.gallery.view-photo --info photoID=lake.png
  echo "-- the same note again, with its target content: the Editor whose activation conditions prefer it continues it:"
  run ferry scene open org.ferry.notes --activity org.ferry.notes.open-note --info noteID=groceries --target-content groceries
  echo "-- a paste action in each app's front scene: its paste configuration decides (Notes takes text and images, Gallery only images):"
  run ferry copy --text "oat milk"
  run ferry paste --into org.ferry.notes
  run ferry paste --into org.ferry.gallery || echo "   → Gallery declined (exit $?)"
  echo "-- the Gallery viewer is closed (commit): the scene disconnects and Gallery discards its session and state:"
  run ferry scene close "$(scene_of org.ferry.gallery Viewer)" --animation commit
  run ferry scenes
  layout >"$logs/layout.before"
  run ferry desktop --svg "$out/desktop.svg" --png "$out/desktop.png"
  echo "   → the desktop picture: $out/desktop.svg and $out/desktop.png"

  echo "-- both apps quit: their sessions stay, archived (unattached):"
  kill -TERM "$Notes_pid" "$Gallery_pid"; wait "$Notes_pid" "$Gallery_pid" 2>/dev/null || true
  run ferry scenes
  echo "-- ferryd is killed with SIGKILL and restarted, then the apps start again:"
  kill -9 "$ferryd_pid"; wait "$ferryd_pid" 2>/dev/null || true
  start_ferryd
  start_app Notes; start_app Gallery
  await_scenes 3
  run ferry scenes
  layout >"$logs/layout.after"
  if cmp -s "$logs/layout.before" "$logs/layout.after"; then
    echo "   → the same $(wc -l <"$logs/layout.after") scenes came back as they were: identifiers, configurations, titles, frames"
  else
    echo "demo: the scenes did not come back as they were:" >&2; diff "$logs/layout.before" "$logs/layout.after" >&2; exit 1
  fi

  chapter "6. Drag and drop: a photo into a note, a note to the screen's edge"
  notes_list=$(scene_of org.ferry.notes Default)
  echo "-- the groceries Editor is closed (the note stays in Notes), and Notes' list comes to the front:"
  run ferry scene close "$(scene_of org.ferry.notes Editor)"
  run ferry scene activate "$notes_list"
  echo "-- a photo dragged from Gallery's grid into Notes' list, in quarter steps; each line is the proposal of the"
  echo "   scene under the pointer (over Gallery's own scene: cancel). Notes reads the photo only when the drop is performed:"
  run ferry drag --from org.ferry.gallery --item 2 --to "org.ferry.notes/$notes_list"
  echo "-- the new note over Gallery: Gallery takes only images, so the proposal is forbidden and nothing is dropped:"
  run ferry drag --from "org.ferry.notes/$notes_list" --item 3 --to org.ferry.gallery || echo "   → exit $? (the drop ended as forbidden)"
  echo "-- the note dragged to the right edge of the screen, where no scene takes it: the app that declares its"
  echo "   org.ferry.notes.open-note activity opens a new scene in the right half (the scene beneath takes the left half):"
  "$bin/ferry" drag --from "org.ferry.notes/$notes_list" --item 3 --edge right --json >"$logs/edge.json"
  printf '\033[2m$ ferry drag --from org.ferry.notes/%s --item 3 --edge right --json\033[0m\n' "$notes_list"
  cat "$logs/edge.json"
  editor=$(python3 -c 'import json,sys; print([e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "drop"][0]["newSession"])' "$logs/edge.json")
  "$bin/ferry" scenes --json | python3 -c '
import json, sys
scene = next(s for s in json.load(sys.stdin)["scenes"] if s["persistentIdentifier"] == sys.argv[1])
print("   → the new scene:", scene["configuration"], "titled", repr(scene["title"]), "at", scene["frame"])
assert scene["configuration"] == "Editor" and scene["title"].endswith("lake"), "the edge drop did not open the note"
' "$editor"
  run ferry scenes
  run ferry desktop --svg "$out/desktop-drag.svg" --png "$out/desktop-drag.png"
  echo "   → the desktop picture with the last drag's path and the proposal at each step: $out/desktop-drag.svg and .png"

  chapter "7. Sharing: the photo Gallery shows, to Notes and to a folder"
  echo "-- the groceries note opens in a Notes Editor again, and Gallery shows the lake photo in its Viewer:"
  run ferry scene open org.ferry.notes --activity org.ferry.notes.open-note --info noteID=groceries
  run ferry scene open org.ferry.gallery --activity org.ferry.gallery.view-photo --info photoID=lake.png
  await_scenes 5
  echo "-- the share sheet for the shown photo: Gallery's own activity first, the built-ins, then Notes' append"
  echo "   (the photo's item carries its caption as text, and Notes appends text):"
  run ferry share --from org.ferry.gallery --list
  echo "-- shared to Notes' append: the caption goes into the front-most Editor's note and the photo is attached;"
  echo "   Notes reads the items only while it performs:"
  run ferry share --from org.ferry.gallery --activity org.ferry.notes.append
  grep -q "activity-performed org.ferry.notes.append .*note=groceries .*attachments=lake.png" "$logs/Notes.log" \
    && echo "   → the groceries note now ends with the caption and [image: lake.png]"
  echo "-- saved to a folder, twice: ferryd never overwrites (lake.png, then 'lake 2.png') and never leaves the folder:"
  shared="$out/shared"
  rm -rf "$shared"; mkdir -p "$shared"
  run ferry share --from org.ferry.gallery --activity save-to-folder --to "$shared"
  run ferry share --from org.ferry.gallery --activity save-to-folder --to "$shared"
  cmp -s Fixtures/Apps/Gallery/Content/lake.png "$shared/lake.png" && echo "   → $shared/lake.png is the photo, byte for byte"
  echo "-- a PNG file has no text: Notes' append is not offered for it, and asking for it is status 2:"
  run ferry share Fixtures/Payloads/sample.png --list
  run ferry share Fixtures/Payloads/sample.png --activity org.ferry.notes.append || echo "   → exit $? (no such activity for these items)"
  echo "-- what the apps printed while sharing:"
  grep -hE ": (share|activity)-" "$logs/Gallery.log" "$logs/Notes.log" | sed 's/^/   /'

  echo "-- what Notes printed, one line per event (its state: one file per scene under its state directory):"
  sed 's/^/   /' "$logs/Notes.log"
  ls "$logs/Notes/scenes" | sed 's/^/   /'
  echo "-- what ferryd logged:"
  sed 's/^/   /' "$logs/ferryd.err"
fi

# Chapter 8 runs its own buses, X server and compositor: it never touches the caller's session.
. scripts/demo-desktop.sh
# Chapter 9 runs its own engine (nats-server on loopback), buses and two ferryd.
. scripts/demo-continuity.sh

printf '\nThe demo is done.\n'

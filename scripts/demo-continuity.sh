# Sourced by scripts/demo.sh: chapter 9, continuity between two of a user's machines over NATS.
# A nats-server on loopback (TLS with a CA made here, JetStream), two private buses and two ferryd
# standing for a laptop and a desktop. Nothing here touches the caller's session. Uses demo.sh's
# bin, pids, chapter, run and await_ready, and demo-desktop.sh's desk_bus.

chapter "9. Continuity: copy on the laptop, paste on the desktop; a note continued on the other machine"
cont=$(mktemp -d)

# The engine's TLS: a CA and a certificate for 127.0.0.1 it signs.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=Ferry demo CA" \
  -keyout "$cont/ca.key" -out "$cont/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$cont/server.key" -out "$cont/server.csr" 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" >"$cont/san.ext"
openssl x509 -req -in "$cont/server.csr" -CA "$cont/ca.pem" -CAkey "$cont/ca.key" -CAcreateserial -days 1 \
  -extfile "$cont/san.ext" -out "$cont/server.pem" 2>/dev/null

# A free loopback port for the engine (the kernel's pick).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="tls://127.0.0.1:$port"

# The engine's configuration: one account (ALICE) with JetStream, one nkey user per device,
# allowed to announce and advertise only under its own name, and to meet others for pairing
# (docs/continuity.md).
engine_config() {  # engine_config DEVICE=PUBLICKEY...
  local users=() entry device key
  for entry in "$@"; do
    device=${entry%%=*} key=${entry#*=}
    users+=("    { nkey: $key, permissions: {
        publish: { allow: [\"\$KV.ferry_pb.$device\", \"\$KV.ferry_pb.$device.>\", \"\$KV.ferry_activity.$device\", \"\$KV.ferry_devices.$device\",
                           \"\$KV.ferry_keys.*\", \"\$JS.API.>\", \"ferry.dev.*.chunk\", \"ferry.dev.*.activity\",
                           \"ferry.pair.*\", \"_INBOX.>\"] }
        subscribe: { allow: [\"ferry.dev.$device.chunk\", \"ferry.dev.$device.activity\", \"_INBOX.>\",
                             \"\$KV.ferry_pb.>\", \"\$KV.ferry_activity.>\", \"ferry.pair.*\"] }
        allow_responses: true } }")
  done
  local joined; joined=$(IFS=,; echo "${users[*]}")
  cat <<CONF
listen: 127.0.0.1:$port
jetstream { store_dir: "$cont/jetstream", max_memory_store: 64MB, max_file_store: 256MB }
tls { cert_file: "$cont/server.pem", key_file: "$cont/server.key" }
max_payload: 1MB
accounts {
  ALICE: { jetstream: enabled, users: [
$joined
  ] }
}
CONF
}

# One device: its config folder (continuity.conf and its secrets), a private bus and a ferryd.
declare -A dev_bus
start_device() {  # start_device NAME
  local name=$1 dir="$cont/$1"
  desk_bus "$dir"
  dev_bus[$name]=$(head -n1 "$dir/address")
  "$bin/ferryd" --bus "${dev_bus[$name]}" --state-dir "$dir/state" --continuity-config "$dir/continuity.conf" \
    >"$dir/ferryd" 2>"$dir/ferryd.err" &
  pids+=($!)
  await_ready "$dir/ferryd"
}
on() { local name=$1; shift; DBUS_SESSION_BUS_ADDRESS=${dev_bus[$name]} "$bin/ferry" "$@"; }
laptop() { on laptop "$@"; }
desktop() { on desktop "$@"; }

# Notes, the demo app, runs on both machines (it declares the activity it can continue).
start_notes() {  # start_notes DEVICE
  "$bin/ferry-demo" Fixtures/Apps/Notes --bus "${dev_bus[$1]}" --json --state-dir "$cont/$1/notes" \
    >"$cont/$1/notes.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q '"event"' "$cont/$1/notes.log" 2>/dev/null && break; sleep 0.1; done
}

# Waits until `ferry types` on DEVICE shows PATTERN (what arrives from the other machine).
await_types() {  # await_types DEVICE PATTERN
  for _ in $(seq 100); do on "$1" types 2>/dev/null | grep -q "$2" && return 0; sleep 0.05; done
  echo "demo: $1 never showed $2" >&2; return 1
}

echo "-- each machine's ferryd is pointed at the engine (continuity.conf: the engine, its CA, a name)"
echo "   and makes its own identity, an nkey whose public key the engine's admin adds to the account:"
for name in laptop desktop; do
  mkdir -m 700 "$cont/$name"
  printf 'continuity = %s\ncontinuity-ca = %s\ndevice = %s\n' "$url" "$cont/ca.pem" "$name" >"$cont/$name/continuity.conf"
  start_device "$name"
done
run laptop continuity status
key_of() { on "$1" continuity status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["publicKey"])'; }
engine_config laptop="$(key_of laptop)" desktop="$(key_of desktop)" >"$cont/nats.conf"
nats-server -c "$cont/nats.conf" >"$cont/nats.log" 2>&1 &
nats_pid=$!
pids+=("$nats_pid")
state_of() { on "$1" continuity status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])'; }
for _ in $(seq 200); do [ "$(state_of laptop)" = unpaired ] && [ "$(state_of desktop)" = unpaired ] && break; sleep 0.1; done
echo "-- the laptop is the first machine: it makes the user's key"
run laptop continuity init
echo "-- the desktop joins: it prints a code, the laptop approves it, both show the same number"
echo "   (a person compares them; --yes here, as a script does):"
on desktop continuity join --yes >"$cont/join.out" 2>&1 &
join=$!
code=
for _ in $(seq 100); do code=$(grep -oE '[A-Z0-9]{4}-[A-Z0-9]{4}' "$cont/join.out" || true); [ -n "$code" ] && break; sleep 0.1; done
run laptop continuity approve --yes "$code"
wait "$join" || { cat "$cont/join.out"; false; }
sed 's/^/   desktop> /' "$cont/join.out"
run desktop continuity status

echo "-- the laptop copies a photo; the desktop sees it at once, marked remote — only a small sealed note"
echo "   of it crossed the engine, the bytes stay on the laptop until someone pastes:"
run laptop copy Fixtures/Payloads/sample.jpg
await_types desktop remote
run desktop types
echo "-- the desktop pastes it: the laptop's ferryd streams it over, sealed, in chunks:"
run desktop paste -t public.jpeg -o "$cont/pasted.jpg"
cmp -s Fixtures/Payloads/sample.jpg "$cont/pasted.jpg" \
  && echo "   → the photo arrived byte for byte ($(stat -c %s "$cont/pasted.jpg") bytes)"

echo "-- a recording (8 MiB) streams over in sealed 512 KiB chunks, four in flight:"
head -c $((8 << 20)) /dev/urandom >"$cont/recording.bin"
run laptop copy --type public.data "$cont/recording.bin"
await_types desktop public.data
desktop paste -t public.data -o - | cmp -s - "$cont/recording.bin" && echo "   → 8 MiB arrived byte for byte"

echo "-- a local-only copy (a one-time code) never leaves the laptop. The laptop tells the others only"
echo "   that its photo is no longer current, so the desktop drops it and shows nothing in its place:"
run laptop copy --local-only --text "492 117"
run laptop types
for _ in $(seq 100); do [ -z "$(desktop types 2>/dev/null)" ] && break; sleep 0.05; done
run desktop types
[ -z "$(desktop types)" ] && echo "   → the desktop's pasteboard is empty; the code is only on the laptop"

echo "-- Handoff: a note open on the laptop is offered on the desktop, and continued there:"
start_notes laptop
start_notes desktop
laptop scene open org.ferry.notes --activity org.ferry.notes.open-note --info noteID=groceries \
  --target-content groceries >/dev/null
for _ in $(seq 100); do desktop activities 2>/dev/null | grep -q groceries && break; sleep 0.1; done
run desktop activities
offer=$(desktop activities --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["activities"][0]["activity"])')
run desktop continue "$offer"
for _ in $(seq 100); do grep -q '"note":"groceries"' "$cont/desktop/notes.log" && break; sleep 0.1; done
grep -q '"note":"groceries"' "$cont/desktop/notes.log" \
  && echo "   → Notes on the desktop opened the note the laptop was editing (the laptop saved it first)"

echo "-- the engine goes away: the laptop's copy, remote on the desktop, disappears there; local copies work:"
laptop copy --text "see you at 3"
await_types desktop remote
run desktop types
kill "$nats_pid"; wait "$nats_pid" 2>/dev/null || true
for _ in $(seq 100); do desktop types 2>/dev/null | grep -q remote || break; sleep 0.1; done
run desktop types
run desktop copy --text "copied while offline"
run desktop paste; echo

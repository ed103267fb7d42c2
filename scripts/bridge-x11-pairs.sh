#!/usr/bin/env bash
# B2's X11 half measured in pairs, for a loaded machine: 256 MiB pasted by `xclip -o` from an
# xclip copy on one Xvfb (the anchor) and from a Ferry copy served by ferry-bridge on another
# (its own dbus-daemon and ferryd), one paste of each per pair, the order swapped every pair, so
# both sides of a pair see the same load. Prints each pair and the median ratio (anchor time /
# Ferry time: ≥ 1.0 means Ferry is as fast) and each owner's CPU time per paste (xclip's,
# ferry-bridge's: what decides the race when the cores are shared). Usage: scripts/bridge-x11-pairs.sh BIN_DIR [PAIRS]
# (BIN_DIR holds ferryd, ferry-cli, ferry-bridge; 9 pairs by default). Every process it starts
# is killed by pid.
set -euo pipefail
BIN=$1; PAIRS=${2:-9}
DIR=$(mktemp -d /tmp/ferry-bridge-pairs.XXXXXX); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
now() { date +%s.%N; }
head -c 268435456 /dev/urandom > "$DIR/q.bin"
# Started in this shell (not in a command substitution), so that cleanup knows their pids.
for d in anchor ferry; do Xvfb -displayfd 3 -nolisten tcp 3> "$DIR/$d.d" > /dev/null 2>&1 & PIDS+=($!); done
for d in anchor ferry; do for _ in $(seq 100); do [ -s "$DIR/$d.d" ] && break; sleep 0.1; done; done
ANCHOR=:$(head -1 "$DIR/anchor.d"); FERRY=:$(head -1 "$DIR/ferry.d")
paste_time() {
  local s; s=$(now)
  env -u WAYLAND_DISPLAY DISPLAY="$1" xclip -o -selection clipboard -t application/octet-stream > "${2:-/dev/null}"
  echo "$(now) - $s" | bc
}
env -u WAYLAND_DISPLAY DISPLAY="$ANCHOR" xclip -quiet -selection clipboard -t application/octet-stream \
  -i "$DIR/q.bin" > /dev/null 2>&1 & XCLIP=$!; PIDS+=($XCLIP)
dbus-daemon --session --fork --print-address=4 --print-pid=5 --address="unix:path=$DIR/bus" 4> "$DIR/a" 5> "$DIR/p"
PIDS+=("$(head -1 "$DIR/p")"); A=$(head -1 "$DIR/a")
"$BIN/ferryd" --bus "$A" --quiet --state-dir "$DIR/s" & PIDS+=($!)
env -u WAYLAND_DISPLAY DISPLAY="$FERRY" "$BIN/ferry-bridge" --bus "$A" --verbose > "$DIR/o" 2> "$DIR/e" & BRIDGE=$!; PIDS+=($BRIDGE)
for _ in $(seq 100); do grep -q READY "$DIR/o" 2>/dev/null && break; sleep 0.1; done
DBUS_SESSION_BUS_ADDRESS="$A" "$BIN/ferry-cli" copy -t application/octet-stream "$DIR/q.bin"
for _ in $(seq 100); do grep -q "exported change" "$DIR/e" 2>/dev/null && break; sleep 0.1; done
for _ in $(seq 100); do
  env -u WAYLAND_DISPLAY DISPLAY="$ANCHOR" xclip -o -selection clipboard -t TARGETS 2>/dev/null | grep -q octet-stream && break
  sleep 0.1
done
paste_time "$FERRY" "$DIR/out.bin" > /dev/null; cmp -s "$DIR/out.bin" "$DIR/q.bin" && same=identical || same=DIFFERENT
paste_time "$ANCHOR" "$DIR/out.bin" > /dev/null; cmp -s "$DIR/out.bin" "$DIR/q.bin" || same="$same, anchor DIFFERENT"
rm -f "$DIR/out.bin"
RATIOS=(); FT=(); AT=()
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
xclip0=$(cpu "$XCLIP"); bridge0=$(cpu "$BRIDGE")
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then a=$(paste_time "$ANCHOR"); f=$(paste_time "$FERRY"); else f=$(paste_time "$FERRY"); a=$(paste_time "$ANCHOR"); fi
  AT+=("$a"); FT+=("$f"); RATIOS+=("$(echo "$a / $f" | bc -l)")
  printf 'pair %d: anchor %.0f MB/s, Ferry %.0f MB/s, %.2f×\n' "$i" "$(echo "268.435456 / $a" | bc -l)" \
    "$(echo "268.435456 / $f" | bc -l)" "${RATIOS[-1]}"
done
tck=$(getconf CLK_TCK)
echo "owner CPU per paste (user + system): xclip $(( ($(cpu "$XCLIP") - xclip0) * 1000 / tck / PAIRS )) ms," \
  "ferry-bridge $(( ($(cpu "$BRIDGE") - bridge0) * 1000 / tck / PAIRS )) ms"
/usr/bin/python3 - "$same" "$(cut -d' ' -f1-3 /proc/loadavg)" "${#RATIOS[@]}" "${RATIOS[@]}" "${AT[@]}" "${FT[@]}" <<'PY'
import statistics, sys
same, load, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
values = [float(x) for x in sys.argv[4:]]
ratios, anchor, ferry = values[:n], values[n:2 * n], values[2 * n:]
print("median of %d pairs: Ferry %.0f MB/s (%s), anchor %.0f MB/s, ratio %.2f× (range %.2f–%.2f); load %s"
      % (n, 268.435456 / statistics.median(ferry), same, 268.435456 / statistics.median(anchor),
         statistics.median(ratios), min(ratios), max(ratios), load))
PY

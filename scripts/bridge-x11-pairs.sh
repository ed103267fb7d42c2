#!/usr/bin/env bash
# B2's X11 half: 256 MiB pasted by `xclip -o` from a Ferry copy (served by ferry-bridge from the
# CLIPBOARD) against the same bytes from an xclip copy (the anchor), in pairs: one paste of each
# per pair, the order swapped every pair, so both sides of a pair see the same load.
#
# Both owners sit on one Xvfb, so the server and the reader are the same for both and only the
# owner differs: the anchor's xclip owns SECONDARY, which the bridge neither watches nor takes.
# (Two Xvfb, one per owner, measured xclip against xclip at 0.96–1.00×: a bias of the method as
# large as the gap it was asked to resolve. On one server, xclip against xclip gives 0.98–1.09×.)
#
# Prints each pair, the median pair ratio (anchor time / Ferry time: ≥ 1.0 means Ferry is as
# fast), the ratio of the median throughputs and each owner's CPU time per paste.
# Usage: scripts/bridge-x11-pairs.sh BIN_DIR [PAIRS]  (BIN_DIR holds ferryd, ferry-cli and
# ferry-bridge; 21 pairs by default). SAME_OWNER=1 runs the method's own check instead: a second
# xclip owns the CLIPBOARD in the bridge's place (A/A), and BIN_DIR is not used.
# Every process it starts is killed by pid.
set -euo pipefail
BIN=$1; PAIRS=${2:-21}
SIZE=268435456
DIR=$(mktemp -d /tmp/ferry-bridge-pairs.XXXXXX); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
now() { date +%s.%N; }
head -c "$SIZE" /dev/urandom > "$DIR/q.bin"
# Started in this shell (not in a command substitution), so that cleanup knows their pids.
Xvfb -displayfd 3 -nolisten tcp 3> "$DIR/display" > /dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 100); do [ -s "$DIR/display" ] && break; sleep 0.1; done
X=(env -u WAYLAND_DISPLAY DISPLAY=":$(head -1 "$DIR/display")")
# paste_time SELECTION [FILE]: seconds for one paste of the whole selection.
paste_time() {
  local s; s=$(now)
  "${X[@]}" xclip -o -selection "$1" -t application/octet-stream > "${2:-/dev/null}"
  echo "$(now) - $s" | bc
}
offers() { "${X[@]}" xclip -o -selection "$1" -t TARGETS 2>/dev/null | grep -q octet-stream; }
"${X[@]}" xclip -quiet -selection secondary -t application/octet-stream -i "$DIR/q.bin" > /dev/null 2>&1 &
ANCHOR=$!; PIDS+=($ANCHOR)
if [ "${SAME_OWNER:-0}" = 1 ]; then
  "${X[@]}" xclip -quiet -selection clipboard -t application/octet-stream -i "$DIR/q.bin" > /dev/null 2>&1 &
  OWNER=$!; PIDS+=($OWNER); NAME="second xclip"
else
  dbus-daemon --session --fork --print-address=4 --print-pid=5 --address="unix:path=$DIR/bus" 4> "$DIR/a" 5> "$DIR/p"
  PIDS+=("$(head -1 "$DIR/p")"); A=$(head -1 "$DIR/a")
  "$BIN/ferryd" --bus "$A" --quiet --state-dir "$DIR/s" & PIDS+=($!)
  "${X[@]}" "$BIN/ferry-bridge" --bus "$A" --verbose > "$DIR/o" 2> "$DIR/e" & OWNER=$!; PIDS+=($OWNER)
  for _ in $(seq 100); do grep -q READY "$DIR/o" 2>/dev/null && break; sleep 0.1; done
  DBUS_SESSION_BUS_ADDRESS="$A" "$BIN/ferry-cli" copy -t application/octet-stream "$DIR/q.bin"
  for _ in $(seq 100); do grep -q "exported change" "$DIR/e" 2>/dev/null && break; sleep 0.1; done
  NAME=ferry-bridge
fi
for _ in $(seq 100); do offers secondary && offers clipboard && break; sleep 0.1; done
paste_time clipboard "$DIR/out.bin" > /dev/null; cmp -s "$DIR/out.bin" "$DIR/q.bin" && same=identical || same=DIFFERENT
paste_time secondary "$DIR/out.bin" > /dev/null; cmp -s "$DIR/out.bin" "$DIR/q.bin" || same="$same, anchor DIFFERENT"
rm -f "$DIR/out.bin"
RATIOS=(); FT=(); AT=()
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
anchor0=$(cpu "$ANCHOR"); owner0=$(cpu "$OWNER")
mbs() { echo "$SIZE / 1000000 / $1" | bc -l; }
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then a=$(paste_time secondary); f=$(paste_time clipboard)
  else f=$(paste_time clipboard); a=$(paste_time secondary); fi
  AT+=("$a"); FT+=("$f"); RATIOS+=("$(echo "$a / $f" | bc -l)")
  printf 'pair %d: anchor %.0f MB/s, Ferry %.0f MB/s, %.2f×\n' "$i" "$(mbs "$a")" "$(mbs "$f")" "${RATIOS[-1]}"
done
tck=$(getconf CLK_TCK)
echo "owner CPU per paste (user + system): xclip $(( ($(cpu "$ANCHOR") - anchor0) * 1000 / tck / PAIRS )) ms," \
  "$NAME $(( ($(cpu "$OWNER") - owner0) * 1000 / tck / PAIRS )) ms"
/usr/bin/python3 - "$SIZE" "$same" "$(cut -d' ' -f1-3 /proc/loadavg)" "${#RATIOS[@]}" "${RATIOS[@]}" "${AT[@]}" "${FT[@]}" <<'PY'
import statistics, sys
size, same, load, n = int(sys.argv[1]) / 1e6, sys.argv[2], sys.argv[3], int(sys.argv[4])
values = [float(x) for x in sys.argv[5:]]
ratios, anchor, ferry = values[:n], values[n:2 * n], values[2 * n:]
a, f = statistics.median(anchor), statistics.median(ferry)
print("median of %d pairs: Ferry %.0f MB/s (%s), anchor %.0f MB/s, ratio %.2f× (range %.2f–%.2f), "
      "ratio of the medians %.2f×; load %s"
      % (n, size / f, same, size / a, statistics.median(ratios), min(ratios), max(ratios), a / f, load))
PY

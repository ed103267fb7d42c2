#!/usr/bin/env bash
# ferry-bridge benchmarks B1–B4 (issue #17) on a headless sway, each beside its anchor.
# Runs as root; sway, dbus-daemon, ferryd, ferry-bridge and the peers run as the test user
# ferry-wl (created if missing) in a runtime dir of their own. Every process is killed by pid.
# B2's X11 half runs first, as root on an Xvfb of its own with its own dbus-daemon, ferryd and
# ferry-bridge (scripts/bridge-x11-pairs.sh); X11_ONLY=1 runs only that.
# BIN=.build/release (default) or .build/debug.
set -euo pipefail
BIN=${BIN:-$(pwd)/.build/release}
USER_NAME=ferry-wl
id "$USER_NAME" >/dev/null 2>&1 || useradd -m "$USER_NAME"
DIR=$(mktemp -d /tmp/ferry-bridge-bench.XXXXXX); chmod 755 "$DIR"
RT=$DIR/run; mkdir -m 700 "$RT"; chown "$USER_NAME" "$RT"; chmod 777 "$DIR"
PIDS=()
# wl-copy keeps what it serves in /tmp/wl-copy-buffer-XXXXXX and removes it only when it exits of
# itself: the ones this run kills (B3's 1 GiB, B4's last) are removed by cleanup(), as every such
# folder of the user that was not there before (nothing else runs as the user meanwhile).
BUFFERS_BEFORE=$(ls -d /tmp/wl-copy-buffer-* 2>/dev/null || true)
# The user's processes of this run (pgrep's arguments narrow them).
ours() {
  for p in $(pgrep -u "$USER_NAME" "$@" || true); do
    if tr '\0' '\n' 2>/dev/null < /proc/$p/environ | grep -qx "XDG_RUNTIME_DIR=$RT"; then echo "$p"; fi
  done
}
# The clients first, so that none outlives its compositor or broker and says so; then the rest;
# then the runuser wrappers, once their children are gone (a wrapper killed before its child says
# "Session terminated").
cleanup() {
  disown -a  # no "Terminated" line from bash for each job killed below
  kill $(ours -x 'ferry-cli|wl-paste|wl-copy') 2>/dev/null || true
  sleep 0.2
  kill $(ours) 2>/dev/null || true
  for _ in $(seq 20); do
    alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for b in $(find /tmp -maxdepth 1 -name 'wl-copy-buffer-*' -user "$USER_NAME" 2>/dev/null); do
    grep -qxF "$b" <<<"$BUFFERS_BEFORE" || rm -rf "$b"
  done
  rm -rf "$DIR"
}
trap cleanup EXIT
median() { /usr/bin/python3 -c 'import statistics,sys; print("%.4f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
now() { date +%s.%N; }

# B2, X11 half: 256 MiB pasted by `xclip -o` from a Ferry copy and from an xclip copy on one
# Xvfb, in 21 alternating pairs (scripts/bridge-x11-pairs.sh says why this way).
PAIRS_OUT=$(bash "$(dirname "$0")/bridge-x11-pairs.sh" "$BIN" 21 | tail -1)
X11_ROW=$(echo "$PAIRS_OUT" | /usr/bin/python3 -c '
import re, sys
m = re.search(r"Ferry (\d+) MB/s \(([^)]*)\), anchor (\d+) MB/s, ratio ([\d.]+)×", sys.stdin.read())
ferry, same, anchor, ratio = m.groups()
print("| B2 xclip -o 256 MiB from a Ferry copy, median of 21 pairs (anchor: from xclip) | %s MB/s (%s) | %s MB/s | %s× | %s |"
      % (ferry, same, anchor, ratio, "yes" if float(ratio) >= 1.0 else "no"))')
if [ "${X11_ONLY:-0}" = 1 ]; then
  echo "| benchmark | value | anchor value | ratio | met |"
  echo "|---|---|---|---|---|"
  echo "$X11_ROW"
  exit 0
fi

printf 'output HEADLESS-1 resolution 1280x720\nxwayland disable\n' > "$DIR/sway.conf"; chmod 644 "$DIR/sway.conf"
runuser -u "$USER_NAME" -- env XDG_RUNTIME_DIR="$RT" WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 \
  WLR_RENDERER=pixman sway -c "$DIR/sway.conf" > "$DIR/sway.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do [ -S "$RT/wayland-1" ] && break; sleep 0.1; done
W=(runuser -u "$USER_NAME" -- env XDG_RUNTIME_DIR="$RT" WAYLAND_DISPLAY=wayland-1 PATH=/usr/bin:/bin)
"${W[@]}" dbus-daemon --session --fork --print-address --address="unix:path=$RT/bus" > "$DIR/bus.txt"
ADDR=$(head -1 "$DIR/bus.txt")
"${W[@]}" "$BIN/ferryd" --bus "$ADDR" --quiet --state-dir "$DIR/state" & PIDS+=($!)
sleep 1
"${W[@]}" "$BIN/ferry-bridge" --bus "$ADDR" --verbose --bytes-per-type 2G --bytes-per-selection 2G --idle-timeout 30 \
  > "$DIR/bridge.out" 2> "$DIR/bridge.err" & PIDS+=($!)
for _ in $(seq 100); do grep -q READY "$DIR/bridge.out" 2>/dev/null && break; sleep 0.1; done
BRIDGE=$(ours -x ferry-bridge | head -1)
FERRY=("${W[@]}" DBUS_SESSION_BUS_ADDRESS="$ADDR" "$BIN/ferry-cli")
change_count() { "${FERRY[@]}" types --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["changeCount"])'; }
wl_copy_pid() { ours -x wl-copy | tail -1; }

# B1: wl-copy -> a `ferry watch` line, p50, beside `wl-paste --watch` seeing the same copy. The
# pipelines run in bash, which unlike dash says nothing when cleanup() kills their first command.
cat > "$DIR/ts.py" <<'PY'
import sys, time
out = open(sys.argv[1], 'a')
for line in sys.stdin:
    out.write("%.6f\n" % time.time()); out.flush()
PY
touch "$DIR/fw.txt" "$DIR/wp.txt" "$DIR/copies.txt"; chmod 666 "$DIR"/*.txt; chmod 644 "$DIR/ts.py"
"${W[@]}" bash -c "DBUS_SESSION_BUS_ADDRESS=$ADDR $BIN/ferry-cli watch | /usr/bin/python3 -u $DIR/ts.py $DIR/fw.txt" & PIDS+=($!)
# The watch command reads what it is given (wc -c): one that does not (echo) closes the pipe
# early, and a wl-copy still writing in the foreground dies of SIGPIPE ("Broken pipe").
"${W[@]}" bash -c "wl-paste --watch wc -c | /usr/bin/python3 -u $DIR/ts.py $DIR/wp.txt" & PIDS+=($!)
sleep 2
for i in $(seq 1 21); do now >> "$DIR/copies.txt"; "${W[@]}" wl-copy "b1 $i"; sleep 0.4; done; sleep 1
B1=$(/usr/bin/python3 - "$DIR" <<'PY'
import statistics, sys
d = sys.argv[1]
c = [float(x) for x in open(d + '/copies.txt')]
def lat(name):
    lines = [float(x) for x in open(d + '/' + name)]
    return [min(x for x in lines if x >= t) - t for t in c if any(x >= t for x in lines)]
a, b = statistics.median(lat('fw.txt')), statistics.median(lat('wp.txt'))
print("%.1f ms|%.1f ms|%.2f×|%s" % (a * 1000, b * 1000, a / b, "yes" if a / b <= 2 else "no"))
PY
)

# B2: 256 MiB pasted by wl-paste from a Ferry copy vs from wl-copy directly (throughput ratio).
head -c 268435456 /dev/urandom > "$DIR/q.bin"; chmod 644 "$DIR/q.bin"
paste_time() { local s; s=$(now); "${W[@]}" wl-paste -t application/octet-stream > /dev/null; echo "$(now) - $s" | bc; }
"${W[@]}" sh -c "wl-copy -t application/octet-stream < $DIR/q.bin"; sleep 5
A=(); for _ in 1 2 3 4 5; do A+=("$(paste_time)"); done
"${FERRY[@]}" copy -t application/octet-stream "$DIR/q.bin"; sleep 2
F=(); for _ in 1 2 3 4 5; do F+=("$(paste_time)"); done
B2A=$(median "${A[@]}"); B2F=$(median "${F[@]}")
B2=$(echo "$B2F $B2A" | awk '{r=$2/$1; printf "%.0f MB/s|%.0f MB/s|%.2f×|%s", 268.435456/$1, 268.435456/$2, r, (r>=0.9?"yes":"no")}')
rm -f "$DIR/q.bin"

# B3: bridge peak RSS while 1 GiB is imported (kept: budgets raised) and exported after wl-copy quits.
head -c 1073741824 /dev/urandom > "$DIR/g.bin"; chmod 644 "$DIR/g.bin"
before=$(change_count)
"${W[@]}" sh -c "wl-copy -t application/x-ferry-bench < $DIR/g.bin"
for _ in $(seq 240); do grep -q "copy of change $((before + 1)) complete" "$DIR/bridge.err" 2>/dev/null && break; sleep 0.5; done
kill "$(wl_copy_pid)"; sleep 1
"${W[@]}" wl-paste -t application/x-ferry-bench | cmp - "$DIR/g.bin" && SAME=identical || SAME=DIFFERENT
HWM=$(awk '/VmHWM/ {print $2}' /proc/"$BRIDGE"/status)
B3="$((HWM / 1024)) MiB ($SAME)|—|—|$([ "$HWM" -le 65536 ] && echo yes || echo no)"
rm -f "$DIR/g.bin"

# B4: 1,000 copies: one Ferry change per copy the bridge saw, RSS before and after.
rss0=$(awk '/VmRSS/ {print $2}' /proc/"$BRIDGE"/status); c0=$(change_count); o0=$(grep -c offered "$DIR/bridge.err" || true)
s=$(now); "${W[@]}" sh -c 'for i in $(seq 1 1000); do wl-copy "storm $i"; done'; loop=$(echo "$(now) - $s" | bc)
for _ in $(seq 120); do [ "$("${FERRY[@]}" paste 2>/dev/null)" = "storm 1000" ] && break; sleep 0.5; done
sleep 2
rss1=$(awk '/VmRSS/ {print $2}' /proc/"$BRIDGE"/status); c1=$(change_count); o1=$(grep -c offered "$DIR/bridge.err" || true)
B4="$((c1 - c0)) changes for $((o1 - o0)) offers seen, 1000 copies in ${loop%????} s; RSS $((rss0 / 1024)) → $((rss1 / 1024)) MiB|—|—|$([ $((c1 - c0)) -eq $((o1 - o0)) ] && echo yes || echo no)"

echo "| benchmark | value | anchor value | ratio | met |"
echo "|---|---|---|---|---|"
echo "| B1 wl-copy → ferry watch line, p50 (anchor: wl-paste --watch) | $B1 |"
echo "| B2 wl-paste 256 MiB from a Ferry copy (anchor: from wl-copy) | $B2 |"
echo "$X11_ROW"
echo "| B3 ferry-bridge peak RSS, 1 GiB imported and exported (≤ 64 MiB) | $B3 |"
echo "| B4 1,000 wl-copy in a loop | $B4 |"

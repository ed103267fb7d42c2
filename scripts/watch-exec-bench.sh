#!/usr/bin/env bash
# `ferry watch --exec` end to end against `wl-paste --watch` (#18): from the start of a copy
# (`ferry copy --text` / `wl-copy`) to the watcher's command running with the new content, p50
# over FERRY_BENCH_WATCH_RUNS copies (default 40). Prints JSON lines for bench-table.py: that
# end-to-end figure, then its two halves for both sides: the copy (start → the copier returned,
# the content published) and the watch side (the copier returned → the command ran with it),
# which is what `wl-paste --watch` is compared on when the copiers differ.
#
# Usage: scripts/watch-exec-bench.sh BIN_DIR   (bench.sh passes the release bin directory)
#
# The Wayland side runs in a headless sway of its own (wlroots' headless backend, pixman
# renderer), as the unprivileged user `wl` in a runtime directory of its own (see
# reference/desktop-bridge.md §7): creating that user needs root, and without sway,
# wl-clipboard or root the benchmark is skipped with a message. The Ferry side runs on a private
# dbus-daemon with ferryd on a temporary state directory. Both watchers run the same command: a
# bash that reads the content and appends bash's $EPOCHREALTIME (no fork) to a file.
# Everything started here is stopped by its PID.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: watch-exec-bench.sh BIN_DIR}
runs=${FERRY_BENCH_WATCH_RUNS:-40}

skip() { echo "watch-exec bench skipped: $*" >&2; exit 0; }
command -v sway >/dev/null && command -v wl-copy >/dev/null && command -v wl-paste >/dev/null \
  || skip "sway or wl-clipboard missing (make deps installs them)"
[ "$(id -u)" = 0 ] || skip "it needs root to run sway as the user wl"
id wl >/dev/null 2>&1 || useradd -m wl 2>/dev/null || id wl >/dev/null 2>&1 || skip "cannot create the user wl"

work=$(mktemp -d)
chmod 755 "$work"
rt="$work/runtime"
mkdir "$rt" && chown wl "$rt" && chmod 700 "$rt"
printf 'output HEADLESS-1 resolution 640x480\nxwayland disable\n' >"$work/sway.conf"
chmod 644 "$work/sway.conf"
sway_pid="" wlwatch_pid="" ferryd_pid="" fwatch_pid=""
. scripts/private-bus.sh
cleanup() {
  for pid in $fwatch_pid $ferryd_pid; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  # wl-copy leaves a server per copy until it is replaced: the last one, found by its runtime dir,
  # stopped before the compositor (else it says "wl_display_dispatch: Broken pipe").
  for pid in $(pgrep -u wl -x wl-copy 2>/dev/null); do
    if tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qx "XDG_RUNTIME_DIR=$rt"; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  # runuser's children (sway, wl-paste) are the user wl's in our runtime dir: stopped by the PIDs
  # pgrep finds under the runuser PIDs we started, then runuser itself.
  for pid in $wlwatch_pid $sway_pid; do
    for child in $(pgrep -P "$pid" 2>/dev/null); do kill -TERM "$child" 2>/dev/null || true; done
    kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  done
  stop_private_bus
  rm -rf "$work"
}
trap cleanup EXIT

as_wl=(runuser -u wl -- env XDG_RUNTIME_DIR="$rt")
"${as_wl[@]}" WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman sway -c "$work/sway.conf" \
  >"$work/sway.log" 2>&1 &
sway_pid=$!
socket=""
for _ in $(seq 100); do
  socket=$(ls "$rt" 2>/dev/null | grep -m1 -E '^wayland-[0-9]+$' || true)
  [ -n "$socket" ] && break
  sleep 0.05
done
[ -n "$socket" ] || { cat "$work/sway.log" >&2; skip "sway did not start"; }
wl=("${as_wl[@]}" WAYLAND_DISPLAY="$socket")

# The command both watchers run: read the content, append the time it ran and what it read.
cat >"$work/mark.sh" <<'MARK'
content=$(cat)
printf '%s %s\n' "$EPOCHREALTIME" "$content" >>"$MARKS"
MARK
chmod 644 "$work/mark.sh"

# Waits until $1 has more than $2 lines (5 s at most).
wait_lines() {
  for _ in $(seq 1000); do
    [ "$(wc -l <"$1")" -gt "$2" ] && return 0
    sleep 0.005
  done
  echo "watch-exec bench: no run of the command after a copy" >&2
  return 1
}

# Prints the p50, in milliseconds, of the delays from the times in $1 to the marks in $2 (both
# files of "time content" lines, matched by content), and how many were matched.
p50() {
  python3 - "$1" "$2" <<'PY'
import statistics, sys
starts = dict(reversed(line.split(" ", 1)) for line in open(sys.argv[1]).read().splitlines())
delays = []
for line in open(sys.argv[2]).read().splitlines():
    when, content = line.split(" ", 1)
    if content in starts:
        delays.append((float(when) - float(starts[content])) * 1000)
print(f"{statistics.median(delays):.3f} {len(delays)}")
PY
}

# Runs the copies: $1 is a function that copies its argument; $2 gets the time each copy
# started, $4 the time its copier returned, $3 the watcher's marks.
measure() {
  local copy=$1 starts=$2 marks=$3 returns=$4
  for i in $(seq "$runs"); do
    local before start
    before=$(wc -l <"$marks")
    start=$EPOCHREALTIME
    $copy "bench-$copy-$i"
    printf '%s %s\n' "$start" "bench-$copy-$i" >>"$starts"
    printf '%s %s\n' "$EPOCHREALTIME" "bench-$copy-$i" >>"$returns"
    wait_lines "$marks" "$before"
    sleep 0.05
  done
}

# wl-paste --watch on the headless compositor.
: >"$work/wl.marks"; chmod 666 "$work/wl.marks"; : >"$work/wl.starts"; : >"$work/wl.returns"
"${wl[@]}" MARKS="$work/wl.marks" wl-paste --no-newline --watch bash "$work/mark.sh" 2>"$work/wl-paste.log" &
wlwatch_pid=$!
wl_copy() { "${wl[@]}" wl-copy -- "$1"; }
"${wl[@]}" wl-copy -- warm-up
wait_lines "$work/wl.marks" 0
measure wl_copy "$work/wl.starts" "$work/wl.marks" "$work/wl.returns"

# ferry watch --exec on a private bus. Like the Wayland side (and any desktop session), Ferry's
# processes get a runtime directory of their own: there ferryd serves direct connections, which
# long-lived clients such as `ferry watch` use for their reads (docs/direct-connections.md).
start_private_bus
mkdir -m 700 "$work/ferry-runtime"
export XDG_RUNTIME_DIR="$work/ferry-runtime"
"$bin/ferryd" --state-dir "$work/state" >"$work/ferryd.out" 2>"$work/ferryd.log" &
ferryd_pid=$!
for _ in $(seq 200); do grep -q READY "$work/ferryd.out" 2>/dev/null && break; sleep 0.05; done
grep -q READY "$work/ferryd.out" || { cat "$work/ferryd.log" >&2; exit 1; }
: >"$work/ferry.marks"; : >"$work/ferry.starts"; : >"$work/ferry.returns"
"$bin/ferry" copy --text warm-up
MARKS="$work/ferry.marks" "$bin/ferry" watch --exec bash "$work/mark.sh" 2>"$work/ferry-watch.log" &
fwatch_pid=$!
wait_lines "$work/ferry.marks" 0
ferry_copy() { "$bin/ferry" copy --text "$1"; }
measure ferry_copy "$work/ferry.starts" "$work/ferry.marks" "$work/ferry.returns"

read -r wl_p50 wl_n < <(p50 "$work/wl.starts" "$work/wl.marks")
read -r ferry_p50 ferry_n < <(p50 "$work/ferry.starts" "$work/ferry.marks")
read -r wl_copy_p50 _ < <(p50 "$work/wl.starts" "$work/wl.returns")
read -r ferry_copy_p50 _ < <(p50 "$work/ferry.starts" "$work/ferry.returns")
read -r wl_watch_p50 _ < <(p50 "$work/wl.returns" "$work/wl.marks")
read -r ferry_watch_p50 _ < <(p50 "$work/ferry.returns" "$work/ferry.marks")
python3 - "$ferry_n" "$wl_n" "$ferry_p50" "$wl_p50" "$ferry_copy_p50" "$wl_copy_p50" "$ferry_watch_p50" "$wl_watch_p50" <<'PY'
import json, sys
n_ferry, n_wl = int(sys.argv[1]), int(sys.argv[2])
ferry, wl, ferry_copy, wl_copy, ferry_watch, wl_watch = map(float, sys.argv[3:9])
def row(bench, metric, value, anchor_value, anchor, goal):
    ratio = value / anchor_value
    print(json.dumps({"bench": bench, "metric": f"{metric}, p50 ({n_ferry} copies; anchor {n_wl})", "value": round(value, 2),
                      "unit": "ms", "anchor": anchor, "anchor_value": round(anchor_value, 2), "ratio": round(ratio, 3),
                      "goal": goal, "met": ratio <= 1.0 if goal else None}))
row("watch-exec", "copy → watcher's command ran with it", ferry, wl,
    "wl-copy → wl-paste --watch (headless sway)", "≤ 1.0×")
row("watch-exec: copy half", "copy started → copier returned (ferry copy --text)", ferry_copy, wl_copy, "wl-copy", None)
row("watch-exec: watch half", "copier returned → watcher's command ran with it", ferry_watch, wl_watch,
    "wl-copy returned → wl-paste --watch ran it", "≤ 1.0×")
PY

#!/usr/bin/env bash
# B2's X11 half, the bridge's own cost: ferry-bridge's CPU time (user, system) and minor faults
# from /proc/PID/stat around five `xclip -o` pastes of 256 MiB served from a Ferry copy, on an
# Xvfb (-displayfd) with its own dbus-daemon and ferryd. Usage: scripts/bridge-x11-cpu.sh BIN_DIR
# (ferryd, ferry-cli, ferry-bridge). Every process it starts is killed by pid.
set -euo pipefail
BIN=$1
DIR=$(mktemp -d /tmp/ferry-bridge-cpu.XXXXXX); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
head -c 268435456 /dev/urandom > "$DIR/q.bin"
Xvfb -displayfd 3 -nolisten tcp 3> "$DIR/xd" > /dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 100); do [ -s "$DIR/xd" ] && break; sleep 0.1; done
export DISPLAY=:$(head -1 "$DIR/xd"); unset WAYLAND_DISPLAY
dbus-daemon --session --fork --print-address=4 --print-pid=5 --address="unix:path=$DIR/bus" 4> "$DIR/a" 5> "$DIR/p"
PIDS+=("$(head -1 "$DIR/p")"); A=$(head -1 "$DIR/a")
"$BIN/ferryd" --bus "$A" --quiet --state-dir "$DIR/s" & PIDS+=($!)
"$BIN/ferry-bridge" --bus "$A" --verbose > "$DIR/o" 2> "$DIR/e" & B=$!; PIDS+=($B)
for _ in $(seq 100); do grep -q READY "$DIR/o" 2>/dev/null && break; sleep 0.1; done
DBUS_SESSION_BUS_ADDRESS="$A" "$BIN/ferry-cli" copy -t application/octet-stream "$DIR/q.bin"
for _ in $(seq 100); do grep -q "exported change" "$DIR/e" 2>/dev/null && break; sleep 0.1; done
xclip -o -selection clipboard -t application/octet-stream | cmp -s - "$DIR/q.bin" && same=identical || same=DIFFERENT
read -r u0 s0 f0 < <(awk '{print $14, $15, $10}' /proc/$B/stat)
t0=$(date +%s.%N)
for _ in 1 2 3 4 5; do xclip -o -selection clipboard -t application/octet-stream > /dev/null; done
t1=$(date +%s.%N)
read -r u1 s1 f1 < <(awk '{print $14, $15, $10}' /proc/$B/stat)
tck=$(getconf CLK_TCK)
echo "$(basename $BIN): bridge CPU per 256 MiB paste $(echo "($u1-$u0+$s1-$s0)*1000/$tck/5" | bc) ms (user $(echo "($u1-$u0)*1000/$tck/5" | bc), sys $(echo "($s1-$s0)*1000/$tck/5" | bc)), minor faults per paste $(( (f1-f0)/5 )), wall per paste $(echo "($t1-$t0)*1000/5" | bc) ms, $same"

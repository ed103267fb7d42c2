#!/usr/bin/env bash
# ferryd's CPU time during large promised pastes (issue 19 item 5): a private bus, a ferryd and
# `promise-source` promising SIZE MiB (a data loader), and a python-dbus reader that pastes it
# PASTES times (Read, the pipe to end of file, FinishTransfer). Prints, per paste, the wall time
# and the CPU time (utime + stime from /proc/PID/stat) of ferryd and of the source.
# Usage: scripts/promised-paste-cpu.sh [SIZE_MIB] [PASTES]   (BIN= a folder with ferryd and
# promise-source; default the release build: swift build -c release --product ferryd, and
# --product promise-source; python3-dbus in /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-48}
pastes=${2:-10}
bin=${BIN:-$(swift build -c release --show-bin-path)}
for program in ferryd promise-source; do
  [ -x "$bin/$program" ] || { echo "missing $bin/$program" >&2; exit 1; }
done
FERRY_PRIVATE_BUS=1
. scripts/private-bus.sh
start_private_bus
work=$(mktemp -d)
ferryd_pid="" source_pid=""
cleanup() {
  for pid in $source_pid $ferryd_pid; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  stop_private_bus
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 700 "$work/run" "$work/config"
export XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
"$bin/ferryd" --state-dir "$work/state" >"$work/ferryd.out" 2>"$work/ferryd.log" &
ferryd_pid=$!
for _ in $(seq 200); do grep -q READY "$work/ferryd.out" 2>/dev/null && break; sleep 0.05; done
grep -q READY "$work/ferryd.out" || { echo "ferryd did not start:" >&2; cat "$work/ferryd.log" >&2; exit 1; }
"$bin/promise-source" "$DBUS_SESSION_BUS_ADDRESS" loader $((size_mib << 20)) >"$work/source.out" 2>"$work/source.log" &
source_pid=$!
for _ in $(seq 400); do grep -q READY "$work/source.out" 2>/dev/null && break; sleep 0.05; done
grep -q READY "$work/source.out" || { echo "promise-source did not start:" >&2; cat "$work/source.log" >&2; exit 1; }
/usr/bin/python3 - "$ferryd_pid" "$source_pid" "$size_mib" "$pastes" <<'PY'
import os, sys, time, dbus
ferryd, source, size_mib, pastes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tick = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
board = dbus.Interface(dbus.SessionBus().get_object("org.ferry.Broker", "/org/ferry/Pasteboard/general"),
                       "org.ferry.Pasteboard1")
rows = []
for _ in range(pastes):
    broker0, source0, wall0 = cpu(ferryd), cpu(source), time.monotonic()
    _, _, data, transfer = board.Read(dbus.UInt32(0), "public.data", dbus.Dictionary({}, signature="sv"))
    fd, total = data.take(), 0
    while chunk := os.read(fd, 1 << 20):
        total += len(chunk)
    os.close(fd)
    said = board.FinishTransfer(transfer)
    wall = time.monotonic() - wall0
    assert total == size_mib << 20 == said, (total, said)
    rows.append((wall, cpu(ferryd) - broker0, cpu(source) - source0))
print(f"{pastes} promised pastes of {size_mib} MiB (CPU in clock ticks of {1000 // tick} ms)")
print("paste  wall ms  ferryd CPU ms  source CPU ms")
for i, (wall, broker, source_cpu) in enumerate(rows):
    print(f"{i + 1:5}  {wall * 1000:7.1f}  {broker * 1000:13.0f}  {source_cpu * 1000:13.0f}")
walls = sorted(r[0] for r in rows)
print(f"median wall {walls[len(walls) // 2] * 1000:.1f} ms; ferryd CPU total {sum(r[1] for r in rows) * 1000:.0f} ms "
      f"({sum(r[1] for r in rows) * 1000 / pastes:.1f} ms per paste); source CPU total {sum(r[2] for r in rows) * 1000:.0f} ms")
PY

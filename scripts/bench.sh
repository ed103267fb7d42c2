#!/usr/bin/env bash
# Runs every benchmark of the project (release build) on a private bus and prints one table.
# Usage: scripts/bench.sh            (after `swift build -c release` here and in Benchmarks/, the
#                                     benchmarks' own package; `make bench` does all three)
#
# Besides the private dbus-daemon it starts, for paste-bench: ferryd on that bus with a temporary
# --state-dir, and a private Xvfb display (for the xclip anchors) when Xvfb is installed;
# scene-bench starts its own dbus-daemon and ferryd.
# Environment passed through to paste-bench: FERRY_BENCH_MIB, FERRY_BENCH_XCLIP_MIB (sizes of P3).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build -c release --show-bin-path)
benchbin=$(swift build -c release --package-path Benchmarks --show-bin-path)
# The benchmarks start ferryd and ferry from the root's release folder (BenchReport's Spawn.ferryFolder).
export FERRY_BENCH_BIN="$bin"
. scripts/private-bus.sh
start_private_bus

work=$(mktemp -d)
results="$work/results"
ferryd_pid="" xvfb_pid=""
cleanup() {
  if [ -n "$ferryd_pid" ]; then kill -TERM "$ferryd_pid" 2>/dev/null || true; wait "$ferryd_pid" 2>/dev/null || true; fi
  if [ -n "$xvfb_pid" ]; then kill -TERM "$xvfb_pid" 2>/dev/null || true; wait "$xvfb_pid" 2>/dev/null || true; fi
  stop_private_bus
  rm -rf "$work"
}
trap cleanup EXIT

started=$(date +%s)
echo "Ferry benchmarks — $(date -u +%Y-%m-%d) — $(nproc) cores — $(uname -m)" >&2
for bench in dbus-bench type-bench paste-bench scene-bench drag-bench; do
  [ -x "$benchbin/$bench" ] || { echo "missing $benchbin/$bench (swift build -c release --package-path Benchmarks)" >&2; exit 1; }
done
for program in ferryd ferry ferry-cli; do
  [ -x "$bin/$program" ] || { echo "missing $bin/$program (swift build -c release)" >&2; exit 1; }
done

for bench in dbus-bench type-bench; do
  echo "running $bench…" >&2
  "$benchbin/$bench" >>"$results"
done

# A private X display for the xclip anchors (-displayfd picks a free display number).
if command -v Xvfb >/dev/null && command -v xclip >/dev/null; then
  Xvfb -displayfd 3 -nolisten tcp -screen 0 640x480x24 3>"$work/display" >"$work/xvfb.log" 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
  if [ -s "$work/display" ]; then
    export DISPLAY=":$(head -n1 "$work/display")"
  else
    echo "Xvfb did not start; the xclip anchors are skipped" >&2
    unset DISPLAY
  fi
else
  echo "Xvfb or xclip missing (make deps installs them); the xclip anchors are skipped" >&2
  unset DISPLAY
fi

# ferryd on the private bus, with its own state directory, and (as in a desktop session) an
# XDG_RUNTIME_DIR, where it listens for direct connections (issue 20).
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="$work/run"
  mkdir -m 700 "$XDG_RUNTIME_DIR"
fi
"$bin/ferryd" --state-dir "$work/state" >"$work/ferryd.out" 2>"$work/ferryd.log" &
ferryd_pid=$!
for _ in $(seq 200); do grep -q READY "$work/ferryd.out" 2>/dev/null && break; sleep 0.05; done
if ! grep -q READY "$work/ferryd.out"; then
  echo "ferryd did not start:" >&2
  cat "$work/ferryd.log" >&2
  exit 1
fi
export FERRY_BENCH_FERRYD_PID=$ferryd_pid FERRY_BENCH_FERRY="$bin/ferry"

echo "running paste-bench…" >&2
status=0
# Its rows measure the bus, as before direct connections; the direct ones come next, beside them.
FERRY_DIRECT=0 TMPDIR="$work" "$benchbin/paste-bench" >>"$results" || { status=$?; echo "paste-bench failed (status $status)" >&2; }
echo "running paste-bench --only direct…" >&2
TMPDIR="$work" "$benchbin/paste-bench" --only direct >>"$results" || { status=$?; echo "paste-bench --only direct failed (status $status)" >&2; }
echo "running paste-bench --only load…" >&2
TMPDIR="$work" "$benchbin/paste-bench" --only load >>"$results" || { status=$?; echo "paste-bench --only load failed (status $status)" >&2; }

# scene-bench starts its own bus and ferryd (a desktop of 200 apps must not share the other's).
echo "running scene-bench…" >&2
"$benchbin/scene-bench" >>"$results" || { status=$?; echo "scene-bench failed (status $status)" >&2; }
# drag-bench (P5) starts its own bus and ferryd too.
echo "running drag-bench…" >&2
"$benchbin/drag-bench" >>"$results" || { status=$?; echo "drag-bench failed (status $status)" >&2; }
# The same over direct connections (the Moves, and the proposals asked of the target apps).
echo "running drag-bench --direct…" >&2
"$benchbin/drag-bench" --direct >>"$results" || { status=$?; echo "drag-bench --direct failed (status $status)" >&2; }

# watch-exec (#18) starts its own headless sway, dbus-daemon and ferryd (skipped, with a message,
# without sway, wl-clipboard or root).
echo "running watch-exec-bench…" >&2
bash scripts/watch-exec-bench.sh "$bin" >>"$results" || { status=$?; echo "watch-exec-bench failed (status $status)" >&2; }

python3 scripts/bench-table.py <"$results"
echo "took $(( $(date +%s) - started )) s" >&2
exit "$status"

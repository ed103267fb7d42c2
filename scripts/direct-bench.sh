#!/usr/bin/env bash
# Issue 20's direct-connection figures alone (P1, P2, D4 beside the C bus echo and the C
# peer-to-peer echo): a private bus, a release ferryd with its own XDG_RUNTIME_DIR, and
# `paste-bench --only direct`; prints the table. With --load, the 50-client load instead (`paste-bench
# --only load`: half the clients direct, half on the bus). scripts/bench.sh runs both with the rest.
# Usage: scripts/direct-bench.sh [--quick] [--load]   (after `swift build -c release --package-path Benchmarks
# --product paste-bench` and `swift build -c release --product ferryd`)
# BIN=DIR and BENCH_BIN=DIR take ferryd and paste-bench from elsewhere (a copy of another
# build's, to compare two builds in one session).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-$(swift build -c release --show-bin-path)}
benchbin=${BENCH_BIN:-$(swift build -c release --package-path Benchmarks --show-bin-path)}
[ -x "$benchbin/paste-bench" ] || { echo "missing $benchbin/paste-bench (swift build -c release --package-path Benchmarks --product paste-bench)" >&2; exit 1; }
[ -x "$bin/ferryd" ] || { echo "missing $bin/ferryd (swift build -c release --product ferryd)" >&2; exit 1; }
export FERRY_BENCH_BIN="$bin"
FERRY_PRIVATE_BUS=1
. scripts/private-bus.sh
start_private_bus
work=$(mktemp -d)
ferryd_pid=""
cleanup() {
  if [ -n "$ferryd_pid" ]; then kill -TERM "$ferryd_pid" 2>/dev/null || true; wait "$ferryd_pid" 2>/dev/null || true; fi
  stop_private_bus
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 700 "$work/run"
XDG_RUNTIME_DIR="$work/run" "$bin/ferryd" --state-dir "$work/state" >"$work/ferryd.out" 2>"$work/ferryd.log" &
ferryd_pid=$!
for _ in $(seq 200); do grep -q READY "$work/ferryd.out" 2>/dev/null && break; sleep 0.05; done
grep -q READY "$work/ferryd.out" || { echo "ferryd did not start:" >&2; cat "$work/ferryd.log" >&2; exit 1; }
section=direct; args=()
for arg in "$@"; do if [ "$arg" = --load ]; then section=load; else args+=("$arg"); fi; done
FERRY_BENCH_FERRYD_PID=$ferryd_pid TMPDIR="$work" "$benchbin/paste-bench" --only "$section" "${args[@]}" >"$work/results"
python3 scripts/bench-table.py <"$work/results"

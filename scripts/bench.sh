#!/usr/bin/env bash
# Runs every benchmark of the project (release build) on a private bus and prints one table.
# Usage: scripts/bench.sh            (after `swift build -c release`; `make bench` does both)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build -c release --show-bin-path)
. scripts/private-bus.sh
start_private_bus

results=$(mktemp)
trap 'rm -f "$results"; stop_private_bus' EXIT

echo "Ferry benchmarks — $(date -u +%Y-%m-%d) — $(nproc) cores — $(uname -m)" >&2
for bench in dbus-bench type-bench; do
  if [ -x "$bin/$bench" ]; then
    echo "running $bench…" >&2
    "$bin/$bench" >>"$results"
  else
    echo "missing $bin/$bench (build failed?)" >&2
    exit 1
  fi
done
python3 scripts/bench-table.py <"$results"

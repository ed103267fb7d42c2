#!/usr/bin/env bash
# `make test`: every top-level suite of the test bundle in a process of its own, JOBS
# (FERRY_TEST_JOBS, default 4) such processes at a time, each running its tests one at a time
# (--no-parallel). Prints a line per suite as it ends, then the log of every suite that failed and
# the slowest suites; fails when a suite failed, or when the suites together ran fewer tests than
# the bundle lists.
#
# Why processes and not `swift test --parallel`: one test process has one cooperative thread pool
# (one thread per core: two on the CI machine) and tests that start and stop daemons block a
# thread while they wait, so suites in one process starve each other's clients and time-bounded
# expectations fail at random; separate processes each have their own pool and the kernel shares
# the cores. Every suite already brings its own private bus, state folder, display and sway
# instance, so processes need no more isolation than that. A suite whose tests must not overlap
# with each other says `.serialized`; nothing here runs two tests of one suite at once anyway. A
# suite that must not share the machine with other suites is listed in `alone` below.
#
# Runs the test bundle directly, not through `swift test`: SwiftPM holds a lock on .build for the
# whole run, so two `swift test` processes cannot run at once. The bundle must be built
# (`swift build --build-tests`). FERRY_TEST_LOGS names the folder for the logs (default: a new
# one under /tmp, kept); FERRY_TEST_TIME_LIMIT is the most one suite may take, in seconds (600).
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
jobs=${FERRY_TEST_JOBS:-4}
limit=${FERRY_TEST_TIME_LIMIT:-600}
bin=$("$swift" build --show-bin-path)
bundle=$(find "$bin" -maxdepth 1 -name '*PackageTests.xctest' -print -quit)
[ -n "$bundle" ] || { echo "test-parallel: no test bundle in $bin (swift build --build-tests first)" >&2; exit 1; }
logs=${FERRY_TEST_LOGS:-$(mktemp -d /tmp/ferry-tests.XXXXXX)}
mkdir -p "$logs"

listed=$("$bundle" --testing-library swift-testing --list-tests 2>/dev/null)
total=$(printf '%s\n' "$listed" | grep -c .)
# A test's ID is Module.Suite/…/name(): the top-level suite is everything before the first slash.
suites=$(printf '%s\n' "$listed" | cut -d/ -f1 | sort -u)
# The longest suites first, so that none starts last and runs alone at the end: those that took
# 28-180 s in a run of 3 jobs on a loaded 2-core machine (most suites take under 5 s), but for the
# one in `alone`. A name no longer in the bundle is skipped; a new long suite only costs time
# until it is added here.
first="FerryTests.TransferProgressTests FerrydTests.BuiltInCopyTests FerrydTests.BuiltInSaveTests
FerryContinuityTests.UniversalClipboardTests FerrydTests.MemoryBudgetTests
FerryBridgeTests.WaylandBridgeTests FerryTests.ShareEndToEndTests FerryContinuityTests.HandoffTests
FerryDemoTests.DemoDragTests"
# Suites that run alone, after the others, with no other suite beside them. The Wayland storm
# checks that ferry-bridge imports each of 1,000 back-to-back wl-copy runs, which it does alone;
# sharing two loaded cores with three other suites it fell behind and missed copies (959 of 1,000).
alone="FerryBridgeTests.WaylandBridgeStormTests"
present() { printf '%s\n' "$@" | grep -Fxf <(printf '%s\n' "$suites") || true; }
order=$( { present $first; printf '%s\n' "$suites" | grep -Fxvf <(printf '%s\n' $first $alone); } )

run_suite() {
    local suite=$1 start status seconds mark
    start=$EPOCHREALTIME
    status=0
    # Line-buffered, so that the log of a suite stopped at the time limit names the test it was in.
    NO_COLOR=1 timeout --kill-after=10 "$limit" stdbuf -oL "$bundle" --testing-library swift-testing --no-parallel \
        --filter "^${suite//./\\.}(/|\$)" >"$logs/$suite.log" 2>&1 || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "test-parallel: stopped at the time limit of $limit s (FERRY_TEST_TIME_LIMIT)" >>"$logs/$suite.log"
    fi
    seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    printf '%s %s %s\n' "$status" "$seconds" "$suite" >"$logs/$suite.status"
    if [ "$status" -eq 0 ]; then mark="passed"; else mark="FAILED (status $status)"; fi
    printf '%6s s  %s %s\n' "$seconds" "$suite" "$mark"
}
export -f run_suite
export bundle logs limit

started=$(date +%s)
printf '%s\n' "$order" | xargs -P "$jobs" -I{} bash -c 'run_suite "$1"' _ {} || true
present $alone | xargs -P 1 -I{} bash -c 'run_suite "$1"' _ {} || true
elapsed=$(( $(date +%s) - started ))

failed=$(cat "$logs"/*.status | awk '$1 != 0 { print $3 }')
ran=$(cat "$logs"/*.log | sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
for suite in $failed; do
    echo
    echo "=== $suite failed; its log ($logs/$suite.log):"
    cat "$logs/$suite.log"
done
echo
echo "The slowest suites:"
# awk reads everything: `head` would leave sort writing into a closed pipe (SIGPIPE under pipefail).
cat "$logs"/*.status | sort -k2 -rn | awk 'NR <= 8 { printf "%8.1f s  %s\n", $2, $3 }'
suites_count=$(printf '%s\n' "$suites" | grep -c .)
echo "test-parallel: $suites_count suites, $ran of $total tests ran, $jobs at a time, in $elapsed s; logs in $logs"
if [ -n "$failed" ]; then
    echo "test-parallel: failed: $(echo $failed)" >&2
    exit 1
fi
if [ "$ran" -ne "$total" ]; then
    echo "test-parallel: the bundle lists $total tests but $ran ran" >&2
    exit 1
fi

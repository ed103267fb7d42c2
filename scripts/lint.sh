#!/usr/bin/env bash
# `make lint` (CI runs it before the tests): swift-format's rules that .swift-format turns on, over
# every Swift file of both packages. Prints each finding and fails when there is one.
#
# swift-format's lint also reports everything its pretty-printer would lay out differently
# (Indentation, LineLength, AddLines, RemoveLine, Spacing, TrailingComma, EndOfLineComment); that
# part cannot be turned off (swiftlang/swift-format#764) and Ferry's code is laid out by hand, not
# by the formatter, so those findings are ignored here — except trailing whitespace, which the code
# has none of. The rules are chosen to fit how the code is written today: the default rules the
# code keeps, and two more that STYLE.md asks for (a `///` on every public declaration, no
# implicitly unwrapped optionals); the default rules the code deliberately does otherwise
# (`a; b` on one line, `case a, b`, `private extension`, …) are off.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}

rules=$(python3 -c 'import json; c = json.load(open(".swift-format")); print("|".join(sorted(k for k, v in c["rules"].items() if v)))')
checked="$rules|TrailingWhitespace"
files=$(git ls-files --cached --others --exclude-standard -- '*.swift')
[ -n "$files" ] || { echo "lint: no Swift files found (not a git checkout?)" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
# shellcheck disable=SC2086  # one argument per file; git ls-files names have no blanks here
"$swift" format lint --configuration .swift-format --parallel $files >"$out" 2>&1 || status=$?
# A file swift-format could not read or parse is an error of its own, whatever the rules say.
if [ "$status" -ne 0 ] && ! grep -qE ': (warning|error): \[' "$out"; then
  cat "$out" >&2
  echo "lint: swift format failed (status $status)" >&2
  exit 1
fi
if grep -E ': error: ' "$out" | grep -vE ': error: \[' >&2; then
  echo "lint: swift format could not check the files above" >&2
  exit 1
fi
findings=$(grep -E ": (warning|error): \[($checked)\]" "$out" | sort -u || true)
if [ -n "$findings" ]; then
  echo "$findings"
  echo "lint: $(echo "$findings" | wc -l) finding(s) of the rules in .swift-format" >&2
  exit 1
fi
echo "lint: no findings of the rules in .swift-format ($(echo "$files" | wc -l) Swift files)" >&2

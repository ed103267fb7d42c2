#!/usr/bin/env python3
"""Reads benchmark JSON lines on stdin and prints one Markdown table.

Each line is an object with: bench, metric, value, unit, anchor, anchor_value, ratio, goal, met.
Lines that are not JSON objects are passed through to stderr (benchmarks may log).
"""
import json
import sys


def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


rows = []
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        row = json.loads(line)
        if not isinstance(row, dict) or "bench" not in row:
            raise ValueError
    except ValueError:
        print(line, file=sys.stderr)
        continue
    rows.append(row)

header = ["benchmark", "metric", "value", "anchor", "anchor value", "ratio", "goal", "met"]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for r in rows:
    unit = r.get("unit") or ""
    value = f"{fmt(r.get('value'))} {unit}".strip()
    anchor_value = r.get("anchor_value")
    anchor_value = f"{fmt(anchor_value)} {unit}".strip() if anchor_value is not None else "—"
    ratio = r.get("ratio")
    ratio = f"{fmt(ratio)}×" if ratio is not None else "—"
    cells = [r.get("bench", ""), r.get("metric", ""), value, r.get("anchor") or "—", anchor_value,
             ratio, r.get("goal") or "—", fmt(r.get("met"))]
    print("| " + " | ".join(str(c) for c in cells) + " |")
failed = [r for r in rows if r.get("met") is False]
if failed:
    print(f"\n{len(failed)} goal(s) not met.", file=sys.stderr)

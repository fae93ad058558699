#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One table of the ratio counters in Google Benchmark JSON files.

    bench/ratio_table.py build-bench/bench-json/*.json

A ratio counter is one named ratio_to_<baseline>, ratio_vs_<baseline>,
speedup, or <a>_over_<b> (and the simulator's events_per_s, a rate); each row is program, benchmark, the subject's ns per
operation where the benchmark reports one (ns_per_op or word_ns, else the real time per
iteration), the counter and its value.  Python 3 standard library only.
"""
import json
import re
import sys

RATIO = re.compile(r"^(ratio_(to|vs)_.+|speedup|.+_over_.+|events_per_s)$")
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def rows(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:  # empty when a filter matched nothing
        print(f"{path}: skipped ({e})", file=sys.stderr)
        return
    program = re.sub(r"\.json$", "", path.rsplit("/", 1)[-1])
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("error_occurred"):
            yield program, b["name"], None, "error", b.get("error_message", "")
            continue
        ns = b.get("ns_per_op", b.get("word_ns"))
        if ns is None and "real_time" in b:
            ns = b["real_time"] * TO_NS.get(b.get("time_unit", "ns"), 1.0)
        for key, value in sorted(b.items()):
            if isinstance(value, (int, float)) and RATIO.match(key):
                yield program, b["name"], ns, key, value


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    table = [r for p in paths for r in rows(p)]
    if not table:
        print("no ratio counters found", file=sys.stderr)
        return 1
    w_prog = max(len(r[0]) for r in table)
    w_name = max(len(r[1]) for r in table)
    w_key = max(len(r[3]) for r in table)
    print(f"{'program':<{w_prog}}  {'benchmark':<{w_name}}  {'ns/op':>10}  {'ratio':<{w_key}}  value")
    for program, name, ns, key, value in table:
        ns_s = f"{ns:10.2f}" if isinstance(ns, (int, float)) else f"{'-':>10}"
        v = f"{value:.3f}" if isinstance(value, (int, float)) else str(value)
        print(f"{program:<{w_prog}}  {name:<{w_name}}  {ns_s}  {key:<{w_key}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

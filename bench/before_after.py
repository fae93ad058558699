#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hot paths of two builds (two git revisions), side by side, in one run.

    bench/before_after.py BEFORE_BUILD AFTER_BUILD [--rounds 5] [--min-time 0.2]

Each build is a Release (-O3) benchmark tree of one revision (bench/run_all.sh
configures one; for an older revision, the same cmake options).  For every
row of ROWS, the two builds' programs run alternately, `--rounds` times each
(the order flips every round, so a slow phase of a shared host hits both),
and the row reports the median per-operation time of each build and their
ratio after/before; a row whose ratio is above --limit (default 1.05: at most 5 %
slower) is marked.  Exit 1 if a benchmark of a row is missing.

The rows name each revision's own benchmark, because names changed when the
variants became registered strategies: before, idle_select's BM_Select/<V>
timed one Select per iteration; after, BM_SelectPlainLoop/<V> runs the same
loop (same seeded LLC, same 1024 wake-ups) through IdleState::Select.  A
before revision that already has a row's after name runs that one instead.  (The
kit's BM_IdleSelect times batches beside a baseline: another harness, not
compared here.)  Everything else has one name.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

# (row label, program, before: (name, metric), after: (name, metric)).
# metric: "time" = the benchmark's own cpu_time per iteration (ns); any other
# string = that counter.
ROWS = [
    ("mm_cid switch cached, lazy", "mm_cid/mm_cid_bench",
     ("BM_Switch_Cached/0", "time"), ("BM_Switch_Cached/0", "time")),
    ("mm_cid switch cached, owner619", "mm_cid/mm_cid_bench",
     ("BM_Switch_Cached/1", "time"), ("BM_Switch_Cached/1", "time")),
    ("mm_cid switch cached, v63_mmlock", "mm_cid/mm_cid_bench",
     ("BM_Switch_Cached/2", "time"), ("BM_Switch_Cached/2", "time")),
] + [
    # Goal 1 of docs/performance.md against the empty hook of the same run (both sides
    # from 682c204 on: the hook in its own translation unit).
    (f"mm_cid switch {case}, {d}: ratio to empty hook", "mm_cid/mm_cid_bench",
     (f"BM_Switch_{bench}VsEmptyHook/{i}", "ratio_to_empty_hook"),
     (f"BM_Switch_{bench}VsEmptyHook/{i}", "ratio_to_empty_hook"))
    for case, bench in [("cached", "Cached"), ("cross-mm", "CrossMmSlotReuse")]
    for i, d in enumerate(["lazy", "owner619", "v63_mmlock"])
] + [
    # The same against the inline switch front end (MmCid::Switcher(), from
    # 7ad6191 on): before = the virtual switch, after = the switcher.
    (f"mm_cid switch {case}, {d}: ratio to empty hook, after through the switcher", "mm_cid/mm_cid_bench",
     (f"BM_Switch_{bench}VsEmptyHook/{i}", "ratio_to_empty_hook"),
     (f"BM_Switcher_{bench}VsEmptyHook/{i}", "ratio_to_empty_hook"))
    for case, bench in [("cached", "Cached"), ("cross-mm", "CrossMmSlotReuse")]
    for i, d in enumerate(["lazy", "owner619"])
] + [
    (f"vmstat Mod, {s}", "vmstat/vmstat_bench", (f"BM_Update/{i}", "time"), (f"BM_Update/{i}", "time"))
    for i, s in enumerate(["A0", "A1", "B", "C", "D", "B.local"])
] + [
    # Goal 3 of docs/performance.md: the inline writer front end (Vmstat::Writer), per
    # update, and its ratio to the thread-local increment of the same run.
    (f"vmstat {w} Mod, {s}{': ratio to TL inc' if m.startswith('ratio') else ''}", "vmstat/vmstat_bench",
     (f"BM_{w}ModVsThreadLocalIncrement/{i}", m), (f"BM_{w}ModVsThreadLocalIncrement/{i}", m))
    for w in ["Writer", "SlotWriter"] for m in ["ns_per_op", "ratio_to_thread_local_increment"]
    for i, s in enumerate(["A0", "A1", "B", "C", "D", "B.local"])
] + [
    (f"idle Select, 64 CPUs, {v}, {b} % busy", "idle_select/idle_select_bench",
     (f"BM_Select/{v}/64/{b}", "time"), (f"BM_SelectPlainLoop/{v}/64/{b}", "time"))
    for v in ["V0", "V1"] for b in [0, 75]
] + [
    (f"tmigr idle enter+exit, {v}, {n} CPUs", "tmigr/tmigr_bench",
     (f"BM_IdleEntryExit/{old}/{n}", "time"), (f"BM_IdleEntryExit/{v}/{n}", "time"))
    for v, old in [("v6.9", "v6_9"), ("isolation", "isolation")] for n in [8, 4096]
] + [
    # Goal 5 of docs/performance.md.  The events/s row is a rate: there, higher is better
    # (a ratio above --limit is an improvement).
    ("sim busy periodic, 4096 CPUs (0.1 s/iter)", "runtime/runtime_bench",
     ("BM_SimPeriodicBusy/4096", "time"), ("BM_SimPeriodicBusy/4096", "time")),
    ("sim busy periodic, 4096 CPUs, events/s", "runtime/runtime_bench",
     ("BM_SimPeriodicBusy/4096", "events_per_s"), ("BM_SimPeriodicBusy/4096", "events_per_s")),
] + [
    (f"sim set-up {c}", "runtime/runtime_bench",
     ("BM_SimSetupScaling/iterations:5", c), ("BM_SimSetupScaling/iterations:5", c))
    for c in ["setup_4096_ms", "setup_8192_ms", "setup_8192_over_4096",
              "setup_4096_cpu_ms", "setup_8192_cpu_ms", "setup_8192_over_4096_cpu"]
]

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def run(program, names, min_time):
    """Runs `program` on exactly `names`; returns {name: [per-op ns ...]}."""
    pattern = "^(" + "|".join(n.replace(".", r"\.").replace("+", r"\+") for n in names) + ")(/manual_time|/real_time)?$"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([program, f"--benchmark_filter={pattern}", f"--benchmark_min_time={min_time}",
                        f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                       check=True, stdout=subprocess.DEVNULL)
        text = open(out.name).read()
    if not text:
        sys.exit(f"{program}: no benchmark matched {pattern}")
    got = {}
    for b in json.loads(text)["benchmarks"]:
        name = b.get("run_name", b["name"])
        for suffix in ("/manual_time", "/real_time"):
            name = name.removesuffix(suffix)
        got[name] = b
    return got


def listed(program):
    """The benchmark names `program` registers (suffixes such as /manual_time dropped)."""
    out = subprocess.run([program, "--benchmark_list_tests"], check=True, capture_output=True,
                         text=True).stdout.split()
    return {n.removesuffix("/manual_time").removesuffix("/real_time") for n in out}


def with_current_names(rows, before_build):
    """A before revision that already has a row's after name (a recent one) runs it by that
    name: the rows' before names are those of revisions older than the rename."""
    have = {}
    out = []
    for label, prog, before, after in rows:
        if prog not in have:
            have[prog] = listed(f"{before_build}/bench/{prog}")
        if before[0] not in have[prog] and after[0] in have[prog]:
            before = after
        out.append((label, prog, before, after))
    return out


def per_op_ns(bench, metric):
    if metric == "time":
        return bench["cpu_time"] * TO_NS[bench.get("time_unit", "ns")]
    return float(bench[metric])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", default="0.2")
    ap.add_argument("--limit", type=float, default=1.05)
    ap.add_argument("--only", default="", help="run only the rows whose program path contains this (e.g. mm_cid)")
    args = ap.parse_args()

    rows_run = with_current_names([r for r in ROWS if args.only in r[1]], args.before)
    programs = sorted({r[1] for r in rows_run})
    samples = {}  # (row label, "before"/"after") -> [ns]
    for rnd in range(args.rounds):
        order = [("before", args.before), ("after", args.after)]
        if rnd % 2:
            order.reverse()
        for prog in programs:
            rows = [r for r in rows_run if r[1] == prog]
            for side, build in order:
                idx = 2 if side == "before" else 3
                got = run(f"{build}/bench/{prog}", [r[idx][0] for r in rows], args.min_time)
                for r in rows:
                    name, metric = r[idx]
                    if name not in got:
                        sys.exit(f"{build}/bench/{prog}: no benchmark {name!r}")
                    samples.setdefault((r[0], side), []).append(per_op_ns(got[name], metric))
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr)

    print(f"{'hot path':<44} {'before ns':>10} {'after ns':>10} {'after/before':>13}")
    worst = 0.0
    for r in rows_run:
        b = statistics.median(samples[(r[0], "before")])
        a = statistics.median(samples[(r[0], "after")])
        ratio = a / b if b > 0 else float("nan")
        worst = max(worst, ratio)
        mark = "  > limit" if ratio > args.limit else ""
        print(f"{r[0]:<44} {b:>10.2f} {a:>10.2f} {ratio:>13.3f}{mark}")
    print(f"medians of {args.rounds} alternating rounds, --benchmark_min_time={args.min_time}; worst ratio {worst:.3f}")


if __name__ == "__main__":
    main()

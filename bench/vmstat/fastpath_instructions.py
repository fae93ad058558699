#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Instructions per update of each vmstat fast path, beside the kernel's.

Runs vmstat_fastpath_probe (bench/vmstat/fastpath_probe.cc) under
valgrind's callgrind once for the kernel-shaped reference and once per
policy, and divides each probe function's own instruction count by the
number of calls.  The figure counts what one update executes inside its
out-of-line probe -- the fast path, the function's return and any register
moves the call adds -- and is the same on every host with the same compiler
and flags.

  python3 bench/vmstat/fastpath_instructions.py BUILD_DIR [POLICY...]

BUILD_DIR is a Release tree with the benchmarks (bench/run_all.sh's
build-bench, for instance); POLICY defaults to the built-ins.  Needs
valgrind (Debian package valgrind).
"""

import os
import re
import subprocess
import sys
import tempfile

DEFAULT_POLICIES = ["A0", "A1", "B", "B.local", "C", "C.xadd", "C.addo", "D"]
PROBES = [  # (column, probe function name prefix)
    ("Writer Mod", "ProbeWriterMod("),
    ("Writer Inc", "ProbeWriterInc("),
    ("SlotWriter Mod", "ProbeSlotWriterMod<"),
    ("SlotWriter Inc", "ProbeSlotWriterInc<"),
]


def run(probe, what, tmp):
    out = os.path.join(tmp, "callgrind." + what)
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, probe, what],
        capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s %s failed (%d):\n%s%s" % (probe, what, r.returncode, r.stdout, r.stderr))
    calls = int(re.search(r"calls per probe: (\d+)", r.stdout).group(1))
    form = re.search(r"writer form (\d+), inline fast path (\w+)", r.stdout)
    ann = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+\S*?:(.*)", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        fn = m.group(2)
        at = fn.find("Probe")
        if at < 0:
            continue
        name = fn[at:]
        costs[name] = costs.get(name, 0) + ir
    return calls, form, costs


def per_call(costs, prefix, calls):
    hits = [ir for name, ir in costs.items() if name.startswith(prefix)]
    return "%.1f" % (sum(hits) / calls) if hits else "-"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    policies = sys.argv[2:] or DEFAULT_POLICIES
    probe = os.path.join(build, "bench", "vmstat", "vmstat_fastpath_probe")
    if not os.access(probe, os.X_OK):
        sys.exit("no %s (build the target vmstat_fastpath_probe in Release)" % probe)
    with tempfile.TemporaryDirectory() as tmp:
        calls, _, costs = run(probe, "kernel", tmp)
        print("instructions per update (callgrind, %d calls per probe; %s)" % (calls, probe))
        print("| | Mod | Inc |")
        print("|---|---|---|")
        print("| kernel `__mod_zone_page_state` / `__inc_zone_state` (kernel_shape.h) | %s | %s |" %
              (per_call(costs, "ProbeKernelMod(", calls), per_call(costs, "ProbeKernelInc(", calls)))
        print()
        print("| policy | form | " + " | ".join(c for c, _ in PROBES) + " |")
        print("|---|---|" + "---|" * len(PROBES))
        for p in policies:
            calls, form, costs = run(probe, p, tmp)
            cells = [per_call(costs, prefix, calls) for _, prefix in PROBES]
            fdesc = "%s%s" % (form.group(1), "" if form.group(2) == "yes" else " (virtual)")
            print("| %s | %s | %s |" % (p, fdesc, " | ".join(cells)))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0-or-later
"""`isolab reproduce --quick --plot=DIR` writes one PNG and one SVG per figure,
each a valid image of non-trivial size; tools/plot draws a timeline of an
isolab trace and the ratio bars of a Google Benchmark JSON.

Exits 77 (ctest: skipped) with the reason when matplotlib is missing for this
interpreter; .ci/run installs python3-matplotlib, so CI runs it.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77
EXPECTED = ["idle_select", "mmcid_scan", "mmcid_stall", "tmigr_timers", "tmigr_cpu_strip", "vmstat"]
MIN_BYTES = 8 * 1024
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def check_png(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: PNG signature")
    check(len(data) >= MIN_BYTES, f"{path}: {len(data)} bytes < {MIN_BYTES}")
    if data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        check(w >= 300 and h >= 150, f"{path}: {w}x{h} pixels")
    else:
        check(False, f"{path}: no IHDR chunk")


def check_svg(path):
    size = os.path.getsize(path)
    check(size >= MIN_BYTES, f"{path}: {size} bytes < {MIN_BYTES}")
    try:
        root = ET.parse(path).getroot()
        check(root.tag.endswith("svg"), f"{path}: root element {root.tag}")
    except ET.ParseError as e:
        check(False, f"{path}: not XML ({e})")


def run(cmd, env=None):
    print("+", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--isolab", required=True)
    ap.add_argument("--plot", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        print(f"skipped: matplotlib is missing for {sys.executable} ({e}); "
              "apt-get install python3-matplotlib to run this test")
        return SKIP
    env = dict(os.environ, ISOLAB_PLOT=a.plot, ISOLAB_PYTHON=sys.executable)
    shutil.rmtree(a.workdir, ignore_errors=True)
    figs = os.path.join(a.workdir, "figures")

    # 1. Every figure of reproduce, in both formats.
    r = run([a.isolab, "reproduce", "--quick", "--json", f"--plot={figs}"], env)
    check(r.returncode == 0, f"isolab reproduce --plot exit {r.returncode}")
    with open(os.path.join(figs, "figures.json")) as f:
        manifest = {e["name"]: e for e in json.load(f)["figures"]}
    for name in EXPECTED:
        check(name in manifest, f"figure {name} missing from figures.json")
        check_png(os.path.join(figs, f"{name}.png"))
        check_svg(os.path.join(figs, f"{name}.svg"))
    json.loads(open(os.path.join(figs, "reproduce.json")).read())

    # 2. One experiment, one format.
    one = os.path.join(a.workdir, "one")
    r = run([a.isolab, "tmigr", "--quick", "--tmigr_real_ms=0", f"--plot={one}", "--plot_format=svg"], env)
    check(r.returncode == 0, f"isolab tmigr --plot exit {r.returncode}")
    check(os.path.exists(os.path.join(one, "tmigr_timers.svg")), "tmigr_timers.svg")
    check(not os.path.exists(os.path.join(one, "tmigr_timers.png")), "png drawn although --plot_format=svg")

    # 3. A timeline of a trace: v6.9 and isolation, CPUs 0-7, 100-160 ms.
    trace = os.path.join(a.workdir, "t.json")
    r = run([a.isolab, "tmigr", "--quick", "--tmigr_real_ms=0", f"--trace={trace}", "--trace_cpus=0-7"], env)
    check(r.returncode == 0, f"isolab tmigr --trace exit {r.returncode}")
    timeline = os.path.join(a.workdir, "timeline.png")
    r = run([sys.executable, a.plot, "timeline", trace, "--run", "v6.9", "--run", "isolation", "--cpus", "0-7",
             "--from_ms", "100", "--to_ms", "160", "--out", timeline])
    check(r.returncode == 0, f"tools/plot timeline exit {r.returncode}")
    check_png(timeline)
    r = run([sys.executable, a.plot, "timeline", trace, "--run", "no such run", "--out", timeline])
    check(r.returncode == 2 and "no such run" in r.stderr, "timeline: unknown run -> exit 2 naming it")

    # 4. Benchmark ratio bars from Google Benchmark's JSON format.
    bench = os.path.join(a.workdir, "bench_demo.json")
    with open(bench, "w") as f:
        json.dump({"context": {"host_name": "test", "num_cpus": 2},
                   "benchmarks": [{"name": f"BM_X/{i}", "run_type": "iteration", "ratio_vs_base": 1.0 + i / 4}
                                  for i in range(6)]}, f)
    r = run([sys.executable, a.plot, "figures", "--out", a.workdir, bench])
    check(r.returncode == 0, f"tools/plot figures (bench) exit {r.returncode}")
    check_png(os.path.join(a.workdir, "bench_bench_demo.png"))

    # 5. Bad input to the script names it.
    r = run([sys.executable, a.plot, "figures", "--formats", "bmp", "--out", a.workdir, bench])
    check(r.returncode == 2 and "bmp" in r.stderr, "figures --formats=bmp -> exit 2 naming it")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

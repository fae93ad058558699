#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every benchmark program, as a user builds it, in one command:
#   bench/run_all.sh [build-dir [out-dir]] [-- extra Google Benchmark flags]
# Configures and builds a Release (-O3) tree without the test instrumentation
# (ISOLATION_INTERLEAVE_POINTS=OFF, the Release default) in build-dir
# (default build-bench), runs each benchmark program with
# --benchmark_format=json into out-dir (default <build-dir>/bench-json), and
# prints one table of every ratio counter (ratio_to_*, ratio_vs_*, speedup,
# *_over_*) from the JSON (bench/ratio_table.py).
# Environment: BENCH_MIN_TIME (default 0.2, seconds per benchmark),
# BENCH_FILTER (default: all), JOBS (default: nproc), CMAKE_ARGS (extra).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-bench
out=
if [ $# -gt 0 ] && [ "$1" != -- ]; then build=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then out=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = -- ]; then shift; fi
out=${out:-$build/bench-json}
jobs=${JOBS:-$(nproc)}

# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DISOLATION_INTERLEAVE_POINTS=OFF \
  -DISOLATION_BUILD_TESTS=OFF -DISOLATION_BUILD_EXAMPLES=OFF -DISOLATION_BUILD_TOOLS=OFF \
  -DISOLATION_BUILD_BENCHMARKS=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"

mkdir -p "$out"
mapfile -t programs < <(find "$build/bench" -type f -name '*_bench' -perm -u+x | sort)
if ((${#programs[@]} == 0)); then echo "no benchmark programs under $build/bench" >&2; exit 1; fi
failed=()
for p in "${programs[@]}"; do
  name=$(basename "$p")
  echo "--- $name" >&2
  rm -f "$out/$name.json"
  if ! "$p" --benchmark_format=json --benchmark_out_format=json --benchmark_out="$out/$name.json" \
      --benchmark_min_time="${BENCH_MIN_TIME:-0.2}" --benchmark_filter="${BENCH_FILTER:-.}" "$@" >/dev/null; then
    failed+=("$name")
  fi
done
shopt -s nullglob
jsons=("$out"/*.json)
if ((${#jsons[@]})); then python3 bench/ratio_table.py "${jsons[@]}"; fi
if ((${#failed[@]})); then echo "failed: ${failed[*]}" >&2; exit 1; fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One command from a fresh Debian 12 machine to a result:
#   tools/bootstrap.sh reproduce [isolab flags]   # the main job: isolab reproduce
#   tools/bootstrap.sh reproduce --plot=DIR       # ... and its figures (python3-matplotlib)
#   tools/bootstrap.sh test [ctest args]          # the whole test suite
#   tools/bootstrap.sh noise [isolab flags]       # isolab noise: oslat (rt-tests) beside the noise meter
# Installs missing Debian packages (apt-get; sudo when not root), configures,
# builds and runs.  BUILD_DIR (default: build) selects the build directory;
# extra CMake options go in CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  reproduce|test|noise) shift ;;
  *) echo "usage: $0 reproduce|test|noise [args]" >&2; exit 2 ;;
esac

packages=(g++ cmake make pkg-config libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
          libhwloc-dev liburcu-dev nlohmann-json3-dev
          libtracecmd-dev libtracefs-dev libtraceevent-dev zlib1g-dev)
# Figures (isolab --plot, tools/plot) need matplotlib for Debian's python3.
for arg in "$@"; do
  case "$arg" in --plot|--plot=*) packages+=(python3-matplotlib) ;; esac
done
# isolab noise runs oslat, from Debian's rt-tests.
if [ "$mode" = noise ]; then packages+=(rt-tests); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  echo "installing: ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${BUILD_DIR:-build}
jobs=$(nproc)
# The test build checks the hot entry points' contracts (contract.h) although
# RelWithDebInfo defines NDEBUG, so the misuse death tests run, and carries
# the test instrumentation (interleave points, store-buffer routing) that the
# forced-race and weak-memory tests drive.
# Its debug information is line tables only (-g1): a failure's backtrace
# still names file and line, and the compile of the ~300 files takes a
# quarter less than with full -g (README, "Build time").  Configure a Debug
# build to step through a test in a debugger.
test_flags=()
if [ "$mode" = test ]; then
  test_flags=(-DISOLATION_HARDENED=ON -DISOLATION_INTERLEAVE_POINTS=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
fi
# A unity build (cmake/UnityBuild.cmake): each target's files compiled in
# batches, about half the compile time of a full build on 2 cores.
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DISOLATION_UNITY_BUILD=ON "${test_flags[@]}" ${CMAKE_ARGS:-} >/dev/null
if [ "$mode" = reproduce ] || [ "$mode" = noise ]; then
  cmake --build "$build" -j"$jobs" --target isolab
  exec "$build/tools/isolab" "$mode" "$@"
fi
cmake --build "$build" -j"$jobs"
exec ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@"

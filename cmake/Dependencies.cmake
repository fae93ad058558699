# SPDX-License-Identifier: GPL-2.0-or-later
# Every dependency comes from a Debian 12 package; a missing one stops
# configuration with the package to install.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

macro(isolation_require_config pkg version debian_package)
  find_package(${pkg} ${version} CONFIG QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "${pkg} >= ${version} not found: apt-get install ${debian_package}")
  endif()
endmacro()

isolation_require_config(absl 20220623 libabsl-dev)
isolation_require_config(nlohmann_json 3.11 nlohmann-json3-dev)
if(ISOLATION_BUILD_TESTS OR ISOLATION_BUILD_TESTING_KIT)
  isolation_require_config(GTest 1.12 "libgtest-dev libgmock-dev")
  if(NOT TARGET GTest::gmock)
    message(FATAL_ERROR "GoogleMock not found: apt-get install libgmock-dev")
  endif()
endif()
if(ISOLATION_BUILD_BENCHMARKS OR ISOLATION_BUILD_TESTING_KIT)
  isolation_require_config(benchmark 1.7 libbenchmark-dev)
endif()

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()
function(isolation_require_pkg var module debian_package)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "pkg-config module '${module}' not found: apt-get install ${debian_package}")
  endif()
endfunction()
isolation_require_pkg(HWLOC "hwloc>=2.9" libhwloc-dev)
isolation_require_pkg(URCU_MEMB "liburcu-memb>=0.13" liburcu-dev)
# Reading and recording kernel traces (lib/replay): trace.dat through
# libtracecmd, live recording through libtracefs, event formats through
# libtraceevent.
isolation_require_pkg(TRACECMD "libtracecmd>=1.3" libtracecmd-dev)
isolation_require_pkg(TRACEFS "libtracefs>=1.6" libtracefs-dev)
isolation_require_pkg(TRACEEVENT "libtraceevent>=1.7" libtraceevent-dev)
# The recorder reads the kernel's HZ from /proc/config.gz.
isolation_require_pkg(ZLIB "zlib>=1.2" zlib1g-dev)

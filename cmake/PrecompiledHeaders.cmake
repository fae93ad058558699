# SPDX-License-Identifier: GPL-2.0-or-later
#
# Precompiled headers for the build's own targets: the standard library,
# Abseil and (for tests) GoogleTest headers nearly every translation unit
# includes are parsed once per build instead of once per file: about 3 s of
# CPU time of each test file's compile on the 2-core reference machine.  The
# library's own headers are not in them: a change to one recompiles only
# what includes it, as without.
#
# One precompiled header per kind of target, reused by every target of that
# kind (REUSE_FROM): the compile flags that make a precompiled header valid
# (language level, sanitizers, -fPIC, the instrumentation definitions) are
# the same across a kind.  Targets that define macros of their own (a data
# directory, a script path) still reuse it: both compilers accept definitions
# beyond the header's, only a conflicting one is an error.
#
# The installed headers and a user's build are untouched: this is the
# library's build only, and ISOLATION_PRECOMPILED_HEADERS=OFF turns it off
# (e.g. for include-what-you-use checks, which a precompiled header hides).
#
# On by default.  With g++ before 13 (Debian 12's g++ 12) only the test
# kind is precompiled, and the targets reusing it are compiled with
# -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread: g++ 12
# does not keep `#pragma GCC diagnostic` in a precompiled header, so the
# pragmas with which libstdc++ silences its own false positives of those
# three warnings are lost, and a -Werror build stopped in <string> (seen in
# idle_select_races.cc at -O3 and host_check_test.cc at -O2).  The library's
# modules, the experiments and isolab are then compiled without a
# precompiled header and keep every warning; clang and g++ >= 13 keep them
# everywhere.
option(ISOLATION_PRECOMPILED_HEADERS "Precompile the std, Abseil and GoogleTest headers the build's files share" ON)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set(isolation_pch_kinds test)
  set(isolation_pch_lost_pragmas -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread)
else()
  set(isolation_pch_kinds library test)
  set(isolation_pch_lost_pragmas)
endif()

set(ISOLATION_PCH_COMMON
  <algorithm> <array> <atomic> <cstdint> <cstdio> <cstdlib> <cstring> <functional> <limits> <map>
  <memory> <optional> <set> <string> <string_view> <utility> <vector>
  <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/strings/str_format.h>
  <absl/strings/string_view.h> <absl/types/span.h>)

# isolation_pch_anchor(<target> <pic> <headers...>): an object library whose
# only job is to own one precompiled header for others to reuse.
function(isolation_pch_anchor target pic)
  set(anchor ${PROJECT_BINARY_DIR}/pch/${target}.cc)
  if(NOT EXISTS ${anchor})
    file(WRITE ${anchor} "// Generated: owner of a precompiled header (cmake/PrecompiledHeaders.cmake).\n")
  endif()
  add_library(${target} OBJECT ${anchor})
  set_property(TARGET ${target} PROPERTY POSITION_INDEPENDENT_CODE ${pic})
  target_link_libraries(${target} PRIVATE isolation_warnings absl::status absl::statusor absl::strings
    absl::str_format absl::span)
  # The definitions every module passes on PUBLIC (lib/CMakeLists.txt): a
  # precompiled header built without them would not match its users.
  if(ISOLATION_INTERLEAVE_POINTS)
    target_compile_definitions(${target} PRIVATE ISOLATION_INTERLEAVE_POINTS=1)
  endif()
  if(ISOLATION_HARDENED)
    target_compile_definitions(${target} PRIVATE ISOLATION_HARDENED=1)
  endif()
  target_precompile_headers(${target} PRIVATE ${ARGN})
  if(isolation_pch_lost_pragmas)
    target_compile_options(${target} PRIVATE ${isolation_pch_lost_pragmas})
  endif()
endfunction()

if(ISOLATION_PRECOMPILED_HEADERS AND library IN_LIST isolation_pch_kinds)
  # The library's modules, the experiments and isolab: position-independent.
  isolation_pch_anchor(isolation_pch_library ON ${ISOLATION_PCH_COMMON})
endif()
if(ISOLATION_PRECOMPILED_HEADERS)
  # Test binaries, the conformance kit, benchmarks: executables and a static
  # archive, not position-independent; GoogleTest and GoogleMock on top.
  if(ISOLATION_BUILD_TESTS OR ISOLATION_BUILD_TESTING_KIT)
    isolation_pch_anchor(isolation_pch_test OFF ${ISOLATION_PCH_COMMON} <gmock/gmock.h> <gtest/gtest.h>)
    target_link_libraries(isolation_pch_test PRIVATE GTest::gmock GTest::gtest)
  endif()
endif()

# isolation_precompiled_headers(<target> library|test): <target> reuses the
# precompiled header of its kind (nothing when the option is off).
function(isolation_precompiled_headers target kind)
  if(NOT ISOLATION_PRECOMPILED_HEADERS)
    return()
  endif()
  if(NOT kind MATCHES "^(library|test)$")
    message(FATAL_ERROR "isolation_precompiled_headers: no precompiled header of kind '${kind}'")
  endif()
  if(NOT kind IN_LIST isolation_pch_kinds OR NOT TARGET isolation_pch_${kind})
    return()  # not precompiled with this compiler (above)
  endif()
  target_precompile_headers(${target} REUSE_FROM isolation_pch_${kind})
  if(isolation_pch_lost_pragmas)
    target_compile_options(${target} PRIVATE ${isolation_pch_lost_pragmas})
  endif()
endfunction()

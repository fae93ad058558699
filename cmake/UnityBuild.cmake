# SPDX-License-Identifier: GPL-2.0-or-later
#
# Unity builds: each target's sources compiled a batch at a time, one
# translation unit per batch, so the standard library, Abseil and GoogleTest
# headers are parsed and their inline code generated once per batch instead
# of once per file.  On the 2-core reference machine with g++ 12 it cut the
# mm_cid module's compile from 80 to 21 CPU seconds (README, "Build time").
#
# Off by default: a change to one file then recompiles its whole batch, and
# the benchmarks measure the library as a user compiles it by default.  The
# README's test command (tools/bootstrap.sh test) and CI's sanitizer stages
# turn it on; CI's TSan stage keeps it off, so every file is still compiled
# on its own there (a missing #include hidden by a batch-mate shows).
#
# What a file may not do in a unity build: define, in an anonymous namespace
# or as `static`, a name another file of its target also defines, or put a
# `using namespace` at file scope that makes a name ambiguous for its
# batch-mates.  The compiler says so; rename, or give the files a
# UNITY_GROUP of their own (lib/testing/CMakeLists.txt).
option(ISOLATION_UNITY_BUILD "Compile each target's sources in batches (unity build): a faster full build" OFF)
if(ISOLATION_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  # g++ takes each batched .cc for a header, and a class there with a member
  # of a type from the .cc's anonymous namespace for a header's class that
  # every includer would define differently (-Wsubobject-linkage).  In a
  # batch that is never so: the warning stays on in the builds without it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-subobject-linkage)
  endif()
  if(NOT DEFINED CMAKE_UNITY_BUILD_BATCH_SIZE)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
  endif()
endif()

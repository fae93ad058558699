# SPDX-License-Identifier: GPL-2.0-or-later
add_library(isolation_warnings INTERFACE)
target_compile_options(isolation_warnings INTERFACE -Wall -Wextra -Wpedantic
  $<$<BOOL:${ISOLATION_WERROR}>:-Werror>)

# Clang's thread-safety analysis checks the lock annotations
# (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, isolation::Mutex in
# include/isolation/core/mutex.h) at compile time; g++ ignores them.  Its
# findings are errors whatever ISOLATION_WERROR says: a lock-discipline
# violation is a bug, not a style warning.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(isolation_tsa_default ON)
else()
  set(isolation_tsa_default OFF)
endif()
option(ISOLATION_THREAD_SAFETY_ANALYSIS
  "Clang only: -Wthread-safety, its findings as errors" ${isolation_tsa_default})
if(ISOLATION_THREAD_SAFETY_ANALYSIS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ISOLATION_THREAD_SAFETY_ANALYSIS needs clang (CMAKE_CXX_COMPILER=clang++)")
  endif()
  target_compile_options(isolation_warnings INTERFACE -Wthread-safety -Werror=thread-safety)
endif()

if(ISOLATION_SANITIZE)
  add_compile_options(-fsanitize=${ISOLATION_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${ISOLATION_SANITIZE})
  if(ISOLATION_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=all)
  endif()
  if(ISOLATION_SANITIZE MATCHES "thread")
    # g++ defines __SANITIZE_THREAD__ under -fsanitize=thread, clang 14 only
    # __has_feature(thread_sanitizer); code that adapts to TSan tests this.
    add_compile_definitions(ISOLATION_TSAN=1)
  endif()
endif()
if(BUILD_SHARED_LIBS)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
endif()

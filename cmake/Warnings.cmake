# SPDX-License-Identifier: GPL-2.0-or-later
add_library(isolation_warnings INTERFACE)
target_compile_options(isolation_warnings INTERFACE -Wall -Wextra -Wpedantic
  $<$<BOOL:${ISOLATION_WERROR}>:-Werror>)

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

# SPDX-License-Identifier: GPL-2.0-or-later
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(san_flags "")
if(SANITIZE)
  set(san_flags "-fsanitize=${SANITIZE}")
endif()
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS} ${san_flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
if(RUN_CTEST)
  # The project's own tests: its variants under the installed kit's suites.
  run(${CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
else()
  run(${WORK_DIR}/build/consumer)
endif()
# The pkg-config files must resolve too.
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig:${prefix}/lib/x86_64-linux-gnu/pkgconfig")
run(pkg-config --cflags --libs --static isolation)
if(RUN_CTEST)
  run(pkg-config --cflags --libs isolation-testing)
endif()

# SPDX-License-Identifier: GPL-2.0-or-later
# Runs EXE with ARGS; fails unless the exit status is EXPECT and, for EXPECT
# 2, something was written to stderr.
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(EXPECT EQUAL 2 AND err STREQUAL "")
  message(FATAL_ERROR "exit status 2 without a message on stderr")
endif()
message(STATUS "exit ${rc}: ${err}")

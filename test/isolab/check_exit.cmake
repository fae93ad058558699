# SPDX-License-Identifier: GPL-2.0-or-later
# Runs EXE with ARGS; fails unless the exit status is EXPECT and, for EXPECT
# 2, something was written to stderr (matching STDERR_MATCH when given: the
# message must name the bad value).
# ARGS arrives with its separators escaped (\;) so that add_test keeps it
# one argument; unescape it into a list.
string(REPLACE "\\;" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(EXPECT EQUAL 2 AND err STREQUAL "")
  message(FATAL_ERROR "exit status 2 without a message on stderr")
endif()
if(DEFINED STDERR_MATCH AND NOT err MATCHES "${STDERR_MATCH}")
  message(FATAL_ERROR "stderr does not name '${STDERR_MATCH}': ${err}")
endif()
message(STATUS "exit ${rc}: ${err}")

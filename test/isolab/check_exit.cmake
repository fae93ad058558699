# SPDX-License-Identifier: GPL-2.0-or-later
# Runs EXE with ARGS; fails unless the exit status is EXPECT and, for EXPECT
# 2, something was written to stderr.  Optional regular expressions:
# OUT_MATCH / ERR_MATCH (alias STDERR_MATCH) must match stdout / stderr,
# OUT_NOT_MATCH must not match stdout.  OUT_FILE: stdout goes there instead.
# ARGS arrives with its separators escaped (\;) so that add_test keeps it
# one argument; unescape it into a list (without this, isolab received one
# word and every exit-2 case passed on "unknown subcommand").
string(REPLACE "\\;" ";" args "${ARGS}")
if(DEFINED OUT_FILE)  # stdout to a file (/dev/full: the write must fail the run)
  execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_FILE ${OUT_FILE} ERROR_VARIABLE err)
  set(out "")
else()
  execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(EXPECT EQUAL 2 AND err STREQUAL "")
  message(FATAL_ERROR "exit status 2 without a message on stderr")
endif()
if(DEFINED STDERR_MATCH)
  set(ERR_MATCH "${STDERR_MATCH}")
endif()
if(EXPECT EQUAL 2 AND err MATCHES "unknown subcommand '[^']*;")
  message(FATAL_ERROR "isolab received its arguments as one word: ${err}")
endif()
if(DEFINED OUT_MATCH AND NOT out MATCHES "${OUT_MATCH}")
  message(FATAL_ERROR "stdout does not match '${OUT_MATCH}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED ERR_MATCH AND NOT err MATCHES "${ERR_MATCH}")
  message(FATAL_ERROR "stderr does not match '${ERR_MATCH}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED OUT_NOT_MATCH AND out MATCHES "${OUT_NOT_MATCH}")
  message(FATAL_ERROR "stdout matches '${OUT_NOT_MATCH}'\nstdout: ${out}")
endif()
message(STATUS "exit ${rc}: ${err}")

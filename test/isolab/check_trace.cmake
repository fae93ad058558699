# SPDX-License-Identifier: GPL-2.0-or-later
# Runs EXE with ARGS (which write a --trace to TRACE), then checks that TRACE
# parses as JSON, has events, and that otherData.truncated is TRUNCATED.
file(REMOVE ${TRACE})
# ARGS arrives with its separators escaped (\;) so that add_test keeps it
# one argument; unescape it into a list.
string(REPLACE "\\;" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}: ${err}")
endif()
file(READ ${TRACE} json)
string(JSON n ERROR_VARIABLE parse_error LENGTH "${json}" traceEvents)
if(parse_error)
  message(FATAL_ERROR "${TRACE} is not valid JSON: ${parse_error}")
endif()
if(n LESS 10)
  message(FATAL_ERROR "${TRACE}: only ${n} events")
endif()
string(JSON truncated GET "${json}" otherData truncated)
if(NOT truncated STREQUAL "${TRUNCATED}")
  message(FATAL_ERROR "${TRACE}: otherData.truncated is ${truncated}, expected ${TRUNCATED}")
endif()
message(STATUS "${TRACE}: ${n} events, truncated ${truncated}")

# SPDX-License-Identifier: GPL-2.0-or-later
#
# cmake -DCHECKER=<check_layering.cmake> -DROOT=<tree> -DTABLE=<table> -DEXPECTED=<file> -P expect_violations.cmake
#
# Runs the layering checker on a tree with known violations: passes only if
# the checker fails and reports exactly the lines of EXPECTED (one
# "<file>:<line>: <rule>" each), no more and no fewer.

cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${ROOT} -DTABLE=${TABLE} -P ${CHECKER}
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(output "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "the checker passed a tree with violations:\n${output}")
endif()

file(STRINGS ${EXPECTED} expected)
set(missing "")
foreach(line IN LISTS expected)
  string(FIND "${output}" "${line}\n" at)
  if(at EQUAL -1)
    string(APPEND missing "  ${line}\n")
  endif()
endforeach()
if(NOT missing STREQUAL "")
  message(FATAL_ERROR "the checker did not report:\n${missing}its output:\n${output}")
endif()

list(LENGTH expected want)
if(NOT output MATCHES "layering: ([0-9]+) violation")
  message(FATAL_ERROR "no violation count in the checker's output:\n${output}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL want)
  message(FATAL_ERROR "the checker reported ${CMAKE_MATCH_1} violations, ${want} expected:\n${output}")
endif()
message("the checker failed as expected, with the ${want} expected violations")

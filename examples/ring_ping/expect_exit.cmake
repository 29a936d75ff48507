# expect_exit.cmake — runs a program and checks its exit code AND its output (a ctest helper:
# PASS_REGULAR_EXPRESSION alone ignores the exit code, WILL_FAIL cannot be combined with it).
#
#   cmake -DPROGRAM=<exe> "-DARGS=--laps|-1" -DEXPECT_EXIT=2 "-DEXPECT_OUTPUT=<regex>" -P expect_exit.cmake
#
# ARGS is split at '|' (';' would split the -D argument itself); an empty field is an empty
# argument. The regex is matched against stdout and stderr together. A hang fails via the
# test's TIMEOUT.
if(NOT DEFINED PROGRAM OR NOT DEFINED EXPECT_EXIT OR NOT DEFINED EXPECT_OUTPUT)
  message(FATAL_ERROR "expect_exit.cmake: PROGRAM, EXPECT_EXIT and EXPECT_OUTPUT are required")
endif()
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${_args}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
set(_all "${_out}${_err}")
if(NOT "${_rc}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit code ${EXPECT_EXIT}, got '${_rc}'; output:\n${_all}")
endif()
if(NOT _all MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "exit code ${_rc} as expected, but the output does not match '${EXPECT_OUTPUT}':\n${_all}")
endif()
message(STATUS "exit code ${_rc} and output as expected")

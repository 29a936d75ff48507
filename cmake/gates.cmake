# cmake/gates.cmake — ctest registrations for kccl's build gates (label `gate`).
# Included from tests/CMakeLists.txt:  include(${PROJECT_SOURCE_DIR}/cmake/gates.cmake)
#
#   gate.shim_rv32               scripts/shim_gate.sh: include/, the EDM/worker kernels and the
#                                example kernels compiled as tt-metal's JIT compiles ERISC and
#                                Tensix kernels, for both tt-metal header layouts, against the stub;
#                                only expected undefined symbols; no heap/exceptions/RTTI/static init
#   gate.shim_rv32_rejects_bad   scripts/shim_gate.sh --self-test: the symbol checker rejects
#                                tests/gate/bad/*.cpp (proves it can fail)
#   gate.shim_stub_rejects_mismatch  scripts/shim_gate.sh --stub-self-test: the stub rejects what
#                                the real tt-metal API rejects (tests/gate/reject/, by the compiler's
#                                error text) and accepts its real spellings (tests/gate/accept/)
#   gate.headers_alone           scripts/check_headers.sh with this build's C++ compiler: include/,
#                                emulation/include/ and the installed testing/include/ (kccl::testing)
#   consumer.find_package        scripts/consumer_test.sh find_package (install + find_package; the
#                                docs' code blocks compiled against the install: scripts/doc_snippets.py)
#   consumer.add_subdirectory    scripts/consumer_test.sh add_subdirectory
#
# Run just these:  ctest -L gate    (consumer tests also carry the label `consumer`)
# The rv32 gate needs riscv64-unknown-elf-g++, picolibc and libstdc++-arm-none-eabi-dev; with
# -DKCCL_GATE_REQUIRE_RV32=OFF the three rv32 tests are reported as skipped when they are missing.
option(KCCL_GATE_REQUIRE_RV32 "Fail (rather than skip) the rv32 shim gate when its toolchain is missing" ON)

find_program(KCCL_BASH bash REQUIRED)
set(_kccl_src "${CMAKE_CURRENT_LIST_DIR}/..")
set(_kccl_gate_dir "${CMAKE_CURRENT_BINARY_DIR}/gate")
if(KCCL_GATE_REQUIRE_RV32)
  set(_kccl_rv32_env "")
else()
  set(_kccl_rv32_env "KCCL_GATE_SKIP_MISSING_TOOLCHAIN=1")
endif()

add_test(NAME gate.shim_rv32
         COMMAND "${KCCL_BASH}" "${_kccl_src}/scripts/shim_gate.sh" --out "${_kccl_gate_dir}/shim")
add_test(NAME gate.shim_rv32_rejects_bad
         COMMAND "${KCCL_BASH}" "${_kccl_src}/scripts/shim_gate.sh" --self-test --out "${_kccl_gate_dir}/self-test")
add_test(NAME gate.shim_stub_rejects_mismatch
         COMMAND "${KCCL_BASH}" "${_kccl_src}/scripts/shim_gate.sh" --stub-self-test --out "${_kccl_gate_dir}/stub-self-test")
set_tests_properties(gate.shim_rv32 gate.shim_rv32_rejects_bad gate.shim_stub_rejects_mismatch PROPERTIES
  LABELS "gate" TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT "${_kccl_rv32_env}")

add_test(NAME gate.headers_alone
         COMMAND "${KCCL_BASH}" "${_kccl_src}/scripts/check_headers.sh")
set_tests_properties(gate.headers_alone PROPERTIES
  LABELS "gate" TIMEOUT 900 ENVIRONMENT "CXX=${CMAKE_CXX_COMPILER}")  # ~80 s alone; a loaded 2-core host can take 4x

foreach(_mode find_package add_subdirectory)
  add_test(NAME consumer.${_mode}
           COMMAND "${KCCL_BASH}" "${_kccl_src}/scripts/consumer_test.sh" ${_mode}
                   --work "${_kccl_gate_dir}/consumer-${_mode}")
  set_tests_properties(consumer.${_mode} PROPERTIES
    LABELS "gate;consumer" TIMEOUT 600
    ENVIRONMENT "CMAKE=${CMAKE_COMMAND};CXX=${CMAKE_CXX_COMPILER};CMAKE_GENERATOR=${CMAKE_GENERATOR}")
endforeach()

unset(_mode)
unset(_kccl_src)
unset(_kccl_gate_dir)
unset(_kccl_rv32_env)

# gate.collectives_compile_fail  scripts/compile_fail.sh: each tests/collectives/compile_fail/*.cpp
#                                must fail to compile with its static_assert sentence (the control
#                                must compile): GCL's operator/type validity rules.
add_test(NAME gate.collectives_compile_fail
         COMMAND "${KCCL_BASH}" "${PROJECT_SOURCE_DIR}/scripts/compile_fail.sh")
set_tests_properties(gate.collectives_compile_fail PROPERTIES
  LABELS "gate" TIMEOUT 900 ENVIRONMENT "CXX=${CMAKE_CXX_COMPILER}")  # ~80 s alone; a loaded 2-core host can take 4x

# The long gates start first (ctest runs the costliest first; a fresh build has no cost data, and
# by default they would start after the ~500 unit cases): their serial steps (configure, install,
# link) then overlap the unit cases instead of ending the run with one core idle.
set_tests_properties(consumer.find_package gate.headers_alone gate.shim_rv32 PROPERTIES COST 10000)
set_tests_properties(gate.shim_stub_rejects_mismatch gate.collectives_compile_fail consumer.add_subdirectory
                     PROPERTIES COST 5000)

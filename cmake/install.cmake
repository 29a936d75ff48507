# cmake/install.cmake — install rules and the CMake package for kccl (included by the root
# CMakeLists.txt when KCCL_INSTALL is ON).
#
# Layout under the prefix:
#   include/kccl/hal/contract.hpp ...        device headers (include/)
#   include/kccl/emulation/...               emulation headers (emulation/include/)
#   include/kccl/testing/...                kccl::testing (testing/include/)
#   include/kccl/bench/...                   Google Benchmark helpers (benchmarks/harness.hpp,
#                                            benchmarks/collective_bench.hpp)
#   share/cmake/kccl/kcclConfig.cmake        find_package(kccl) -> kccl::kccl, kccl::emulation
#   share/cmake/kccl/kcclConfigVersion.cmake SameMinorVersion, architecture-independent
#   share/cmake/kccl/kcclTargets.cmake
#   share/doc/kccl/examples/                 the examples (examples/*/) with a standalone
#                                            CMakeLists.txt (examples/package/): find_package(kccl)
# Both targets are INTERFACE (header-only), so the package lives under share/ rather than lib/.
include(CMakePackageConfigHelpers)

set(_kccl_root "${CMAKE_CURRENT_LIST_DIR}/..")
set(KCCL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/kccl"
    CACHE STRING "Where kcclConfig.cmake is installed, relative to the prefix")

install(DIRECTORY "${_kccl_root}/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kccl"
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
if(EXISTS "${_kccl_root}/emulation/include")
  install(DIRECTORY "${_kccl_root}/emulation/include/"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kccl"
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endif()

# Google Benchmark helpers for users' own benchmarks (<bench/collective_bench.hpp>; they need
# benchmark::benchmark, which the package does not bring).
install(FILES "${_kccl_root}/benchmarks/harness.hpp" "${_kccl_root}/benchmarks/collective_bench.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kccl/bench")

install(DIRECTORY "${_kccl_root}/testing/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kccl"
        FILES_MATCHING PATTERN "*.hpp")

# The examples as a project of their own (CMAKE_INSTALL_DOCDIR/examples, the usual place for a
# package's examples): examples/package/ is its top level. coll_perf and wafer_model are tools of the
# source tree, not examples, and stay out.
set(KCCL_INSTALL_EXAMPLESDIR "${CMAKE_INSTALL_DOCDIR}/examples"
    CACHE STRING "Where the examples are installed, relative to the prefix")
install(DIRECTORY "${_kccl_root}/examples/ring_ping" "${_kccl_root}/examples/pipeline"
                  "${_kccl_root}/examples/ipcq_ring" "${_kccl_root}/examples/mcast_broadcast"
                  "${_kccl_root}/examples/collectives" "${_kccl_root}/examples/tutorial"
                  "${_kccl_root}/examples/machines"
        DESTINATION "${KCCL_INSTALL_EXAMPLESDIR}")
install(FILES "${_kccl_root}/examples/package/CMakeLists.txt" "${_kccl_root}/examples/package/kernels_compile.cpp"
              "${_kccl_root}/examples/README.md"
        DESTINATION "${KCCL_INSTALL_EXAMPLESDIR}")

install(TARGETS kccl kccl_emulation kccl_testing EXPORT kcclTargets)
install(EXPORT kcclTargets
        NAMESPACE kccl::
        FILE kcclTargets.cmake
        DESTINATION "${KCCL_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/kcclConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/kcclConfig.cmake"
  INSTALL_DESTINATION "${KCCL_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/kcclConfigVersion.cmake"
  VERSION "${kccl_VERSION}"
  COMPATIBILITY SameMinorVersion
  ARCH_INDEPENDENT)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kcclConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/kcclConfigVersion.cmake"
        DESTINATION "${KCCL_INSTALL_CMAKEDIR}")

unset(_kccl_root)

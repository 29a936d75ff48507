# cmake/ccache.cmake — use ccache as the compiler launcher when it is installed.
#
# Loaded by the CMakePresets.json configure presets through CMAKE_PROJECT_INCLUDE_BEFORE (so it
# runs at the start of project()), which lets the presets use ccache without requiring it.
# An explicit -DCMAKE_CXX_COMPILER_LAUNCHER=... (even empty) wins; -DKCCL_USE_CCACHE=OFF opts out.
option(KCCL_USE_CCACHE "Use ccache as the compiler launcher when found" ON)
if(KCCL_USE_CCACHE AND NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(KCCL_CCACHE_PROGRAM ccache)
  if(KCCL_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${KCCL_CCACHE_PROGRAM}")
  endif()
endif()

// The executor's instantiations for the end-to-end sweeps (e2e_test.cpp, e2e_multihop_test.cpp,
// wrap_test.cpp), compiled once: see run_standard in e2e_bed.hpp.
//
// KCCL_E2E_LONG_MATRIX=0 (CMake: -DKCCL_TESTS_LONG_MATRIX=OFF, what CI's scripts/test.sh configures
// unless --long) compiles mesh groups and interleaved lanes for bfloat16 sum only: the reducers the
// cases outside [long] run them with. Every other (dtype, operator) of those two executors is used
// only by the [long] sweeps, and they are half of this file's compile (the slowest of the default
// build). Such a run then returns a sentence saying how to build it, so a [long] sweep fails loudly.
#include "e2e_bed.hpp"

#include <type_traits>

#ifndef KCCL_E2E_LONG_MATRIX
#define KCCL_E2E_LONG_MATRIX 1
#endif

namespace kccl::coll::e2e {

namespace {
/// Are the mesh and interleaved executors compiled for reducer Red in this build?
template <class Red>
constexpr bool kMeshAndInterleaved = KCCL_E2E_LONG_MATRIX || std::is_same_v<Red, Reducer<bfloat16, RedOp::sum>>;
}  // namespace

std::string run_standard(Op op, DataType dtype, RedOp redop, const Shape& sh, const cb::GroupOptions& bo,
                         const Run& run, Dirs dirs) {
    return with_case_reducer(op, dtype, redop, [&](auto red) -> std::string {
        using Red = decltype(red);
        if constexpr (!kMeshAndInterleaved<Red>) {
            if (dirs == Dirs::mesh || dirs == Dirs::group_interleaved)
                return std::string("not built: this kccl_tests compiles mesh groups and interleaved lanes for "
                                   "bfloat16 sum only (the [long] sweeps need the rest: configure with "
                                   "-DKCCL_TESTS_LONG_MATRIX=ON, or run scripts/test.sh --long); asked for ") +
                       dtype_name(dtype) + " " + redop_name(redop);
        }
        return run_bed<Red>(sh, bo, run, [dirs](auto& link, const ExecParams& ep, const GroupArgs& g) {
            switch (dirs) {
            case Dirs::ring: execute_any<Red>(link, ep, cb::dirs_of(g)); break;
            case Dirs::mesh:
                if constexpr (kMeshAndInterleaved<Red>) execute_any<Red>(link, ep, cb::mesh_dirs_of(g));
                break;
            case Dirs::group: execute_any<Red>(link, ep, cb::group_dirs_of(g)); break;
            case Dirs::group_interleaved:
                if constexpr (kMeshAndInterleaved<Red>) execute_any_interleaved<Red>(link, ep, cb::group_dirs_of(g));
                break;
            }
        });
    });
}

}  // namespace kccl::coll::e2e

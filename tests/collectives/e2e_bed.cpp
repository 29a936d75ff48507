// The executor's instantiations for the end-to-end sweeps (e2e_test.cpp, e2e_multihop_test.cpp,
// wrap_test.cpp), compiled once: see run_standard in e2e_bed.hpp.
#include "e2e_bed.hpp"

namespace kccl::coll::e2e {

std::string run_standard(Op op, DataType dtype, RedOp redop, const Shape& sh, const cb::GroupOptions& bo,
                         const Run& run, Dirs dirs) {
    return with_case_reducer(op, dtype, redop, [&](auto red) {
        using Red = decltype(red);
        return run_bed<Red>(sh, bo, run, [dirs](auto& link, const ExecParams& ep, const GroupArgs& g) {
            switch (dirs) {
            case Dirs::ring: execute_any<Red>(link, ep, cb::dirs_of(g)); break;
            case Dirs::mesh: execute_any<Red>(link, ep, cb::mesh_dirs_of(g)); break;
            case Dirs::group: execute_any<Red>(link, ep, cb::group_dirs_of(g)); break;
            case Dirs::group_interleaved: execute_any_interleaved<Red>(link, ep, cb::group_dirs_of(g)); break;
            }
        });
    });
}

}  // namespace kccl::coll::e2e

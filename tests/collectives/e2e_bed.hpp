// The end-to-end test bed shared by e2e_test.cpp (ring / line / mesh groups) and
// e2e_multihop_test.cpp (all_pairs groups): one run of a collective on an emulated group, every
// rank's output compared bit for bit with the plain host reference of testing/inputs.hpp
// (written from the operations' definitions, not from the schedules), and the dtype / operator
// lists the sweeps iterate. Each test file keeps its own Case (what it varies) and builds the
// Shape and GroupOptions from it. fidelity_coll_test.cpp uses exec_params for its own kernels.
#pragma once

#include <emulation/collective.hpp>
#include <testing/inputs.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace kccl::coll::e2e {

namespace cb = ::kccl::emu::collective;

inline constexpr DataType kTypes[] = {DataType::f32, DataType::bf16, DataType::f16, DataType::i32,
                                      DataType::u32, DataType::i64, DataType::u64, DataType::boolean};
inline constexpr RedOp kRedOps[] = {RedOp::sum, RedOp::mean, RedOp::prod, RedOp::min, RedOp::max, RedOp::square_add,
                                    RedOp::logical_and, RedOp::logical_or, RedOp::bit_and, RedOp::bit_or, RedOp::bit_xor};

/// What one run needs beyond the shape and the group: the tensor and how to run it.
struct Run {
    uint32_t count = 0;       ///< elements of each rank's input tensor
    uint64_t seed = 1;        ///< inputs (and the adversary's seed)
    RedOp redop = RedOp::sum;
    bool adversarial = true;  ///< adversarial deliveries and dirty L1
};

/// This rank's executor parameters for layout L (the prepared input, square_add, overwrites the
/// input): emulation/collective.hpp's.
using cb::exec_params;

/// Runs `sh` on a bed made from `bo` (its buffer size is computed here). `exec(link, ep, g)` runs
/// this rank's part (the executor with the group's direction map). Returns "" if every rank's
/// output matches the reference bit for bit, "not supported: ..." for a shape validate()
/// rejects, else what failed.
template <class Red, class Exec>
std::string run_bed(const Shape& sh, cb::GroupOptions bo, const Run& run, Exec exec) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    const cb::Layout L = cb::make_layout(sh, run.count, cb::max_chunk_elems(bo, eb));
    if (const char* err = validate(L.shape)) return std::string("not supported: ") + err;
    bo.buffer_bytes = cb::buffer_bytes_for(L, eb);
    cb::Group bed(bo);

    const bool reduces = op_reduces(sh.op);
    const uint64_t seed = run.seed;
    const RedOp redop = run.redop;
    // Elements of the input a rank fills: its whole real tensor (count elements; the grid's
    // padding stays dirty L1). Fragmented inputs (p fragments of L.frag) hold count elements.
    bed.add([L, seed, redop, reduces, exec](auto& hal, auto& link, const GroupArgs& g) -> uint64_t {
        T* in = reinterpret_cast<T*>(hal.l1_ptr(g.input_l1, std::max(L.in_elems, 1u) * eb));
        for (uint32_t i = 0; i < L.count; ++i) in[i] = kccl::testing::input_value<T>(seed, redop, reduces, g.rank, i);
        exec(link, exec_params(L, g), g);
        link.quiesce();
        return 0;
    });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    if (run.adversarial) {
        ro.adversary.enabled = true;
        ro.adversary.seed = seed * 131 + 7;
    }
    const emu::RunReport rep = bed.run(ro);
    if (!rep.ok()) return "run failed: " + rep.summary();
    const auto [nbad, bad] = kccl::testing::check_outputs<T>(L, redop, seed, [&](uint32_t r) { return bed.output(r); });
    if (nbad) return std::to_string(nbad) + " wrong elements:" + bad;
    return "";
}

/// How run_standard hands the group to the executor.
enum class Dirs : uint8_t {
    ring,               ///< execute_any with dirs_of (ring / line groups)
    mesh,               ///< execute_any with mesh_dirs_of (2D meshes and tori)
    group,              ///< execute_any with group_dirs_of (any group shape, all_pairs included)
    group_interleaved,  ///< execute_any_interleaved with group_dirs_of (bidirectional lanes piece by piece)
};

/// run_bed with the plain executor for the reducer of (dtype, operator): defined once in
/// e2e_bed.cpp, so the executor's instantiations for every data type, operator and link are
/// compiled in one translation unit rather than in every test file that sweeps them.
std::string run_standard(Op op, DataType dtype, RedOp redop, const Shape& sh, const cb::GroupOptions& bo,
                         const Run& run, Dirs dirs);

/// Calls f(Reducer{}) with the reducer of (dtype, operator) — any valid operator for an
/// operation that does not reduce (it does not matter there) — and returns what f returned.
template <class F>
std::string with_case_reducer(Op op, DataType dtype, RedOp redop, F f) {
    std::string out = "no reducer";
    const RedOp r = op_reduces(op) ? redop : cb::any_valid_op(dtype);
    cb::with_reducer(dtype, r, [&](auto red) { out = f(red); });
    return out;
}

}  // namespace kccl::coll::e2e

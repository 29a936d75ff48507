// coll_perf.hpp — what the benchmark tool's main (tools/coll_perf.cpp) shares with its per-type
// runners (tools/coll_perf_type.cpp, compiled once per element type so the types compile in
// parallel, and once more as the demo's build, bfloat16 sum over EDM only).
#pragma once

#include <emulation/collective.hpp>
#include <testing/inputs.hpp>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace kccl::coll_perf {

namespace coll = kccl::coll;
namespace emu = kccl::emu;

/// Largest -b / -e / --memcpy size: a rank's largest buffer is at most the size, and the bed
/// takes buffers of at most 1 GiB per rank.
inline constexpr uint64_t kMaxSize = 1ull << 30;

struct Options {
    uint64_t min_bytes = 1024, max_bytes = 1 << 20, factor = 2;
    coll::RedOp redop = coll::RedOp::sum;
    coll::DataType dtype = coll::DataType::f32;
    uint32_t iters = 5, warmup = 1;
    bool check = true;
    std::vector<coll::Op> colls{coll::Op::all_reduce};
    bool method_given = false;
    coll::Method method = coll::Method::ring_bidir;
    coll::Transport transport = coll::Transport::edm;
    std::string topology = "ring";
    bool interleave = false;  ///< --lanes interleaved: execute_any_interleaved
    uint32_t ranks = 8;
    uint32_t message = 16384, slots = 4;
    uint32_t repeat = 1;
    std::vector<uint64_t> memcpy_sizes;
    bool adversarial = false;
    uint64_t adv_seed = 0;
    emu::Engine engine = emu::Engine::fibers;
    std::string timing;      ///< "", "wormhole" or "wafer"
    std::string trace_path;  ///< --trace FILE ("" : none)
    bool cpu_clock = false;  ///< --clock cpu
};

/// One row's outcome.
struct Result {
    double time_us = 0;      ///< host time per iteration (wall, or the thread's CPU time with --clock cpu)
    double model_us = 0;     ///< timed engine: modelled time per iteration (µs)
    double model_ticks = 0;  ///< the same in the model's ticks
    uint64_t wrong = 0;
    std::string first_wrong;
    std::string error;
};

/// One row: `op` by `method` on `count` elements per rank of the options' type, operator `redop`.
/// `trace`: if not null, the first repeat's run records into it. Never throws: errors are in
/// Result::error.
using RowRunner = Result (*)(const Options& o, coll::RedOp redop, coll::Op op, coll::Method method, uint64_t count,
                             emu::Trace* trace);

Result run_f32(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_bf16(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_f16(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_i32(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_u32(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_i64(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_u64(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);
Result run_bool(const Options&, coll::RedOp, coll::Op, coll::Method, uint64_t, emu::Trace*);

/// Host time in seconds: wall time, or (cpu) the calling thread's CPU time.
inline double now_s(bool cpu) {
    if (cpu) {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The bed's options for the tool's options (buffer sizes are the row's).
inline emu::collective::GroupOptions bed_options(const Options& o) {
    emu::collective::GroupOptions bo;
    bo.transport = o.transport;
    bo.shape = o.topology == "line"        ? coll::GroupShape::line
             : o.topology == "all_pairs" ? coll::GroupShape::all_pairs
                                         : coll::GroupShape::ring;
    bo.t3000 = o.topology == "t3000";
    bo.ranks = o.ranks;
    bo.message_bytes = o.message;
    bo.slots = o.slots;
    return bo;
}

/// The row's shape (root 0; send_recv from rank 0 to the last rank).
inline coll::Shape row_shape(const Options& o, coll::Op op, coll::Method method) {
    coll::Shape sh;
    sh.op = op;
    sh.method = method;
    sh.topo = o.topology == "line" ? coll::Topology::line : coll::Topology::ring;
    sh.ranks = o.ranks;
    sh.root = 0;
    sh.peer = o.ranks > 1 ? o.ranks - 1 : 0;
    return sh;
}

}  // namespace kccl::coll_perf

// A collective on the emulation with bench_collective (benchmarks/collective_bench.hpp): host
// time per collective and the Wormhole model's time, GB/s and share of the Ethernet line rate.
// all_reduce of bfloat16 (sum) over EDM on a ring of 8 chips, 8 KiB and 512 KiB.
#include "collective_bench.hpp"

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

void BM_coll_all_reduce_bf16_edm8(benchmark::State& state) {
    kc::GroupOptions g;
    g.transport = Transport::edm;
    g.ranks = 8;
    g.message_bytes = 16384;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = uint32_t(state.range(0)) / 2;
    std::vector<std::vector<bfloat16>> in(8, std::vector<bfloat16>(c.count, bfloat16::from_float(1.f)));
    kccl::bench::bench_collective<Reducer<bfloat16, RedOp::sum>, kc::link_edm>(state, g, c, in);
}

}  // namespace

BENCHMARK(BM_coll_all_reduce_bf16_edm8)->Arg(8 << 10)->Arg(512 << 10)->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)
    ->Unit(benchmark::kMicrosecond);

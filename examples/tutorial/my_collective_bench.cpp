// Tutorial step 3 (docs/tutorial.md): a Google Benchmark of a collective on the emulation with
// the package's helper <bench/collective_bench.hpp>. Counters: host time per collective (what the
// emulator takes on this machine) and, from the Wormhole timing model, modelled_us, modelled GB/s
// and the share of one Ethernet link's line rate.
#include <bench/collective_bench.hpp>

#include <vector>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

static void BM_all_reduce(benchmark::State& state) {
    kc::GroupOptions g;
    g.transport = Transport::edm;
    g.ranks = 4;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = uint32_t(state.range(0));
    const std::vector<std::vector<float>> in(4, std::vector<float>(c.count, 1.f));
    kccl::bench::bench_collective<Reducer<float, RedOp::sum>, kc::link_edm>(state, g, c, in);
}
BENCHMARK(BM_all_reduce)->Arg(1024)->Arg(16384)->UseManualTime()->Iterations(4)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();

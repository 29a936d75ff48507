// Tutorial step 3 (docs/tutorial.md): a Google Benchmark of a collective on the emulation.
// Counters: host_us (what the emulator took per collective on this machine) and, from a run
// with the Wormhole timing model, modelled_us (the modelled device time of the whole run,
// set-up included) and modelled GB/s.
#include <emulation/collective.hpp>

#include <benchmark/benchmark.h>

#include <vector>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

static void BM_all_reduce(benchmark::State& state) {
    const uint32_t ranks = 4, count = uint32_t(state.range(0));
    kc::GroupOptions g;
    g.transport = Transport::edm;
    g.ranks = ranks;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = count;
    const std::vector<std::vector<float>> in(ranks, std::vector<float>(count, 1.f));
    double host_us = 0;
    for (auto _ : state) {
        const auto r = kc::run_collective<Reducer<float, RedOp::sum>, kc::link_edm>(g, c, in);
        if (!r.ok()) {
            state.SkipWithError(r.summary().c_str());
            return;
        }
        host_us += r.host_us;
    }
    auto model = kccl::emu::wormhole_model();
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.timing = model.get();
    const auto timed = kc::run_collective<Reducer<float, RedOp::sum>, kc::link_edm>(g, c, in, ro);
    state.counters["host_us"] = host_us / double(state.iterations());
    state.counters["modelled_us"] = timed.modelled_us;
    state.counters["modelled_GBps"] = timed.modelled_us > 0 ? double(count) * 4 / (timed.modelled_us * 1e3) : 0;
    state.SetBytesProcessed(int64_t(state.iterations()) * count * 4);
}
BENCHMARK(BM_all_reduce)->Arg(1024)->Arg(16384)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();

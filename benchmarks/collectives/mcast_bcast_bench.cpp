// Broadcast on a Tensix grid of one chip, modelled time on the Wormhole timing model: the NoC
// multicast broadcast (collectives/mcast_broadcast.hpp, the root injects each chunk once; staged:
// 4 slots of 4 KiB, each receiver copies out; direct: straight into the outputs) against
// the method table's broadcasts over IPCQ queues: the chain (ring_meet_middle on the IPCQ ring
// group) and the binomial tree (all_pairs group: at most 9 ranks, so only at 8). Ranks sit on an
// 8-wide grid, rank r at (r % 8, r / 8): 8 ranks are a row, 16 a 8 x 2 and 64 a 8 x 8 rectangle.
// Counters: modelled_us (one broadcast: (makespan of warm-up + 4 broadcasts - warm-up alone) / 4),
// modelled_GBps. The host time is the emulator's, not the hardware's.
//
//   ./build/default/benchmarks/kccl_bench --benchmark_filter=coll/bcast_grid
#include "collective_bench.hpp"

#include <collectives/host/mcast_plan.hpp>

namespace {

namespace kc = kccl::emu::collective;
namespace ch = kccl::coll::host;
using namespace kccl::coll;

constexpr uint32_t kMsg = 4096;  // IPCQ slot / multicast chunk
constexpr uint32_t kSlots = 4;

void bcast_method(benchmark::State& state, GroupShape shape, Method m) {
    kc::GroupOptions g;
    g.transport = Transport::ipcq;
    g.shape = shape;
    g.ranks = uint32_t(state.range(0));
    g.message_bytes = kMsg;
    g.slots = kSlots;
    kc::Collective c;
    c.op = Op::broadcast;
    c.method = m;
    c.count = uint32_t(state.range(1)) / 4;
    std::vector<std::vector<float>> in(g.ranks, std::vector<float>(c.count, 1.f));
    kccl::bench::bench_collective<Reducer<float, RedOp::sum>>(state, g, c, in);
}

/// The multicast broadcast: every rank runs `warmup` + `iters` broadcasts from rank 0.
void bcast_mcast(benchmark::State& state, uint32_t slots) {
    const uint32_t p = uint32_t(state.range(0)), bytes = uint32_t(state.range(1));
    const uint32_t w = 8, h = (p + w - 1) / w;
    kccl::emu::ChipSpec cs;
    cs.grid_w = w, cs.grid_h = h, cs.eth_cores = 1;
    const uint32_t in = 0x10000, out = in + bytes, plan_l1 = (out + bytes + 15) / 16 * 16;
    cs.worker_l1_bytes = (plan_l1 + kSlots * kMsg + 4096 + 0xFFFF) & ~0xFFFFu;
    cs.eth_l1_bytes = 16 * 1024;
    std::vector<ch::Core> workers;
    for (uint32_t r = 0; r < p; ++r) workers.push_back({0, r % w, r / w});
    ch::McastBcastSpec s;
    s.workers = workers;
    s.l1 = {plan_l1, cs.worker_l1_bytes, 0};
    s.chunk_bytes = kMsg;
    s.slots = slots;
    const ch::McastBcastPlan plan = ch::plan_mcast_broadcast(s);
    auto run = [&](uint32_t iters, kccl::emu::RunOptions ro) {
        kccl::emu::Cluster c(kccl::emu::topology::single_chip(cs));
        kccl::emu::Launcher L(c);
        for (const auto& iw : plan.init_words) L.init_word(c.chip(0).worker(iw.core.x, iw.core.y), iw.addr, iw.value);
        for (const auto& r : workers)
            L.add(c.chip(0).worker(r.x, r.y), [iters, in, out, bytes](auto& hal) {
                const McastBcastArgs a = load_mcast_bcast_args(hal, 0);
                for (uint32_t i = 0; i < 1 + iters; ++i) mcast_broadcast(hal, a, 0, in, out, bytes);
            }, plan.args);
        return L.run(ro);
    };
    kccl::emu::RunOptions ro;
    ro.watchdog = kccl::bench::kWatchdog;
    ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
    for (auto _ : state) {
        const auto t0 = kccl::bench::Clock::now();
        const kccl::emu::RunReport rep = run(4, ro);
        state.SetIterationTime(double(kccl::bench::elapsed_ns(t0, kccl::bench::Clock::now())) * 1e-9);
        if (!rep.ok()) {
            state.SkipWithError(rep.summary().c_str());
            return;
        }
    }
    auto tm = kccl::emu::wormhole_model();
    ro.timing = tm.get();
    const kccl::emu::RunReport with = run(4, ro), without = run(0, ro);
    if (!with.ok() || !without.ok()) {
        state.SkipWithError((!with.ok() ? with : without).summary().c_str());
        return;
    }
    const double us = double(with.makespan - without.makespan) / 4 / with.ticks_per_second * 1e6;
    kccl::bench::set_modelled_counters(state, us, bytes, 1.0, false);
}

void grid_args(benchmark::internal::Benchmark* b) {
    for (int64_t p : {8, 16, 64})
        for (int64_t bytes : {4 << 10, 64 << 10}) b->Args({p, bytes});
}

}  // namespace

BENCHMARK_CAPTURE(bcast_mcast, staged, kSlots)->Name("coll/bcast_grid/multicast_staged")->Apply(grid_args)
    ->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bcast_mcast, direct, 0)->Name("coll/bcast_grid/multicast_direct")->Apply(grid_args)
    ->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bcast_method, chain, GroupShape::ring, Method::ring_meet_middle)->Name("coll/bcast_grid/chain")
    ->Apply(grid_args)->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bcast_method, tree, GroupShape::all_pairs, Method::binomial_tree)->Name("coll/bcast_grid/tree")
    ->Args({8, 4 << 10})->Args({8, 64 << 10})->UseManualTime()->Iterations(kccl::bench::kEmulatedRuns)
    ->Unit(benchmark::kMicrosecond);

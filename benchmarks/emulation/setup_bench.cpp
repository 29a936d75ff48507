// benchmarks/emulation/setup_bench.cpp — the host-side cost per core of setting up and launching
// a run: one chip of rows x cols workers, an IPCQ torus plan over them (the mesh of
// benchmarks/emulation/mesh_scenario.hpp), installed, one kernel per core, one run.
//
// Swept (fiber engine, FIFO, untimed; a fresh cluster per iteration):
//   emulation/setup/32x32 .. 256x256    empty kernels: setting up and launching only
//   emulation/setup/64x64/mesh1         the mesh kernel, one round (four 64 B messages per core)
// Reports (per core, averaged over the iterations):
//   cluster_ns, plan_ns, install_ns, add_ns   building the cluster, the IPCQ plan (topology and
//                                             build_plan), installing it, Launcher::add
//   run_ns                                    Launcher::run (fibers made, kernels run, report)
//   total_ns                                  all of the above (also the manual time per core:
//                                             the benchmark's time column is per run)
//   rss_bytes                                 resident memory the run added, over the cores
// Linear scaling shows as the same per-core figures at every size.
//
// The same measurement at any size, outside Google Benchmark (a full WSE-2 sized wafer of
// 750 x 994 = 745,500 cores needs ~12 GB; run it alone):
//   g++ -std=c++20 -O2 -DNDEBUG -DKCCL_SETUP_DRIVER -Iinclude -Iemulation/include -Ibenchmarks
//       benchmarks/emulation/setup_bench.cpp -o /tmp/setup_driver -lpthread -latomic
//   /usr/bin/time -v /tmp/setup_driver 750 994 1     # rows cols rounds (0 = empty kernels)
#include "emulation/mesh_scenario.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace kccl::bench::setup {

namespace sc = kccl::scenario;
namespace ih = kccl::ipcq::host;

struct Phases {
    double cluster = 0, plan = 0, install = 0, add = 0, run = 0;  ///< seconds
    uint64_t rss = 0;     ///< resident bytes added (the process's peak may be higher)
    uint64_t bad = 0;     ///< cores whose kernel failed or saw a wrong word
    bool ok = false;
    std::string summary;  ///< the run's summary when it failed
    double total() const { return cluster + plan + install + add + run; }
};

/// Builds and runs a rows x cols mesh once; `rounds` = 0 runs empty kernels.
inline Phases measure(uint32_t rows, uint32_t cols, uint32_t rounds) {
    using clk = std::chrono::steady_clock;
    auto lap = [](clk::time_point& t) {
        const auto now = clk::now();
        const double s = std::chrono::duration<double>(now - t).count();
        t = now;
        return s;
    };
    Phases ph;
    const uint64_t rss0 = sc::rss_bytes();
    auto t = clk::now();
    emu::ChipSpec c;
    c.grid_w = cols;
    c.grid_h = rows;
    c.eth_cores = 0;
    c.worker_l1_bytes = 32 * 1024;
    c.eth_l1_bytes = 16;
    emu::Cluster cluster(emu::topology::custom(1, c));
    ph.cluster = lap(t);
    const uint32_t n = rows * cols;
    std::vector<ih::CoreXY> xy;
    xy.reserve(n);
    for (uint32_t r = 0; r < n; ++r) xy.push_back({r % cols, r / cols});
    ih::QueueConfig qc;
    qc.n_slots = 4;
    qc.slot_size = 64;
    ih::MemoryConfig mem;
    mem.block_l1 = sc::kMeshBlock;
    mem.l1_bytes = c.worker_l1_bytes;
    const auto plan = ih::build_plan(ih::mesh_2d(rows, cols), xy, qc, mem);
    ph.plan = lap(t);
    ih::install_on(cluster, 0, plan);
    ph.install = lap(t);
    emu::Launcher launch(cluster);
    for (uint32_t r = 0; r < n; ++r) {
        const emu::CoreCoord core = cluster.chip(0).worker(r % cols, r / cols);
        if (rounds == 0)
            launch.add(core, [](auto&) {}, plan.runtime_args(r));
        else
            launch.add(core, [r, rows, cols, rounds](auto& hal) { return sc::mesh_kernel(hal, r, rows, cols, rounds, 64); },
                       plan.runtime_args(r));
    }
    ph.add = lap(t);
    emu::RunOptions o;
    o.watchdog = std::chrono::milliseconds(600000);
    const emu::RunReport rep = launch.run(o);
    ph.run = lap(t);
    ph.rss = sc::rss_bytes() - rss0;
    ph.ok = rep.ok() && rep.cores.size() == n;
    for (const auto& x : rep.cores) ph.bad += x.status != emu::CoreStatus::ok || x.value != 0;
    if (!ph.ok) ph.summary = rep.summary().substr(0, 2000);
    return ph;
}

}  // namespace kccl::bench::setup

#if defined(KCCL_SETUP_DRIVER)
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s rows cols [rounds]   (rounds 0 = empty kernels; default 1)\n", argv[0]);
        return 2;
    }
    const uint32_t rows = uint32_t(std::atoi(argv[1])), cols = uint32_t(std::atoi(argv[2]));
    const uint32_t rounds = argc > 3 ? uint32_t(std::atoi(argv[3])) : 1;
    const auto ph = kccl::bench::setup::measure(rows, cols, rounds);
    const double n = double(rows) * cols;
    std::printf("%ux%u (%.0f cores), %u rounds: cluster %.2f s, plan %.2f s, install %.2f s, add %.2f s, run %.2f s, "
                "total %.2f s = %.2f us per core; resident +%.0f MB = %.0f B per core; %s, %llu bad cores\n",
                rows, cols, n, rounds, ph.cluster, ph.plan, ph.install, ph.add, ph.run, ph.total(), ph.total() / n * 1e6,
                double(ph.rss) / 1e6, double(ph.rss) / n, ph.ok ? "ok" : "FAILED", static_cast<unsigned long long>(ph.bad));
    if (!ph.ok) std::fputs(ph.summary.c_str(), stderr);
    return ph.ok && ph.bad == 0 ? 0 : 1;
}
#else
#include <benchmark/benchmark.h>

namespace {

void setup_and_launch(benchmark::State& state, uint32_t rows, uint32_t cols, uint32_t rounds) {
    namespace su = kccl::bench::setup;
    su::Phases sum;
    uint64_t iters = 0;
    for (auto _ : state) {
        su::Phases ph;
        try {
            ph = su::measure(rows, cols, rounds);
        } catch (const std::exception& e) {
            state.SkipWithError((std::string("setup threw: ") + e.what()).c_str());
            return;
        }
        if (!ph.ok || ph.bad) {
            state.SkipWithError(("run failed: " + ph.summary).c_str());
            return;
        }
        state.SetIterationTime(ph.total());
        sum.cluster += ph.cluster, sum.plan += ph.plan, sum.install += ph.install, sum.add += ph.add, sum.run += ph.run;
        sum.rss = std::max(sum.rss, ph.rss);
        ++iters;
    }
    const double per = 1e9 / (double(iters) * rows * cols);
    state.counters["cores"] = double(rows) * cols;
    state.counters["cluster_ns"] = sum.cluster * per;
    state.counters["plan_ns"] = sum.plan * per;
    state.counters["install_ns"] = sum.install * per;
    state.counters["add_ns"] = sum.add * per;
    state.counters["run_ns"] = sum.run * per;
    state.counters["total_ns"] = sum.total() * per;
    state.counters["rss_bytes"] = double(sum.rss) / (double(rows) * cols);
}

}  // namespace

BENCHMARK_CAPTURE(setup_and_launch, 32x32, 32, 32, 0)->Name("emulation/setup/32x32")->UseManualTime()->Iterations(8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(setup_and_launch, 64x64, 64, 64, 0)->Name("emulation/setup/64x64")->UseManualTime()->Iterations(4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(setup_and_launch, 128x128, 128, 128, 0)->Name("emulation/setup/128x128")->UseManualTime()->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(setup_and_launch, 256x256, 256, 256, 0)->Name("emulation/setup/256x256")->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(setup_and_launch, 64x64_mesh1, 64, 64, 1)->Name("emulation/setup/64x64/mesh1")->UseManualTime()->Iterations(4)->Unit(benchmark::kMillisecond);
#endif

// benchmarks/mpi/coll_vs_mpi.cpp — kccl's collectives on the emulation beside Open MPI's (or any
// MPI's) on the same machine and inputs, ratios printed from one run. Built only when CMake finds
// MPI for C (target kccl_coll_vs_mpi, with the MPI program kccl_mpi_coll from mpi_coll.c);
// scripts/coll_vs_mpi.sh builds both, runs this with repetitions and prints the medians.
//
//   coll_vs_mpi/<all_reduce|all_gather>/<ipcq|edm>/<fibers|threads>/<MiB>
//     float sum, 8 ranks on a ring, sizes 1..64 MiB (nccl-tests' size: the tensor for
//     all_reduce, the gathered output for all_gather), the method the group chooses
//     (choose_method), 16 KiB IPCQ slots / EDM packets, 4 slots.
//   One benchmark iteration = one launch in which every rank runs a warm-up collective and then
//   `iters` timed ones (iters = 16 MiB / size, within 2..8); its time is host wall time from the
//   first rank starting the timed loop to the last finishing it, / iters. Right after each launch
//   the MPI program runs the same op and size (`mpirun -np 8 kccl_mpi_coll OP SIZE SIZE iters 1`),
//   so the pair sees the same machine state.
//   Counters: busGBps (the emulation's bus bandwidth, nccl-tests' factor: all_reduce 2(p-1)/p,
//   all_gather (p-1)/p), mpi_busGBps (the paired MPI run's), vs_mpi = busGBps / mpi_busGBps
//   (per repetition; --benchmark_repetitions gives their median), method (its enum value).
//   The floor, measured in the same run: the data movement any algorithm needs for this op and
//   size, done by plain loops on as many host threads as the engine runs kernels on at once (the
//   fiber engine: one; the thread engine: every CPU), with no protocol at all. all_gather: every
//   rank's output receives the other ranks' pieces (memcpy, (p-1) x size/p per rank); all_reduce:
//   every rank sums its piece of the p inputs (a vectorised loop over blocks) and the pieces are
//   copied to every other rank's output. floor_busGBps is its busbw (best of two timed runs after a
//   warm-up), vs_floor = busGBps / floor_busGBps (how much of the floor the emulation reaches),
//   ceiling_vs_mpi = floor_busGBps / mpi_busGBps: the most any emulation on that engine could
//   reach against MPI on this machine. Below 2, twice MPI's busbw is out of reach there.
//   The data-path floor: the same loops, but every received byte copied as many times as the
//   transport's path must (IPCQ, whose ring all_gather puts straight into place: once, the floor
//   itself; EDM: three times, through two 16 KiB staging buffers, as worker -> EDM, Ethernet,
//   EDM -> worker), staging buffers cache-resident, so it bounds the emulation from above:
//   path_floor_busGBps, path_ceiling_vs_mpi = path_floor_busGBps / mpi_busGBps.
//   Environment: KCCL_MPIRUN (default: the mpiexec CMake found), KCCL_MPI_COLL (default: the
//   built kccl_mpi_coll), KCCL_MPIRUN_ARGS (default "--oversubscribe": 8 ranks on fewer cores).
//   As root Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
#include "harness.hpp"

#include <emulation/collective.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef KCCL_MPIEXEC
#define KCCL_MPIEXEC "mpirun"
#endif
#ifndef KCCL_MPI_COLL_PATH
#define KCCL_MPI_COLL_PATH "kccl_mpi_coll"
#endif

namespace {

namespace kc = kccl::emu::collective;
using namespace kccl::coll;
using kccl::bench::Clock;

constexpr uint32_t kRanks = 8;

std::string env_or(const char* name, const char* dflt) {
    const char* v = std::getenv(name);
    return v && *v ? v : dflt;
}

/// The MPI program's bus bandwidth for `op` at `bytes` (GB/s), or a negative value if it failed.
double mpi_bus_gbps(const char* op, uint64_t bytes, uint32_t iters) {
    const std::string cmd = env_or("KCCL_MPIRUN", KCCL_MPIEXEC) + " -np " + std::to_string(kRanks) + " " +
                            env_or("KCCL_MPIRUN_ARGS", "--oversubscribe") + " " + env_or("KCCL_MPI_COLL", KCCL_MPI_COLL_PATH) +
                            " " + op + " " + std::to_string(bytes) + " " + std::to_string(bytes) + " " +
                            std::to_string(iters) + " 1 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return -1;
    char line[512];
    double gbps = -1;
    while (std::fgets(line, sizeof line, f)) {
        char name[32];
        unsigned long long b = 0;
        double us = 0, g = 0;
        if (std::sscanf(line, "mpi %31s %llu %lf %lf", name, &b, &us, &g) == 4 && b == bytes) gbps = g;
    }
    return pclose(f) == 0 ? gbps : -1;
}

/// nccl-tests' bus-bandwidth factor of `op` on kRanks ranks.
double bus_factor(Op op) { return op == Op::all_reduce ? 2.0 * (kRanks - 1) / kRanks : double(kRanks - 1) / kRanks; }

/// Bytes of the staging buffers of the data-path floor (one EDM packet, the benchmark's size).
constexpr uint64_t kStageBytes = 16384;

/// The floor of `op` at `bytes` on `threads` host threads (see the header): its busbw in GB/s.
/// `hops`: copies each received byte makes (1: straight into place; 3: EDM's data path, through
/// two staging buffers of kStageBytes on the way, as worker -> EDM, Ethernet, EDM -> worker).
double floor_bus_gbps(Op op, uint64_t bytes, unsigned threads, unsigned hops = 1) {
    const uint64_t piece = bytes / kRanks;  // bytes of one rank's piece (all_gather: its input)
    const uint64_t in_bytes = op == Op::all_reduce ? bytes : piece;
    std::vector<std::unique_ptr<float[]>> in(kRanks), out(kRanks);
    for (uint32_t r = 0; r < kRanks; ++r) {
        in[r].reset(new float[in_bytes / 4]);
        out[r].reset(new float[bytes / 4]);
        for (uint64_t i = 0; i < in_bytes / 4; ++i) in[r][i] = float(r + i % 7);
        std::memset(out[r].get(), 0, bytes);
    }
    const uint64_t pe = piece / 4;  // elements of a piece
    // staging buffers per rank for hops > 1 (each rank runs on one thread at a time)
    std::vector<std::unique_ptr<uint8_t[]>> stage(kRanks);
    for (auto& st : stage) st.reset(new uint8_t[2 * kStageBytes]);
    // n bytes src -> dst in `hops` copies: through the rank's staging buffers, a block at a time
    auto move = [&](uint32_t r, void* dst, const void* src, uint64_t n) {
        if (hops <= 1) return (void)std::memcpy(dst, src, n);
        uint8_t* a = stage[r].get();
        uint8_t* b = a + kStageBytes;
        for (uint64_t o = 0; o < n; o += kStageBytes) {
            const uint64_t k = std::min(kStageBytes, n - o);
            std::memcpy(a, static_cast<const uint8_t*>(src) + o, k);
            for (unsigned h = 2; h < hops; ++h) std::memcpy(h % 2 ? a : b, h % 2 ? b : a, k);
            std::memcpy(static_cast<uint8_t*>(dst) + o, (hops - 1) % 2 ? a : b, k);  // copy hops - 1 left it there
        }
    };
    auto reduce_piece = [&](uint32_t r) {  // out[r][piece r] = sum over q of in[q][piece r]
        constexpr uint64_t kBlock = 1024;
        alignas(64) float acc[kBlock];
        alignas(64) float got[kBlock];
        for (uint64_t b = 0; b < pe; b += kBlock) {
            const uint64_t n = std::min(kBlock, pe - b);
            const float* s0 = in[r].get() + r * pe + b;  // the rank's own part, local
            for (uint64_t i = 0; i < n; ++i) acc[i] = s0[i];
            for (uint32_t q = 0; q < kRanks; ++q) {
                if (q == r) continue;
                const float* s = in[q].get() + r * pe + b;
                if (hops > 1) {  // a received part: over the data path first
                    move(r, got, s, n * 4);
                    s = got;
                }
                for (uint64_t i = 0; i < n; ++i) acc[i] += s[i];
            }
            std::memcpy(out[r].get() + r * pe + b, acc, n * 4);
        }
    };
    auto gather_into = [&](uint32_t r) {  // the other ranks' pieces into rank r's output
        for (uint32_t q = 0; q < kRanks; ++q)
            if (q != r) move(r, out[r].get() + q * pe, op == Op::all_reduce ? out[q].get() + q * pe : in[q].get(), piece);
    };
    auto run_ranks = [&](auto&& fn) {  // ranks split over the threads
        if (threads <= 1) {
            for (uint32_t r = 0; r < kRanks; ++r) fn(r);
            return;
        }
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                for (uint32_t r = t; r < kRanks; r += threads) fn(r);
            });
        for (auto& t : ts) t.join();
    };
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {  // the first is the warm-up
        const auto t0 = Clock::now();
        if (op == Op::all_reduce) run_ranks(reduce_piece);
        run_ranks(gather_into);
        const double ns = double(kccl::bench::elapsed_ns(t0, Clock::now()));
        if (rep > 0) best = std::max(best, double(bytes) / ns * bus_factor(op));
    }
    benchmark::DoNotOptimize(out[kRanks - 1][pe]);
    return best;
}

void coll_vs_mpi(benchmark::State& state, Op op, Transport tr, kccl::emu::Engine engine, uint64_t bytes) {
    using Red = Reducer<float, RedOp::sum>;
    kc::GroupOptions g;
    g.transport = tr;
    g.ranks = kRanks;
    g.message_bytes = 16384;
    kc::Collective c;
    c.op = op;
    c.count = uint32_t(op == Op::all_reduce ? bytes / 4 : bytes / 4 / kRanks);
    const kc::Layout L = kc::plan_collective(g, c, 4);
    g.buffer_bytes = kc::buffer_bytes_for(L, 4);
    kc::Group grp(g);
    const uint32_t iters = uint32_t(std::clamp<uint64_t>((16u << 20) / bytes, 2, 8));
    std::vector<Clock::time_point> t0(kRanks), t1(kRanks);
    grp.add([&](auto& hal, auto& link, const GroupArgs& ga) -> uint64_t {
        float* in = reinterpret_cast<float*>(hal.l1_ptr(ga.input_l1, std::max(L.in_elems, 1u) * 4));
        for (uint32_t i = 0; i < L.count; ++i) in[i] = float(ga.rank + i % 7);
        const ExecParams ep = kc::exec_params(L, ga, 0);
        const auto dirs = kc::group_dirs_of(ga);
        execute_any<Red>(link, ep, dirs);  // warm-up
        t0[ga.rank] = Clock::now();
        for (uint32_t i = 0; i < iters; ++i) execute_any<Red>(link, ep, dirs);
        t1[ga.rank] = Clock::now();
        link.quiesce();
        return 0;
    });
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.watchdog = std::chrono::milliseconds(120000);
    ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
    ro.engine = engine;
    ro.wait = kccl::bench::wait_policy();
    const double bus = bus_factor(op);
    const char* opname = op == Op::all_reduce ? "all_reduce" : "all_gather";
    const unsigned floor_threads = engine == kccl::emu::Engine::fibers ? 1u : std::max(1u, std::thread::hardware_concurrency());
    double gbps_sum = 0, mpi_sum = 0, floor_sum = 0, path_sum = 0;
    const unsigned hops = tr == Transport::edm ? 3u : 1u;  // the transport's copies per received byte
    uint64_t runs = 0;
    for (auto _ : state) {
        const kccl::emu::RunReport rep = grp.run(ro);
        if (!rep.ok()) {
            state.SkipWithError(rep.summary().c_str());
            return;
        }
        const double ns = double(kccl::bench::elapsed_ns(*std::min_element(t0.begin(), t0.end()), *std::max_element(t1.begin(), t1.end()))) / iters;
        state.SetIterationTime(ns * 1e-9);
        gbps_sum += double(bytes) / ns * bus;
        state.PauseTiming();
        const double m = mpi_bus_gbps(opname, bytes, iters);
        state.ResumeTiming();
        if (m <= 0) {
            state.SkipWithError(("the MPI run failed (" + env_or("KCCL_MPIRUN", KCCL_MPIEXEC) + " " + env_or("KCCL_MPI_COLL", KCCL_MPI_COLL_PATH) +
                                 "; as root set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)").c_str());
            return;
        }
        mpi_sum += m;
        state.PauseTiming();
        const double fl = floor_bus_gbps(op, bytes, floor_threads);
        floor_sum += fl;
        path_sum += hops > 1 ? floor_bus_gbps(op, bytes, floor_threads, hops) : fl;
        state.ResumeTiming();
        ++runs;
    }
    if (!runs) return;
    state.SetBytesProcessed(int64_t(runs * bytes));
    state.counters["busGBps"] = gbps_sum / double(runs);
    state.counters["mpi_busGBps"] = mpi_sum / double(runs);
    state.counters["vs_mpi"] = gbps_sum / mpi_sum;
    state.counters["floor_busGBps"] = floor_sum / double(runs);
    state.counters["vs_floor"] = gbps_sum / floor_sum;
    state.counters["ceiling_vs_mpi"] = floor_sum / mpi_sum;
    state.counters["path_floor_busGBps"] = path_sum / double(runs);
    state.counters["path_ceiling_vs_mpi"] = path_sum / mpi_sum;
    state.counters["method"] = double(int(L.shape.method));
}

const int registered = [] {
    for (Op op : {Op::all_reduce, Op::all_gather})
        for (Transport tr : {Transport::ipcq, Transport::edm})
            for (kccl::emu::Engine e : {kccl::emu::Engine::fibers, kccl::emu::Engine::threads})
                for (uint64_t mib = 1; mib <= 64; mib *= 2) {
                    const std::string name = std::string("coll_vs_mpi/") + (op == Op::all_reduce ? "all_reduce" : "all_gather") + "/" +
                                             (tr == Transport::ipcq ? "ipcq" : "edm") + "/" +
                                             (e == kccl::emu::Engine::fibers ? "fibers" : "threads") + "/" + std::to_string(mib) + "MiB";
                    benchmark::RegisterBenchmark(name.c_str(), coll_vs_mpi, op, tr, e, mib << 20)
                        ->UseManualTime()
                        ->Iterations(1)
                        ->Unit(benchmark::kMillisecond);
                }
    return 0;
}();

}  // namespace

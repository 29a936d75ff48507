// benchmarks/collective_bench.hpp — Google Benchmark helpers for a collective, or any kernels of
// one's own, on the emulation. Installed with the package as <bench/collective_bench.hpp>
// (with <bench/harness.hpp>); link benchmark::benchmark.
//
//   static void BM_allreduce(benchmark::State& state) {
//       kccl::emu::collective::GroupOptions g;  g.transport = kccl::coll::Transport::edm;  g.ranks = 4;
//       kccl::emu::collective::Collective c;    c.op = kccl::coll::Op::all_reduce;  c.count = 4096;
//       std::vector<std::vector<float>> in(4, std::vector<float>(4096, 1.f));
//       kccl::bench::bench_collective<kccl::coll::Reducer<float, kccl::coll::RedOp::sum>>(state, g, c, in);
//   }
//   BENCHMARK(BM_allreduce)->UseManualTime();
//
// WHAT IS MEASURED
//   One benchmark iteration = one launch of the group in which every rank runs `per_run`
//   collectives after a warm-up one; the iteration's manual time is host wall time from the
//   first rank starting the timed collectives to the last finishing them (launch and set-up
//   excluded), so Google Benchmark's time and bytes_per_second are per `per_run` collectives of
//   HOST time: what the emulator takes on this machine, not a prediction of the hardware.
//   Counters:
//     host_us_per_collective   host time of one collective
//     modelled_us              the timing model's time of one collective (Model::none: absent):
//                              (makespan of warm-up + N collectives - makespan of the warm-up
//                              alone) / N on the timed fiber engine, so set-up and EDM
//                              handshakes cancel out; exact and host-independent
//     modelled_GBps            bytes / modelled_us (bytes: nccl-tests' size — all_gather,
//                              gather, all_to_all: ranks x count elements; others: count)
//     modelled_busGBps         modelled_GBps x nccl-tests' bus factor (all_reduce 2(p-1)/p;
//                              all_gather, reduce_scatter, all_to_all (p-1)/p; others 1)
//     line_rate_pct            Wormhole model over EDM: modelled_busGBps / 12.5 GB/s (one
//                              Ethernet link's line rate), in percent
//   A failed run skips the benchmark with the run's summary (errors, dump, replay string).
#pragma once

#include "harness.hpp"

#include <emulation/collective.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kccl::bench {

/// The timing model for the modelled counters.
enum class Model { none, wormhole, wafer };

inline std::unique_ptr<kccl::emu::TimingModel> make_timing_model(Model m) {
    if (m == Model::wormhole) return kccl::emu::wormhole_model();
    if (m == Model::wafer) return kccl::emu::wafer_model();
    return nullptr;
}

/// nccl-tests' bus-bandwidth factor of `op` on p ranks.
inline double bus_factor(kccl::coll::Op op, uint32_t p) {
    using kccl::coll::Op;
    switch (op) {
        case Op::all_reduce: return 2.0 * (p - 1) / p;
        case Op::all_gather:
        case Op::reduce_scatter:
        case Op::all_to_all: return double(p - 1) / p;
        default: return 1.0;
    }
}

/// nccl-tests' size of a collective of `count` elements per rank.
inline uint64_t collective_bytes(kccl::coll::Op op, uint32_t p, uint32_t count, uint32_t elem_bytes) {
    using kccl::coll::Op;
    const bool gathered = op == Op::all_gather || op == Op::gather || op == Op::all_to_all;
    return uint64_t(count) * elem_bytes * (gathered ? p : 1);
}

/// Sets modelled_GBps, modelled_busGBps and (Wormhole over EDM) line_rate_pct from the modelled
/// time of one operation moving `bytes`.
inline void set_modelled_counters(benchmark::State& state, double modelled_us, uint64_t bytes, double bus, bool line_rate) {
    state.counters["modelled_us"] = modelled_us;
    if (modelled_us <= 0) return;
    const double gbps = double(bytes) / (modelled_us * 1e3);
    state.counters["modelled_GBps"] = gbps;
    state.counters["modelled_busGBps"] = gbps * bus;
    if (line_rate) state.counters["line_rate_pct"] = 100.0 * gbps * bus / 12.5;
}

/// Benchmarks collective `c` with reducer `Red` on a group made from `g` (register the benchmark
/// with ->UseManualTime()); see the file comment for what is measured.
template <class Red, unsigned Links = kccl::emu::collective::link_all>
void bench_collective(benchmark::State& state, kccl::emu::collective::GroupOptions g, const kccl::emu::collective::Collective& c,
                      const std::vector<std::vector<typename Red::value_type>>& inputs, Model model = Model::wormhole,
                      uint32_t per_run = 4) {
    namespace kc = kccl::emu::collective;
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    const kc::Layout L = kc::plan_collective(g, c, eb);
    if (inputs.size() != g.ranks) {
        state.SkipWithError("bench_collective: one input per rank");
        return;
    }
    for (const auto& v : inputs)
        if (v.size() != c.count) {
            state.SkipWithError("bench_collective: every input needs the collective's count of elements");
            return;
        }
    g.buffer_bytes = kc::buffer_bytes_for(L, eb);
    const bool prep = Red::has_prepare && kccl::coll::op_reduces(c.op);
    g.extra_bytes = prep ? g.buffer_bytes : 0;
    kc::Group grp(g);
    std::vector<uint32_t> extra(g.ranks);
    for (uint32_t r = 0; r < g.ranks; ++r) extra[r] = grp.extra(r);
    struct Shared {
        uint32_t warmup = 1, iters = 1;
        std::vector<Clock::time_point> start, end;
    } sh;
    sh.start.resize(g.ranks);
    sh.end.resize(g.ranks);
    grp.template add<Links>([&inputs, &extra, &sh, L, prep](auto& hal, auto& link, const kccl::coll::GroupArgs& ga) -> uint64_t {
        T* in = reinterpret_cast<T*>(hal.l1_ptr(ga.input_l1, std::max(L.in_elems, 1u) * eb));
        if (L.count) std::memcpy(static_cast<void*>(in), inputs[ga.rank].data(), size_t(L.count) * eb);
        const kccl::coll::ExecParams ep = kc::exec_params(L, ga, prep ? extra[ga.rank] : 0);
        const auto dirs = kc::group_dirs_of(ga);
        for (uint32_t i = 0; i < sh.warmup; ++i) kccl::coll::execute_any<Red>(link, ep, dirs);
        sh.start[ga.rank] = Clock::now();
        for (uint32_t i = 0; i < sh.iters; ++i) kccl::coll::execute_any<Red>(link, ep, dirs);
        sh.end[ga.rank] = Clock::now();
        link.quiesce();
        return 0;
    });
    kccl::emu::RunOptions ro = kc::default_run_options();
    ro.watchdog = kWatchdog;
    ro.dirty_l1 = kccl::emu::RunOptions::DirtyL1::off;
    ro.engine = bench_engine();
    ro.wait = wait_policy();
    sh.iters = std::max(1u, per_run);
    double host_ns = 0;
    uint64_t runs = 0;
    for (auto _ : state) {
        const kccl::emu::RunReport rep = grp.run(ro);
        if (!rep.ok()) {
            state.SkipWithError(rep.summary().c_str());
            return;
        }
        const auto t0 = *std::min_element(sh.start.begin(), sh.start.end());
        const auto t1 = *std::max_element(sh.end.begin(), sh.end.end());
        const double ns = double(elapsed_ns(t0, t1));
        state.SetIterationTime(ns * 1e-9);
        host_ns += ns;
        ++runs;
    }
    const uint64_t bytes = collective_bytes(c.op, g.ranks, c.count, eb);
    state.SetBytesProcessed(int64_t(runs * sh.iters * bytes));
    if (runs) state.counters["host_us_per_collective"] = host_ns / 1e3 / double(runs * sh.iters);
    const std::unique_ptr<kccl::emu::TimingModel> tm = make_timing_model(model);
    if (!tm) return;
    kccl::emu::RunOptions mo = ro;
    mo.engine = kccl::emu::Engine::fibers;
    mo.timing = tm.get();
    const uint32_t n = std::max(1u, per_run);
    sh.iters = n;
    const kccl::emu::RunReport with = grp.run(mo);
    sh.iters = 0;
    const kccl::emu::RunReport without = grp.run(mo);
    if (!with.ok() || !without.ok()) {
        state.SkipWithError((!with.ok() ? with : without).summary().c_str());
        return;
    }
    const double ticks = double(with.makespan - std::min(without.makespan, with.makespan)) / n;
    set_modelled_counters(state, ticks / with.ticks_per_second * 1e6, bytes, bus_factor(c.op, g.ranks),
                          model == Model::wormhole && g.transport == kccl::coll::Transport::edm);
}

/// Modelled time of one launch of `launch` (kernels of one's own) on the timed fiber engine with
/// `model`, in microseconds; throws std::runtime_error with the run's summary if the run fails.
/// With set_modelled_counters it gives a kernel pair's modelled counters next to run_timed's
/// host-time ones.
inline double modelled_run_us(kccl::emu::Launcher& launch, Model model, kccl::emu::RunOptions ro = {}) {
    const std::unique_ptr<kccl::emu::TimingModel> tm = make_timing_model(model == Model::none ? Model::wormhole : model);
    ro.engine = kccl::emu::Engine::fibers;
    ro.timing = tm.get();
    if (ro.watchdog.count() == 0) ro.watchdog = kWatchdog;
    const kccl::emu::RunReport rep = launch.run(ro);
    if (!rep.ok()) throw std::runtime_error("modelled_run_us: the run failed:\n" + rep.summary());
    return double(rep.makespan) / rep.ticks_per_second * 1e6;
}

}  // namespace kccl::bench

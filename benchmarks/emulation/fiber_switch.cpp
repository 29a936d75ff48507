// benchmarks/emulation/fiber_switch.cpp — what one fiber switch of the fiber engine costs, and
// how much of it depends on where the two fibers stand when they switch.
//
// Two fibers on one Scheduler (FIFO) yield to each other n times each: every yield is one switch.
//   same_site:       both call yield() from the same function: when a fiber resumes, the return
//                    addresses on its stack are the ones the other fiber's calls left in the
//                    CPU's return-address predictor, and every return is predicted;
//   different_sites: each calls yield() through its own two noinline frames (as two different
//                    kernels reach a wait through their own slow paths): when a fiber resumes,
//                    its returns through those frames go where the other fiber's did not.
// The difference between the two is the price of mispredicted returns after a switch; it is why
// the device headers inline a wait's slow path on a host (KCCL_WAIT_PATH, hal/config.hpp).
// Reports ns_per_switch.
#include "harness.hpp"

#include <emulation/engine/scheduler.hpp>

namespace {

using kccl::emu::detail::Scheduler;

Scheduler* g_sched = nullptr;
// Each frame counts its own calls, so the compiler cannot fold the twin functions into one.
volatile uint64_t g_calls[5];

[[gnu::noinline]] void yield_a1() {
    g_sched->yield();
    g_calls[0] = g_calls[0] + 1;  // after the call: keeps it a call, not a tail jump
}
[[gnu::noinline]] void yield_a2() {
    yield_a1();
    g_calls[1] = g_calls[1] + 1;
}
[[gnu::noinline]] void yield_b1() {
    g_sched->yield();
    g_calls[2] = g_calls[2] + 1;
}
[[gnu::noinline]] void yield_b2() {
    yield_b1();
    g_calls[3] = g_calls[3] + 1;
}
[[gnu::noinline]] void yield_same() {
    g_sched->yield();
    g_calls[4] = g_calls[4] + 1;
}

template <bool Different>
void fiber_switch(benchmark::State& state) {
    constexpr int kYields = 200000;
    double total_ns = 0;
    for (auto _ : state) {
        kccl::emu::detail::CoreState a{}, b{};
        Scheduler s(kccl::emu::ScheduleOptions{}, 64 * 1024);
        g_sched = &s;
        s.add(&a, [] {
            for (int i = 0; i < kYields; ++i) Different ? yield_a2() : yield_same();
        });
        s.add(&b, [] {
            for (int i = 0; i < kYields; ++i) Different ? yield_b2() : yield_same();
        });
        const auto t0 = kccl::bench::Clock::now();
        s.run([] { return false; });
        const double ns = double(kccl::bench::elapsed_ns(t0, kccl::bench::Clock::now()));
        state.SetIterationTime(ns * 1e-9);
        total_ns += ns;
        if (s.switches() < 2u * kYields) state.SkipWithError("fewer switches than yields");
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * 2 * kYields);
    state.counters["ns_per_switch"] = total_ns / (2.0 * kYields * double(state.iterations()));
}

}  // namespace

BENCHMARK_TEMPLATE(fiber_switch, false)
    ->Name("emulation/fiber_switch/same_site")
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(fiber_switch, true)
    ->Name("emulation/fiber_switch/different_sites")
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

// benchmarks/baseline/atomic_ping_pong.cpp — the floor for any handoff between two threads:
// one cache-line flag each way, plain std::atomic, no emulation.
//
// Swept: the waiter's policy (kccl::bench::RawWait); 20000 round trips per benchmark iteration.
//   spin        poll with a CPU pause, never give the core up (the lower bound);
//   spin_yield  the emulation's first two stages: WaitPolicy::spin_polls pauses, then
//               sched_yield on every further poll;
//   eventcount  the emulation's full wait (wait.hpp): spin, yield, then announce and sleep on a
//               futex; the writer calls EventCount::notify() after every store — i.e. the
//               synchronisation an emulated handoff pays, without the emulation's bookkeeping.
// Reports: one_way_ns, round_trip_ns, cpu_cores.
#include "harness.hpp"

namespace {

constexpr uint32_t kRoundTrips = 20000;
constexpr uint32_t kWarmupRoundTrips = 1000;

template <kccl::bench::RawWait W>
void atomic_ping_pong(benchmark::State& state) {
    const kccl::bench::CpuCores cores;
    kccl::bench::Totals t;
    {
        kccl::bench::RawPingPong<W> pp(/*measured=*/true);
        for (uint32_t i = 0; i < kWarmupRoundTrips; ++i) pp.round_trip();
        for (auto _ : state) {
            kccl::bench::RegionClock clock;
            clock.start();
            for (uint32_t i = 0; i < kRoundTrips; ++i) pp.round_trip();
            const uint64_t ns = clock.stop();
            state.SetIterationTime(static_cast<double>(ns) * 1e-9);
            t.measured_ns += static_cast<double>(ns);
            ++t.runs;
        }
    }  // the responder has stopped and reported its region
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
    cores.report(state, 2);
}

using kccl::bench::RawWait;

}  // namespace

BENCHMARK_TEMPLATE(atomic_ping_pong, RawWait::spin)
    ->Name("baseline/atomic_ping_pong/spin")
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK_TEMPLATE(atomic_ping_pong, RawWait::spin_yield)
    ->Name("baseline/atomic_ping_pong/spin_yield")
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK_TEMPLATE(atomic_ping_pong, RawWait::eventcount)
    ->Name("baseline/atomic_ping_pong/eventcount")
    ->UseManualTime()
    ->MinTime(0.2);

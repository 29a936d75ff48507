// benchmarks/harness.hpp — what every kccl benchmark shares.
//
// WHAT IT IS
//   Helpers for two kinds of benchmark:
//   * host baselines (memcpy, raw std::atomic ping-pong): plain Google Benchmark loops;
//   * emulated kernels: one benchmark iteration = one Launcher::run on a cluster built once per
//     benchmark. Starting the core threads costs ~100 us, far more than the operations measured,
//     so each kernel times its own measured loop (RegionClock, after a warm-up) and the timed
//     one returns the nanoseconds; `run_timed` feeds that to `state.SetIterationTime`
//     (benchmarks registered with `->UseManualTime()`), so launch cost never enters the result.
//
// PAIRED BASELINES
//   The machine this was written on is a 2-vCPU VM whose core-to-core handoff time flips
//   between ~50 ns and ~200 ns for seconds at a time (the host moves the vCPUs), and which is
//   shared. So besides the separate baseline benchmarks, every emulated benchmark measures its
//   baseline again right after each of its runs (a raw spin ping-pong, or memcpy of the same
//   size) and reports the ratio of the two: a ratio from one machine state.
//
// COUNTERS (the names scripts/bench_report.py reads)
//   one_way_ns        latency: measured time / (2 * round trips)
//   round_trip_ns     latency: measured time / round trips
//   bytes_per_second  bandwidth: from SetBytesProcessed (a rate over the manual time)
//   raw_one_way_ns    latency: the paired raw spin ping-pong, averaged over the runs
//   vs_raw            latency: one_way_ns / raw_one_way_ns
//   memcpy_bytes_per_second, vs_memcpy   bandwidth: the paired memcpy and the ratio to it
//   cpu_cores         summed CPU/wall of the two measuring threads inside their measured regions:
//                     ~2 when each had a core; ~1 when something else on the machine took one
//                     (the two then take turns on one core: not comparable); lower when the
//                     waiters slept. Read it before trusting a result.
//
// KNOBS (environment, read once; for trying the emulation's wait policy without a rebuild —
// the defaults are the emulation's own)
//   KCCL_BENCH_SPIN_POLLS   WaitPolicy::spin_polls for emulated runs
//   KCCL_BENCH_YIELD_POLLS  WaitPolicy::yield_polls for emulated runs
#pragma once

#include <emulation/emulation.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <cstdio>
#include <string>
#include <thread>

#include <time.h>

namespace kccl::bench {

/// No emulated benchmark kernel should ever stall this long; a stall means a protocol bug, and
/// the run fails (SkipWithError with the watchdog's dump) instead of hanging the benchmark.
inline constexpr std::chrono::milliseconds kWatchdog{20000};

/// Launcher::run calls per repetition of an emulated benchmark (fixed, not MinTime: a run
/// returns only on the launcher's next watchdog tick, up to 50 ms after its kernels finished,
/// so wall time is ~50 ms per run whatever the kernels do).
inline constexpr benchmark::IterationCount kEmulatedRuns = 8;

using Clock = std::chrono::steady_clock;

inline uint64_t elapsed_ns(Clock::time_point t0, Clock::time_point t1) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

inline uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- timing of measured regions ------------------------------------------------------------

/// What the RegionClocks of a benchmark's threads measured, summed over threads and regions.
struct RegionTotals {
    std::atomic<uint64_t> cpu_ns{0};
    std::atomic<uint64_t> wall_ns{0};
};
inline RegionTotals& region_totals() {
    static RegionTotals totals;
    return totals;
}

/// Times the measured region of one thread (a kernel's core or a baseline thread): returns the
/// wall time, and adds wall and thread CPU time to region_totals() for cpu_cores.
class RegionClock {
public:
    void start() {
        cpu0_ = thread_cpu_ns();
        wall0_ = Clock::now();
    }
    uint64_t stop() {
        const uint64_t wall = elapsed_ns(wall0_, Clock::now());
        region_totals().cpu_ns.fetch_add(thread_cpu_ns() - cpu0_, std::memory_order_relaxed);
        region_totals().wall_ns.fetch_add(wall, std::memory_order_relaxed);
        return wall;
    }

private:
    uint64_t cpu0_ = 0;
    Clock::time_point wall0_{};
};

/// Snapshot of region_totals() taken at construction; report() sets cpu_cores to the summed
/// CPU/wall of the `threads` measuring threads since then.
class CpuCores {
public:
    CpuCores() : cpu0_(region_totals().cpu_ns.load()), wall0_(region_totals().wall_ns.load()) {}
    void report(benchmark::State& state, unsigned threads) const {
        const double cpu = static_cast<double>(region_totals().cpu_ns.load() - cpu0_);
        const double wall = static_cast<double>(region_totals().wall_ns.load() - wall0_);
        if (wall > 0) state.counters["cpu_cores"] = threads * cpu / wall;
    }

private:
    uint64_t cpu0_, wall0_;
};

// ---- raw two-thread handoff ------------------------------------------------------------------

/// How a raw ping-pong thread waits for the other's flag.
enum class RawWait {
    spin,        ///< poll with a CPU pause, never give the core up (the floor)
    spin_yield,  ///< WaitPolicy::spin_polls pauses, then sched_yield on every further poll
    eventcount,  ///< the emulation's full wait: spin, yield, then sleep on the EventCount
};

/// One direction of a raw ping-pong: the flag and its waiter's eventcount on separate lines.
struct RawDirection {
    alignas(64) std::atomic<uint32_t> flag{0};
    kccl::emu::EventCount events;  // aligned to its own line
};

template <RawWait W>
void raw_publish(RawDirection& d, uint32_t value) {
    d.flag.store(value, std::memory_order_release);
    if constexpr (W == RawWait::eventcount) d.events.notify();
}

/// Waits until the flag differs from `seen` and returns its value.
template <RawWait W>
uint32_t raw_wait_change(RawDirection& d, uint32_t seen) {
    const kccl::emu::WaitPolicy p{};
    for (uint32_t i = 0;; ++i) {
        const uint32_t v = d.flag.load(std::memory_order_acquire);
        if (v != seen) return v;
        if (W == RawWait::spin || i < p.spin_polls) {
            kccl::emu::cpu_relax();
        } else if (W == RawWait::spin_yield || i < p.spin_polls + p.yield_polls) {
            std::this_thread::yield();
        } else {
            const uint32_t e = d.events.current();
            d.events.sleep_unless(
                e, [&] { return d.flag.load(std::memory_order_acquire) != seen; }, p.max_sleep);
        }
    }
}

/// A responder thread answering every ping with the same value, until the value kStop.
/// With `measured`, the responder's whole life (it only ever answers) is a RegionClock region.
template <RawWait W>
class RawPingPong {
public:
    static constexpr uint32_t kStop = UINT32_MAX;  // seq never gets there in one benchmark

    explicit RawPingPong(bool measured)
        : responder_([this, measured] {
              RegionClock clock;
              if (measured) clock.start();
              uint32_t seen = 0;
              while ((seen = raw_wait_change<W>(ping_, seen)) != kStop) raw_publish<W>(pong_, seen);
              if (measured) clock.stop();
          }) {}
    ~RawPingPong() {
        raw_publish<W>(ping_, kStop);
        responder_.join();
    }
    RawPingPong(const RawPingPong&) = delete;
    RawPingPong& operator=(const RawPingPong&) = delete;

    void round_trip() {
        raw_publish<W>(ping_, ++seq_);
        raw_wait_change<W>(pong_, seq_ - 1);
    }

private:
    RawDirection ping_, pong_;
    uint32_t seq_ = 0;
    std::thread responder_;  // last: starts after the flags exist
};

/// One-way latency of a raw spin ping-pong between a new thread and this one (the paired
/// baseline of the emulated latency benchmarks).
inline double raw_one_way_ns(uint32_t round_trips) {
    RawPingPong<RawWait::spin> pp(/*measured=*/false);
    for (uint32_t i = 0; i < 1000; ++i) pp.round_trip();  // the responder is running
    const auto t0 = Clock::now();
    for (uint32_t i = 0; i < round_trips; ++i) pp.round_trip();
    return static_cast<double>(elapsed_ns(t0, Clock::now())) / (2.0 * round_trips);
}

// ---- memcpy ------------------------------------------------------------------------------

struct FreeDeleter {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

/// Page-aligned buffer with its pages faulted in (or nullptr).
inline Buffer page_aligned(size_t bytes) {
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!p) return nullptr;
    std::memset(p, 0x5a, bytes);
    return Buffer(static_cast<uint8_t*>(p));
}

/// memcpy bandwidth for `bytes` at a time, copying about `total` bytes (the paired baseline of
/// the emulated bandwidth benchmarks; same hot-buffer loop as baseline/memcpy).
inline double memcpy_bytes_per_second(size_t bytes, uint64_t total) {
    Buffer src = page_aligned(bytes), dst = page_aligned(bytes);
    if (!src || !dst) return 0;
    const uint64_t n = std::max<uint64_t>(16, total / bytes);
    for (int i = 0; i < 4; ++i) std::memcpy(dst.get(), src.get(), bytes);  // warm the caches
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < n; ++i) {
        std::memcpy(dst.get(), src.get(), bytes);
        benchmark::DoNotOptimize(dst.get());
        benchmark::ClobberMemory();
    }
    return static_cast<double>(n * bytes) * 1e9 / static_cast<double>(elapsed_ns(t0, Clock::now()));
}

// ---- emulated runs -------------------------------------------------------------------------

inline uint32_t env_u32(const char* name, uint32_t fallback) {
    const char* s = std::getenv(name);
    if (!s || !*s) return fallback;
    return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
}

/// The wait policy emulated runs use: the emulation's default unless overridden (see KNOBS).
inline kccl::emu::WaitPolicy wait_policy() {
    static const kccl::emu::WaitPolicy policy = [] {
        kccl::emu::WaitPolicy p{};
        p.spin_polls = env_u32("KCCL_BENCH_SPIN_POLLS", p.spin_polls);
        p.yield_polls = env_u32("KCCL_BENCH_YIELD_POLLS", p.yield_polls);
        return p;
    }();
    return policy;
}

/// The engine the emulated benchmarks run on: KCCL_BENCH_ENGINE=fibers (default) or threads.
inline kccl::emu::Engine bench_engine() {
    static const kccl::emu::Engine e = [] {
        const char* v = std::getenv("KCCL_BENCH_ENGINE");
        if (!v || std::string(v) == "fibers") return kccl::emu::Engine::fibers;
        if (std::string(v) == "threads") return kccl::emu::Engine::threads;
        std::fprintf(stderr, "KCCL_BENCH_ENGINE=%s is unknown (allowed: fibers, threads)\n", v);
        std::exit(2);
    }();
    return e;
}

/// What run_timed accumulated over all benchmark iterations.
struct Totals {
    double measured_ns = 0;  ///< sum of the timed kernel's returned nanoseconds
    double paired_sum = 0;   ///< sum of the paired baseline's values, one per run
    uint64_t runs = 0;       ///< Launcher::run calls
    bool ok = true;

    double paired_mean() const { return runs ? paired_sum / static_cast<double>(runs) : 0; }
};

/// Runs `launch` once per benchmark iteration. Before each run `reset()` restores the L1 words
/// the kernels count from (cluster memory persists across runs). The kernel on `timed` returns
/// the nanoseconds of its measured loop, which becomes the iteration's manual time. After each
/// run `paired()` measures the baseline (not timed). On failure the benchmark is skipped with
/// the run's summary and `ok` is false. Sets cpu_cores from the two kernels' RegionClocks.
inline Totals run_timed(benchmark::State& state, kccl::emu::Launcher& launch, kccl::emu::CoreCoord timed,
                        const std::function<void()>& reset, const std::function<double()>& paired) {
    Totals t;
    kccl::emu::RunOptions opt;
    opt.watchdog = kWatchdog;
    opt.wait = wait_policy();
    opt.engine = bench_engine();
    const CpuCores cores;
    for (auto _ : state) {
        reset();
        const kccl::emu::RunReport report = launch.run(opt);
        if (!report.ok()) {
            state.SkipWithError(report.summary().c_str());
            t.ok = false;
            break;
        }
        const uint64_t ns = report.at(timed).value;
        state.SetIterationTime(static_cast<double>(ns) * 1e-9);
        t.measured_ns += static_cast<double>(ns);
        ++t.runs;
        state.PauseTiming();
        t.paired_sum += paired();
        state.ResumeTiming();
    }
    cores.report(state, 2);
    return t;
}

/// Sets one_way_ns, round_trip_ns and, from the paired raw ping-pong, raw_one_way_ns and vs_raw.
inline void set_latency_counters(benchmark::State& state, const Totals& t, uint64_t round_trips_per_run) {
    if (!t.ok || t.runs == 0) return;
    const double rt = t.measured_ns / static_cast<double>(t.runs * round_trips_per_run);
    state.counters["round_trip_ns"] = rt;
    state.counters["one_way_ns"] = rt / 2;
    if (t.paired_sum > 0) {
        state.counters["raw_one_way_ns"] = t.paired_mean();
        state.counters["vs_raw"] = rt / 2 / t.paired_mean();
    }
}

/// Sets bytes_per_second (payload over the manual time) and, from the paired memcpy,
/// memcpy_bytes_per_second and vs_memcpy.
inline void set_bandwidth_counters(benchmark::State& state, const Totals& t, uint64_t bytes_per_run) {
    if (!t.ok || t.runs == 0) return;
    state.SetBytesProcessed(static_cast<int64_t>(t.runs * bytes_per_run));
    if (t.paired_sum > 0) {
        const double bw = static_cast<double>(t.runs * bytes_per_run) * 1e9 / t.measured_ns;
        state.counters["memcpy_bytes_per_second"] = t.paired_mean();
        state.counters["vs_memcpy"] = bw / t.paired_mean();
    }
}

/// Buffers of the emulated Ethernet channel (emulation/eth_bandwidth.cpp) and of its memcpy
/// ceiling (baseline/memcpy_ring.cpp): up to 4 of payload + 16 bytes from `base` in an ERISC L1.
inline uint32_t eth_channel_buffers(uint32_t payload, uint32_t base,
                                    uint32_t l1_bytes = kccl::emu::ChipSpec{}.eth_l1_bytes) {
    return std::min<uint32_t>(4, (l1_bytes - base) / (payload + 16));
}
inline constexpr uint32_t kEthChannelBase = 0x400;  ///< where the channel's buffers start in L1

/// Waits until the 32-bit word at `l1` is >= `value`, the way an Ethernet-core loop would:
/// poll with sem_read, call idle() on every empty poll (W1), and give the link firmware a turn
/// after a long idle streak (E4) — never on the fast path.
template <class H>
void poll_until_min(H& hal, uint32_t l1, uint32_t value) {
    constexpr uint32_t kIdlePollsPerContextSwitch = 4096;
    uint32_t idle = 0;
    while (hal.sem_read(l1) < value) {
        if (++idle == kIdlePollsPerContextSwitch) {
            hal.context_switch();
            idle = 0;
        }
        hal.idle();
    }
}

}  // namespace kccl::bench

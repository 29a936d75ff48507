// benchmarks/ipcq/ipcq_bench.cpp — IPCQ between two worker cores of one emulated chip, and the
// host baselines it is judged against, in the same binary.
//
// Swept (a curated cross, not the full product: every row changes one knob from the reference
// point 64 B / 8 slots / poll / L1):
//   ipcq/rate/<size>/n<slots>/<mode>/<placement>   message rate, rank 0 -> rank 1
//       size 8 B, 64 B, 512 B, 4 KiB, 16 KiB at n8/poll/l1; n_slots 2, 8, 64 at 64 B;
//       sleep at 64 B and 4 KiB; DRAM at 64 B and 4 KiB (poll and sleep);
//       credit batching (QueueConfig::credit_batch, suffix /cb<b>) at 64 B: n8/cb4, n64/cb32
//   ipcq/round_trip/<size>/n<slots>/<mode>/<placement>   send + recv ping-pong, one message each way
//       8 B, 64 B, 4 KiB, 16 KiB at n8/poll/l1; 64 B sleep; 64 B DRAM
//   ipcq/raw_noc_stream/64B/n8    the smallest 8-slot ring over the hal contract without IPCQ
//                                  (noc_write + inline head; inline credit back): the emulated
//                                  floor for a message rate
//   ipcq/raw_noc_ping_pong/64B    the same round trip without IPCQ: noc_write 64 B + sem_inc each
//                                  way (the emulated NoC floor at 64 B)
//   baseline/spsc_ring/64B/n8     a minimal cached-index SPSC ring (two std::threads, std::atomic,
//                                  64 B memcpy per message, consumer reads the first word) — the
//                                  host floor for a message rate
//   ipcq/rate/64B/n8/poll/l1/vs_boost, baseline/boost_spsc/64B/n8   (only where Boost's headers
//                                  are found) the 64 B rate paired with boost::lockfree::spsc_queue
//                                  of capacity 8 (push a 64-byte message, consume_one reads its first
//                                  word in place): counters boost_spsc_msgs_per_second, vs_boost_spsc
// Reports
//   rate:       items_per_second (messages/s), bytes_per_second, and paired with each run the
//               SPSC ring at the same size and depth: spsc_msgs_per_second, vs_spsc (ratio);
//               on the fiber engine also msgs_per_cpu_second (over the one host thread's CPU
//               time in the window, which other processes' preemption does not distort)
//   round trip: round_trip_ns, one_way_ns, raw_one_way_ns, vs_raw (paired raw spin ping-pong)
//   cpu_cores (see harness.hpp) — read it before trusting a result.
// Summarised by scripts/bench_report_ipcq.py (goal ratios: 64 B rate / SPSC >= 0.8x,
// 64 B round trip / raw ping-pong round trip <= 2x).
#include "harness.hpp"

#include <ipcq/host/plan.hpp>
#include <ipcq/ipcq.hpp>

#include <vector>

// boost::lockfree::spsc_queue is an optional baseline (header-only; CMake adds Boost's include
// directory when it finds Boost, and any include path that has it works).
#if __has_include(<boost/lockfree/spsc_queue.hpp>)
#include <boost/lockfree/spsc_queue.hpp>
#define KCCL_BENCH_BOOST_SPSC 1
#else
#define KCCL_BENCH_BOOST_SPSC 0
#endif

namespace {

namespace iq = kccl::ipcq;
namespace ih = kccl::ipcq::host;
using kccl::bench::Clock;

constexpr uint32_t kBlock = 0x10000;  // IPCQ block (plan lays out rings after it)
constexpr uint32_t kSrc = 0x1000;     // sender's message buffer (<= 16 KiB)

// ---- the SPSC ring baseline -----------------------------------------------------------------

/// A minimal single-producer single-consumer ring of `slots` fixed slots with cached indices:
/// each side re-reads the other's index only when its cached copy says full / empty.
struct SpscRing {
    explicit SpscRing(uint32_t slots, uint32_t bytes)
        : slots_(slots), bytes_(bytes), data_(kccl::bench::page_aligned(size_t(slots) * bytes)) {}
    alignas(64) std::atomic<uint32_t> head{0};  // written by the producer
    alignas(64) std::atomic<uint32_t> tail{0};  // written by the consumer
    alignas(64) uint32_t slots_, bytes_;
    kccl::bench::Buffer data_;
    uint8_t* slot(uint32_t i) { return data_.get() + size_t(i % slots_) * bytes_; }
};

/// Waits like the emulation's first two stages: pause-spin, then yield (2 cores, 2 threads).
inline void backoff(uint32_t& polls) {
    if (++polls < 128) kccl::emu::cpu_relax();
    else std::this_thread::yield();
}

/// Messages per second of the SPSC ring for `n` messages of `bytes` (after a warm-up).
double spsc_msgs_per_second(uint32_t bytes, uint32_t slots, uint32_t n) {
    SpscRing ring(slots, bytes);
    kccl::bench::Buffer src = kccl::bench::page_aligned(bytes);
    const uint32_t warm = n / 10, total = n + warm;
    std::atomic<uint64_t> ns{0};
    std::thread consumer([&] {
        uint32_t tail = 0, head_cache = 0;
        uint64_t sum = 0;
        Clock::time_point t0{};
        for (; tail < total; ++tail) {
            if (tail == warm) t0 = Clock::now();
            uint32_t polls = 0;
            while (tail == head_cache) {
                head_cache = ring.head.load(std::memory_order_acquire);
                if (tail == head_cache) backoff(polls);
            }
            uint32_t w;
            std::memcpy(&w, ring.slot(tail), 4);
            sum += w;
            ring.tail.store(tail + 1, std::memory_order_release);
        }
        benchmark::DoNotOptimize(sum);
        ns.store(kccl::bench::elapsed_ns(t0, Clock::now()), std::memory_order_relaxed);
    });
    uint32_t head = 0, tail_cache = 0;
    for (; head < total; ++head) {
        uint32_t polls = 0;
        while (head - tail_cache == slots) {
            tail_cache = ring.tail.load(std::memory_order_acquire);
            if (head - tail_cache == slots) backoff(polls);
        }
        std::memcpy(src.get(), &head, 4);
        std::memcpy(ring.slot(head), src.get(), bytes);
        ring.head.store(head + 1, std::memory_order_release);
    }
    consumer.join();
    return double(n) * 1e9 / double(ns.load());
}

void spsc_ring(benchmark::State& state, uint32_t bytes, uint32_t slots) {
    constexpr uint32_t kMsgs = 1000000;
    for (auto _ : state) state.SetIterationTime(double(kMsgs) / spsc_msgs_per_second(bytes, slots, kMsgs));
    state.SetItemsProcessed(int64_t(state.iterations()) * kMsgs);
    state.SetBytesProcessed(int64_t(state.iterations()) * kMsgs * bytes);
}

#if KCCL_BENCH_BOOST_SPSC
/// Messages per second of boost::lockfree::spsc_queue with room for 8 messages of 64 bytes, for
/// `n` messages after a warm-up: the producer pushes a 64-byte message whose first word is its
/// sequence number (a copy into the queue, like IPCQ's noc_write into the slot); the consumer
/// reads that word in place (consume_one), like the IPCQ receiver reading its slot. Both wait
/// like SpscRing (pause-spin, then yield).
double boost_spsc_msgs_per_second(uint32_t n) {
    struct Msg {
        uint32_t w[16];
    };
    static_assert(sizeof(Msg) == 64);
    auto q = std::make_unique<boost::lockfree::spsc_queue<Msg, boost::lockfree::capacity<8>>>();
    const uint32_t warm = n / 10, total = n + warm;
    std::atomic<uint64_t> ns{0};
    std::thread consumer([&] {
        uint64_t sum = 0;
        Clock::time_point t0{};
        for (uint32_t m = 0; m < total; ++m) {
            if (m == warm) t0 = Clock::now();
            uint32_t polls = 0;
            while (!q->consume_one([&](const Msg& x) { sum += x.w[0]; })) backoff(polls);
        }
        benchmark::DoNotOptimize(sum);
        ns.store(kccl::bench::elapsed_ns(t0, Clock::now()), std::memory_order_relaxed);
    });
    Msg msg{};
    for (uint32_t m = 0; m < total; ++m) {
        msg.w[0] = m;
        uint32_t polls = 0;
        while (!q->push(msg)) backoff(polls);
    }
    consumer.join();
    return double(n) * 1e9 / double(ns.load());
}

void boost_spsc(benchmark::State& state) {
    constexpr uint32_t kMsgs = 1000000;
    for (auto _ : state) state.SetIterationTime(double(kMsgs) / boost_spsc_msgs_per_second(kMsgs));
    state.SetItemsProcessed(int64_t(state.iterations()) * kMsgs);
    state.SetBytesProcessed(int64_t(state.iterations()) * kMsgs * 64);
}
#endif

// ---- IPCQ on the emulation --------------------------------------------------------------------

struct Knobs {
    uint32_t bytes, slots;
    iq::Backpressure mode;
    iq::Placement placement;
    uint32_t credit_batch = 1;
    /// Pair each run with boost::lockfree::spsc_queue (64 B, 8 slots) instead of SpscRing.
    bool vs_boost = false;
};

std::string size_label(uint32_t bytes) {
    return bytes >= 1024 && bytes % 1024 == 0 ? std::to_string(bytes / 1024) + "KiB" : std::to_string(bytes) + "B";
}

std::string label(const char* what, const Knobs& k) {
    return std::string("ipcq/") + what + "/" + size_label(k.bytes) + "/n" + std::to_string(k.slots) + "/" +
           (k.mode == iq::Backpressure::sleep ? "sleep" : "poll") + "/" + (k.placement == iq::Placement::dram ? "dram" : "l1") +
           (k.credit_batch > 1 ? "/cb" + std::to_string(k.credit_batch) : "") + (k.vs_boost ? "/vs_boost" : "");
}

kccl::emu::ChipSpec chip() {
    kccl::emu::ChipSpec c;
    c.grid_w = 2, c.grid_h = 1, c.eth_cores = 1;
    c.worker_l1_bytes = 1464 * 1024;
    c.eth_l1_bytes = 16 * 1024;
    c.dram_bytes = 16 * 1024 * 1024;
    return c;
}

/// A 2-rank plan on workers (0,0), (1,0).
template <class Topo>
ih::Plan<iq::Nsew> plan_for(kccl::emu::Cluster& cl, const Topo& topo, const Knobs& k) {
    ih::QueueConfig qc;
    // Slots are multiples of 16 bytes: an 8-byte message travels in a 16-byte slot.
    qc.n_slots = k.slots, qc.slot_size = (k.bytes + 15) / 16 * 16, qc.mode = k.mode, qc.placement = k.placement;
    qc.credit_batch = k.credit_batch;
    ih::MemoryConfig mem;
    mem.block_l1 = kBlock;
    mem.l1_bytes = cl.chip(0).spec().worker_l1_bytes;
    mem.dram = {cl.chip(0).dram().x, cl.chip(0).dram().y};
    mem.dram_bytes = cl.chip(0).spec().dram_bytes;
    return ih::build_plan(topo, {{0, 0}, {1, 0}}, qc, mem);
}

uint32_t messages_for(uint32_t bytes) { return bytes <= 512 ? 100000 : 20000; }

/// Rank 0 streams warm + n messages; rank 1 receives them, reading the first word of each, and
/// returns the nanoseconds of the last n.
void ipcq_rate(benchmark::State& state, Knobs k) {
    kccl::emu::Cluster cl(kccl::emu::topology::single_chip(chip()));
    const auto plan = plan_for(cl, ih::ring_1d_unidir(2), k);
    const uint32_t n = messages_for(k.bytes), warm = n / 10;
    kccl::emu::Launcher launch(cl);
    const auto a = cl.chip(0).worker(0, 0), b = cl.chip(0).worker(1, 0);
    launch.add(a, [&](auto& hal) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        auto* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kSrc, 4));
        kccl::bench::RegionClock clock;
        for (uint32_t m = 0; m < warm + n; ++m) {
            if (m == warm) clock.start();
            *w = m;
            q.send(iq::Nsew::E, kSrc, k.bytes);
        }
        q.quiesce();
        clock.stop();
        return 0;
    }, plan.runtime_args(0));
    double cpu_ns = 0;  // the receiver thread's CPU time over the measured window, summed over runs
    launch.add(b, [&](auto& hal) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        kccl::bench::RegionClock clock;
        uint64_t bad = 0, cpu0 = 0;
        for (uint32_t m = 0; m < warm + n; ++m) {
            if (m == warm) {
                clock.start();
                cpu0 = kccl::bench::thread_cpu_ns();
            }
            const iq::Slot s = q.recv(iq::Nsew::W);
            uint32_t w;
            std::memcpy(&w, q.data(s), 4);
            bad += w != m;
            q.release(s);
        }
        const uint64_t ns = clock.stop();
        cpu_ns += double(kccl::bench::thread_cpu_ns() - cpu0);
        q.quiesce();  // batched credits
        if (bad) throw kccl::emu::EmulationError("ipcq_rate: " + std::to_string(bad) + " messages out of sequence");
        return ns;
    }, plan.runtime_args(1));
    double spsc_sum = 0;
    const auto t = kccl::bench::run_timed(
        state, launch, b, [&] { ih::install_on(cl, 0, plan); },
        [&] {
#if KCCL_BENCH_BOOST_SPSC
            const double r = k.vs_boost ? boost_spsc_msgs_per_second(n) : spsc_msgs_per_second(k.bytes, k.slots, n);
#else
            const double r = spsc_msgs_per_second(k.bytes, k.slots, n);
#endif
            spsc_sum += r;
            return r;
        });
    if (!t.ok || t.runs == 0) return;
    state.SetItemsProcessed(int64_t(t.runs) * n);
    state.SetBytesProcessed(int64_t(t.runs) * n * k.bytes);
    const double rate = double(t.runs) * n * 1e9 / t.measured_ns;
    const char* base = k.vs_boost ? "boost_spsc_msgs_per_second" : "spsc_msgs_per_second";
    state.counters[base] = spsc_sum / double(t.runs);
    state.counters[k.vs_boost ? "vs_boost_spsc" : "vs_spsc"] = rate / (spsc_sum / double(t.runs));
    // Fiber engine: both cores run on the receiver's thread, so its CPU time over the window is
    // the emulation's whole cost without the time other processes took (this machine is shared).
    if (kccl::bench::bench_engine() == kccl::emu::Engine::fibers && cpu_ns > 0)
        state.counters["msgs_per_cpu_second"] = double(t.runs) * n * 1e9 / cpu_ns;
}

constexpr uint32_t kRoundTrips = 10000, kWarmRoundTrips = 1000;

/// Rank 0: send E, recv W; rank 1: recv W, send E (the reply); timed on rank 0.
void ipcq_round_trip(benchmark::State& state, Knobs k) {
    kccl::emu::Cluster cl(kccl::emu::topology::single_chip(chip()));
    const auto plan = plan_for(cl, ih::ring_1d(2), k);
    kccl::emu::Launcher launch(cl);
    const auto a = cl.chip(0).worker(0, 0), b = cl.chip(0).worker(1, 0);
    auto kernel = [&](auto& hal, bool initiator) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        auto* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kSrc, 4));
        kccl::bench::RegionClock clock;
        for (uint32_t i = 0; i < kWarmRoundTrips + kRoundTrips; ++i) {
            if (i == kWarmRoundTrips) clock.start();
            if (initiator) {
                *w = i;
                q.send(iq::Nsew::E, kSrc, k.bytes);
                q.release(q.recv(iq::Nsew::W));
            } else {
                q.release(q.recv(iq::Nsew::W));
                *w = i;
                q.send(iq::Nsew::E, kSrc, k.bytes);
            }
        }
        const uint64_t ns = clock.stop();
        q.quiesce();
        return initiator ? ns : 0;
    };
    launch.add(a, [&](auto& hal) { return kernel(hal, true); }, plan.runtime_args(0));
    launch.add(b, [&](auto& hal) { return kernel(hal, false); }, plan.runtime_args(1));
    const auto t = kccl::bench::run_timed(
        state, launch, a, [&] { ih::install_on(cl, 0, plan); }, [] { return kccl::bench::raw_one_way_ns(kRoundTrips); });
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
}

/// The round trip without IPCQ: 64-byte noc_write + sem_inc each way, sem_wait_min to receive.
void raw_noc_ping_pong_64(benchmark::State& state) {
    constexpr uint32_t kDst = 0x2000, kSem = 0x3000, kBytes = 64;
    kccl::emu::Cluster cl(kccl::emu::topology::single_chip(chip()));
    kccl::emu::Launcher launch(cl);
    const auto a = cl.chip(0).worker(0, 0), b = cl.chip(0).worker(1, 0);
    auto kernel = [&](auto& hal, bool initiator, uint32_t px) -> uint64_t {
        const auto dst = hal.noc_addr(px, 0, kDst), sem = hal.noc_addr(px, 0, kSem);
        auto* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kSrc, 4));
        kccl::bench::RegionClock clock;
        for (uint32_t i = 1; i <= kWarmRoundTrips + kRoundTrips; ++i) {
            if (i == kWarmRoundTrips + 1) clock.start();
            if (!initiator) hal.sem_wait_min(kSem, i);
            *w = i;  // the peer answered message i-1, so our previous write has read kSrc (N1)
            hal.noc_write(kSrc, dst, kBytes);
            hal.sem_inc(sem, 1);
            if (initiator) hal.sem_wait_min(kSem, i);
        }
        const uint64_t ns = clock.stop();
        return initiator ? ns : 0;
    };
    launch.add(a, [&](auto& hal) { return kernel(hal, true, 1); });
    launch.add(b, [&](auto& hal) { return kernel(hal, false, 0); });
    const auto t = kccl::bench::run_timed(
        state, launch, a,
        [&] {
            cl.write32(a, kSem, 0);
            cl.write32(b, kSem, 0);
        },
        [] { return kccl::bench::raw_one_way_ns(kRoundTrips); });
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
}

/// The emulation's floor for a message rate: the smallest ring a kernel can write over the hal
/// contract (no IPCQ): 64-byte noc_write into the peer's slot + inline head write; the consumer
/// polls its head word, reads the first word, writes its tail into the producer's credit word.
void raw_noc_stream_64(benchmark::State& state) {
    constexpr uint32_t kSlots = 8, kBytes = 64, kRing = 0x4000, kHead = 0x3000, kCredit = 0x3040;
    const uint32_t n = messages_for(kBytes), warm = n / 10;
    kccl::emu::Cluster cl(kccl::emu::topology::single_chip(chip()));
    kccl::emu::Launcher launch(cl);
    const auto a = cl.chip(0).worker(0, 0), b = cl.chip(0).worker(1, 0);
    launch.add(a, [&](auto& hal) -> uint64_t {
        const auto ring = hal.noc_addr(1, 0, kRing), head = hal.noc_addr(1, 0, kHead);
        auto* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kSrc, 4));
        uint32_t credit = 0;
        kccl::bench::RegionClock clock;
        for (uint32_t m = 0; m < warm + n; ++m) {
            if (m == warm) clock.start();
            while (m - credit == kSlots) {
                credit = hal.sem_read(kCredit);
                if (m - credit == kSlots) hal.idle();
            }
            *w = m;
            hal.noc_write(kSrc, ring + (m % kSlots) * kBytes, kBytes);
            hal.noc_inline_write32(head, m + 1);
            hal.noc_writes_flushed();
        }
        clock.stop();
        return 0;
    });
    launch.add(b, [&](auto& hal) -> uint64_t {
        const auto credit = hal.noc_addr(0, 0, kCredit);
        uint32_t head = 0;
        uint64_t bad = 0;
        kccl::bench::RegionClock clock;
        for (uint32_t m = 0; m < warm + n; ++m) {
            if (m == warm) clock.start();
            while (m == head) {
                head = hal.sem_read(kHead);
                if (m == head) hal.idle();
            }
            uint32_t w;
            std::memcpy(&w, hal.l1_ptr(kRing + (m % kSlots) * kBytes, 4), 4);
            bad += w != m;
            hal.noc_inline_write32(credit, m + 1);
        }
        const uint64_t ns = clock.stop();
        if (bad) throw kccl::emu::EmulationError("raw_noc_stream: messages out of sequence");
        return ns;
    });
    const auto t = kccl::bench::run_timed(
        state, launch, b,
        [&] {
            cl.write32(a, kCredit, 0);
            cl.write32(b, kHead, 0);
        },
        [&] { return spsc_msgs_per_second(kBytes, kSlots, n); });
    if (!t.ok || t.runs == 0) return;
    state.SetItemsProcessed(int64_t(t.runs) * n);
    state.SetBytesProcessed(int64_t(t.runs) * n * kBytes);
    state.counters["spsc_msgs_per_second"] = t.paired_mean();
    state.counters["vs_spsc"] = double(t.runs) * n * 1e9 / t.measured_ns / t.paired_mean();
}

const int registered = [] {
    using B = iq::Backpressure;
    using P = iq::Placement;
    std::vector<Knobs> rates = {
        {8, 8, B::poll, P::l1},      {64, 8, B::poll, P::l1},     {512, 8, B::poll, P::l1},
        {4096, 8, B::poll, P::l1},   {16384, 8, B::poll, P::l1},  {64, 2, B::poll, P::l1},
        {64, 64, B::poll, P::l1},    {64, 8, B::sleep, P::l1},    {4096, 8, B::sleep, P::l1},
        {64, 8, B::poll, P::dram},   {4096, 8, B::poll, P::dram}, {64, 8, B::sleep, P::dram},
        {64, 8, B::poll, P::l1, 4},  {64, 64, B::poll, P::l1, 32}};
    for (const Knobs& k : rates)
        benchmark::RegisterBenchmark(label("rate", k).c_str(), ipcq_rate, k)
            ->UseManualTime()
            ->Iterations(kccl::bench::kEmulatedRuns);
    std::vector<Knobs> rts = {{8, 8, B::poll, P::l1},     {64, 8, B::poll, P::l1}, {4096, 8, B::poll, P::l1},
                              {16384, 8, B::poll, P::l1}, {64, 8, B::sleep, P::l1}, {64, 8, B::poll, P::dram}};
    for (const Knobs& k : rts)
        benchmark::RegisterBenchmark(label("round_trip", k).c_str(), ipcq_round_trip, k)
            ->UseManualTime()
            ->Iterations(kccl::bench::kEmulatedRuns);
    benchmark::RegisterBenchmark("ipcq/raw_noc_stream/64B/n8", raw_noc_stream_64)
        ->UseManualTime()
        ->Iterations(kccl::bench::kEmulatedRuns);
    benchmark::RegisterBenchmark("ipcq/raw_noc_ping_pong/64B", raw_noc_ping_pong_64)
        ->UseManualTime()
        ->Iterations(kccl::bench::kEmulatedRuns);
    benchmark::RegisterBenchmark("baseline/spsc_ring/64B/n8", spsc_ring, 64u, 8u)->UseManualTime()->Iterations(5);
#if KCCL_BENCH_BOOST_SPSC
    // IPCQ's 64-byte message rate with each run paired with boost::lockfree::spsc_queue (8 slots):
    // counters boost_spsc_msgs_per_second and vs_boost_spsc (the ratio, from one machine state).
    Knobs vb{64, 8, B::poll, P::l1};
    vb.vs_boost = true;
    benchmark::RegisterBenchmark(label("rate", vb).c_str(), ipcq_rate, vb)
        ->UseManualTime()
        ->Iterations(kccl::bench::kEmulatedRuns);
    benchmark::RegisterBenchmark("baseline/boost_spsc/64B/n8", boost_spsc)->UseManualTime()->Iterations(5);
#endif
    return 0;
}();

}  // namespace

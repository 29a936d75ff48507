// benchmarks/emulation/noc_ping_pong.cpp — latency of one NoC handoff between two worker cores
// of one emulated chip: `noc_write(16 B) + sem_inc` to the peer, which waits with sem_wait_min
// and answers the same way.
//
// Swept: nothing; worker (0,0) <-> worker (1,0) of a single chip, 1000 warm-up and 20000
//        measured round trips per run, kEmulatedRuns runs.
// Reports: one_way_ns (= round trip / 2), round_trip_ns, cpu_cores, and the paired raw spin
//          ping-pong: raw_one_way_ns, vs_raw (see harness.hpp).
#include "harness.hpp"

namespace {

// L1 layout, the same on both cores; each word on its own 64-byte line.
constexpr uint32_t kMsgSrc = 0x1000;  // the 16-byte message this core sends
constexpr uint32_t kMsgDst = 0x1040;  // where the peer's message lands
constexpr uint32_t kSem = 0x1080;     // counts the peer's messages (never cleared within a run)

constexpr uint32_t kWarmup = 1000;
constexpr uint32_t kRoundTrips = 20000;

/// Runtime args: 0 role (0 initiator, 1 responder), 1-2 peer x/y, 3 warm-up, 4 measured.
/// The initiator returns the nanoseconds of its measured round trips; the responder 0.
template <class H>
uint64_t noc_ping_pong(H& hal) {
    const bool initiator = hal.arg(0) == 0;
    const auto peer_msg = hal.noc_addr(hal.arg(1), hal.arg(2), kMsgDst);
    const auto peer_sem = hal.noc_addr(hal.arg(1), hal.arg(2), kSem);
    const uint32_t warmup = hal.arg(3);
    const uint32_t total = warmup + hal.arg(4);
    auto* msg = reinterpret_cast<uint32_t*>(hal.l1_ptr(kMsgSrc, 16));

    // Rewriting msg for message i+1 is safe without noc_writes_flushed(): it happens after the
    // peer's answer to message i, and the peer saw our sem_inc, so our write before it had
    // landed (N1) and read its source.
    auto send = [&](uint32_t i) {
        msg[0] = i;
        hal.noc_write(kMsgSrc, peer_msg, 16);
        hal.sem_inc(peer_sem, 1);
    };

    kccl::bench::RegionClock clock;
    for (uint32_t i = 1; i <= total; ++i) {
        if (i == warmup + 1) clock.start();
        if (initiator) {
            send(i);
            hal.sem_wait_min(kSem, i);
        } else {
            hal.sem_wait_min(kSem, i);
            send(i);
        }
    }
    const uint64_t ns = clock.stop();
    if (!initiator) return 0;
    // The last answer carries the last sequence number (a cheap end-to-end check).
    if (*reinterpret_cast<const uint32_t*>(hal.l1_ptr(kMsgDst, 16)) != total)
        throw kccl::emu::EmulationError("noc_ping_pong: last message carries the wrong sequence number");
    return ns;
}

void emulated_noc_ping_pong(benchmark::State& state) {
    kccl::emu::Cluster cluster(kccl::emu::topology::single_chip());
    const auto a = cluster.chip(0).worker(0, 0);
    const auto b = cluster.chip(0).worker(1, 0);
    kccl::emu::Launcher launch(cluster);
    launch.add(a, [](auto& hal) { return noc_ping_pong(hal); }, {0, b.x, b.y, kWarmup, kRoundTrips});
    launch.add(b, [](auto& hal) { return noc_ping_pong(hal); }, {1, a.x, a.y, kWarmup, kRoundTrips});
    const auto t = kccl::bench::run_timed(
        state, launch, a,
        [&] {
            cluster.write32(a, kSem, 0);
            cluster.write32(b, kSem, 0);
        },
        [] { return kccl::bench::raw_one_way_ns(kRoundTrips); });
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
}

}  // namespace

BENCHMARK(emulated_noc_ping_pong)
    ->Name("emulation/noc_ping_pong")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);

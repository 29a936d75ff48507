// benchmarks/emulation/eth_ping_pong.cpp — latency of one Ethernet flit between two emulated
// chips: a 16-byte eth_send whose word carries the sequence number; the peer waits for the
// word to reach that number and answers the same way.
//
// Swept: how the receiving Ethernet core waits (template enum), on line(2), over the first link
//        between chip 0 and chip 1; 1000 warm-up and 10000 measured round trips per run.
//   sem_wait_min  the backend's blocking wait on the received word;
//   poll          an ERISC-style loop: sem_read, idle() on every empty poll (W1), a
//                 context_switch() only after a long idle streak (E4).
// Reports: one_way_ns (= round trip / 2), round_trip_ns, cpu_cores, and the paired raw spin
//          ping-pong: raw_one_way_ns, vs_raw (see harness.hpp).
#include "harness.hpp"

namespace {

enum class EthWait { sem_wait_min, poll };

// Ethernet-core L1 layout, the same on both ends; 16-byte aligned (E1), separate lines.
constexpr uint32_t kFlitSrc = 0x100;  // the word this core sends
constexpr uint32_t kFlitDst = 0x140;  // where the peer's word lands

constexpr uint32_t kWarmup = 1000;
constexpr uint32_t kRoundTrips = 20000;

/// Runtime args: 0 role (0 initiator, 1 responder), 1 warm-up, 2 measured round trips.
/// The initiator returns the nanoseconds of its measured round trips; the responder 0.
template <EthWait W, class H>
uint64_t eth_ping_pong(H& hal) {
    const bool initiator = hal.arg(0) == 0;
    const uint32_t warmup = hal.arg(1);
    const uint32_t total = warmup + hal.arg(2);
    auto* word = reinterpret_cast<uint32_t*>(hal.l1_ptr(kFlitSrc, 16));

    // Rewriting the source word for flit i+1 is allowed (E1): it happens only after the peer's
    // answer to flit i, which says the peer has flit i.
    auto send = [&](uint32_t i) {
        word[0] = i;
        hal.eth_send(0, kFlitSrc, kFlitDst, 16);
    };
    auto wait = [&](uint32_t i) {
        if constexpr (W == EthWait::sem_wait_min) hal.sem_wait_min(kFlitDst, i);
        else kccl::bench::poll_until_min(hal, kFlitDst, i);
    };

    kccl::bench::RegionClock clock;
    for (uint32_t i = 1; i <= total; ++i) {
        if (i == warmup + 1) clock.start();
        if (initiator) {
            send(i);
            wait(i);
        } else {
            wait(i);
            send(i);
        }
    }
    const uint64_t ns = clock.stop();
    return initiator ? ns : 0;
}

template <EthWait W>
void emulated_eth_ping_pong(benchmark::State& state) {
    kccl::emu::Cluster cluster(kccl::emu::topology::line(2));
    const auto [a, b] = cluster.links_between(0, 1).at(0);
    kccl::emu::Launcher launch(cluster);
    launch.add(a, [](auto& hal) { return eth_ping_pong<W>(hal); }, {0, kWarmup, kRoundTrips});
    launch.add(b, [](auto& hal) { return eth_ping_pong<W>(hal); }, {1, kWarmup, kRoundTrips});
    const auto t = kccl::bench::run_timed(
        state, launch, a,
        [&, a = a, b = b] {
            cluster.write32(a, kFlitDst, 0);
            cluster.write32(b, kFlitDst, 0);
        },
        [] { return kccl::bench::raw_one_way_ns(kRoundTrips); });
    kccl::bench::set_latency_counters(state, t, kRoundTrips);
}

}  // namespace

BENCHMARK_TEMPLATE(emulated_eth_ping_pong, EthWait::sem_wait_min)
    ->Name("emulation/eth_ping_pong/sem_wait_min")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);
BENCHMARK_TEMPLATE(emulated_eth_ping_pong, EthWait::poll)
    ->Name("emulation/eth_ping_pong/poll")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);

// benchmarks/edm/ring_ping.cpp — ring ping latency per hop through EDMs on 8 chips (tt-metal's
// BasicEthernetGuide, "Ring Ping Latency": ~650-690 ns per hop on hardware).
//
// Swept: nothing; topology::ring(8), the first link between chip i and chip i+1 (mod 8) carries
//        one channel i -> i+1 (16-byte packets, 2 buffers), with an EDM on each of its two
//        Ethernet cores: 16 EDMs. On every chip one worker ((0,0)) is the receiver of the
//        channel from the previous chip and the sender of the channel to the next: it forwards
//        each payload it receives (recv into L1, send from that L1). Chip 0's worker starts the
//        token and times its laps. One token circulates: 24 threads, at most a few runnable.
//        Per run kWarmupLaps + kLaps laps, kEmulatedRuns runs.
// Reports: ns_per_hop (= lap / 8), lap_ns, one_way_ns (= ns_per_hop: a hop is one chip-to-chip
//          one-way trip, worker to worker), the paired raw spin ping-pong (raw_one_way_ns,
//          vs_raw = ns_per_hop / raw one-way), busy_cores; fiber engine: switches_per_hop (core
//          switches per hop, warmup laps included: 6.01 with plain FIFO, 4.01 with the handoff).
#include "edm/edm_bench.hpp"

namespace {

namespace eb = kccl::bench::edm_bench;

constexpr uint32_t kChips = 8;
constexpr uint32_t kWarmupLaps = 30;
constexpr uint32_t kLaps = 300;

void edm_ring_ping(benchmark::State& state) {
    eb::RingPing ring(kChips, kWarmupLaps, kLaps);
    uint64_t switches = 0;  // fiber engine: core switches of the last run (warmup and measured laps)
    const auto t = eb::run_measured(
        state, ring.launch, [&] { ring.reset(); },
        [&](const kccl::emu::RunReport& r) {
            switches = r.switches;
            return static_cast<double>(r.at(ring.worker[0]).value);
        },
        [] { return kccl::bench::raw_one_way_ns(20000); }, [&] { return eb::busy_cores(ring.stamps); });
    if (!t.ok || t.runs == 0) return;
    const double lap = t.measured_ns / static_cast<double>(t.runs * kLaps);
    const double hop = lap / kChips;
    state.counters["lap_ns"] = lap;
    state.counters["ns_per_hop"] = hop;
    state.counters["one_way_ns"] = hop;
    if (switches) state.counters["switches_per_hop"] = double(switches) / double((kWarmupLaps + kLaps) * kChips);
    if (t.paired_sum > 0) {
        state.counters["raw_one_way_ns"] = t.paired_mean();
        state.counters["vs_raw"] = hop / t.paired_mean();
    }
}

}  // namespace

BENCHMARK(edm_ring_ping)
    ->Name("edm/ring_ping/8chips")
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);

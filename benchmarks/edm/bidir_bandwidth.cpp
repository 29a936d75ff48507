// benchmarks/edm/bidir_bandwidth.cpp — bidirectional payload bandwidth of one EDM pair over one
// emulated Ethernet link, by packet size and channel count (tt-metal BasicEthernetGuide, "Microbenchmarks" 1 and 2).
//
// Swept: packet bytes = 1, 2, 4, 8, 16, 32, 64 KiB  x  channels = 1, 2, 4, 8 (total on the
//        link, split between the directions: 1 = chip 0 -> 1 only, 2 = 1 + 1, 4 = 2 + 2,
//        8 = 4 + 4); 2 buffers per channel; line(2), one link.
//   edm/bidir_bandwidth/<bytes>/<channels>              each channel fed by one sender worker
//        (noc_write of the payload into the EDM's slot) and drained by one receiver worker
//        (noc_read out of it): worker -> EDM -> link -> EDM -> worker, 2 + 2 x channels threads;
//   edm/bidir_bandwidth_signal_only/<bytes>/<channels>  the same EDMs and handshakes but the
//        workers move no payload (send/recv of 0 bytes): the EDM + link part alone, as seed
//        004's microbenchmark 2 ("does not account for moving data in and out of the ERISC");
//        2 channels only (one each way: the fewest threads with both directions running).
//   Per channel per run: 16 warm-up messages, then 8 MiB / channels / bytes measured, clamped
//   to [64, 1024]; 4 runs per repetition (kRuns: 42 points).
//   The emulated Ethernet cores have 1152 KiB of L1 so every point fits; fits_wormhole_l1 says
//   whether the builder's layout would fit Wormhole's 256 KiB ERISC L1 (from 0x1000).
// Reports: bytes_per_second (payload of both directions over the union of their measured
//          windows), a_to_b_bytes_per_second and b_to_a_bytes_per_second (each direction over
//          its own window), the paired memcpy of the packet size (memcpy_bytes_per_second,
//          vs_memcpy), busy_cores, buffers, messages_per_channel, fits_wormhole_l1.
#include "edm/edm_bench.hpp"

namespace {

namespace eb = kccl::bench::edm_bench;

constexpr uint32_t kBuffers = 2;
constexpr uint32_t kWarmup = 16;
constexpr uint32_t kMinMessages = 64;
// Small packets are handoff-bound (~30-40 us per message here): cap the count per run.
constexpr uint32_t kMaxMessages = 1024;
constexpr uint64_t kBytesPerRun = 8ull << 20;
// 42 points: fewer runs per repetition than the other emulated benchmarks, so that the whole
// kccl_bench with 5 repetitions stays within a few minutes on 2 cores (a run costs >= 50 ms:
// the launcher's watchdog tick).
constexpr benchmark::IterationCount kRuns = 4;

template <bool MovePayload>
void edm_bidir_bandwidth(benchmark::State& state) {
    eb::StreamSpec spec;
    spec.packet_bytes = static_cast<uint32_t>(state.range(0));
    spec.channels = static_cast<uint32_t>(state.range(1));
    spec.buffers = kBuffers;
    spec.warmup = kWarmup;
    spec.measured = static_cast<uint32_t>(std::clamp<uint64_t>(kBytesPerRun / spec.channels / spec.packet_bytes,
                                                               kMinMessages, kMaxMessages));
    spec.move_payload = MovePayload;

    kccl::emu::Cluster cluster(eb::two_chips());
    kccl::emu::Launcher launch(cluster);
    const auto link = eb::add_stream_link(cluster, launch, spec);

    double dir_ns[2] = {0, 0};
    const auto t = eb::run_measured(
        state, launch, [&] { link->reset(cluster); },
        [&](const kccl::emu::RunReport&) {
            for (int d = 0; d < 2; ++d)
                if (link->channels_in(d)) dir_ns[d] += static_cast<double>(link->window(d).ns());
            return static_cast<double>(link->window(-1).ns());
        },
        [&] { return kccl::bench::memcpy_bytes_per_second(spec.packet_bytes, link->measured_bytes(-1)); },
        [&] { return eb::busy_cores(link->stamps); });
    if (!t.ok) return;
    kccl::bench::set_bandwidth_counters(state, t, link->measured_bytes(-1));
    const char* names[2] = {"a_to_b_bytes_per_second", "b_to_a_bytes_per_second"};
    for (int d = 0; d < 2; ++d)
        if (dir_ns[d] > 0)
            state.counters[names[d]] = static_cast<double>(t.runs * link->measured_bytes(d)) * 1e9 / dir_ns[d];
    state.counters["buffers"] = spec.buffers;
    state.counters["messages_per_channel"] = spec.measured;
    state.counters["fits_wormhole_l1"] = link->fits_wormhole_l1 ? 1 : 0;
}

void sizes_by_channels(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> channels) {
    for (int64_t ch : channels)
        for (int64_t kib = 1; kib <= 64; kib *= 2) b->Args({kib << 10, ch});
}

}  // namespace

BENCHMARK_TEMPLATE(edm_bidir_bandwidth, true)
    ->Name("edm/bidir_bandwidth")
    ->Apply([](benchmark::internal::Benchmark* b) { sizes_by_channels(b, {1, 2, 4, 8}); })
    ->UseManualTime()
    ->Iterations(kRuns);
BENCHMARK_TEMPLATE(edm_bidir_bandwidth, false)
    ->Name("edm/bidir_bandwidth_signal_only")
    ->Apply([](benchmark::internal::Benchmark* b) { sizes_by_channels(b, {2}); })
    ->UseManualTime()
    ->Iterations(kRuns);

// benchmarks/edm/stream.cpp — worker-to-worker streaming throughput through one EDM pair: the
// path every inter-chip collective's payload takes (target: >= 0.30x memcpy 16 KiB; docs/performance.md).
//
// Swept: buffers per channel = 1, 2, 3, 4 at 16 KiB packets; one channel, chip 0 -> chip 1 of
//        line(2); 1 sender worker -> EDM -> link -> EDM -> 1 receiver worker: 4 threads (on
//        this 2-core machine: 2 per core). Per run 32 warm-up and 2048 measured messages
//        (32 MiB), kEmulatedRuns runs.
//   Each message: the sender worker noc_writes 16 KiB into the EDM's slot and increments the
//   EDM's semaphore; the EDM sends slot + sync word in one eth_send; the peer EDM acks, signals
//   its worker, which noc_reads the slot into its L1 and increments back; the EDM completes.
//   So every payload byte is copied three times (worker -> EDM L1 -> peer L1 -> worker L1).
// Reports: bytes_per_second (payload, at the receiver worker), the paired memcpy 16 KiB
//          (memcpy_bytes_per_second, vs_memcpy), busy_cores; on the fiber engine also
//          bytes_per_cpu_second / vs_memcpy_cpu (the same over the one host thread's CPU time in
//          the window: what a loaded machine's preemptions do not distort).
#include "edm/edm_bench.hpp"

namespace {

namespace eb = kccl::bench::edm_bench;

constexpr uint32_t kPacket = 16384;
constexpr uint32_t kWarmup = 32;
constexpr uint32_t kMeasured = 2048;

void edm_stream(benchmark::State& state) {
    eb::StreamSpec spec;
    spec.channels = 1;
    spec.split = false;
    spec.buffers = static_cast<uint32_t>(state.range(0));
    spec.packet_bytes = kPacket;
    spec.warmup = kWarmup;
    spec.measured = kMeasured;

    kccl::emu::Cluster cluster(eb::two_chips());
    kccl::emu::Launcher launch(cluster);
    const auto link = eb::add_stream_link(cluster, launch, spec);
    double cpu_ns = 0;  // the receiver thread's CPU time over the measured window, summed over runs
    const auto t = eb::run_measured(
        state, launch, [&] { link->reset(cluster); },
        [&](const kccl::emu::RunReport&) {
            const eb::Stamp& r = link->stamps[link->receiver_stamp[0]];
            cpu_ns += static_cast<double>(r.c1 - r.c0);
            return static_cast<double>(link->window(0).ns());
        },
        [&] { return kccl::bench::memcpy_bytes_per_second(kPacket, link->measured_bytes(0)); },
        [&] { return eb::busy_cores(link->stamps); });
    if (!t.ok) return;
    kccl::bench::set_bandwidth_counters(state, t, link->measured_bytes(0));
    // Fiber engine: every core runs on the receiver's thread, so its CPU time over the window is
    // the whole emulation's cost without the time other processes took (this machine is shared).
    if (kccl::bench::bench_engine() == kccl::emu::Engine::fibers && cpu_ns > 0 && t.paired_sum > 0) {
        const double bw = static_cast<double>(t.runs * link->measured_bytes(0)) * 1e9 / cpu_ns;
        state.counters["bytes_per_cpu_second"] = bw;
        state.counters["vs_memcpy_cpu"] = bw / t.paired_mean();
    }
    state.counters["fits_wormhole_l1"] = link->fits_wormhole_l1 ? 1 : 0;
}

}  // namespace

BENCHMARK(edm_stream)
    ->Name("edm/stream_16k/buffers")
    ->DenseRange(1, 4)
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);

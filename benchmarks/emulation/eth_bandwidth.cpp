// benchmarks/emulation/eth_bandwidth.cpp — payload bandwidth of one emulated Ethernet link with
// a flow-controlled sender, the way an EDM channel moves data.
//
// Swept: payload bytes per packet = 1, 2, 4, 8, 16, 32, 64 KiB; line(2), first link between
//        chip 0 and chip 1; 4 receive buffers (3 at 64 KiB: 4 x (64 KiB + 16) exceeds the
//        256 KiB ERISC L1); max(2000, 64 MiB / payload) measured packets per run after a
//        warm-up, kEmulatedRuns runs.
// Protocol (one direction, tx queue 0):
//   sender    packet p goes to buffer s = (p-1) % B as ONE eth_send of [payload | 16-byte sync
//             word holding p] (E3: the sync word is last, so seeing it means the payload is
//             there); buffer s is reused only once the credit count reaches p - B.
//   receiver  polls buffer s's sync word until it reaches p, then acknowledges with a 16-byte
//             eth_send of the cumulative count p, from its own credit word (never from a buffer).
//   The clock stops when the last credit is back (all packets delivered and acknowledged).
// Reports: bytes_per_second of payload (sync words and credits not counted), buffers,
//          cpu_cores, and the paired memcpy of the same size: memcpy_bytes_per_second,
//          vs_memcpy (see harness.hpp). baseline/memcpy_ring copies through the same buffer
//          ring without any synchronisation: the ceiling for this benchmark on the host.
#include "harness.hpp"

#include <algorithm>
#include <cstring>

namespace {

// Ethernet-core L1 layout, the same on both ends.
constexpr uint32_t kCreditSrc = 0x100;  // receiver: the credit word it sends
constexpr uint32_t kCreditDst = 0x140;  // sender: the receiver's cumulative credit count lands here
constexpr uint32_t kBuffers = kccl::bench::kEthChannelBase;  // buffer s at kBuffers + s * (payload + 16)

constexpr uint32_t kWarmupPackets = 64;
constexpr uint32_t kMinPackets = 2000;
constexpr uint64_t kBytesPerRun = 64ull << 20;
constexpr uint8_t kPattern = 0xa5;

uint32_t packets_for(uint32_t payload) {
    return static_cast<uint32_t>(std::max<uint64_t>(kMinPackets, kBytesPerRun / payload));
}

/// Runtime args: 0 role (0 sender, 1 receiver), 1 payload bytes (multiple of 16), 2 buffers,
/// 3 warm-up packets, 4 measured packets. The sender returns the nanoseconds from the first
/// measured packet to the last credit; the receiver 0.
template <class H>
uint64_t eth_stream(H& hal) {
    const bool sender = hal.arg(0) == 0;
    const uint32_t payload = hal.arg(1);
    const uint32_t buffers = hal.arg(2);
    const uint32_t warmup = hal.arg(3);
    const uint32_t total = warmup + hal.arg(4);
    const uint32_t stride = payload + 16;
    auto buffer = [&](uint32_t p) { return kBuffers + (p - 1) % buffers * stride; };

    if (sender) {
        // Real bytes to send: untouched emulated L1 would be the kernel's shared zero page.
        std::memset(hal.l1_ptr(kBuffers, buffers * stride), kPattern, buffers * stride);
        kccl::bench::RegionClock clock;
        for (uint32_t p = 1; p <= total; ++p) {
            if (p == warmup + 1) clock.start();
            // Buffer reuse only after its previous packet was acknowledged (E1, credits count slots).
            if (p > buffers) kccl::bench::poll_until_min(hal, kCreditDst, p - buffers);
            const uint32_t b = buffer(p);
            reinterpret_cast<uint32_t*>(hal.l1_ptr(b + payload, 16))[0] = p;
            hal.eth_send(0, b, b, stride);
        }
        kccl::bench::poll_until_min(hal, kCreditDst, total);  // nothing left in flight
        return clock.stop();
    }

    auto* credit = reinterpret_cast<uint32_t*>(hal.l1_ptr(kCreditSrc, 16));
    kccl::bench::RegionClock clock;
    for (uint32_t p = 1; p <= total; ++p) {
        if (p == warmup + 1) clock.start();
        kccl::bench::poll_until_min(hal, buffer(p) + payload, p);
        // Overwriting the credit word while an earlier credit may still be in flight is safe: the
        // count only grows and arrives as one 16-byte word (E3), so the sender sees an old or a
        // newer count, both true.
        credit[0] = p;
        hal.eth_send(0, kCreditSrc, kCreditDst, 16);
    }
    clock.stop();
    const uint8_t* last = hal.l1_ptr(buffer(total), payload);
    if (last[0] != kPattern || last[payload - 1] != kPattern)
        throw kccl::emu::EmulationError("eth_stream: received payload does not match what was sent");
    return 0;
}

void emulated_eth_bandwidth(benchmark::State& state) {
    const uint32_t payload = static_cast<uint32_t>(state.range(0));
    kccl::emu::Cluster cluster(kccl::emu::topology::line(2));
    const auto [tx, rx] = cluster.links_between(0, 1).at(0);
    const uint32_t buffers = kccl::bench::eth_channel_buffers(payload, kBuffers, cluster.spec().chip.eth_l1_bytes);
    const uint32_t packets = packets_for(payload);
    kccl::emu::Launcher launch(cluster);
    launch.add(tx, [](auto& hal) { return eth_stream(hal); }, {0, payload, buffers, kWarmupPackets, packets});
    launch.add(rx, [](auto& hal) { return eth_stream(hal); }, {1, payload, buffers, kWarmupPackets, packets});
    const auto t = kccl::bench::run_timed(
        state, launch, tx,
        [&, tx = tx, rx = rx] {
            cluster.write32(tx, kCreditDst, 0);
            for (uint32_t s = 0; s < buffers; ++s) cluster.write32(rx, kBuffers + s * (payload + 16) + payload, 0);
        },
        [&] { return kccl::bench::memcpy_bytes_per_second(payload, uint64_t(packets) * payload); });
    if (!t.ok) return;
    kccl::bench::set_bandwidth_counters(state, t, uint64_t(packets) * payload);
    state.counters["buffers"] = buffers;
    state.counters["packets_per_run"] = packets;
}

}  // namespace

BENCHMARK(emulated_eth_bandwidth)
    ->Name("emulation/eth_bandwidth")
    ->RangeMultiplier(2)
    ->Range(1 << 10, 64 << 10)
    ->UseManualTime()
    ->Iterations(kccl::bench::kEmulatedRuns);

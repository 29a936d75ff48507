// benchmarks/baseline/memcpy_ring.cpp — memcpy through a ring of buffers laid out like the
// emulated Ethernet channel's (benchmarks/emulation/eth_bandwidth.cpp): B source buffers and B
// destination buffers of payload + 16 bytes, used in turn. The ceiling for that benchmark on this
// host: with B = 4 the working set (2 * B * payload) leaves L1 from 4 KiB packets on, which the
// single hot buffer of baseline/memcpy never does.
//
// Swept: payload = 1 KiB .. 64 KiB by powers of 2; B = 4 (3 at 64 KiB), as in eth_bandwidth.
// Reports: bytes_per_second (payload bytes copied per second).
#include "harness.hpp"

#include <cstring>

namespace {

void memcpy_ring(benchmark::State& state) {
    const size_t payload = static_cast<size_t>(state.range(0));
    const size_t buffers = kccl::bench::eth_channel_buffers(static_cast<uint32_t>(payload), kccl::bench::kEthChannelBase);
    const size_t stride = payload + 16;
    const kccl::bench::Buffer src = kccl::bench::page_aligned(buffers * stride);
    const kccl::bench::Buffer dst = kccl::bench::page_aligned(buffers * stride);
    if (!src || !dst) {
        state.SkipWithError("out of memory");
        return;
    }
    size_t b = 0;
    for (auto _ : state) {
        std::memcpy(dst.get() + b * stride, src.get() + b * stride, payload);
        benchmark::DoNotOptimize(dst.get());
        benchmark::ClobberMemory();
        b = b + 1 == buffers ? 0 : b + 1;
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(payload));
    state.counters["buffers"] = static_cast<double>(buffers);
}

}  // namespace

BENCHMARK(memcpy_ring)->Name("baseline/memcpy_ring")->RangeMultiplier(2)->Range(1 << 10, 64 << 10)->MinTime(0.2);

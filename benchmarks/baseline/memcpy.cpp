// benchmarks/baseline/memcpy.cpp — how fast this host copies bytes: the ceiling for every
// emulated data movement (noc_write, eth_send payloads are memcpy).
//
// Swept: bytes = 16, 64, 256, then 1 KiB .. 64 KiB by powers of 2 (the Ethernet packet
//        sizes), all cache-resident: the same source and destination every iteration; and
//        64 MiB (DRAM-sized: source + destination are 4x the 32 MiB L3 of the machine this
//        was tuned on).
// Reports: bytes_per_second (bytes copied per second).
#include "harness.hpp"

#include <cstring>

namespace {

void memcpy_bytes(benchmark::State& state) {
    const size_t bytes = static_cast<size_t>(state.range(0));
    const kccl::bench::Buffer src = kccl::bench::page_aligned(bytes);
    const kccl::bench::Buffer dst = kccl::bench::page_aligned(bytes);
    if (!src || !dst) {
        state.SkipWithError("out of memory");
        return;
    }
    for (auto _ : state) {
        // `bytes` is a run-time value, so this is a real call to the library memcpy.
        std::memcpy(dst.get(), src.get(), bytes);
        benchmark::DoNotOptimize(dst.get());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

BENCHMARK(memcpy_bytes)
    ->Name("baseline/memcpy")
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->RangeMultiplier(2)
    ->Range(1 << 10, 64 << 10)
    ->Arg(64 << 20)
    ->MinTime(0.2);

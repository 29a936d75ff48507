// benchmarks/baseline/memcpy_edm_path.cpp — the three copies an EDM worker-to-worker stream makes
// of every packet, and nothing else: the ceiling of edm/stream_16k on this host for an emulation
// that cost nothing beyond the data movement the contract requires.
//
// The emulated stream (benchmarks/edm/stream.cpp, 2 buffers) moves each 16 KiB packet
//   sender worker L1 -> EDM A slot (noc_write) -> EDM B slot (eth_send) -> receiver worker L1
//   (noc_read), the slots used in turn; every hop is a memcpy between distinct emulated memories.
// This does exactly those three memcpy per packet over the same buffer layout (one source, two
// slots on each EDM, one destination: a 96 KiB working set, more than this host's 48 KiB L1d,
// where baseline/memcpy/16384 copies one hot 32 KiB pair).
//
// Swept: buffers per channel = 2, 4 at 16 KiB.
// Reports: bytes_per_second (payload delivered per second: 16 KiB per three copies). The ratio
//   of this to baseline/memcpy/16384 in the same run bounds edm/stream_16k's vs_memcpy.
#include "harness.hpp"

#include <cstring>

namespace {

void memcpy_edm_path(benchmark::State& state) {
    constexpr size_t kPacket = 16384;
    const size_t buffers = static_cast<size_t>(state.range(0));
    const kccl::bench::Buffer src = kccl::bench::page_aligned(kPacket);
    const kccl::bench::Buffer edm_a = kccl::bench::page_aligned(buffers * kPacket);
    const kccl::bench::Buffer edm_b = kccl::bench::page_aligned(buffers * kPacket);
    const kccl::bench::Buffer dst = kccl::bench::page_aligned(kPacket);
    if (!src || !edm_a || !edm_b || !dst) {
        state.SkipWithError("out of memory");
        return;
    }
    std::memset(src.get(), 0x5a, kPacket);
    size_t b = 0;
    // Run-time sizes: real calls to the library memcpy, as the emulation's.
    volatile size_t packet = kPacket;
    for (auto _ : state) {
        const size_t n = packet;
        std::memcpy(edm_a.get() + b * kPacket, src.get(), n);
        benchmark::ClobberMemory();
        std::memcpy(edm_b.get() + b * kPacket, edm_a.get() + b * kPacket, n);
        benchmark::ClobberMemory();
        std::memcpy(dst.get(), edm_b.get() + b * kPacket, n);
        benchmark::DoNotOptimize(dst.get());
        benchmark::ClobberMemory();
        b = b + 1 == buffers ? 0 : b + 1;
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kPacket));
}

}  // namespace

BENCHMARK(memcpy_edm_path)->Name("baseline/memcpy_edm_path/16384/buffers")->Arg(2)->Arg(4)->MinTime(0.2);

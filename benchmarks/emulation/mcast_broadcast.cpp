// benchmarks/emulation/mcast_broadcast.cpp — a broadcast on a Tensix grid on the timed Wormhole
// model: examples/mcast_broadcast (NoC multicast, one injection per chunk) against the same
// chunked protocol with one unicast write + increment per receiver. Counters: modelled_us (the
// modelled time of the broadcast: the makespan), bytes, receivers. The wall time is the
// emulation's cost, not the hardware's.
//
//   ./build/default/benchmarks/kccl_bench --benchmark_filter=emulation/bcast
#include <benchmark/benchmark.h>

#include <emulation/emulation.hpp>

#include "../../examples/mcast_broadcast/mcast_broadcast_kernels.hpp"

#include <vector>

namespace {

constexpr uint32_t kBuf = 0x20000, kFlag = 0x100, kWord = 0x104;

template <class H>
void unicast_broadcast(H& hal) {
    const uint32_t rx = hal.arg(0), ry = hal.arg(1);
    const kccl::hal::NocRect rect{hal.arg(2), hal.arg(3), hal.arg(4), hal.arg(5)};
    const uint32_t buf = hal.arg(6), bytes = hal.arg(7), chunk = hal.arg(8), flag = hal.arg(9);
    const uint32_t chunks = (bytes + chunk - 1) / chunk;
    if (hal.core_x() == rx && hal.core_y() == ry) {
        for (uint32_t c = 0; c < chunks; ++c) {
            const uint32_t off = c * chunk, b = bytes - off < chunk ? bytes - off : chunk;
            for (uint32_t y = rect.y0; y <= rect.y1; ++y)
                for (uint32_t x = rect.x0; x <= rect.x1; ++x) {
                    hal.noc_write(buf + off, hal.noc_addr(x, y, buf + off), b);
                    hal.sem_inc(hal.noc_addr(x, y, flag), 1);  // N1: after the data at that core
                }
        }
        hal.noc_write_barrier();
        return;
    }
    for (uint32_t c = 0; c < chunks; ++c) hal.sem_wait_min(flag, c + 1);
}

void bcast(benchmark::State& state, bool multicast) {
    const uint32_t side = uint32_t(state.range(0)), bytes = uint32_t(state.range(1)), chunk = 8192;
    kccl::emu::ChipSpec cs;
    cs.grid_w = side + 1, cs.grid_h = side, cs.eth_cores = 1;
    cs.worker_l1_bytes = 256 * 1024;
    cs.eth_l1_bytes = 16 * 1024;
    const kccl::hal::NocRect rect{1, 0, side, side - 1};  // side x side receivers; the root is (0,0)
    const std::vector<uint32_t> args{0, 0, rect.x0, rect.y0, rect.x1, rect.y1, kBuf, bytes, chunk, kFlag, kWord};
    double us = 0;
    for (auto _ : state) {
        kccl::emu::Cluster c(kccl::emu::topology::single_chip(cs));
        const uint32_t zero = 0;
        for (uint32_t y = 0; y < cs.grid_h; ++y)
            for (uint32_t x = 0; x < cs.grid_w; ++x) c.write(c.chip(0).worker(x, y), kFlag, &zero, 4);
        auto model = kccl::emu::wormhole_model();
        kccl::emu::Launcher L(c);
        for (uint32_t y = 0; y < cs.grid_h; ++y)
            for (uint32_t x = 0; x < cs.grid_w; ++x) {
                if (x == 0 && y != 0) continue;
                if (multicast) L.add(c.chip(0).worker(x, y), [](auto& h) { mcast_broadcast::broadcast(h); }, args);
                else L.add(c.chip(0).worker(x, y), [](auto& h) { unicast_broadcast(h); }, args);
            }
        kccl::emu::RunOptions o;
        o.timing = model.get();
        const kccl::emu::RunReport rep = L.run(o);
        if (!rep.ok()) {
            state.SkipWithError(rep.summary().c_str());
            return;
        }
        us = rep.makespan_seconds() * 1e6;
    }
    state.counters["modelled_us"] = us;
    state.counters["bytes"] = bytes;
    state.counters["receivers"] = rect.cores();
}

}  // namespace

BENCHMARK_CAPTURE(bcast, multicast, true)
    ->Name("emulation/bcast/multicast")->Args({4, 64 * 1024})->Args({8, 64 * 1024})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bcast, unicast, false)
    ->Name("emulation/bcast/unicast")->Args({4, 64 * 1024})->Args({8, 64 * 1024})->Unit(benchmark::kMillisecond);

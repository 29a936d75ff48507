// kccl/testing/util.hpp — helpers for Catch2 tests of kernels on the emulation (target
// kccl::testing): small clusters (few cores, small L1) keep memory and thread counts low;
// normal / adversarial run options; put / get of a value in L1; KCCL_REQUIRE_OK(report), which
// fails with the report's summary (errors, the watchdog's dump, the replay string).
#pragma once

#include <emulation/emulation.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <vector>

namespace kccl::test {

using namespace std::chrono_literals;
using kccl::emu::Cluster;
using kccl::emu::CoreCoord;
using kccl::emu::Launcher;
using kccl::emu::RunOptions;
using kccl::emu::RunReport;

/// A small chip: 4x2 workers with 64 KiB L1, 4 Ethernet cores with 64 KiB.
inline emu::ChipSpec small_chip() {
    emu::ChipSpec c;
    c.grid_w = 4;
    c.grid_h = 2;
    c.eth_cores = 4;
    c.worker_l1_bytes = 64 * 1024;
    c.eth_l1_bytes = 64 * 1024;
    return c;
}

inline RunOptions adversarial(uint64_t seed, std::chrono::milliseconds watchdog = 5000ms) {
    RunOptions o;
    o.adversary.enabled = true;
    o.adversary.seed = seed;
    o.watchdog = watchdog;
    return o;
}

inline RunOptions normal(std::chrono::milliseconds watchdog = 5000ms) {
    RunOptions o;
    o.watchdog = watchdog;
    return o;
}

/// Stores / loads a plain value at an L1 address of the calling core.
template <class H, class T>
void put(H& h, uint32_t addr, T v) {
    std::memcpy(h.l1_ptr(addr, sizeof(T)), &v, sizeof(T));
}
template <class T, class H>
T get(H& h, uint32_t addr) {
    T v;
    std::memcpy(&v, h.l1_ptr(addr, sizeof(T)), sizeof(T));
    return v;
}

/// Host-initialised words (program inputs: tt-metal's semaphore initial values, a zeroed landing
/// area): writes `bytes` zero bytes at `addr` on every worker and Ethernet core of the cluster.
/// Dirty-L1 runs keep what the host wrote; everything else starts as garbage.
inline void host_zero(Cluster& c, uint32_t addr, uint32_t bytes) {
    std::vector<uint8_t> zeros(bytes, 0);
    for (uint32_t chip = 0; chip < c.num_chips(); ++chip) {
        const auto& s = c.chip(chip).spec();
        for (uint32_t y = 0; y < s.grid_h; ++y)
            for (uint32_t x = 0; x < s.grid_w; ++x) c.write(c.chip(chip).worker(x, y), addr, zeros.data(), bytes);
        for (uint32_t e = 0; e < s.eth_cores; ++e) c.write(c.chip(chip).eth(e), addr, zeros.data(), bytes);
    }
}

#define KCCL_REQUIRE_OK(report)             \
    do {                                    \
        const auto& r_ = (report);          \
        INFO(r_.summary());                 \
        REQUIRE(r_.ok());                   \
    } while (0)

}  // namespace kccl::test

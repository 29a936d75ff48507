// Shared helpers for the emulation tests: small clusters (few cores, small L1) keep memory and
// thread counts low; seeds for the adversarial runs.
#pragma once

#include <emulation/emulation.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>

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

#define KCCL_REQUIRE_OK(report)             \
    do {                                    \
        const auto& r_ = (report);          \
        INFO(r_.summary());                 \
        REQUIRE(r_.ok());                   \
    } while (0)

}  // namespace kccl::test

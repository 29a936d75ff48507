// Shared helpers for the IPCQ tests: a small chip with DRAM, a plan installed on it, the
// assert handler that turns device-side IPCQ errors into failed runs, payload patterns.
#pragma once

#include "util.hpp"

#include <ipcq/host/plan.hpp>
#include <ipcq/ipcq.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

namespace kccl::test::ipcq {

namespace iq = kccl::ipcq;
namespace ih = kccl::ipcq::host;

/// Device errors call kccl's assert handler; in the emulation it throws, which fails the run
/// with the message (the launcher reports it per core).
inline void throw_handler(const char*, const char* msg, const char*, int) { throw kccl::emu::EmulationError(msg); }
struct ErrorsThrow {
    ErrorsThrow() { kccl::set_assert_handler(&throw_handler); }
};

/// A queue configuration with the given slots, mode and placement (defaults otherwise).
inline ih::QueueConfig cfg(uint32_t n_slots, uint32_t slot_size, iq::Backpressure mode = iq::Backpressure::poll,
                           iq::Placement placement = iq::Placement::l1) {
    ih::QueueConfig c;
    c.n_slots = n_slots;
    c.slot_size = slot_size;
    c.mode = mode;
    c.placement = placement;
    return c;
}
inline const char* name(iq::Backpressure m) { return m == iq::Backpressure::sleep ? "sleep" : "poll"; }
inline const char* name(iq::Placement p) { return p == iq::Placement::dram ? "dram" : "l1"; }

/// 4x4 workers with 256 KiB L1 and a 4 MiB DRAM endpoint.
inline emu::ChipSpec ipcq_chip() {
    emu::ChipSpec c;
    c.grid_w = 4;
    c.grid_h = 4;
    c.eth_cores = 1;
    c.worker_l1_bytes = 256 * 1024;
    c.eth_l1_bytes = 16 * 1024;
    c.dram_bytes = 4 * 1024 * 1024;
    return c;
}

inline constexpr uint32_t kBlock = 0x10000;   // IPCQ block; everything below is kernel scratch
inline constexpr uint32_t kScratch = 0x1000;  // kernels' own buffers (0x1000..0x10000)

/// Ranks 0..n-1 on workers in row-major order of the 4x4 grid.
inline std::vector<ih::CoreXY> cores_for(uint32_t n) {
    std::vector<ih::CoreXY> v;
    for (uint32_t r = 0; r < n; ++r) v.push_back({r % 4, r / 4});
    return v;
}

inline ih::MemoryConfig memory_for(const Cluster& c) {
    ih::MemoryConfig m;
    m.block_l1 = kBlock;
    m.l1_bytes = c.chip(0).spec().worker_l1_bytes;
    m.dram = {c.chip(0).dram().x, c.chip(0).dram().y};
    m.dram_base = 0;
    m.dram_bytes = c.chip(0).spec().dram_bytes;
    return m;
}

/// A cluster, a plan installed on it, and a launcher with pointer-dump hooks.
template <class Dirs>
struct Setup {
    ErrorsThrow errors;
    Cluster cluster{emu::topology::single_chip(ipcq_chip())};
    ih::Plan<Dirs> plan;
    Launcher launch{cluster};

    Setup(const ih::Topology<Dirs>& t, const ih::QueueConfig& qc)
        : plan(ih::build_plan(t, cores_for(t.world), qc, memory_for(cluster))) {
        ih::install_on(cluster, 0, plan);
    }
    CoreCoord core(uint32_t rank) const { return cluster.chip(0).worker(plan.ranks[rank].core.x, plan.ranks[rank].core.y); }
    /// Adds `kernel(hal, rank)` on every rank (or only ranks in `only`), with dump hooks.
    template <class K>
    void add_all(K kernel) {
        for (uint32_t r = 0; r < plan.world(); ++r)
            launch.add(core(r), [kernel, r](auto& hal) { return kernel(hal, r); }, plan.runtime_args(r));
        ih::attach_pointer_dumps(launch, cluster, 0, plan);
    }
    RunReport run(const RunOptions& o) { return launch.run(o); }
};

/// Deterministic payload word w of message m on link (from -> to).
inline uint32_t pattern(uint32_t from, uint32_t to, uint32_t m, uint32_t w) {
    uint32_t x = from * 0x9e3779b1u ^ (to + 1) * 0x85ebca6bu ^ (m + 1) * 0xc2b2ae35u ^ (w + 1) * 0x27d4eb2fu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    return x ^ (x >> 12);
}

template <class H>
using Q = iq::Queues<H, iq::Nsew>;

/// Fills `words` 32-bit words at local `addr` with the pattern of message m; word 0 = m.
template <class H>
void fill(H& hal, uint32_t addr, uint32_t words, uint32_t from, uint32_t to, uint32_t m) {
    auto* p = reinterpret_cast<uint32_t*>(hal.l1_ptr(addr, words * 4));
    p[0] = m;
    for (uint32_t w = 1; w < words; ++w) p[w] = pattern(from, to, m, w);
}
/// Number of words of message m at `p` that differ from the pattern (word 0 must be m).
inline uint32_t mismatches(const uint8_t* bytes, uint32_t words, uint32_t from, uint32_t to, uint32_t m) {
    const auto* p = reinterpret_cast<const uint32_t*>(bytes);
    uint32_t bad = p[0] != m;
    for (uint32_t w = 1; w < words; ++w) bad += p[w] != pattern(from, to, m, w);
    return bad;
}

// ---- the IPCQ protocol mutations (iq::DefaultPolicy switches), one Policy each ----------------
namespace mutations {
struct HeadBeforeData : iq::DefaultPolicy {
    static constexpr bool head_before_data = true;
};
struct NoDramBarrier : iq::DefaultPolicy {
    static constexpr bool skip_dram_barrier = true;
};
struct SlotFromCounter : iq::DefaultPolicy {
    static constexpr bool slot_from_counter = true;
};
struct UnboundedSleep : iq::DefaultPolicy {
    static constexpr bool unbounded_sleep = true;
};
}  // namespace mutations

// ---- the rank 0 -> rank 1 stream several tests run ----------------------------------------------

/// Words of message m in a stream: varies so that descriptors change (1..16 words).
inline constexpr uint32_t stream_words(uint32_t m) { return 1 + (m * 7) % 16; }
inline constexpr uint32_t kStreamSrc = kScratch;           // rank 0's staging buffer
inline constexpr uint32_t kStreamAcc = kScratch + 0x4000;  // rank 1's counts (bad words, bad headers)

/// What rank 1 of a stream found; the counts are read only when the run completed.
struct StreamRun {
    RunReport report;
    uint64_t bad_words = 0;    ///< payload words that differ from what was sent
    uint64_t bad_headers = 0;  ///< wrong sequence number or size
    uint64_t checksum = 0;     ///< sum over received words
};

/// Rank 0 streams n messages of stream_words(m) words (pattern (0, 1, m)) to rank 1 over
/// ring_1d_unidir(2) with queue configuration `qc`, using IPCQ policy P; rank 1 receives them
/// and checks every header and word.
template <class P = iq::DefaultPolicy>
StreamRun run_stream(uint32_t n, const ih::QueueConfig& qc, const RunOptions& opt) {
    Setup<iq::Nsew> s(ih::ring_1d_unidir(2), qc);
    s.add_all([n](auto& hal, uint32_t r) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>, iq::Nsew, P> q(hal, hal.arg(0));
        if (r == 0) {
            for (uint32_t m = 0; m < n; ++m) {
                fill(hal, kStreamSrc, stream_words(m), 0, 1, m);
                q.send(iq::Nsew::E, kStreamSrc, 4 * stream_words(m));
            }
            q.quiesce();
            return 0;
        }
        uint64_t bad = 0, hdr = 0, sum = 0;
        for (uint32_t m = 0; m < n; ++m) {
            auto slot = q.recv(iq::Nsew::W);
            hdr += slot.seq != m || slot.info.nbytes != 4 * stream_words(m);
            const uint32_t w = std::min<uint32_t>(slot.info.nbytes / 4, 16);
            const auto* p = reinterpret_cast<const uint32_t*>(q.data(slot));
            for (uint32_t i = 0; i < w; ++i) sum += p[i];
            bad += mismatches(q.data(slot), w, 0, 1, m);
            q.release(slot);
        }
        q.quiesce();  // returns batched credits (credit_batch > 1); the sender's quiesce waits for them
        put(hal, kStreamAcc, bad);
        put(hal, kStreamAcc + 8, hdr);
        return sum;
    });
    StreamRun res;
    res.report = s.run(opt);
    if (res.report.ok()) {
        res.checksum = res.report.at(s.core(1)).value;
        res.bad_words = s.cluster.read32(s.core(1), kStreamAcc);
        res.bad_headers = s.cluster.read32(s.core(1), kStreamAcc + 8);
    }
    return res;
}

}  // namespace kccl::test::ipcq

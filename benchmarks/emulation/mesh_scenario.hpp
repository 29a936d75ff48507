// benchmarks/emulation/mesh_scenario.hpp — an IPCQ torus mesh where every core exchanges
// messages with all four neighbours (shared by benchmarks/emulation/mesh_bench.cpp and
// tests/emulation/fidelity_test.cpp's scale test).
//
// Layout: `chips` chips, each a rows x cols grid of workers forming one IPCQ mesh_2d(rows, cols)
// torus (rank = row * cols + col on worker (col, row)). The emulation addresses NoC coordinates
// 0..1023 with two rows reserved (Ethernet, DRAM), so one chip holds up to 1024 x 1022 workers:
// a 65536-core run is one chip of 256 x 256, one torus.
// Per round every core sends one `bytes` message to each neighbour (payload: a pattern of
// sender, receiver and round) and then receives four with recv_any, checking every word.
#pragma once

#include <emulation/emulation.hpp>
#include <ipcq/host/plan.hpp>
#include <ipcq/ipcq.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace kccl::scenario {

struct MeshSpec {
    uint32_t rows = 64, cols = 64, chips = 1;
    uint32_t rounds = 8;        ///< messages per direction per core
    uint32_t bytes = 64;        ///< payload per message (multiple of 16, <= slot)
    uint32_t slots = 4;         ///< IPCQ slots per direction
    uint32_t l1_bytes = 32 * 1024;
    /// If set: every core whose rank is a multiple of rss_sample_every samples the process's
    /// resident set when its kernel ends and keeps the largest value here (memory per core).
    uint64_t* rss_peak = nullptr;
    uint32_t rss_sample_every = 1024;
    /// Test hook (control of the check): this rank (on every chip) sends a wrong word 0 in its
    /// first message east; UINT32_MAX = none.
    uint32_t corrupt_rank = UINT32_MAX;
    uint64_t cores() const { return uint64_t(rows) * cols * chips; }
    uint64_t messages() const { return cores() * 4 * rounds; }
};

inline constexpr uint32_t kMeshSrc = 0x100;    // payload staging (below the block)
inline constexpr uint32_t kMeshBlock = 0x1000;  // IPCQ block

/// Word w of the message from rank `from` to rank `to` in round m (independent of IPCQ).
inline uint32_t mesh_word(uint32_t from, uint32_t to, uint32_t m, uint32_t w) {
    uint32_t x = (from + 1) * 0x9e3779b1u ^ (to + 7) * 0x85ebca6bu ^ (m + 3) * 0xc2b2ae35u ^ (w + 5) * 0x27d4eb2fu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    return x ^ (x >> 13);
}

inline void mesh_assert_throws(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

/// Resident set size of this process in bytes (Linux /proc/self/statm), 0 if unknown.
inline uint64_t rss_bytes() {
    std::ifstream f("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    if (!(f >> size >> resident)) return 0;
    return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

/// The kernel: returns the number of wrong words / messages seen by this core.
template <class H>
uint64_t mesh_kernel(H& hal, uint32_t rank, uint32_t rows, uint32_t cols, uint32_t rounds, uint32_t bytes,
                     bool corrupt = false) {
    using kccl::ipcq::Nsew;
    kccl::ipcq::Queues<H> q(hal, hal.arg(0));
    const uint32_t row = rank / cols, col = rank % cols;
    // Neighbours by direction (N, S, E, W), torus wrap, written out here (not from the builder).
    const uint32_t nb[4] = {((row + rows - 1) % rows) * cols + col, ((row + 1) % rows) * cols + col,
                            row * cols + (col + 1) % cols, row * cols + (col + cols - 1) % cols};
    static_assert(Nsew::N == 0 && Nsew::S == 1 && Nsew::E == 2 && Nsew::W == 3, "direction order");
    const uint32_t words = bytes / 4;
    uint64_t bad = 0;
    uint32_t got[4] = {0, 0, 0, 0};
    for (uint32_t m = 0; m < rounds; ++m) {
        for (uint32_t d = 0; d < 4; ++d) {
            auto* p = reinterpret_cast<uint32_t*>(hal.l1_ptr(kMeshSrc, bytes));
            for (uint32_t w = 0; w < words; ++w) p[w] = mesh_word(rank, nb[d], m, w);
            if (corrupt && m == 0 && d == Nsew::E) p[0] ^= 1;
            q.send(d, kMeshSrc, bytes);
        }
        for (uint32_t i = 0; i < 4; ++i) {
            kccl::ipcq::Slot s = q.recv_any();
            const uint32_t from = nb[s.dir], seq = got[s.dir]++;
            const auto* p = reinterpret_cast<const uint32_t*>(hal.l1_ptr(s.l1, bytes));
            if (s.info.nbytes != bytes) ++bad;
            for (uint32_t w = 0; w < words; ++w) bad += p[w] != mesh_word(from, rank, seq, w);
            q.release(s);
        }
    }
    for (uint32_t d = 0; d < 4; ++d) bad += got[d] != rounds;
    q.quiesce();
    return bad;
}

/// A built mesh: cluster, plans installed, every kernel added.
struct Mesh {
    MeshSpec spec;
    std::unique_ptr<emu::Cluster> cluster;
    std::unique_ptr<emu::Launcher> launch;
    std::vector<emu::CoreCoord> cores;  ///< index = chip * rows * cols + rank
    std::unique_ptr<kccl::ipcq::host::Plan<kccl::ipcq::Nsew>> plan;

    /// Installs the queues again (a new program): run() more than once on the same mesh.
    void reinstall() {
        for (uint32_t chip = 0; chip < spec.chips; ++chip) kccl::ipcq::host::install_on(*cluster, chip, *plan);
    }

    explicit Mesh(MeshSpec s) : spec(s) {
        kccl::set_assert_handler(&mesh_assert_throws);
        namespace ih = kccl::ipcq::host;
        emu::ChipSpec c;
        c.grid_w = s.cols;
        c.grid_h = s.rows;
        c.eth_cores = 0;
        c.worker_l1_bytes = s.l1_bytes;
        c.eth_l1_bytes = 16;
        cluster = std::make_unique<emu::Cluster>(emu::topology::custom(s.chips, c));
        launch = std::make_unique<emu::Launcher>(*cluster);
        std::vector<ih::CoreXY> xy;
        for (uint32_t r = 0; r < s.rows * s.cols; ++r) xy.push_back({r % s.cols, r / s.cols});
        ih::QueueConfig qc;
        qc.n_slots = s.slots;
        qc.slot_size = s.bytes;
        ih::MemoryConfig mem;
        mem.block_l1 = kMeshBlock;
        mem.l1_bytes = s.l1_bytes;
        plan = std::make_unique<ih::Plan<kccl::ipcq::Nsew>>(ih::build_plan(ih::mesh_2d(s.rows, s.cols), xy, qc, mem));
        for (uint32_t chip = 0; chip < s.chips; ++chip) {
            ih::install_on(*cluster, chip, *plan);
            for (uint32_t r = 0; r < s.rows * s.cols; ++r) {
                const emu::CoreCoord core = cluster->chip(chip).worker(r % s.cols, r / s.cols);
                cores.push_back(core);
                const uint32_t rows = s.rows, cols = s.cols, rounds = s.rounds, bytes = s.bytes;
                uint64_t* peak = s.rss_peak && r % s.rss_sample_every == 0 ? s.rss_peak : nullptr;
                const bool corrupt = r == s.corrupt_rank;
                launch->add(
                    core,
                    [r, rows, cols, rounds, bytes, peak, corrupt](auto& hal) {
                        const uint64_t bad = mesh_kernel(hal, r, rows, cols, rounds, bytes, corrupt);
                        if (peak) *peak = std::max(*peak, rss_bytes());  // fiber engine: one host thread
                        return bad;
                    },
                    plan->runtime_args(r));
            }
        }
    }

    /// Number of cores whose kernel reported a wrong word or a missing message, or that did not
    /// run at all (every core of the mesh must have a result).
    uint64_t bad_cores(const emu::RunReport& r) const {
        uint64_t bad = 0, seen = 0;
        for (const auto& c : r.cores) {
            bad += c.value != 0;
            ++seen;
        }
        return bad + (seen < cores.size() ? cores.size() - seen : 0);
    }
};

}  // namespace kccl::scenario

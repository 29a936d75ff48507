// Test bed for the collectives link layer: one group over either transport on the emulation,
// built by the collective plan (coll::host::GroupPlan), kernels dispatched on the group's
// transport. Payload patterns are computed here, independently of the code under test.
#pragma once

#include "emulation/util.hpp"

#include <collectives/host/plan.hpp>
#include <collectives/link_edm.hpp>
#include <collectives/link_ipcq.hpp>
#include <edm/edm.hpp>

#include <memory>
#include <string>

namespace kccl::test::coll_link {

namespace coll = kccl::coll;
namespace ch = kccl::coll::host;

/// Device errors (IPCQ, EDM link, primitives) throw in the emulation, failing the run with the message.
inline void throw_handler(const char*, const char* msg, const char*, int) { throw kccl::emu::EmulationError(msg); }

inline const char* name(coll::Transport t) { return t == coll::Transport::edm ? "edm" : "ipcq"; }
inline const char* name(coll::GroupShape s) { return ch::shape_name(s); }

/// Runs `f(link, group_args)` on the link model of the group's transport.
template <class H, class F>
uint64_t with_link(H& hal, F&& f) {
    const coll::GroupArgs g = coll::load_group_args(hal, 0);
    if (g.transport == coll::Transport::ipcq) {
        coll::IpcqLink<H> link(hal, g.link_args);
        return f(link, g);
    }
    coll::EdmLink<H> link(hal, g.link_args);
    return f(link, g);
}

inline constexpr uint32_t kWorkerL1 = 256 * 1024;

/// A group of n ranks over transport t: IPCQ on PEs of one chip, EDM on one worker per chip of a
/// ring / line of chips.
struct Bed {
    coll::Transport transport;
    coll::GroupShape shape;
    uint32_t n;
    std::unique_ptr<Cluster> cluster;
    ch::GroupPlan plan;
    std::unique_ptr<Launcher> launch;

    /// A mesh has `cols` columns (and wraps when `wrap`); rings and lines ignore both.
    Bed(coll::Transport t, coll::GroupShape s, uint32_t ranks, uint32_t message_bytes, uint32_t slots,
        uint32_t buffer_bytes = 4096, uint32_t cols = 0, bool wrap = false)
        : transport(t), shape(s), n(ranks) {
        kccl::set_assert_handler(&throw_handler);
        emu::ChipSpec chip;
        ch::GroupSpec g;
        g.transport = t;
        g.shape = s;
        g.message_bytes = message_bytes;
        g.slots = slots;
        g.buffer_bytes = buffer_bytes;
        g.worker_l1 = {0x10000, kWorkerL1, 0};
        g.mesh_cols = cols;
        g.mesh_wrap = wrap;
        if (t == coll::Transport::ipcq) {
            chip.grid_w = 4;
            chip.grid_h = 4;
            chip.eth_cores = 1;
            chip.worker_l1_bytes = kWorkerL1;
            chip.eth_l1_bytes = 16 * 1024;
            cluster = std::make_unique<Cluster>(emu::topology::single_chip(chip));
            for (uint32_t r = 0; r < n; ++r) g.workers.push_back({0, r % 4, r / 4});
        } else {
            chip.grid_w = 2;
            chip.grid_h = 1;
            chip.eth_cores = s == coll::GroupShape::mesh ? 4 : 2;
            chip.worker_l1_bytes = kWorkerL1;
            chip.eth_l1_bytes = 64 * 1024;
            g.eth_l1 = {0x1000, 64 * 1024, 0x800};
            if (n == 1) cluster = std::make_unique<Cluster>(emu::topology::single_chip(chip));
            else if (s == coll::GroupShape::mesh)
                cluster = std::make_unique<Cluster>(emu::topology::mesh(n / cols, cols, 1, wrap, chip));
            else if (s == coll::GroupShape::ring) cluster = std::make_unique<Cluster>(emu::topology::ring(n, 1, chip));
            else cluster = std::make_unique<Cluster>(emu::topology::line(n, 1, chip));
            for (uint32_t r = 0; r < n; ++r) g.workers.push_back({r, 0, 0});
            g.hops = ch::edm_hops_from(*cluster, g);
        }
        plan = ch::build_group(g);
        launch = std::make_unique<Launcher>(*cluster);
        ch::install_on(plan, *cluster, *launch);
    }

    /// Adds `kernel(hal)` on every worker and the EDM kernels (EDM transport).
    template <class K>
    void add(K kernel) {
        ch::add_kernels(plan, *launch, kernel, [](auto& hal) {
            kccl::edm::Edm<coll::EdmLinkConfig> e;
            const kccl::edm::Status st = e.run(hal);
            return st == kccl::edm::Status::ok ? uint64_t(0) : uint64_t(1000000 + uint32_t(st));
        });
    }
    /// Starts another program of the same launch: the EDM semaphores are set again (IPCQ queues
    /// resume from where the last program left them).
    void next_program() {
        launch->next_program();
        for (const auto& [c, a] : plan.zero_words) launch->init_word({c.chip, c.x, c.y}, a, 0);
    }
    CoreCoord worker(uint32_t r) const {
        const auto& c = plan.ranks[r].worker;
        return {c.chip, c.x, c.y};
    }
    RunReport run(const RunOptions& o) { return launch->run(o); }
    std::string describe() const {
        return std::string(name(transport)) + " " + name(shape) + " of " + std::to_string(n);
    }
};

/// Byte i of message m sent by rank `from` on lane `lane` in program `prog`.
inline uint8_t pattern(uint32_t from, uint32_t lane, uint32_t m, uint32_t i, uint32_t prog = 0) {
    uint32_t x = (from + 1) * 0x9e3779b1u ^ (lane + 7) * 0x85ebca6bu ^ (m + 1) * 0xc2b2ae35u ^ (i + 1) * 0x27d4eb2fu ^
                 (prog + 3) * 0x165667b1u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return uint8_t(x);
}

/// Length of message m on a link whose largest message is `max`: 0, 1, odd, max, max - 1, ...
inline uint32_t length(uint32_t m, uint32_t max) {
    switch (m % 7) {
        case 0: return 0;
        case 1: return 1;
        case 2: return 15;
        case 3: return max;
        case 4: return max - 1;
        case 5: return 17;
        default: return (m * 37u) % (max + 1);
    }
}

}  // namespace kccl::test::coll_link

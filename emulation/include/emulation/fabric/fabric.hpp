// kccl/emulation/fabric/fabric.hpp — the chip fabric (include/fabric/) on an emulated cluster:
// the fabric spec of a line, ring, T3000 or Galaxy, installing a plan, adding the router and
// worker kernels, dump hooks that say what each router and worker waits for, and a Bed that runs
// one kernel per rank with a FabricLink (the collectives' link concept, every rank reachable).
//
//   kccl::emu::fabric::BedOptions o;  o.topology = "galaxy";  o.kind = FabricKind::mesh_2d;
//   kccl::emu::fabric::Bed bed(o);
//   bed.add([](auto& hal, auto& link, const RankBuffers& b) { ...; link.quiesce(); return 0; });
//   RunReport r = bed.run(ro);                   // r.summary() names every stalled router / worker
//
// run_collective (emulation/collective.hpp, Transport::fabric) runs a collective on a bed in a
// few lines; the bed is for kernels of your own over the fabric link.
#pragma once

#include "../emulation.hpp"

#include <collectives/link_fabric.hpp>
#include <fabric/host/builder.hpp>
#include <fabric/router.hpp>
#include <fabric/worker.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kccl::emu::fabric {

namespace fc = ::kccl::fabric;
namespace fh = ::kccl::fabric::host;
using fh::FabricKind;

/// The fabric spec of `cluster`: chips[pos] at each position, one link per neighbouring pair
/// (the lowest free Ethernet core), the worker at (wx, wy) of every chip. 1D: positions in order
/// along the line / ring; mesh_2d: row-major with `cols` columns.
inline fh::FabricSpec spec_for(const Cluster& cluster, FabricKind kind, const std::vector<uint32_t>& chips, uint32_t cols = 0,
                               uint32_t wx = 0, uint32_t wy = 0) {
    fh::FabricSpec s;
    s.kind = kind;
    s.chips = chips;
    s.cols = cols;
    const uint32_t n = uint32_t(chips.size());
    for (uint32_t c : chips) s.workers.push_back({c, wx, wy});
    std::set<std::pair<uint32_t, uint32_t>> used;  // (chip, eth x)
    auto connect = [&](uint32_t a, uint32_t da, uint32_t b) {
        for (const auto& [ea, eb] : cluster.links_between(chips[a], chips[b])) {
            if (used.count({ea.chip, ea.x}) || used.count({eb.chip, eb.x})) continue;
            used.insert({ea.chip, ea.x});
            used.insert({eb.chip, eb.x});
            s.links.push_back({a, da, {ea.chip, ea.x, ea.y}, {eb.chip, eb.x, eb.y}});
            s.links.push_back({b, kccl::opposite(da), {eb.chip, eb.x, eb.y}, {ea.chip, ea.x, ea.y}});
            return;
        }
    };
    const uint32_t E = uint32_t(kccl::Dir::E), S = uint32_t(kccl::Dir::S);
    if (kind == FabricKind::mesh_2d) {
        for (uint32_t p = 0; p < n; ++p) {
            if ((p % cols) + 1 < cols) connect(p, E, p + 1);
            if (p + cols < n) connect(p, S, p + cols);
        }
    } else {
        for (uint32_t p = 0; p + 1 < n; ++p) connect(p, E, p + 1);
        if (kind == FabricKind::ring_1d) connect(n - 1, E, 0);
    }
    const ChipSpec& cs = cluster.spec().chip;
    s.tensix = ::kccl::hal::NocRect{0, 0, cs.grid_w - 1, cs.grid_h - 1};
    s.noc_cols = std::max(cs.grid_w, cs.eth_cores);
    s.noc_rows = cs.grid_h + (cs.dram_bytes ? 2 : 1);
    s.router_l1_end = cs.eth_l1_bytes;
    s.worker_l1_end = cs.worker_l1_bytes;
    return s;
}

/// Writes the plan's initial words (every semaphore a peer may increment before its owner starts).
inline void install(const fh::FabricPlan& p, Launcher& l) {
    for (const auto& w : p.init_words()) l.init_word({w.core.chip, w.core.x, w.core.y}, w.addr, w.value);
}

/// Adds the router kernel on every router core except those in `skip` (fault tests).
template <class RouterKernel>
void add_routers(const fh::FabricPlan& p, Launcher& l, RouterKernel k, const std::vector<fh::Core>& skip = {}) {
    for (const auto& r : p.routers) {
        bool skipped = false;
        for (const auto& c : skip) skipped = skipped || c == r.core;
        if (!skipped) l.add({r.core.chip, r.core.x, r.core.y}, k, r.args);
    }
}

/// The state of every router (from its status block), in plan order.
inline std::vector<std::string> router_states(const fh::FabricPlan& p, Cluster& c) {
    std::vector<std::string> out;
    for (const auto& r : p.routers) {
        uint32_t s[fc::status_words], fill0 = 0, inbox = 0;
        const CoreCoord cc{r.core.chip, r.core.x, r.core.y};
        c.read(cc, p.router.status(), s, sizeof s);
        c.read(cc, p.router.fill_sem(0), &fill0, 4);
        c.read(cc, p.router.credit_inbox(), &inbox, 4);
        out.push_back(fh::describe_router(p, r, s, fill0, inbox));
    }
    return out;
}

/// What worker `rank` waits for, with the routers it depends on.
inline std::string worker_state(const fh::FabricPlan& p, Cluster& c, uint32_t rank) {
    uint32_t s[fc::status_words];
    const auto& w = p.spec.workers[rank];
    c.read({w.chip, w.x, w.y}, p.worker.status(), s, sizeof s);
    return fh::describe_worker(p, rank, s, router_states(p, c));
}

/// Dump hooks on every worker and router that has a kernel: a stalled run's report names which
/// router, which channel and what it waits for.
inline void add_dump_hooks(const fh::FabricPlan& p, Cluster& c, Launcher& l, const std::vector<fh::Core>& skip = {}) {
    for (uint32_t r = 0; r < p.ranks(); ++r) {
        const auto& w = p.spec.workers[r];
        l.on_dump({w.chip, w.x, w.y}, [&p, &c, r] { return worker_state(p, c, r); });
    }
    for (size_t i = 0; i < p.routers.size(); ++i) {
        const auto& r = p.routers[i];
        bool skipped = false;
        for (const auto& k : skip) skipped = skipped || k == r.core;
        if (skipped) continue;
        l.on_dump({r.core.chip, r.core.x, r.core.y}, [&p, &c, i] { return router_states(p, c)[i]; });
    }
}

/// The router kernel with Config.
template <class Config = fc::RouterConfig>
struct RouterKernel {
    template <class H>
    uint64_t operator()(H& hal) const {
        fc::Router<Config> r;
        r.run(hal);
        return 0;
    }
};

/// A rank's buffers (bed arguments 0..3; the link's arguments start at bed_args).
struct RankBuffers {
    uint32_t rank = 0, ranks = 0, input_l1 = 0, output_l1 = 0, scratch_l1 = 0, buffer_bytes = 0;
};
inline constexpr uint32_t bed_args = 4;

struct BedOptions {
    std::string topology = "ring";   ///< line, ring, mesh (rows x cols), t3000, galaxy
    FabricKind kind = FabricKind::ring_1d;
    uint32_t ranks = 4;              ///< line / ring: chips; t3000: 8; galaxy: 32; mesh: rows * cols
    uint32_t rows = 0, cols = 0;     ///< mesh
    uint32_t message_bytes = 1024;
    uint32_t peer_slots = 4;
    uint32_t rx_slots = 16, tx_slots = 8;
    uint32_t header_bytes = 0;       ///< 0: 48 for 1D; 2D: tt-metal's size for the mesh (fc::mesh_header_bytes, 80 up to 19 hops)
    uint32_t buffer_bytes = 4096;    ///< each of input / output / scratch
    bool bubble_flow_control = true;
    uint32_t initial_counter = 0;    ///< FabricSpec::initial_counter (tests that cross the 2^32 wrap)
    uint32_t grid_w = 1, grid_h = 1; ///< Tensix cores per chip (the worker is (0, 0); NoC multicast tests use more)
    uint32_t dram_bytes = 0;         ///< a DRAM endpoint of this size per chip (Cluster::Chip::dram()); 0: none
    /// Worker cores per chip running the collective: 1 (the fabric link has one worker per
    /// position; anything else is a named FabricError). A sliced collective's worker bands (a
    /// tensor's worker_rect bands) run one after another on that worker.
    uint32_t workers_per_chip = 1;
};

/// The header size a bed takes: `o.header_bytes`, or by default 48 for 1D and, for 2D, tt-metal's
/// size for the mesh's longest route ((rows - 1) + (cols - 1) hops; fc::mesh_header_bytes).
inline uint32_t header_bytes_of(const BedOptions& o) {
    if (o.header_bytes) return o.header_bytes;
    if (o.kind != FabricKind::mesh_2d) return fc::header_base_bytes;
    const uint32_t hops = o.topology == "galaxy" ? 3 + 7 : o.topology == "t3000" ? 1 + 3
                        : (o.rows ? o.rows - 1 : 0) + (o.cols ? o.cols - 1 : 0);
    return fc::mesh_header_bytes(hops);
}

/// An emulated cluster with the fabric installed and one worker per chip.
struct Bed {
    BedOptions opt;
    std::unique_ptr<Cluster> cluster;
    fh::FabricPlan plan;
    std::unique_ptr<Launcher> launch;
    uint32_t buffers_l1 = 0;
    std::vector<fh::Core> skip_routers;  ///< routers that get no kernel (fault tests)

    explicit Bed(const BedOptions& o) : opt(o) {
        if (o.workers_per_chip != 1)
            throw fh::FabricError("chip fabric bed: " + std::to_string(o.workers_per_chip) +
                                  " workers per chip; the fabric link has one worker core per chip (the only producer "
                                  "of its routers' worker channel; several link workers behind a mux are not built). "
                                  "Allowed: 1; run a sliced collective's worker bands one after another on that worker");
        ChipSpec chip;
        chip.grid_w = o.grid_w;
        chip.grid_h = o.grid_h;
        chip.eth_l1_bytes = 256 * 1024;
        chip.dram_bytes = o.dram_bytes;
        std::vector<uint32_t> order;
        uint32_t cols = 0;
        ClusterSpec cs;
        const uint32_t hb = header_bytes_of(o);
        // worker L1: fabric block, then three buffers
        const uint32_t n_guess = o.topology == "galaxy" ? 32 : o.topology == "t3000" ? 8 : o.topology == "mesh" ? o.rows * o.cols : o.ranks;
        fc::WorkerLayout wl{0x1000, n_guess, o.peer_slots, o.message_bytes, hb};
        const uint64_t need = uint64_t(wl.end()) + 3ull * (o.buffer_bytes + 16) + 0x1000;
        chip.worker_l1_bytes = uint32_t(std::min<uint64_t>((need + 0xFFFF) & ~0xFFFFull, 0xF0000000ull));
        if (o.topology == "t3000") {
            chip.eth_cores = 16;
            cs = topology::t3000(chip);
            if (o.kind == FabricKind::mesh_2d) {
                for (uint32_t c = 0; c < 8; ++c) order.push_back(c);
                cols = 4;
            } else order = {0, 1, 2, 3, 7, 6, 5, 4};
        } else if (o.topology == "galaxy") {
            chip.eth_cores = 16;
            cs = topology::galaxy(chip);
            if (o.kind == FabricKind::mesh_2d) {
                for (uint32_t c = 0; c < 32; ++c) order.push_back(c);
                cols = 8;
            } else {  // a cycle through the 4 x 8 mesh (a line drops its closing link): row 0 left to
                      // right, rows 1..3 snaking through columns 7..1, then up column 0
                for (uint32_t c = 0; c < 8; ++c) order.push_back(c);
                for (uint32_t r = 1; r < 4; ++r)
                    for (uint32_t k = 0; k < 7; ++k) order.push_back(r * 8 + (r % 2 ? 7 - k : 1 + k));
                for (uint32_t r = 3; r >= 1; --r) order.push_back(r * 8);
            }
        } else if (o.topology == "mesh") {
            chip.eth_cores = 4;
            cs = topology::mesh(o.rows, o.cols, 1, false, chip);
            for (uint32_t c = 0; c < o.rows * o.cols; ++c) order.push_back(c);
            cols = o.cols;
        } else if (o.topology == "ring" || o.topology == "line") {
            chip.eth_cores = 2;
            cs = o.topology == "ring" ? topology::ring(o.ranks, 1, chip) : topology::line(o.ranks, 1, chip);
            for (uint32_t c = 0; c < o.ranks; ++c) order.push_back(c);
        } else {
            throw fh::FabricError("chip fabric bed: unknown topology '" + o.topology + "' (allowed: line, ring, mesh, t3000, galaxy)");
        }
        cluster = std::make_unique<Cluster>(cs);
        fh::FabricSpec s = spec_for(*cluster, o.kind, order, cols);
        s.header_bytes = hb;
        s.message_bytes = o.message_bytes;
        s.peer_slots = o.peer_slots;
        s.rx_slots = o.rx_slots;
        s.tx_slots = o.tx_slots;
        s.bubble_flow_control = o.bubble_flow_control;
        s.initial_counter = o.initial_counter;
        s.worker_base = 0x1000;
        plan = fh::build_fabric(s);
        buffers_l1 = (plan.worker.end() + 15u) & ~15u;
        launch = std::make_unique<Launcher>(*cluster);
        install(plan, *launch);
    }

    uint32_t ranks() const { return plan.ranks(); }
    CoreCoord worker(uint32_t r) const {
        const auto& w = plan.spec.workers[r];
        return {w.chip, w.x, w.y};
    }
    RankBuffers buffers(uint32_t r) const {
        const uint32_t b = (opt.buffer_bytes + 15u) & ~15u;
        return {r, ranks(), buffers_l1, buffers_l1 + b, buffers_l1 + 2 * b, opt.buffer_bytes};
    }

    /// Adds `kernel(hal, link, RankBuffers)` on every worker (link: FabricLink<H, LinkConfig>) and
    /// the routers (Router<RConfig>), with the dump hooks.
    template <class LinkConfig = fc::FabricLinkConfig, class RConfig = fc::RouterConfig, class K>
    void add(K kernel) {
        for (uint32_t r = 0; r < ranks(); ++r) {
            const RankBuffers b = buffers(r);
            std::vector<uint32_t> args = {b.input_l1, b.output_l1, b.scratch_l1, b.buffer_bytes};
            const auto& wa = plan.worker_args(r);
            args.insert(args.end(), wa.begin(), wa.end());
            launch->add(worker(r),
                        [kernel, b](auto& hal) -> uint64_t {
                            using H = std::remove_reference_t<decltype(hal)>;
                            fc::FabricLink<H, LinkConfig> link(hal, bed_args);
                            return kernel(hal, link, b);
                        },
                        args);
        }
        add_routers(plan, *launch, RouterKernel<RConfig>{}, skip_routers);
        add_dump_hooks(plan, *cluster, *launch, skip_routers);
    }
    const uint8_t* output(uint32_t r) { return cluster->l1(worker(r)).data() + buffers(r).output_l1; }
    const uint8_t* input(uint32_t r) { return cluster->l1(worker(r)).data() + buffers(r).input_l1; }
    RunReport run(const RunOptions& o) { return launch->run(o); }
};

}  // namespace kccl::emu::fabric

// kccl/collectives/host/plan.hpp — host side: ONE plan per collective group, for both transports.
//
// HOST-ONLY (std::vector, std::string, exceptions). The emulation and hardware use the same plan:
// it computes every address and argument; a small writer (emulation: install_on / add_kernels
// below; hardware: SetRuntimeArgs, CreateSemaphore, a buffer write) carries them to the cores.
//
//   kccl::coll::host::GroupSpec g;
//   g.transport = Transport::edm;  g.shape = GroupShape::ring;
//   g.workers = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};                 // one worker core per rank, ring order
//   g.hops = edm_hops_from(cluster, g);                           // EDM: the Ethernet link of each hop
//   g.message_bytes = 4096; g.slots = 4; g.buffer_bytes = 64 * 1024;
//   g.worker_l1 = {0x10000, 1 << 20};  g.eth_l1 = {0x1000, 256 * 1024, 0x800};
//   auto plan = kccl::coll::host::build_group(g);                 // validates (PlanError), lays out
//   plan.worker_args(rank)        -> the kernel args of rank's worker (coll::load_group_args reads them)
//   plan.edm_kernels()            -> each EDM core and its args (EDM transport)
//   plan.emit(writer)             -> writer.write(core, addr, bytes, n) / writer.init_word(core, addr, v)
//
// LAYOUT
//   Shapes: ring and line (ranks in ring order: rank r's "next" neighbour is r+1, mod ranks on a
//   ring, none after the last rank of a line; "prev" is r-1) and mesh (rows x mesh_cols, rank =
//   row * cols + col, torus links with mesh_wrap along dimensions of 3 or more). The group's
//   links are group_edges(spec). Directions are kccl::Dir numbers on BOTH transports: N 0, S 1,
//   E 2, W 3; next = E, prev = W (along the row in a mesh).
//     IPCQ: all ranks on one chip; one queue pair per edge; the IPCQ block starts at worker_l1.base.
//     EDM:  edge i joins its two ranks' chips over the Ethernet link hops[i] = {eth core on the
//           first rank's chip, eth core on the second's}; its two EDMs carry 2 channels per worker
//           of the link (worker w: channel 2w first -> second, channel 2w+1 back; one worker each,
//           not shared, worker-initiated termination). Worker L1 from worker_l1.base: 2
//           semaphores per direction (tx, rx; 16 B apart; 128 B), then one landing buffer per
//           receiving direction the shape uses (ring / line: E and W; mesh: all four).
//   Shape all_pairs ("fully connected"): every rank has a direction to every other rank; rank r
//   reaches q on direction all_pairs_dir(r, q) = (q < r ? q : q - 1); p - 1 directions per rank,
//   so at most max_all_pairs_ranks = max_group_dirs + 1 = 9 ranks (a named PlanError above).
//     IPCQ: one queue pair per rank pair, direction set coll::PeerDirSet (the kernel must use
//           IpcqLink<H, PeerDirSet>); the NoC reaches any core of the chip, so this is physical.
//     EDM:  one Ethernet link per chip pair (an emulated cluster wired all-to-all; T3000 / Galaxy
//           are not: forwarding through intermediate chips, a fabric, is not built); worker L1
//           holds p - 1 semaphore pairs and p - 1 landing buffers.
//   L1 grows with p - 1 directions (IPCQ: slots x message per direction each way; EDM: one landing
//   buffer per direction); a group that does not fit is a PlanError naming the bytes needed.
//   Then, on every worker, three buffers of buffer_bytes each (16-byte aligned): input, output,
//   scratch. Everything must fit worker_l1 (and eth_l1 for the EDM channels).
//
// SEVERAL WORKERS PER LINK (EDM): GroupSpec::more_workers adds workers 1 .. W-1 to every rank
// (more_workers[w - 1][rank], a core on the rank's chip). Worker w of every rank forms a group of
// its own (its own ranks' view: the same directions, peers and L1 layout as worker 0, on its own
// core) whose messages travel on its own channels of the SAME EDMs: each Ethernet link's EDM
// carries 2 W channels, so W <= max_workers_per_link = EdmLinkConfig::max_channels / 2 = 4.
// worker_args(rank, w) is worker w's block; add_worker_kernels(plan, launcher, w, kernel) adds
// one worker index's kernels (add_kernels adds every worker with the same kernel). IPCQ takes no
// more_workers (a "link" there is only a partition: plan one group per worker instead).
#pragma once

#include "../executor.hpp"
#include "../link.hpp"
#include "../link_edm.hpp"
#include "../link_ipcq.hpp"

#include <common/coord.hpp>
#include <common/direction.hpp>
#include <common/host/error.hpp>
#include <edm/host/builder.hpp>
#include <ipcq/host/plan.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::coll::host {

/// Every invalid group; the message says what was wrong and what is allowed.
struct PlanError : ErrorOf<Errc::plan> {
    using ErrorOf::ErrorOf;
};

using Core = CoreCoord;  ///< a worker or Ethernet core

/// The Ethernet link of one hop: `a` on rank r's chip, `b` on rank r+1's chip.
struct Hop {
    Core a, b;
};

/// An L1 range [base, end) a plan may use; `reserved` only for Ethernet cores (edm::reserved_bytes
/// at that address, outside [base, end), the same for every program).
struct L1Range {
    uint32_t base = 0;
    uint32_t end = 0;
    uint32_t reserved = 0;
};

struct GroupSpec {
    Transport transport = Transport::ipcq;
    GroupShape shape = GroupShape::ring;
    std::vector<Core> workers;   ///< one worker core per rank, in ring order (worker 0 of each link)
    /// EDM: workers 1 .. W-1 of every link, more_workers[w - 1][rank] on rank's chip; they share
    /// the group's Ethernet links and EDMs (2 channels each per link). Empty: one worker per link.
    std::vector<std::vector<Core>> more_workers;
    uint32_t mesh_cols = 0;      ///< mesh: columns (rank = row * mesh_cols + col)
    bool mesh_wrap = false;      ///< mesh: torus links along dimensions of 3 or more
    std::vector<Hop> hops;       ///< EDM: the Ethernet link of each group_edges() entry, in that order
    uint32_t message_bytes = 4096;  ///< largest message (IPCQ slot / EDM packet), multiple of 16
    uint32_t slots = 4;             ///< IPCQ n_slots / EDM buffers per channel
    ipcq::Backpressure backpressure = ipcq::Backpressure::poll;  ///< IPCQ
    uint32_t buffer_bytes = 0;      ///< each of input / output / scratch, per rank
    L1Range worker_l1{0x10000, 0, 0};
    L1Range eth_l1{0x1000, 0, 0x800};
    /// Test hook: the first value of every 32-bit message counter of the group's links (IPCQ:
    /// QueueConfig::initial_counter; EDM: every channel's ChannelSpec::initial_counter). 0
    /// normally; a test sets 2^32 - k so that every link crosses the counter wrap after k
    /// messages. Nothing else changes.
    uint32_t initial_counter = 0;
};

/// Where one rank's pieces are.
struct RankLayout {
    Core worker;
    uint32_t next_dir = no_dir, prev_dir = no_dir, directions = 0;
    std::vector<uint32_t> peer_of_dir;  ///< max_group_dirs entries
    uint32_t input = 0, output = 0, scratch = 0, l1_end = 0;
    std::vector<uint32_t> link_args;
};

struct EdmKernel {
    Core core;
    std::vector<uint32_t> args;
};

class GroupPlan {
public:
    GroupSpec spec;
    std::vector<RankLayout> ranks;                     ///< worker 0 of every rank
    std::vector<std::vector<RankLayout>> more_ranks;   ///< workers 1.. : more_ranks[w - 1][rank]
    std::vector<EdmKernel> edm;                        ///< EDM transport: one per Ethernet core used
    std::vector<std::pair<Core, uint32_t>> zero_words; ///< semaphores the host sets to 0 before a launch
    std::vector<ipcq::host::RankPlan> ipcq_images;     ///< IPCQ transport: the block of each rank
    uint32_t ipcq_block = 0;

    uint32_t size() const { return uint32_t(ranks.size()); }
    /// Workers of every rank on each link (1 + GroupSpec::more_workers.size()).
    uint32_t workers_per_link() const { return 1 + uint32_t(more_ranks.size()); }
    /// Messages one direction holds before a sender blocks (IPCQ: n_slots; EDM: the receiver's
    /// buffers — the sender EDM's own copies come on top).
    uint32_t pipeline_messages() const { return spec.slots; }

    /// The whole argument block of rank's worker `worker`: the group block, then the link's block.
    std::vector<uint32_t> worker_args(uint32_t rank, uint32_t worker = 0) const {
        const RankLayout& l = at(rank, worker);
        std::vector<uint32_t> v(group_args::count, 0);
        v[group_args::magic] = group_magic;
        v[group_args::transport] = uint32_t(spec.transport);
        v[group_args::rank] = rank;
        v[group_args::ranks] = size();
        v[group_args::shape] = uint32_t(spec.shape);
        v[group_args::next_dir] = l.next_dir;
        v[group_args::prev_dir] = l.prev_dir;
        v[group_args::directions] = l.directions;
        for (uint32_t d = 0; d < max_group_dirs; ++d) v[group_args::peer_of_dir + d] = l.peer_of_dir[d];
        v[group_args::input_l1] = l.input;
        v[group_args::output_l1] = l.output;
        v[group_args::scratch_l1] = l.scratch;
        v[group_args::buffer_bytes] = spec.buffer_bytes;
        v[group_args::max_message_bytes] = spec.message_bytes;
        v[group_args::link_args] = group_args::count;
        v[group_args::pipeline_messages] = pipeline_messages();
        v[group_args::mesh_cols] = spec.shape == GroupShape::mesh ? spec.mesh_cols : 0;
        v.insert(v.end(), l.link_args.begin(), l.link_args.end());
        return v;
    }
    const std::vector<EdmKernel>& edm_kernels() const { return edm; }
    const RankLayout& at(uint32_t rank, uint32_t worker = 0) const {
        if (rank >= ranks.size())
            throw PlanError("collective plan: rank " + std::to_string(rank) + " is out of range (the group has " +
                            std::to_string(ranks.size()) + " ranks)");
        if (worker >= workers_per_link())
            throw PlanError("collective plan: worker " + std::to_string(worker) + " is out of range (the group has " +
                            std::to_string(workers_per_link()) + " worker(s) per link)");
        return worker ? more_ranks[worker - 1][rank] : ranks[rank];
    }

    /// Writes every initial memory content: `w.write(Core, addr, const uint8_t*, size_t)` and
    /// `w.init_word(Core, addr, uint32_t)`. Call before every launch that starts the group afresh.
    template <class W>
    void emit(W& w) const {
        for (uint32_t r = 0; r < ipcq_images.size(); ++r)
            w.write(ranks[r].worker, ipcq_block, ipcq_images[r].image.data(), ipcq_images[r].image.size());
        for (const auto& [c, a] : zero_words) w.init_word(c, a, 0u);
    }
};

inline const char* shape_name(GroupShape s) {
    return s == GroupShape::ring ? "ring" : s == GroupShape::line ? "line" : s == GroupShape::mesh ? "mesh"
         : s == GroupShape::all_pairs ? "all_pairs" : "?";
}

namespace detail {
inline uint32_t round16(uint64_t v) { return uint32_t((v + 15) & ~uint64_t(15)); }
inline std::string core_name(const Core& c) {
    return "chip " + std::to_string(c.chip) + " (" + std::to_string(c.x) + "," + std::to_string(c.y) + ")";
}
}  // namespace detail

/// Largest all_pairs group: one direction per other rank, at most max_group_dirs directions.
inline constexpr uint32_t max_all_pairs_ranks = max_group_dirs + 1;
/// Most workers per link (GroupSpec::more_workers): each takes 2 channels of every EDM it uses.
inline constexpr uint32_t max_workers_per_link = EdmLinkConfig::max_channels / 2;

/// One link of the group: rank a's direction da joins rank b's direction db.
struct Edge {
    uint32_t a = 0, da = 0, b = 0, db = 0;
};

/// The group's links in plan order (GroupSpec::hops follows this order for EDM):
///   ring / line: for r = 0, 1, ...: (r, E) <-> (r+1, W); the ring closes with (n-1, E) <-> (0, W).
///   mesh:        for r = 0, 1, ... (row-major): (r, E) <-> east neighbour's W, then
///                (r, S) <-> south neighbour's N; wrap links only along dimensions of 3 or more
///                (a dimension of 2 would join the same pair twice).
///   all_pairs:   for a = 0, 1, ...: for b = a+1, ...: (a, all_pairs_dir(a, b)) <-> (b, all_pairs_dir(b, a)).
inline std::vector<Edge> group_edges(const GroupSpec& g) {
    const uint32_t n = uint32_t(g.workers.size());
    std::vector<Edge> e;
    if (n < 2) return e;
    if (g.shape == GroupShape::all_pairs) {
        for (uint32_t a = 0; a < n; ++a)
            for (uint32_t b = a + 1; b < n; ++b) e.push_back({a, all_pairs_dir(a, b), b, all_pairs_dir(b, a)});
        return e;
    }
    if (g.shape == GroupShape::mesh) {
        const uint32_t cols = g.mesh_cols, rows = cols ? n / cols : 0;
        for (uint32_t r = 0; r < n; ++r) {
            const uint32_t row = r / cols, col = r % cols;
            if (col + 1 < cols || (g.mesh_wrap && cols >= 3)) e.push_back({r, Dir::E, row * cols + (col + 1) % cols, Dir::W});
            if (row + 1 < rows || (g.mesh_wrap && rows >= 3)) e.push_back({r, Dir::S, ((row + 1) % rows) * cols + col, Dir::N});
        }
        return e;
    }
    for (uint32_t r = 0; r < n; ++r)
        if (g.shape == GroupShape::ring || r + 1 < n) e.push_back({r, Dir::E, (r + 1) % n, Dir::W});
    return e;
}

/// Validates the spec and lays out both transports' resources.
inline GroupPlan build_group(const GroupSpec& g) {
    const std::string pfx = "collective plan: ";
    const uint32_t n = uint32_t(g.workers.size());
    if (n == 0) throw PlanError(pfx + "the group has no ranks; give one worker core per rank (at least 1)");
    if (n > 1024) throw PlanError(pfx + std::to_string(n) + " ranks; at most 1024 are allowed");
    if (g.message_bytes == 0 || g.message_bytes % 16)
        throw PlanError(pfx + "message_bytes " + std::to_string(g.message_bytes) +
                        " must be a positive multiple of 16 (an Ethernet word)");
    if (g.slots == 0) throw PlanError(pfx + "slots is 0; at least 1 message buffer per direction is needed");
    if (g.shape != GroupShape::ring && g.shape != GroupShape::line && g.shape != GroupShape::mesh &&
        g.shape != GroupShape::all_pairs)
        throw PlanError(pfx + "shape " + std::to_string(uint32_t(g.shape)) +
                        " is unknown; allowed: ring, line, mesh, all_pairs");
    const bool all_pairs = g.shape == GroupShape::all_pairs;
    if (all_pairs && n > max_all_pairs_ranks)
        throw PlanError(pfx + "an all_pairs group of " + std::to_string(n) + " ranks needs " + std::to_string(n - 1) +
                        " directions per rank (one per other rank), but a link has at most max_group_dirs = " +
                        std::to_string(max_group_dirs) + " (IPCQ kMaxDirs, EDM edm_link_max_dirs); allowed: at most " +
                        std::to_string(max_all_pairs_ranks) + " ranks (larger groups need routed forwarding, not built)");
    if (g.shape == GroupShape::mesh && (g.mesh_cols == 0 || n % g.mesh_cols))
        throw PlanError(pfx + "a mesh of " + std::to_string(n) + " ranks with " + std::to_string(g.mesh_cols) +
                        " columns is not rectangular (allowed: mesh_cols >= 1 dividing the number of ranks)");
    if (g.worker_l1.base % 64)
        throw PlanError(pfx + "worker_l1.base " + std::to_string(g.worker_l1.base) + " must be 64-byte aligned");
    if (g.worker_l1.end <= g.worker_l1.base)
        throw PlanError(pfx + "worker_l1 [" + std::to_string(g.worker_l1.base) + ", " + std::to_string(g.worker_l1.end) +
                        ") is empty; give the L1 range the plan may use on each worker (end > base)");
    for (uint32_t a = 0; a < n; ++a)
        for (uint32_t b = a + 1; b < n; ++b)
            if (g.workers[a] == g.workers[b])
                throw PlanError(pfx + "ranks " + std::to_string(a) + " and " + std::to_string(b) + " are both on " +
                                detail::core_name(g.workers[a]) + "; one rank per worker core");
    const uint32_t W = 1 + uint32_t(g.more_workers.size());
    if (W > 1) {
        if (g.transport != Transport::edm)
            throw PlanError(pfx + "more_workers (" + std::to_string(W) + " workers per link) is for the EDM transport, whose "
                            "Ethernet links the workers share; an IPCQ link is only a partition of the chip: plan one "
                            "group per worker instead");
        if (W > max_workers_per_link)
            throw PlanError(pfx + std::to_string(W) + " workers per link need " + std::to_string(2 * W) +
                            " EDM channels on every Ethernet link (2 per worker, one each way), but an EDM has at most " +
                            std::to_string(EdmLinkConfig::max_channels) + " (EdmLinkConfig::max_channels); allowed: at most " +
                            std::to_string(max_workers_per_link) + " workers per link (more_workers.size() <= " +
                            std::to_string(max_workers_per_link - 1) + ")");
        for (uint32_t w = 1; w < W; ++w) {
            const std::vector<Core>& ws = g.more_workers[w - 1];
            if (ws.size() != n)
                throw PlanError(pfx + "more_workers[" + std::to_string(w - 1) + "] (worker " + std::to_string(w) +
                                " of every rank) names " + std::to_string(ws.size()) + " cores; it needs one per rank (" +
                                std::to_string(n) + ")");
            for (uint32_t r = 0; r < n; ++r)
                if (ws[r].chip != g.workers[r].chip)
                    throw PlanError(pfx + "worker " + std::to_string(w) + " of rank " + std::to_string(r) + " is on " +
                                    detail::core_name(ws[r]) + ", but rank " + std::to_string(r) + " is on chip " +
                                    std::to_string(g.workers[r].chip) + "; a rank's workers share its chip and its Ethernet links");
        }
        auto core_of = [&](uint32_t w, uint32_t r) -> const Core& { return w ? g.more_workers[w - 1][r] : g.workers[r]; };
        for (uint32_t i = 0; i < W * n; ++i)
            for (uint32_t j = i + 1; j < W * n; ++j)
                if (core_of(i / n, i % n) == core_of(j / n, j % n))
                    throw PlanError(pfx + "worker " + std::to_string(i / n) + " of rank " + std::to_string(i % n) +
                                    " and worker " + std::to_string(j / n) + " of rank " + std::to_string(j % n) +
                                    " are both on " + detail::core_name(core_of(i / n, i % n)) + "; one worker per core");
    }
    const std::vector<Edge> edges = group_edges(g);

    GroupPlan plan;
    plan.spec = g;
    plan.ranks.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
        plan.ranks[r].worker = g.workers[r];
        plan.ranks[r].peer_of_dir.assign(max_group_dirs, no_dir);
        plan.ranks[r].directions = all_pairs ? (n > 1 ? n - 1 : 0) : num_dirs;
    }
    for (const Edge& e : edges) {
        plan.ranks[e.a].peer_of_dir[e.da] = e.b;
        plan.ranks[e.b].peer_of_dir[e.db] = e.a;
    }
    // next = E (towards rank+1 in a ring / line; along the row in a mesh), prev = W.
    for (uint32_t r = 0; r < n; ++r) {
        RankLayout& l = plan.ranks[r];
        if (all_pairs) {
            if (n > 1) {
                l.next_dir = all_pairs_dir(r, (r + 1) % n);
                l.prev_dir = all_pairs_dir(r, (r + n - 1) % n);
            }
            continue;
        }
        if (l.peer_of_dir[Dir::E] != no_dir) l.next_dir = Dir::E;
        if (l.peer_of_dir[Dir::W] != no_dir) l.prev_dir = Dir::W;
    }
    // A 2-rank ring has two links between the same pair: peer_of_dir names the peer in both, and
    // dir_to(peer) returns the first (N, S, E, W order); schedules address next / prev explicitly.
    // Workers 1.. of every rank see the same group as worker 0, on their own cores.
    plan.more_ranks.assign(W - 1, plan.ranks);
    for (uint32_t w = 1; w < W; ++w)
        for (uint32_t r = 0; r < n; ++r) plan.more_ranks[w - 1][r].worker = g.more_workers[w - 1][r];
    auto lay = [&plan](uint32_t w, uint32_t r) -> RankLayout& { return w ? plan.more_ranks[w - 1][r] : plan.ranks[r]; };

    uint64_t at_end = 0;  // per-rank link L1 end (same for all ranks)
    if (g.transport == Transport::ipcq) {
        for (uint32_t r = 1; r < n; ++r)
            if (g.workers[r].chip != g.workers[0].chip)
                throw PlanError(pfx + "IPCQ joins cores of one chip, but rank " + std::to_string(r) + " is on chip " +
                                std::to_string(g.workers[r].chip) + " and rank 0 on chip " +
                                std::to_string(g.workers[0].chip) + " (use the EDM transport between chips)");
        if (!g.hops.empty())
            throw PlanError(pfx + "hops are Ethernet links of the EDM transport; an IPCQ group takes none");
        auto lay_out = [&](auto dirs_tag) {
            using Dirs = decltype(dirs_tag);
            ipcq::host::Topology<Dirs> topo(n, std::string("collective ") + shape_name(g.shape));
            for (const Edge& e : edges) topo.connect(e.a, e.da, e.b, e.db);
            std::vector<ipcq::host::CoreXY> cores;
            for (const Core& c : g.workers) cores.push_back({c.x, c.y});
            ipcq::host::QueueConfig qc;
            qc.n_slots = g.slots;
            qc.slot_size = g.message_bytes;
            qc.mode = g.backpressure;
            qc.initial_counter = g.initial_counter;
            ipcq::host::MemoryConfig mem;
            mem.block_l1 = g.worker_l1.base;
            mem.l1_bytes = g.worker_l1.end;
            ipcq::host::Plan<Dirs> ip;
            try {
                ip = ipcq::host::build_plan(topo, cores, qc, mem);
            } catch (const std::invalid_argument& e) {
                throw PlanError(pfx + "IPCQ queues" + (all_pairs ? " (all_pairs: " + std::to_string(n > 1 ? n - 1 : 0) +
                                                                       " queue pairs per rank)" : std::string()) +
                                ": " + e.what());
            }
            plan.ipcq_block = mem.block_l1;
            for (uint32_t r = 0; r < n; ++r) {
                plan.ipcq_images.push_back(ip.ranks[r]);
                plan.ranks[r].link_args = ip.runtime_args(r);
                at_end = ip.ranks[r].l1_end > at_end ? ip.ranks[r].l1_end : at_end;
            }
        };
        if (all_pairs) lay_out(PeerDirSet{});
        else lay_out(ipcq::Nsew{});
    } else {
        if (g.hops.size() != edges.size())
            throw PlanError(pfx + "an EDM " + shape_name(g.shape) + " of " + std::to_string(n) + " ranks needs " +
                            std::to_string(edges.size()) + " hops (one Ethernet link per neighbour pair, in group_edges "
                            "order), got " + std::to_string(g.hops.size()));
        if (!edges.empty() && g.eth_l1.end <= g.eth_l1.base)
            throw PlanError(pfx + "eth_l1 [" + std::to_string(g.eth_l1.base) + ", " + std::to_string(g.eth_l1.end) +
                            ") is empty; give the Ethernet-core L1 the EDM channels may use");
        for (uint32_t h = 0; h < edges.size(); ++h) {
            const Hop& hp = g.hops[h];
            const uint32_t r = edges[h].a, s = edges[h].b;
            if (hp.a.chip != g.workers[r].chip || hp.b.chip != g.workers[s].chip)
                throw PlanError(pfx + "hop " + std::to_string(h) + " joins " + detail::core_name(hp.a) + " and " +
                                detail::core_name(hp.b) + ", but rank " + std::to_string(r) + " is on chip " +
                                std::to_string(g.workers[r].chip) + " and rank " + std::to_string(s) + " on chip " +
                                std::to_string(g.workers[s].chip) + " (hop " + std::to_string(h) + " must join rank " +
                                std::to_string(r) + "'s chip to rank " + std::to_string(s) + "'s)");
            if (g.workers[r].chip == g.workers[s].chip)
                throw PlanError(pfx + "ranks " + std::to_string(r) + " and " + std::to_string(s) +
                                " are on the same chip; the EDM transport joins ranks on different chips");
            for (uint32_t k = 0; k < h; ++k)
                for (const Core* c : {&g.hops[k].a, &g.hops[k].b})
                    if (*c == hp.a || *c == hp.b)
                        throw PlanError(pfx + "hops " + std::to_string(k) + " and " + std::to_string(h) +
                                        " both use the Ethernet core " + detail::core_name(*c) +
                                        "; each hop needs its own link (a 2-rank ring needs two links between the chips)");
        }
        // Worker L1: 2 semaphores per direction (tx, rx; 16 B apart), then one landing buffer per
        // receiving direction the shape uses (ring / line: E and W; mesh: all four).
        // all_pairs: p - 1 directions, each with its semaphores and landing buffer.
        const uint32_t ndirs = all_pairs ? (n > 1 ? n - 1 : 0) : num_dirs;
        const uint32_t sem0 = g.worker_l1.base;
        auto sem = [&](uint32_t dir, bool rx) { return sem0 + 32 * dir + (rx ? 16 : 0); };
        const uint32_t land0 = sem0 + 32 * (ndirs ? ndirs : 1);
        const bool every_dir = g.shape == GroupShape::mesh || all_pairs;
        auto landing = [&](uint32_t dir) { return land0 + (every_dir ? dir : dir - Dir::E) * g.message_bytes; };
        at_end = uint64_t(land0) + uint64_t(all_pairs ? ndirs : g.shape == GroupShape::mesh ? 4 : 2) * g.message_bytes;
        for (uint32_t w = 0; w < W; ++w)
            for (uint32_t r = 0; r < n; ++r) {
                auto& la = lay(w, r).link_args;
                la.assign(edm_link_args(ndirs), 0);
                la[0] = ndirs;
            }
        auto put = [](std::vector<uint32_t>& dst, uint32_t at, const std::vector<uint32_t>& src) {
            for (size_t i = 0; i < src.size(); ++i) dst[at + i] = src[i];
        };
        for (uint32_t h = 0; h < edges.size(); ++h) {
            const Hop& hp = g.hops[h];
            const Edge& e = edges[h];
            // Worker w of the link: channel 2w carries rank e.a -> e.b, channel 2w + 1 back.
            edm::host::EdmEnd a, b;
            for (uint32_t w = 0; w < W; ++w) {
                const Core& wr = lay(w, e.a).worker;
                const Core& ws = lay(w, e.b).worker;
                edm::host::ChannelSpec c0, c1;
                for (auto* c : {&c0, &c1}) {
                    c->buffers = g.slots;
                    c->packet_bytes = g.message_bytes;
                    c->sharing = edm::Sharing::not_shared;
                    c->initial_counter = g.initial_counter;
                }
                c0.workers = {{wr.x, wr.y, sem(e.da, false)}};  // a sends on da
                a.add_sender(c0);
                c0.workers = {{ws.x, ws.y, sem(e.db, true)}};   // b receives on db
                b.add_receiver(c0);
                c1.workers = {{ws.x, ws.y, sem(e.db, false)}};  // b sends on db
                b.add_sender(c1);
                c1.workers = {{wr.x, wr.y, sem(e.da, true)}};   // a receives on da
                a.add_receiver(c1);
            }
            edm::host::LinkPlan lp;
            try {
                lp = edm::host::build_link(a, b, {g.eth_l1.base, g.eth_l1.end - g.eth_l1.base, g.eth_l1.reserved},
                                           edm::host::Limits::of<EdmLinkConfig>());
            } catch (const std::invalid_argument& ex) {
                throw PlanError(pfx + "EDM of hop " + std::to_string(h) +
                                (W > 1 ? " (" + std::to_string(W) + " workers per link, " + std::to_string(2 * W) + " channels)"
                                       : std::string()) + ": " + ex.what());
            }
            plan.edm.push_back({hp.a, lp.edm_args(edm::host::Side::a)});
            plan.edm.push_back({hp.b, lp.edm_args(edm::host::Side::b)});
            // One end's direction: it sends on channel `send_ch` and receives on `recv_ch`.
            auto fill = [&](std::vector<uint32_t>& args, uint32_t dir, edm::host::Side side, const Core& eth,
                            uint32_t send_ch, uint32_t recv_ch) {
                const uint32_t base = 1 + dir * edm_link_dir_args;
                args[base] = edm_link_flag_send | edm_link_flag_recv;
                args[base + 1] = landing(dir);
                put(args, base + 2, lp.worker_args(side, send_ch, 0, eth.x, eth.y));
                put(args, base + 2 + edm::args::w_count, lp.worker_args(side, recv_ch, 0, eth.x, eth.y));
            };
            for (uint32_t w = 0; w < W; ++w) {
                // Rank a (direction da, end a) sends channel 2w and receives 2w + 1; rank b the reverse.
                fill(lay(w, e.a).link_args, e.da, edm::host::Side::a, hp.a, 2 * w, 2 * w + 1);
                fill(lay(w, e.b).link_args, e.db, edm::host::Side::b, hp.b, 2 * w + 1, 2 * w);
                for (bool recv : {false, true}) {
                    plan.zero_words.push_back({lay(w, e.a).worker, sem(e.da, recv)});
                    plan.zero_words.push_back({lay(w, e.b).worker, sem(e.db, recv)});
                }
            }
        }
    }
    // Buffers after the link's L1 (the same addresses on every worker of a rank).
    for (uint32_t w = 0; w < W; ++w)
    for (uint32_t r = 0; r < n; ++r) {
        RankLayout& l = lay(w, r);
        uint64_t off = detail::round16(at_end);
        l.input = uint32_t(off);
        off += detail::round16(g.buffer_bytes);
        l.output = uint32_t(off);
        off += detail::round16(g.buffer_bytes);
        l.scratch = uint32_t(off);
        off += detail::round16(g.buffer_bytes);
        if (off > g.worker_l1.end)
            throw PlanError(pfx + "rank " + std::to_string(r) + " needs worker L1 up to " + std::to_string(off) +
                            " (link from " + std::to_string(g.worker_l1.base) + " to " + std::to_string(at_end) +
                            ", then 3 buffers of " + std::to_string(g.buffer_bytes) + " bytes) but worker_l1 ends at " +
                            std::to_string(g.worker_l1.end) + (all_pairs ? " (all_pairs: " + std::to_string(n - 1) +
                            " directions per rank)" : std::string()) +
                            " (allowed: everything fits; smaller buffers, fewer slots or messages)");
        l.l1_end = uint32_t(off);
    }
    return plan;
}

/// Rejects, before launch, the executor parameters of one rank that the device would reject
/// (coll::check_exec_params: ranks, root, peer, chunks, chunk_elems, buffers beyond 32-bit L1 or
/// overlapping) and a shape validate() does not accept; throws PlanError with the device's
/// sentence. `uses_prepared`: the reducer prepares its input (Red::has_prepare) and the op reduces.
inline void require_exec_params(const ExecParams& p, uint32_t elem_bytes, bool uses_prepared) {
    const ParamCheck c = check_exec_params(p, elem_bytes, uses_prepared);
    if (!c.ok()) {
        kccl::detail::Msg m;
        describe_param_error(m, p, c, elem_bytes);
        throw PlanError(m.buf);
    }
    if (const char* err = validate(p.shape))
        throw PlanError(std::string("collectives: executor: rank ") + std::to_string(p.rank) + " (" + op_name(p.shape.op) +
                        " " + method_name(p.shape.method) + "): the shape is not supported: " + err);
}
/// The same for a reducer type: require_exec_params<Reducer<float, RedOp::sum>>(p).
template <class Red>
void require_exec_params(const ExecParams& p) {
    require_exec_params(p, uint32_t(sizeof(typename Red::value_type)), Red::has_prepare && op_reduces(p.shape.op));
}

// ---- glue for the emulation (duck-typed: no emulation include) ---------------------------------

/// The Ethernet link of each hop of `g` (group_edges order) in `cluster`: hop i uses the first
/// link between its two ranks' chips that no earlier hop uses.
template <class Cluster>
std::vector<Hop> edm_hops_from(const Cluster& cluster, const GroupSpec& g) {
    std::vector<Hop> out;
    const std::vector<Edge> edges = group_edges(g);
    for (uint32_t h = 0; h < edges.size(); ++h) {
        const uint32_t ca = g.workers[edges[h].a].chip, cb = g.workers[edges[h].b].chip;
        bool found = false;
        for (const auto& [ea, eb] : cluster.links_between(ca, cb)) {
            const Core a{ea.chip, ea.x, ea.y}, b{eb.chip, eb.x, eb.y};
            bool used = false;
            for (const Hop& o : out) used = used || o.a == a || o.b == a || o.a == b || o.b == b;
            if (used) continue;
            out.push_back({a, b});
            found = true;
            break;
        }
        if (!found)
            throw PlanError("collective plan: no free Ethernet link between chips " + std::to_string(ca) + " and " +
                            std::to_string(cb) + " for hop " + std::to_string(h) +
                            " (each hop needs its own link; a 2-rank ring needs two)");
    }
    return out;
}

/// Writes the plan's initial memory into `cluster` and its semaphore initial values into `launcher`.
template <class Cluster, class Launcher>
void install_on(const GroupPlan& plan, Cluster& cluster, Launcher& launcher) {
    struct W {
        Cluster& c;
        Launcher& l;
        void write(const Core& k, uint32_t addr, const uint8_t* p, size_t n) { c.write({k.chip, k.x, k.y}, addr, p, n); }
        void init_word(const Core& k, uint32_t addr, uint32_t v) { l.init_word({k.chip, k.x, k.y}, addr, v); }
    } w{cluster, launcher};
    plan.emit(w);
}

/// Adds `worker(hal)` on worker `w` of every rank, with its args.
template <class Launcher, class WK>
void add_worker_kernels(const GroupPlan& plan, Launcher& launcher, uint32_t w, WK worker) {
    for (uint32_t r = 0; r < plan.size(); ++r) {
        const Core& c = plan.at(r, w).worker;
        launcher.add({c.chip, c.x, c.y}, worker, plan.worker_args(r, w));
    }
}

/// Adds `edm_kernel(hal)` on every EDM core of the plan, with its args.
template <class Launcher, class EK>
void add_edm_kernels(const GroupPlan& plan, Launcher& launcher, EK edm_kernel) {
    for (const EdmKernel& k : plan.edm) launcher.add({k.core.chip, k.core.x, k.core.y}, edm_kernel, k.args);
}

/// Adds `worker(hal)` on every worker of every rank with its args, and `edm_kernel(hal)` on every
/// EDM core. (Workers that must know their index: add_worker_kernels per index.)
template <class Launcher, class WK, class EK>
void add_kernels(const GroupPlan& plan, Launcher& launcher, WK worker, EK edm_kernel) {
    for (uint32_t w = 0; w < plan.workers_per_link(); ++w) add_worker_kernels(plan, launcher, w, worker);
    add_edm_kernels(plan, launcher, edm_kernel);
}

}  // namespace kccl::coll::host

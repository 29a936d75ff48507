// kccl/ipcq/host/plan.hpp — host side: lay out every member core's IPCQ block, check it, emit
// what the launch needs, and dump the queue pointers of a hung run.
//
// HOST-ONLY (std::vector, std::string, exceptions; see ipcq/host/topology.hpp).
//
//   auto topo = kccl::ipcq::host::ring_1d(4);
//   kccl::ipcq::host::QueueConfig qc;           // placement, n_slots, slot_size, mode, strict
//   kccl::ipcq::host::MemoryConfig mem;         // block address, L1 size, DRAM endpoint
//   auto plan = kccl::ipcq::host::build_plan(topo, cores, qc, mem);   // validates, lays out
//   kccl::ipcq::host::install(plan, [&](uint32_t rank, CoreXY c, uint32_t addr, const uint8_t* p, size_t n) {...});
//   args = plan.runtime_args(rank);             // {block address}: pass to the kernel
//   text = kccl::ipcq::host::pointer_dump(plan, rank, l1_base_of(rank));  // watchdog hook
//
// CHECKS at build time (each a PlanError naming the rank / direction, the value and the bound):
//   the topology's I3 (Topology::validate); one core per rank, no core twice; I4: every rank
//   has the same placement; both ends of a link agree on n_slots, slot_size and initial_counter;
//   slot_size a positive multiple of 16; 1 <= n_slots <= 65535; MemoryConfig::l1_bytes given
//   (the L1 check cannot be skipped) and the block and rings fit it; the DRAM region is 16-byte
//   aligned, lies below 2^32 (the contract's addresses are 32-bit) and holds the DRAM rings.
//
// Installing writes, per rank, every byte of [block, meta end): header, records (config,
// mailboxes and mirrors set to initial_counter, slot indices 0), zeroed descriptor arrays and
// shadows. The device reads nothing else before it has written it itself, so stale L1 from an
// earlier program (hardware never zeroes L1) is harmless. Re-installing resets every pointer: do
// it before each launch that starts the queues afresh.
#pragma once

#include "topology.hpp"

#include <common/coord.hpp>
#include <common/host/error.hpp>
#include <common/window.hpp>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace kccl::ipcq::host {

struct PlanError : ErrorOf<Errc::plan> {
    using ErrorOf::ErrorOf;
};

using CoreXY = Coord;  ///< a core on the chip

struct QueueConfig {
    Placement placement = Placement::l1;
    uint32_t n_slots = 8;
    uint32_t slot_size = 4096;  ///< bytes per slot (a message is at most this)
    Backpressure mode = Backpressure::poll;
    bool strict = false;        ///< recv(dir, expect) checks nbytes/dtype/shape
    bool tx_ring = false;       ///< also allocate an L1 tx ring per send direction (Queues::tx_slot)
    /// Return the credit every this many releases (1 = after each); pending
    /// credits are always written before the receiver blocks. 1 <= credit_batch <= n_slots.
    uint32_t credit_batch = 1;
    /// The value every counter of this rank's links starts at (my_head, my_tail, the caches and
    /// the mailboxes); both ends of a link must agree. Default 0. A test hook: a value just below
    /// 2^32 makes a short stream cross the counter wrap (at 10^7 messages/s a link wraps in ~7
    /// minutes on hardware). Slot::seq counts from it.
    uint32_t initial_counter = 0;
};

struct MemoryConfig {
    uint32_t block_l1 = 0x1000;  ///< L1 address of each core's block (64-byte aligned)
    uint32_t l1_bytes = 0;       ///< usable L1 per core (required: build_plan rejects 0)
    CoreXY dram{};               ///< NoC coordinates of the DRAM endpoint (DRAM placement)
    uint32_t dram_base = 0;      ///< first DRAM byte IPCQ may use (16-byte aligned)
    uint32_t dram_bytes = 0;     ///< DRAM bytes IPCQ may use; dram_base + dram_bytes <= 2^32
};

/// Where one direction's storage of one rank ended up.
struct DirLayout {
    uint32_t record = 0, desc = 0, shadow = 0, stage = 0, tx_ring = 0;
    uint32_t rx_x = 0, rx_y = 0, rx_base = 0;  ///< rx slots: L1 of the core, or DRAM
};

struct RankPlan {
    CoreXY core{};
    QueueConfig config{};
    std::vector<DirLayout> dirs;
    uint32_t meta_end = 0;  ///< end of the part install() writes
    uint32_t l1_end = 0;    ///< end of everything this rank uses in L1
    std::vector<uint8_t> image;  ///< bytes of [block_l1, meta_end)
};

template <class Dirs>
struct Plan {
    Topology<Dirs> topology;
    MemoryConfig memory;
    std::vector<RankPlan> ranks;
    uint64_t dram_end = 0;  ///< end of the DRAM rings (at most 2^32)

    uint32_t world() const { return topology.world; }
    /// Runtime arguments the kernel of `rank` needs: {block address}.
    std::vector<uint32_t> runtime_args(uint32_t rank) const {
        at(rank);
        return {memory.block_l1};
    }
    const RankPlan& at(uint32_t rank) const {
        if (rank >= ranks.size())
            throw PlanError("ipcq plan: rank " + std::to_string(rank) + " is out of range (world size " +
                            std::to_string(ranks.size()) + ")");
        return ranks[rank];
    }
};

namespace detail {
inline void put32(std::vector<uint8_t>& img, uint32_t off, uint32_t v) { std::memcpy(img.data() + off, &v, 4); }
inline const char* placement_name(Placement p) { return p == Placement::dram ? "dram" : "l1"; }
}  // namespace detail

/// Lays out and checks a plan; `configs` has one QueueConfig per rank.
template <class Dirs>
Plan<Dirs> build_plan(const Topology<Dirs>& topo, const std::vector<CoreXY>& cores,
                      const std::vector<QueueConfig>& configs, const MemoryConfig& mem) {
    topo.validate();
    const uint32_t n = topo.world;
    const std::string pfx = "ipcq plan ('" + topo.name + "'): ";
    if (cores.size() != n)
        throw PlanError(pfx + "got " + std::to_string(cores.size()) + " cores for " + std::to_string(n) +
                        " ranks (need exactly one core per rank)");
    if (configs.size() != n)
        throw PlanError(pfx + "got " + std::to_string(configs.size()) + " queue configs for " + std::to_string(n) +
                        " ranks (give one per rank, or one for all)");
    {
        // One rank per core, checked through a map (linear in the ranks; a pairwise scan took
        // minutes for a wafer-sized mesh). Names the first rank whose core an earlier rank has.
        std::unordered_map<uint64_t, uint32_t> first;
        first.reserve(n);
        for (uint32_t b = 0; b < n; ++b) {
            const auto [it, fresh] = first.emplace((uint64_t(cores[b].x) << 32) | cores[b].y, b);
            if (!fresh)
                throw PlanError(pfx + "ranks " + std::to_string(it->second) + " and " + std::to_string(b) +
                                " are both on core (" + std::to_string(cores[b].x) + "," + std::to_string(cores[b].y) +
                                "); one rank per core");
        }
    }
    if (mem.block_l1 % 64)
        throw PlanError(pfx + "block_l1 " + std::to_string(mem.block_l1) + " must be 64-byte aligned");
    if (mem.l1_bytes == 0)
        throw PlanError(pfx + "MemoryConfig::l1_bytes is 0; give the usable L1 bytes of the member cores (e.g. the "
                              "chip's worker L1 size) so that the plan can check the block and rings fit (allowed: 1..2^32-1)");
    for (uint32_t r = 0; r < n; ++r) {
        const QueueConfig& c = configs[r];
        if (c.placement != configs[0].placement)
            throw PlanError(pfx + "rank " + std::to_string(r) + " uses placement " + detail::placement_name(c.placement) +
                            " but rank 0 uses " + detail::placement_name(configs[0].placement) +
                            " (I4: all members of a group share one placement)");
        if (c.slot_size == 0 || c.slot_size % layout::kAlign)
            throw PlanError(pfx + "rank " + std::to_string(r) + ": slot_size " + std::to_string(c.slot_size) +
                            " must be a positive multiple of 16 bytes");
        if (c.n_slots == 0 || c.n_slots > 65535)
            throw PlanError(pfx + "rank " + std::to_string(r) + ": n_slots " + std::to_string(c.n_slots) +
                            " is out of range (allowed 1..65535)");
        if (c.credit_batch == 0 || c.credit_batch > c.n_slots)
            throw PlanError(pfx + "rank " + std::to_string(r) + ": credit_batch " + std::to_string(c.credit_batch) +
                            " is out of range (allowed 1..n_slots = " + std::to_string(c.n_slots) + ")");
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            const Link& l = topo.links[r][d];
            if (!l.installed()) continue;
            const QueueConfig& pc = configs[uint32_t(l.peer)];
            if (pc.initial_counter != c.initial_counter)
                throw PlanError(pfx + topo.endpoint(r, d) + " starts its counters at " + std::to_string(c.initial_counter) +
                                " but its peer " + topo.endpoint(uint32_t(l.peer), l.peer_dir) + " at " +
                                std::to_string(pc.initial_counter) + " (both ends of a link must agree on initial_counter)");
            if (pc.n_slots != c.n_slots || pc.slot_size != c.slot_size)
                throw PlanError(pfx + topo.endpoint(r, d) + " has " + std::to_string(c.n_slots) + " x " +
                                std::to_string(c.slot_size) + " B slots but its peer " +
                                topo.endpoint(uint32_t(l.peer), l.peer_dir) + " has " + std::to_string(pc.n_slots) +
                                " x " + std::to_string(pc.slot_size) + " B (both ends of a link must agree)");
        }
    }
    const bool dram = configs[0].placement == Placement::dram;
    if (dram) {
        if (mem.dram_bytes == 0)
            throw PlanError(pfx + "DRAM placement needs a DRAM region (MemoryConfig::dram_bytes > 0 and the endpoint's "
                                  "NoC coordinates in MemoryConfig::dram)");
        if (mem.dram_base % layout::kAlign)
            throw PlanError(pfx + "MemoryConfig::dram_base " + std::to_string(mem.dram_base) +
                            " must be 16-byte aligned (slots are NoC transfer targets)");
        if (uint64_t(mem.dram_base) + mem.dram_bytes > (uint64_t(1) << 32))
            throw PlanError(pfx + "the DRAM region [" + std::to_string(mem.dram_base) + ", " +
                            std::to_string(uint64_t(mem.dram_base) + mem.dram_bytes) +
                            ") ends above 2^32; NoC addresses of the contract carry 32-bit offsets (allowed: dram_base + "
                            "dram_bytes <= 4294967296)");
    }

    Plan<Dirs> plan;
    plan.topology = topo;
    plan.memory = mem;
    plan.ranks.resize(n);
    uint64_t dram_cur = mem.dram_base;
    for (uint32_t r = 0; r < n; ++r) {
        RankPlan& rp = plan.ranks[r];
        rp.core = cores[r];
        rp.config = configs[r];
        rp.dirs.assign(Dirs::count, DirLayout{});
        const QueueConfig& c = configs[r];
        const uint64_t ring = uint64_t(c.n_slots) * c.slot_size;
        uint64_t off = mem.block_l1 + layout::align_up(layout::records_end(Dirs::count), 64);
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            rp.dirs[d].record = mem.block_l1 + layout::record(d);
            const Link& l = topo.links[r][d];
            if (l.installed() && (l.roles & rx)) rp.dirs[d].desc = uint32_t(off), off += uint64_t(c.n_slots) * 16;
        }
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            const Link& l = topo.links[r][d];
            if (l.installed() && (l.roles & tx)) rp.dirs[d].shadow = uint32_t(off), off += uint64_t(c.n_slots) * 16;
        }
        off = (off + 63) / 64 * 64;
        rp.meta_end = uint32_t(off);
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            const Link& l = topo.links[r][d];
            if (!l.installed() || !(l.roles & rx)) continue;
            DirLayout& dl = rp.dirs[d];
            if (dram) {
                dl.stage = uint32_t(off);
                off += c.slot_size;
                // dram_cur may pass 2^32 only when the region check below fails: never truncate.
                dl.rx_x = mem.dram.x, dl.rx_y = mem.dram.y, dl.rx_base = dram_cur <= UINT32_MAX ? uint32_t(dram_cur) : 0;
                dram_cur += ring;
            } else {
                dl.rx_x = cores[r].x, dl.rx_y = cores[r].y, dl.rx_base = uint32_t(off);
                off += ring;
            }
        }
        if (c.tx_ring)
            for (uint32_t d = 0; d < Dirs::count; ++d) {
                const Link& l = topo.links[r][d];
                if (l.installed() && (l.roles & tx)) rp.dirs[d].tx_ring = uint32_t(off), off += ring;
            }
        if (off > mem.l1_bytes)
            throw PlanError(pfx + "rank " + std::to_string(r) + " needs L1 up to " + std::to_string(off) + " bytes (block at " +
                            std::to_string(mem.block_l1) + ", " + std::to_string(c.n_slots) + " x " +
                            std::to_string(c.slot_size) + " B slots" + (dram ? ", DRAM rings" : ", L1 rings") +
                            ") but the core has " + std::to_string(mem.l1_bytes) +
                            " (allowed: the block and rings fit L1; fewer/smaller slots or DRAM placement)");
        rp.l1_end = uint32_t(off);
    }
    if (dram) {
        if (dram_cur - mem.dram_base > mem.dram_bytes)
            throw PlanError(pfx + "DRAM rings need " + std::to_string(dram_cur - mem.dram_base) + " bytes but the region has " +
                            std::to_string(mem.dram_bytes));
    }
    plan.dram_end = dram_cur;

    // Images: header + records + zeroed arrays.
    for (uint32_t r = 0; r < n; ++r) {
        RankPlan& rp = plan.ranks[r];
        const QueueConfig& c = rp.config;
        rp.image.assign(rp.meta_end - mem.block_l1, 0);
        auto& img = rp.image;
        detail::put32(img, layout::kHdrMagic, layout::kMagic);
        detail::put32(img, layout::kHdrVersion, layout::kVersion);
        detail::put32(img, layout::kHdrDirs, Dirs::count);
        detail::put32(img, layout::kHdrRank, r);
        detail::put32(img, layout::kHdrMode, uint32_t(c.mode));
        detail::put32(img, layout::kHdrStrict, c.strict ? 1u : 0u);
        detail::put32(img, layout::kHdrWorld, n);
        detail::put32(img, layout::kHdrMetaBytes, rp.meta_end - mem.block_l1);
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            const Link& l = topo.links[r][d];
            if (!l.installed()) continue;
            const uint32_t p = uint32_t(l.peer);
            const DirLayout& me = rp.dirs[d];
            const DirLayout& pd = plan.ranks[p].dirs[l.peer_dir];
            const uint32_t o = layout::record(d);
            detail::put32(img, o + layout::kCfgFlags, layout::kInstalled | l.roles);
            detail::put32(img, o + layout::kCfgPeerX, cores[p].x);
            detail::put32(img, o + layout::kCfgPeerY, cores[p].y);
            detail::put32(img, o + layout::kCfgPeerDir, l.peer_dir);
            detail::put32(img, o + layout::kCfgPeerRank, p);
            detail::put32(img, o + layout::kCfgPeerRecord, pd.record);
            detail::put32(img, o + layout::kCfgPeerDesc, pd.desc);
            detail::put32(img, o + layout::kCfgPeerRxX, pd.rx_x);
            detail::put32(img, o + layout::kCfgPeerRxY, pd.rx_y);
            detail::put32(img, o + layout::kCfgPeerRxBase, pd.rx_base);
            detail::put32(img, o + layout::kCfgRxX, me.rx_x);
            detail::put32(img, o + layout::kCfgRxY, me.rx_y);
            detail::put32(img, o + layout::kCfgRxBase, me.rx_base);
            detail::put32(img, o + layout::kCfgSlots, c.n_slots);
            detail::put32(img, o + layout::kCfgSlotBytes, c.slot_size);
            detail::put32(img, o + layout::kCfgPlacement, uint32_t(c.placement));
            detail::put32(img, o + layout::kCfgDesc, me.desc);
            detail::put32(img, o + layout::kCfgShadow, me.shadow);
            detail::put32(img, o + layout::kCfgStage, me.stage);
            detail::put32(img, o + layout::kCfgTxRing, me.tx_ring);
            detail::put32(img, o + layout::kCfgCreditBatch, c.credit_batch);
            // Every live word starts defined, whatever the L1 held before (slot indices: 0).
            for (uint32_t w : {layout::kHeadMailbox, layout::kCreditMailbox, layout::kMyHead, layout::kMyTail,
                               layout::kPeerHeadCache, layout::kPeerTailCache, layout::kTaken})
                detail::put32(img, o + w, c.initial_counter);
            // Put windows (Queues::open_window / put): none opened, none begun.
            for (uint32_t w : {layout::kWindowCount, layout::kWindowBase, layout::kPutEpoch, layout::kOpened})
                detail::put32(img, o + w, 0);
        }
    }
    return plan;
}

/// Same QueueConfig for every rank.
template <class Dirs>
Plan<Dirs> build_plan(const Topology<Dirs>& topo, const std::vector<CoreXY>& cores, const QueueConfig& config,
                      const MemoryConfig& mem) {
    return build_plan(topo, cores, std::vector<QueueConfig>(topo.world, config), mem);
}

/// Writes every rank's block. `write(rank, core, l1_addr, bytes_ptr, size)`.
template <class Dirs, class Writer>
void install(const Plan<Dirs>& plan, Writer&& write) {
    for (uint32_t r = 0; r < plan.world(); ++r) {
        const RankPlan& rp = plan.ranks[r];
        write(r, rp.core, plan.memory.block_l1, rp.image.data(), rp.image.size());
    }
}

namespace detail {
inline uint32_t load_relaxed(const uint8_t* base, uint32_t addr) {
    // The core may be running (the watchdog calls this): an atomic load of an aligned word.
    return __atomic_load_n(reinterpret_cast<const uint32_t*>(base + addr), __ATOMIC_RELAXED);
}
}  // namespace detail

/// The pointer dump for one rank: every installed direction's my_head, my_tail,
/// peer_head_cache, peer_tail_cache, plus the mailboxes (what the peer has published) and a
/// one-word diagnosis. `l1` is the base of the rank's core memory (host view); safe to call
/// while the core runs (relaxed atomic loads of 32-bit words).
template <class Dirs>
std::string pointer_dump(const Plan<Dirs>& plan, uint32_t rank, const uint8_t* l1) {
    const RankPlan& rp = plan.at(rank);
    const auto& topo = plan.topology;
    std::string s = "ipcq rank " + std::to_string(rank) + " core (" + std::to_string(rp.core.x) + "," +
                    std::to_string(rp.core.y) + ") [" + (rp.config.mode == Backpressure::sleep ? "sleep" : "poll") + ", " +
                    detail::placement_name(rp.config.placement) + ", " + std::to_string(rp.config.n_slots) + " x " +
                    std::to_string(rp.config.slot_size) + " B]:";
    for (uint32_t d = 0; d < Dirs::count; ++d) {
        const Link& l = topo.links[rank][d];
        if (!l.installed()) continue;
        const uint32_t rec = rp.dirs[d].record;
        auto w = [&](uint32_t off) { return detail::load_relaxed(l1, rec + off); };
        const uint32_t my_head = w(layout::kMyHead), my_tail = w(layout::kMyTail), phc = w(layout::kPeerHeadCache),
                       ptc = w(layout::kPeerTailCache), head_mb = w(layout::kHeadMailbox),
                       credit_mb = w(layout::kCreditMailbox), taken = w(layout::kTaken),
                       epoch = w(layout::kPutEpoch), windows = w(layout::kWindowCount), opened = w(layout::kOpened);
        s += "\n  " + std::string(Dirs::name(d)) + ((l.roles & tx) ? "" : " (rx only)") + ((l.roles & rx) ? "" : " (tx only)") +
             " <-> rank " + std::to_string(l.peer) + " " + Dirs::name(l.peer_dir) + ": my_head=" + std::to_string(my_head) +
             " my_tail=" + std::to_string(my_tail) + " peer_head_cache=" + std::to_string(phc) +
             " peer_tail_cache=" + std::to_string(ptc) + " | head mailbox=" + std::to_string(head_mb) +
             " credit mailbox=" + std::to_string(credit_mb) + " taken=" + std::to_string(taken);
        if (epoch || windows || opened)
            s += " | put epoch=" + std::to_string(epoch) + " windows the peer opened=" + std::to_string(windows) +
                 " windows opened=" + std::to_string(opened);
        std::string why;
        if ((l.roles & tx) && CreditWindow{rp.config.n_slots}.full(my_head, credit_mb)) why += " TX FULL (peer has not consumed)";
        if ((l.roles & rx) && head_mb != taken) why += " RX PENDING " + std::to_string(head_mb - taken);
        if ((l.roles & rx) && taken != my_tail) why += " HELD " + std::to_string(taken - my_tail) + " (not released)";
        if ((l.roles & tx) && !reached(windows, epoch))
            why += " PUT WAITS for the peer to open window " + std::to_string(epoch) + " (it has opened " + std::to_string(windows) + ")";
        if ((l.roles & tx) && credit_mb != my_head && why.empty()) why += " in flight " + std::to_string(my_head - credit_mb);
        s += why.empty() ? " idle" : why;
    }
    return s;
}

// ---- glue for any cluster with the emulation's host interface (duck-typed; no emulation include)

/// Installs `plan` on chip `chip` of `cluster` (cluster.write(cluster.chip(chip).worker(x, y), ...)).
template <class Dirs, class Cluster>
void install_on(Cluster& cluster, uint32_t chip, const Plan<Dirs>& plan) {
    install(plan, [&](uint32_t, CoreXY c, uint32_t addr, const uint8_t* p, size_t n) {
        cluster.write(cluster.chip(chip).worker(c.x, c.y), addr, p, n);
    });
}

/// Registers, for every rank, a watchdog dump hook printing its pointer dump
/// (launcher.on_dump(core, hook); add the kernels first).
template <class Dirs, class Cluster, class Launcher>
void attach_pointer_dumps(Launcher& launcher, Cluster& cluster, uint32_t chip, const Plan<Dirs>& plan) {
    for (uint32_t r = 0; r < plan.world(); ++r) {
        const auto core = cluster.chip(chip).worker(plan.ranks[r].core.x, plan.ranks[r].core.y);
        launcher.on_dump(core, [&plan, &cluster, core, r] { return pointer_dump(plan, r, cluster.l1(core).data()); });
    }
}

}  // namespace kccl::ipcq::host

// kccl/collectives/host/mcast_plan.hpp — host side of the NoC-multicast broadcast
// (collectives/mcast_broadcast.hpp): checks that a group can use it and lays out its L1.
//
// HOST-ONLY (std::vector, std::string, exceptions).
//
//   kccl::coll::host::McastBcastSpec s;
//   s.transport = Transport::ipcq;  s.workers = {...};        // one Tensix core per rank
//   s.l1 = {0x80000, 0x90000, 0};  s.chunk_bytes = 4096;  s.slots = 0;   // 0: direct mode
//   auto plan = kccl::coll::host::plan_mcast_broadcast(s);    // PlanError naming what is wrong
//   plan.args                      -> the kernel's arguments (load_mcast_bcast_args), every rank
//   plan.init_words                -> (core, L1 address, value) the host writes before the first
//                                     program (the counters, contract P2)
//   mcast_spec_of(group_spec)      -> a spec with a collective group's transport and cores
//
// AVAILABLE WHERE: the ranks are Tensix cores of ONE chip (the IPCQ transport; NoC multicast stays
// on one chip, contract M3) that form a full rectangle x0..x1 by y0..y1, rank r at row-major
// position r of it (rank = (y - y0) * width + (x - x0)). mcast_unavailable() returns the reason
// a group does not qualify (an empty string if it does); plan_mcast_broadcast throws it as a
// PlanError. L1, the same on every rank from l1.base: slots x chunk_bytes of staging (none in
// direct mode, slots = 0), then the counters (mcast_bcast_counter_bytes(p): 32 bytes + 4 per rank).
// choose_broadcast() is the "auto" rule: multicast (direct) where available, else choose_method.
#pragma once

#include "plan.hpp"

#include "../mcast_broadcast.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kccl::coll::host {

struct McastBcastSpec {
    Transport transport = Transport::ipcq;
    std::vector<Core> workers;  ///< one core per rank
    L1Range l1{0, 0, 0};        ///< where the staging slots and counters go (every rank)
    uint32_t chunk_bytes = 4096;  ///< multiple of 16
    /// Staging slots of chunk_bytes on every rank; 0: direct mode (the chunks go straight into the
    /// outputs, which must be at the same L1 address on every rank; no copies).
    uint32_t slots = 2;
    /// Test hook: the first value of every counter (2^32 - k crosses the wrap after k chunks).
    uint32_t initial_counter = 0;
};

struct McastInitWord {
    Core core;
    uint32_t addr = 0, value = 0;
};

struct McastBcastPlan {
    McastBcastArgs device{};
    std::vector<uint32_t> args;           ///< mcast_bcast_args words (the same for every rank)
    std::vector<McastInitWord> init_words;  ///< counters the host sets before the first program
    uint32_t l1_end = 0;                  ///< first byte after the plan's L1
};

inline std::string core_text(const Core& c) {
    return "chip " + std::to_string(c.chip) + " (" + std::to_string(c.x) + "," + std::to_string(c.y) + ")";
}

/// The multicast broadcast's spec for the ranks of a collective group (its transport, its worker
/// cores in rank order and its counter test hook); the caller adds l1, chunk_bytes and slots.
inline McastBcastSpec mcast_spec_of(const GroupSpec& g) {
    McastBcastSpec s;
    s.transport = g.transport;
    s.workers = g.workers;
    s.initial_counter = g.initial_counter;
    return s;
}

/// Why a group of ranks cannot use the multicast broadcast; empty if it can.
inline std::string mcast_unavailable(Transport transport, const std::vector<Core>& w) {
    const std::string pre = "multicast broadcast is not available for this group: ";
    if (transport != Transport::ipcq)
        return pre + "it needs the IPCQ transport (every rank a Tensix core of one chip; NoC multicast stays on one chip), "
                     "this group uses EDM (ranks on several chips over Ethernet); use a tree or chain method";
    if (w.empty()) return pre + "the group has no ranks";
    uint32_t x0 = w[0].x, x1 = w[0].x, y0 = w[0].y, y1 = w[0].y;
    for (size_t r = 0; r < w.size(); ++r) {
        if (w[r].chip != w[0].chip)
            return pre + "rank " + std::to_string(r) + " is on chip " + std::to_string(w[r].chip) + ", rank 0 on chip " +
                   std::to_string(w[0].chip) + "; every rank must be on one chip";
        x0 = std::min(x0, w[r].x), x1 = std::max(x1, w[r].x), y0 = std::min(y0, w[r].y), y1 = std::max(y1, w[r].y);
    }
    const uint64_t wd = x1 - x0 + 1, ht = y1 - y0 + 1;
    if (wd * ht != w.size())
        return pre + "its " + std::to_string(w.size()) + " ranks do not form a rectangle of cores (their bounding box (" +
               std::to_string(x0) + "," + std::to_string(y0) + ")..(" + std::to_string(x1) + "," + std::to_string(y1) +
               ") has " + std::to_string(wd * ht) + " cores); the ranks must be exactly the cores of a rectangle";
    for (size_t r = 0; r < w.size(); ++r) {
        const uint32_t ex = x0 + uint32_t(r % wd), ey = y0 + uint32_t(r / wd);
        if (w[r].x != ex || w[r].y != ey)
            return pre + "rank " + std::to_string(r) + " is at " + core_text(w[r]) + ", not at (" + std::to_string(ex) +
                   "," + std::to_string(ey) + "): the ranks must fill their rectangle in row-major order "
                   "(rank = (y - y0) * width + (x - x0)), each core once";
    }
    return {};
}

/// The plan of a multicast broadcast group; PlanError if the group does not qualify
/// (mcast_unavailable) or the parameters are bad.
inline McastBcastPlan plan_mcast_broadcast(const McastBcastSpec& s) {
    const std::string why = mcast_unavailable(s.transport, s.workers);
    if (!why.empty()) throw PlanError(why);
    if (s.chunk_bytes == 0 || s.chunk_bytes % 16 != 0)
        throw PlanError("multicast broadcast: chunk_bytes is " + std::to_string(s.chunk_bytes) +
                        "; it must be a positive multiple of 16");
    if (s.l1.base % 16 != 0) throw PlanError("multicast broadcast: l1.base must be 16-byte aligned");
    const uint64_t need = uint64_t(s.slots) * s.chunk_bytes + mcast_bcast_counter_bytes(uint32_t(s.workers.size()));
    if (s.l1.base + need > s.l1.end)
        throw PlanError("multicast broadcast: needs " + std::to_string(need) + " bytes of L1 (slots x chunk_bytes + " +
                        std::to_string(mcast_bcast_counter_bytes(uint32_t(s.workers.size()))) + " of counters); l1 has " +
                        std::to_string(s.l1.end > s.l1.base ? s.l1.end - s.l1.base : 0));
    McastBcastPlan p;
    uint32_t x0 = s.workers[0].x, y0 = s.workers[0].y, x1 = x0, y1 = y0;
    for (const Core& c : s.workers)
        x0 = std::min(x0, c.x), y0 = std::min(y0, c.y), x1 = std::max(x1, c.x), y1 = std::max(y1, c.y);
    p.device.rect = hal::NocRect{x0, y0, x1, y1};
    p.device.slots_l1 = s.l1.base;
    p.device.slots = s.slots;
    p.device.chunk_bytes = s.chunk_bytes;
    p.device.counters_l1 = s.l1.base + s.slots * s.chunk_bytes;
    p.args = {x0, y0, x1, y1, p.device.slots_l1, s.slots, s.chunk_bytes, p.device.counters_l1};
    for (const Core& c : s.workers)
        for (McastBcastWord w : {mb_seq, mb_arrived, mb_released})
            p.init_words.push_back({c, p.device.word(w), s.initial_counter});
    if (s.slots == 0)  // direct mode: the ready words a receiver writes on a root
        for (const Core& c : s.workers)
            for (uint32_t r = 0; r < s.workers.size(); ++r) p.init_words.push_back({c, p.device.credit(r), s.initial_counter});
    p.l1_end = uint32_t(s.l1.base + need);
    return p;
}

/// The "auto" choice for a broadcast of `bytes` per rank on a group: the multicast broadcast in
/// direct mode when the group can use it (mcast_unavailable is empty), else the method table's
/// choice (choose_method). Rule, from the Wormhole model (benchmarks/collectives/mcast_bcast_bench.cpp,
/// docs/collectives-performance.md): direct multicast beat the chain and the binomial tree at
/// every measured point (8, 16, 64 ranks; 4 KiB and 64 KiB) by 3x to 15x, so it is taken whenever
/// available; the staged mode is not taken (it copies every chunk out of a slot on every
/// receiver, which costs as much as the chain's copies), only on request.
struct BroadcastChoice {
    bool multicast = false;  ///< use mcast_broadcast (plan with McastBcastSpec::slots = 0)
    Method method{};         ///< otherwise: this method of the method table
    std::string why_not;     ///< why the multicast broadcast is not available (empty if taken)
};

inline BroadcastChoice choose_broadcast(Transport transport, const std::vector<Core>& workers, Topology topo,
                                        uint64_t bytes, bool routed) {
    BroadcastChoice c;
    c.why_not = mcast_unavailable(transport, workers);
    c.multicast = c.why_not.empty();
    c.method = choose_method(Op::broadcast, topo, uint32_t(workers.size()), bytes, routed);
    return c;
}

}  // namespace kccl::coll::host

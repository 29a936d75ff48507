// kccl/fabric/ops/common.hpp — what tt-metal's op structures on the chip fabric share
// (all_gather.hpp, all_to_all.hpp, reduce_scatter.hpp, all_reduce.hpp): the plan, the sender ->
// mux hand-off, the mux and the runners. DRAM tensors read page by page and sent as 1D fabric
// packets that the receiving routers write straight into the destination tensor's pages (scatter
// write). No collective executor, no message slots, no copies out of slots.
//
// WHAT IT MODELS (tt-metal's all_gather_async "minimal default" program, and its all_to_all)
//   * sender cores (run_sender): all_gather with relay: per direction tt-metal's number of workers
//     (ttm_workers_per_direction: default_workers' 1, 2 or 4), each its share of every slice's
//     pages; otherwise one per direction. Each is tt-metal's reader kernel (DRAM pages -> a
//     circular buffer of 3 packets in L1, its "triple buffering") and writer kernel (CB -> the
//     fabric; the backward (W) senders, tt-metal's direction 1, also write the own part into the
//     local output tensor, with a write barrier per packet as tt-metal's writers); the reads of
//     packet k+1 are issued before packet k is written, so the two overlap as tt-metal's two RISCs;
//   * a mux (run_mux, tt-metal's fabric mux core between the workers and the router): the chip's
//     fabric worker, which owns the connections to the E and W routers, forwards each sender's
//     packets from its channel (MuxWiring::mux_slots slots, tt-metal's default 1) into the router,
//     a direction's channels in turns (round robin, as tt-metal's mux loops over its channels);
//     `run` (Structure one_core) does reader, writer and mux work on that one core instead;
//     run_mux_counts is the same mux for an op of one or more programs with the packet counts
//     given (reduce_scatter.hpp and all_reduce.hpp: all_reduce is two programs);
//   * packets of `pages_per_packet` pages (all_gather: tt-metal's min(4, packet payload / page) —
//     its scatter write takes 4 NoC addresses — so 3 pages of 2048 B in a 6144 B packet; all_to_all
//     likewise, all_to_all_async_generic's number_pages_per_packet), written by the delivering
//     router as one NoC write per page (`NocCmd::scatter_write`);
//   * the ops' plans: all_gather.hpp (relay and multicast), all_to_all.hpp (one_core, direct and
//     mux schedules), reduce_scatter.hpp and all_reduce.hpp;
//   * completion: relay: every sender waits until its relay semaphore counted the syncs of every
//     part that reaches it in its direction; streams: each receiving chip waits until its
//     semaphore counted one increment per stream that reaches it (n - 1 per op) and its local copy
//     landed (even and odd ops on two semaphores: a chip is at most one op ahead). The mux then
//     lets the senders start the next op.
// Differences from tt-metal (docs/fabric.md, "tt-metal's op structure"): the router has one
// worker channel, so one mux serves both directions (tt-metal: a mux core per direction); the
// barrier before the sends is the fabric worker's for the chip (tt-metal: every writer's); an
// all_to_all destination's last packet is one fused write + increment (the version of tt-metal's
// sender writer we read sends the last page as a fused packet of its own); pages of a tensor are contiguous
// in the one emulated DRAM endpoint, whose channel model stands for the interleaving.
//
// Plans are computed on the device from a handful of numbers (the ops' make_* functions),
// so a plan is what a kernel would derive from its runtime args. C++17, freestanding, no heap.
#pragma once

#include <common/window.hpp>
#include <fabric/header.hpp>
#include <fabric/worker.hpp>
#include <hal/config.hpp>
#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::fabric::ops {

inline constexpr uint32_t max_streams = 64;
inline constexpr uint32_t max_relay_items = 34;  ///< per sender: the own slice, up to 32 relayed, a split half
/// The most chips an op's plans hold (plan_common rejects more): all_to_all has a stream per chip,
/// a line's relaying sender an item per chip.
inline constexpr uint32_t max_ranks = 32;
static_assert(max_streams >= max_ranks && max_relay_items >= max_ranks,
              "A plan must hold a stream per chip (all_to_all) and a relay item per chip (a line's all_gather relay).");
inline constexpr uint32_t max_workers = 4;       ///< senders per direction (tt-metal's default_workers: 1, 2 or 4)
/// Sender cores per op: the workers of both directions, and all_to_all's local-copy core
/// (Plan::channels()).
inline constexpr uint32_t max_channels = 2 * max_workers + 1;
/// Mux channels (MuxWiring, run_mux_counts): 2 x up to 8 workers per direction (tt-metal's
/// reduce_scatter_minimal_async: default_workers up to 8, a mux channel each).
inline constexpr uint32_t max_mux_channels = 16;
static_assert(max_mux_channels >= max_channels, "The mux needs a channel for every sender core of an op.");
inline constexpr uint32_t cb_packets = 3;       ///< tt-metal's sender CB: 3 packets ("triple buffering")
inline constexpr uint32_t tgt_fwd = 1, tgt_bwd = 2, tgt_local = 4;
/// Stream::channel of the streams the fabric worker sends itself (all_to_all, direct structure).
inline constexpr uint32_t fabric_worker_channel = 0xFFu;
/// packet_loop's channel filter: every stream.
inline constexpr uint32_t any_channel = 0xFFFFFFFFu;

/// One stream of packets: `bytes` from input offset `src` to output offset `dst` on its targets.
struct Stream {
    uint32_t src = 0, dst = 0, bytes = 0, targets = 0;
    uint32_t routing[2] = {0, 0}, route[2] = {0, 0};  ///< [0] forward (E), [1] backward (W)
    /// all_to_all's schedule (Plan::by_channel): the core that sends it (a mux channel, the local
    /// copy's channel, or fabric_worker_channel)
    uint32_t channel = 0;
};

/// One item of a relaying sender's list (all_gather relay): bytes [off, off + bytes) of chip
/// `chip`'s slice; `own`: read from the input (else from the output, where it arrived); `recv`:
/// arrives from the upstream neighbour (counted on the relay semaphore); `send`: goes to the
/// downstream neighbour (a 1-hop unicast into its output at chip * slice + off).
struct RelayItem {
    uint32_t chip = 0, off = 0, bytes = 0;
    bool own = false, recv = false, send = false;
};

/// Everything a worker needs for one op (what its runtime args would hold).
struct Plan {
    uint32_t rank = 0, ranks = 0;
    uint32_t dram_xy = 0, worker_xy = 0;   ///< the DRAM endpoint and the workers' core (x | y << 16), same on every chip
    uint32_t input = 0, output = 0;        ///< DRAM addresses of the tensors
    uint32_t page = 2048, pages_per_packet = 2;
    /// completion semaphores (host-initialised to sem_initial): ops of even index count at sem_l1,
    /// odd ones at sem_l1 + 64 — a chip is at most one op ahead of another (it ends op i only
    /// with every other chip's op-i stream), so two never mix two ops' increments
    uint32_t sem_l1 = 0;
    uint32_t sem_initial = 0;
    /// the start barrier's semaphore on the fabric worker core (host-initialised to sem_initial):
    /// every other chip increments it once per op (tt-metal's barrier before the sends)
    uint32_t barrier_l1 = 0;
    bool ring = false;  ///< the barrier's routes: a ring multicasts around, a line to both sides
    uint32_t header_l1 = 0;                ///< 2 headers of header_bytes
    uint32_t header_bytes = header_base_bytes;
    uint32_t cb_l1 = 0;                    ///< cb_packets packets
    uint32_t expect = 0;                   ///< increments per op at this chip
    uint32_t nstreams = 0;
    Stream s[max_streams];
    /// all_gather relay (make_all_gather_relay; the per-direction structure): instead of the
    /// streams, each sender (mux channel) works through its items; a sync packet (a header-only
    /// fused write + increment) follows every relay_sync packets of an item and its last one.
    bool relay = false;
    bool relay_local = true;  ///< the backward senders copy the own slice locally (false: a test mutation)
    /// Senders (mux channels) per direction: channel c = d * workers + k is worker k of direction d
    /// (relay: tt-metal's workers each relay their part of every slice; all_to_all's direction-owned
    /// schedule: its workers per direction; else 1).
    uint32_t workers = 1;
    uint32_t slice = 0, relay_sync = 1;
    uint32_t nitems[max_channels] = {};
    RelayItem items[max_channels][max_relay_items];
    /// all_to_all_async_generic's schedule (make_all_to_all_generic): each stream is sent by the core
    /// of its `channel`, a core's streams one after another (`in_order`: destination after
    /// destination, not in turns); the own chunk by a core of its own (channel local_channel).
    /// direct: the remote streams are the fabric worker's (no mux), the local copy channel 0;
    /// else 2 x workers mux channels and the local copy channel 2 x workers.
    bool by_channel = false, in_order = false, direct = false;
    uint32_t local_channel = 0;
    constexpr uint32_t channels() const { return !by_channel ? 2 * workers : direct ? 1u : 2 * workers + 1; }

    constexpr uint32_t packet_bytes() const { return page * pages_per_packet; }
    /// L1 bytes a core needs from the plan's base: 64 bytes of semaphores, 2 headers, then the CB
    /// (senders, one_core) or the mux channels (the mux: 2 x mux_slots slots of header + packet).
    static constexpr uint32_t l1_bytes(uint32_t header_bytes, uint32_t packet, uint32_t mux_slots, uint32_t workers = 1) {
        return 80 + 2 * header_bytes +
               (cb_packets * packet > mux_counters + 2 * workers * mux_slots * (header_bytes + packet)
                    ? cb_packets * packet
                    : mux_counters + 2 * workers * mux_slots * (header_bytes + packet));
    }
    /// on the mux, before its slots: a fill counter per channel and the senders' "op done" count
    static constexpr uint32_t mux_counters = 16 * (max_mux_channels + 1);
};

/// tt-metal's all_gather pages per packet: the packet payload's whole pages, at most 4 (its
/// minimal default program: min(4 scatter-write NoC addresses, packet / page); 3 pages of 2048 B
/// in a 6144 B packet).
constexpr uint32_t ttm_pages_per_packet(uint32_t payload, uint32_t page) {
    return payload / page < 4 ? payload / page : 4;
}
namespace detail {
/// A plan's workers per direction beyond max_workers: a named error (the plan's arrays hold no more).
inline void check_workers(const Plan& p, uint32_t workers, const char* what) {
    if (KCCL_UNLIKELY(workers > max_workers)) {
        ::kccl::detail::Msg m;
        m.s("ttm op: rank ").u(p.rank).s(": ").s(what).s(" with ").u(workers).s(" workers per direction (allowed: at most ")
            .u(max_workers).s(")");
        ::kccl::detail::assert_fail("ttm op", m.buf, __FILE__, __LINE__);
    }
}
}  // namespace detail

/// Lays out the plan's L1 from `base` (16-aligned) and the common fields.
inline void plan_common(Plan& p, uint32_t rank, uint32_t ranks, uint32_t dram_xy, uint32_t worker_xy, uint32_t input,
                        uint32_t output, uint32_t page, uint32_t pages_per_packet, uint32_t base, uint32_t header_bytes) {
    if (KCCL_UNLIKELY(ranks < 2 || ranks > max_ranks || rank >= ranks)) {
        ::kccl::detail::Msg m;
        m.s("ttm op: rank ").u(rank).s(" of ").u(ranks).s(" chips (allowed: 2..").u(max_ranks).s(" chips, rank below the chips)");
        ::kccl::detail::assert_fail("ttm op", m.buf, __FILE__, __LINE__);
    }
    p.rank = rank;
    p.ranks = ranks;
    p.dram_xy = dram_xy;
    p.worker_xy = worker_xy;
    p.input = input;
    p.output = output;
    p.page = page;
    p.pages_per_packet = pages_per_packet;
    p.header_bytes = header_bytes;
    p.sem_l1 = base;  // + 16: the start barrier (fabric worker) / the senders' semaphores (MuxWiring); + 64: odd ops' completion
    p.barrier_l1 = base + 16;
    p.ring = false;
    p.header_l1 = base + 80;
    p.cb_l1 = base + 80 + 2 * header_bytes;
    p.nstreams = 0;
    p.relay = false;
    p.relay_local = true;
    p.workers = 1;
    p.by_channel = p.in_order = p.direct = false;
    p.local_channel = 0;
    for (uint32_t c = 0; c < max_channels; ++c) p.nitems[c] = 0;
}

/// Sender / mux wiring (Structure::per_direction): the sender cores (p.channels() of them) and the
/// chip's fabric worker as the mux that forwards their packets into the routers.
struct MuxWiring {
    uint32_t mux_xy = 0;            ///< the fabric worker core (x | y << 16)
    uint32_t mux_slots_l1 = 0;      ///< on the mux: p.channels() channels x mux_slots slots of header + packet bytes
    uint32_t mux_slots = 1;         ///< tt-metal's fabric mux: num_buffers_per_channel, default 1
    uint32_t mux_fill_l1 = 0;       ///< on the mux: fill[c] at +16 c; senders' "iteration done" at done_l1
    uint32_t done_l1 = 0;
    uint32_t sender_xy[max_mux_channels] = {};  ///< the sender of channel c
    uint32_t credit_l1 = 0;         ///< on a sender: mux slots given back; "go" (next iteration) at +16
    uint32_t relay_l1 = 0;          ///< on a sender: the relay semaphore (all_gather relay), +32 from credit_l1
    constexpr uint32_t slot_bytes(const Plan& p) const { return p.header_bytes + p.packet_bytes(); }
    constexpr uint32_t slot(const Plan& p, uint32_t d, uint32_t i) const { return mux_slots_l1 + (d * mux_slots + i) * slot_bytes(p); }
};

/// The wiring of plan p's cores: mux at mux_xy, the sender of channel c at first_sender + c
/// columns to the right (x + c, same y), mux_slots per channel.
inline MuxWiring mux_wiring(const Plan& p, uint32_t mux_xy, uint32_t first_sender, uint32_t mux_slots) {
    MuxWiring w;
    w.mux_xy = mux_xy;
    w.mux_slots = mux_slots;
    w.mux_fill_l1 = p.cb_l1;
    w.done_l1 = p.direct ? p.sem_l1 + 32 : p.cb_l1 + 16 * max_mux_channels;  // direct: the fabric worker's CB is in use
    w.mux_slots_l1 = p.cb_l1 + Plan::mux_counters;
    for (uint32_t c = 0; c < p.channels(); ++c) w.sender_xy[c] = first_sender + c;
    w.credit_l1 = p.sem_l1 + 16;
    w.relay_l1 = p.sem_l1 + 48;
    return w;
}

namespace detail {
/// The header of a data packet of n bytes written at `dst` of the chip(s) `route` reaches: one NoC
/// write per page (scatter write), or, when `inc`, a fused write + increment of (sem_xy, sem_l1)
/// on the delivering chip (after a barrier: every earlier packet from the same source went
/// through the same delivering router, so the increment says they all landed).
inline HeaderFields data_header(const Plan& p, Routing routing, uint32_t route, uint32_t dst, uint32_t n, bool inc,
                                uint32_t sem_xy, uint32_t sem_l1, uint32_t source) {
    HeaderFields f;
    f.routing = routing;
    f.route = route;
    f.payload = n;
    f.dst_xy = p.dram_xy;
    f.dst_l1 = dst;
    f.source = source;
    if (inc) {
        f.cmd = NocCmd::fused_write_inc;
        f.sem_xy = sem_xy;
        f.sem_l1 = sem_l1;
        f.value = 1;
    } else {  // one NoC write per page of the destination tensor
        const uint32_t np = (n + p.page - 1) / p.page;
        f.cmd = NocCmd::scatter_write;
        f.sem_xy = dst + p.page;  // chunk addresses 1..3 in words 5..7
        f.sem_l1 = dst + 2 * p.page;
        f.value = dst + 3 * p.page;
        f.scatter01 = p.page | (p.page << 16);
        f.scatter2n = p.page | (np << 16);
    }
    return f;
}

/// The header of one packet of stream `s` (payload n bytes at stream offset off) to direction d;
/// the stream's last packet increments the receiving worker's completion semaphore of op `op`.
inline HeaderFields packet_header(const Plan& p, const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t d, uint32_t op) {
    return data_header(p, Routing(s.routing[d]), s.route[d], p.output + s.dst + off, n, last, p.worker_xy,
                       p.sem_l1 + 64 * (op & 1), (p.rank & 0xFFu) | (off << 8));
}

inline void check_plan(const Plan& p) {
    if (KCCL_UNLIKELY(p.pages_per_packet == 0 || p.pages_per_packet > max_scatter_chunks || p.nstreams > max_streams)) {
        ::kccl::detail::Msg m;
        m.s("ttm op: rank ").u(p.rank).s(": ").u(p.pages_per_packet).s(" pages per packet, ").u(p.nstreams)
            .s(" streams (allowed: 1..4 pages, a scatter write's chunks; at most ").u(max_streams).s(" streams)");
        ::kccl::detail::assert_fail("ttm op", m.buf, __FILE__, __LINE__);
    }
}

/// The runners of a plan's fabric worker: `run` (Structure one_core), `run_direct` (all_to_all's
/// direct structure, Plan::direct), `run_mux` (the per-direction structure behind the mux).
enum class Runner : uint32_t { one_core, direct, mux };
/// A plan on a runner it cannot run (a relay plan on one core sends nothing; a direct plan behind
/// the mux, or a mux plan on run_direct, waits forever): a named error before the op starts.
inline void check_runner(const Plan& p, Runner r) {
    const char* why = r == Runner::one_core && p.relay ? "a relay plan (make_all_gather_relay) runs on run_sender + run_mux, not run"
                    : r == Runner::direct && !p.direct ? "run_direct runs a direct plan (make_all_to_all_generic with 0 or 1 workers); this one runs on run_sender + run_mux"
                    : r == Runner::mux && p.direct    ? "a direct plan (make_all_to_all_generic with 0 or 1 workers) runs on run_direct, not run_mux"
                                                      : nullptr;
    if (KCCL_UNLIKELY(why != nullptr)) {
        ::kccl::detail::Msg m;
        m.s("ttm op: rank ").u(p.rank).s(": ").s(why);
        ::kccl::detail::assert_fail("ttm op", m.buf, __FILE__, __LINE__);
    }
}

/// The reader / writer pipeline of a sender core over the CB's `cb_packets` slots: packet 0 is read
/// and waited for; then, per packet k, the reads of packet k + 1 are issued (when `ready(k + 1)`;
/// else after packet k's writes, `read` waiting for its data) before `work(k, slot)` writes packet
/// k out, and the CB slot read next is flushed before the loop goes on (N3). `next()` gives the
/// packets in order (`valid` false at the end), `read(k, slot)` issues a packet's NoC reads.
template <class H, class Next, class Ready, class Read, class Work>
void cb_pipeline(H& hal, Next next, Ready ready, Read read, Work work) {
    auto cur = next();
    uint32_t slot = 0;
    if (cur.valid) {
        read(cur, slot);
        hal.noc_read_barrier();
    }
    while (cur.valid) {
        const auto nx = next();
        const uint32_t nslot = slot + 1 == cb_packets ? 0 : slot + 1;
        const bool pre = nx.valid && ready(nx);
        if (pre) read(nx, nslot);  // overlaps the writes below (the slot's last writes were flushed)
        work(cur, slot);
        if (nx.valid && !pre) read(nx, nslot);
        if (nx.valid) hal.noc_read_barrier();
        cur = nx;
        slot = nslot;
        hal.noc_writes_flushed();  // the CB slot read next was written out (N3)
    }
}

/// Bytes [l1, l1 + n) of L1 to DRAM tensor address `dst` at (dx, dy), one NoC write per page, waited
/// for (tt-metal's writers: a write barrier per packet).
template <class H>
void write_pages_waited(H& hal, uint32_t l1, uint32_t dx, uint32_t dy, uint32_t dst, uint32_t n, uint32_t page) {
    for (uint32_t o = 0; o < n; o += page) hal.noc_write(l1 + o, hal.noc_addr(dx, dy, dst + o), n - o < page ? n - o : page);
    hal.noc_write_barrier();
}

/// One op's packet loop: the streams' packets whose targets meet `mask`, in turns, each read from
/// the DRAM input into the CB (the reads of packet k+1 issued before packet k is written), then
/// `send(stream, off, n, last, cb_l1, d)` per fabric direction d and the local copy.
template <class H, class Send>
void packet_loop(H& hal, const Plan& p, uint32_t mask, Send send, uint32_t channel = any_channel) {
    const uint32_t pk = p.packet_bytes();
    const uint32_t dx = p.dram_xy & 0xFFFFu, dy = p.dram_xy >> 16;
    struct Pk {
        uint32_t s = 0, off = 0, n = 0;
        bool valid = false, last = false;
    };
    uint32_t cursor[max_streams];
    for (uint32_t i = 0; i < p.nstreams; ++i)
        cursor[i] = (p.s[i].targets & mask) && (channel == any_channel || p.s[i].channel == channel) ? 0 : p.s[i].bytes;
    uint32_t rr = 0;
    auto next = [&]() {  // the next packet: streams take turns, or (in_order) one after another
        Pk k;
        for (uint32_t t = 0; t < p.nstreams; ++t) {
            const uint32_t i = p.in_order ? t : (rr + t) % p.nstreams;
            if (cursor[i] >= p.s[i].bytes) continue;
            k.s = i;
            k.off = cursor[i];
            k.n = p.s[i].bytes - cursor[i] < pk ? p.s[i].bytes - cursor[i] : pk;
            cursor[i] += k.n;
            k.last = cursor[i] >= p.s[i].bytes;
            k.valid = true;
            rr = (i + 1) % p.nstreams;
            return k;
        }
        return k;
    };
    auto read = [&](const Pk& k, uint32_t slot) {  // the reader: DRAM input pages -> CB slot
        const uint32_t src = p.input + p.s[k.s].src + k.off, l1 = p.cb_l1 + slot * pk;
        for (uint32_t o = 0; o < k.n; o += p.page)
            hal.noc_read(hal.noc_addr(dx, dy, src + o), l1 + o, k.n - o < p.page ? k.n - o : p.page);
    };
    cb_pipeline(
        hal, next, [](const Pk&) { return true; }, read,
        [&](const Pk& cur, uint32_t slot) {
            const Stream& s = p.s[cur.s];
            const uint32_t t = s.targets & mask, l1 = p.cb_l1 + slot * pk;
            if (t & tgt_fwd) send(s, cur.off, cur.n, cur.last, l1, 0u);
            if (t & tgt_bwd) send(s, cur.off, cur.n, cur.last, l1, 1u);
            if (t & tgt_local) write_pages_waited(hal, l1, dx, dy, p.output + s.dst + cur.off, cur.n, p.page);  // the own slice / chunk
        });
}

/// Relay: sync increments per item of P packets (one after every relay_sync packets and the last).
inline uint32_t relay_syncs(const Plan& p, uint32_t bytes) {
    const uint32_t pk = p.packet_bytes(), np = (bytes + pk - 1) / pk;
    return (np + p.relay_sync - 1) / p.relay_sync;
}

/// Fabric packets of mux channel c per op (the mux forwards exactly these; without relay, c is the direction).
inline uint32_t packets_to(const Plan& p, uint32_t c) {
    uint32_t n = 0;
    const uint32_t pk = p.packet_bytes(), bit = c == 0 ? tgt_fwd : tgt_bwd;
    if (p.relay) {
        for (uint32_t i = 0; i < p.nitems[c]; ++i)
            if (p.items[c][i].send) n += (p.items[c][i].bytes + pk - 1) / pk + relay_syncs(p, p.items[c][i].bytes);
        return n;
    }
    if (p.by_channel) {
        for (uint32_t i = 0; i < p.nstreams; ++i)
            if (p.s[i].channel == c && (p.s[i].targets & (tgt_fwd | tgt_bwd))) n += (p.s[i].bytes + pk - 1) / pk;
        return n;
    }
    for (uint32_t i = 0; i < p.nstreams; ++i)
        if (p.s[i].targets & bit) n += (p.s[i].bytes + pk - 1) / pk;
    return n;
}

template <class H>
void wait_at_least(H& hal, uint32_t l1, uint32_t want) {
    while (!reached(hal.sem_read(l1), want)) hal.idle();
}

/// A sender's hand-off of one packet (header f, n payload bytes at l1; n may be 0) to channel c of
/// the mux: waits for a free slot (`sent` packets handed over so far, `idx` the next slot; at most
/// `limit` packets waiting in the mux, 0: every slot), writes header and payload into it and
/// announces it. Returns when the payload has left l1.
template <class H>
void to_mux(H& hal, const Plan& p, const MuxWiring& w, uint32_t c, const HeaderFields& f, uint32_t l1, uint32_t n, uint32_t& sent,
            uint32_t& idx, uint32_t limit = 0) {
    const uint32_t mx = w.mux_xy & 0xFFFFu, my = w.mux_xy >> 16, hl1 = p.header_l1;
    const uint32_t most = limit && limit < w.mux_slots ? limit : w.mux_slots;
    while (CreditWindow{most}.full(sent, hal.sem_read(w.credit_l1))) hal.idle();  // a free mux slot
    volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(hl1, p.header_bytes));
    write_header(h, f, 0, [](uint32_t) { return uint8_t(0); });
    kccl::hal::l1_store_fence(hal, hl1, p.header_bytes);  // the header stores above (N7)
    const uint32_t slot = w.slot(p, c, idx);
    hal.noc_write(hl1, hal.noc_addr(mx, my, slot), p.header_bytes);
    if (n) hal.noc_write(l1, hal.noc_addr(mx, my, slot + p.header_bytes), n);
    hal.noc_writes_flushed();  // the packet before its announcement (N1, strict profile)
    hal.sem_inc(hal.noc_addr(mx, my, w.mux_fill_l1 + 16 * c), 1);
    idx = idx + 1 == w.mux_slots ? 0 : idx + 1;
    ++sent;
}
}  // namespace detail

namespace detail {
/// The fabric worker's own send (no mux): one packet (header f, n payload bytes at l1; n may be 0)
/// into the router of direction d (0: E, 1: W), its header written at header slot d. Returns when
/// header and payload have left L1.
template <class H, class Link>
void send_direct(H& hal, Link& link, const Plan& p, uint32_t d, const HeaderFields& f, uint32_t l1, uint32_t n) {
    const uint32_t hl1 = p.header_l1 + d * p.header_bytes;
    volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(hl1, p.header_bytes));
    write_header(h, f, 0, [](uint32_t) { return uint8_t(0); });
    Connection& c = link.connection(d == 0 ? uint32_t(Dir::E) : uint32_t(Dir::W));
    c.reserve(hal);
    c.write(hal, hl1, p.header_bytes, l1, n);
}

/// tt-metal's barrier before the sends (its writers multicast an atomic increment to the other
/// chips and wait for n - 1 of them; all_to_all_async_generic's init semaphore likewise): the
/// fabric worker sends a header-only multicast_1d increment of every other chip's barrier
/// semaphore (a line: to each side; a ring: around, range n - 1) and waits until its own counted
/// n - 1 for op `it`. No chip starts op it before every chip has finished op it - 1, so no chip
/// writes op it's pages into an output its neighbour still reads op it - 1's out of (relay).
template <class H, class Link>
void start_barrier(H& hal, Link& link, const Plan& p, uint32_t it) {
    const uint32_t r = p.rank, n = p.ranks;
    const uint32_t range[2] = {p.ring ? n - 1 : n - 1 - r, p.ring ? 0u : r};
    for (uint32_t d = 0; d < 2; ++d) {
        if (!range[d]) continue;
        HeaderFields f;
        f.routing = Routing::multicast_1d;
        f.route = 1u | (range[d] << 16);
        f.cmd = NocCmd::atomic_inc;
        f.payload = 0;
        f.sem_xy = p.worker_xy;
        f.sem_l1 = p.barrier_l1;
        f.value = 1;
        f.source = r & 0xFFu;
        send_direct(hal, link, p, d, f, 0, 0);
    }
    wait_at_least(hal, p.barrier_l1, p.sem_initial + (it + 1) * (n - 1));
}
}  // namespace detail

/// Structure::one_core: runs `iters` ops of plan `p` on the chip's fabric worker alone (reader and
/// writer of both directions). Returns 0; the caller quiesces the link afterwards.
template <class H, class Link>
uint32_t run(H& hal, Link& link, const Plan& p, uint32_t iters) {
    detail::check_plan(p);
    detail::check_runner(p, detail::Runner::one_core);
    for (uint32_t it = 0; it < iters; ++it) {
        detail::start_barrier(hal, link, p, it);
        detail::packet_loop(hal, p, tgt_fwd | tgt_bwd | tgt_local,
                            [&](const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t l1, uint32_t d) {
                                detail::send_direct(hal, link, p, d, detail::packet_header(p, s, off, n, last, d, it), l1, n);
                            });
        detail::wait_at_least(hal, p.sem_l1 + 64 * (it & 1), p.sem_initial + (it / 2 + 1) * p.expect);  // every stream that reaches this chip
        hal.noc_write_barrier();  // the local copy landed
    }
    return 0;
}

namespace detail {
/// Relay (all_gather, per-direction structure): sender d's items for op `it`, packets read into
/// the CB (the reads of packet k+1 issued before packet k is written when its data is already
/// there), each sent with `send(header fields, cb l1, n)`; the own slice also copied locally by
/// the backward sender. `relay_l1`: this sender's relay semaphore (cumulative over ops).
template <class H, class Send>
void relay_loop(H& hal, const Plan& p, uint32_t c, uint32_t it, uint32_t relay_l1, uint32_t peer_xy, Send send) {
    const uint32_t pk = p.packet_bytes(), sync = p.relay_sync, d = c / p.workers;
    const uint32_t dx = p.dram_xy & 0xFFFFu, dy = p.dram_xy >> 16;
    const RelayItem* items = p.items[c];
    const uint32_t m = p.nitems[c];
    uint32_t per_op = 0;
    for (uint32_t i = 0; i < m; ++i)
        if (items[i].recv) per_op += relay_syncs(p, items[i].bytes);
    const uint32_t base = it * per_op;
    struct Pk {
        uint32_t i = 0, j = 0, off = 0, n = 0, need = 0;  // item, packet index, offset in the slice, bytes, syncs needed
        bool valid = false;
    };
    // the recv item covering the current item's data and the syncs counted before it
    uint32_t cur_i = 0, cur_j = 0, rstart = 0, roff = 0, rnp = 0, cum = 0;
    bool started = false;
    auto next = [&]() {
        Pk k;
        while (cur_i < m) {
            const RelayItem& x = items[cur_i];
            if (!started) {
                started = true;
                cur_j = 0;
                if (x.recv) {
                    rstart = cum;
                    roff = x.off;
                    rnp = (x.bytes + pk - 1) / pk;
                    cum += relay_syncs(p, x.bytes);
                }
            }
            const uint32_t np = (x.bytes + pk - 1) / pk;
            if (!(x.send || (x.own && d == 1 && p.relay_local)) || cur_j >= np) {
                ++cur_i;
                started = false;
                continue;
            }
            k.i = cur_i;
            k.j = cur_j++;
            k.off = x.off + k.j * pk;
            k.n = x.bytes - k.j * pk < pk ? x.bytes - k.j * pk : pk;
            if (!x.own) {  // arrived data: the syncs covering its last packet within the recv item
                const uint32_t last = (k.off + k.n - roff + pk - 1) / pk - 1;
                const uint32_t total = (rnp + sync - 1) / sync;
                k.need = base + rstart + (last / sync + 1 < total ? last / sync + 1 : total);
            }
            k.valid = true;
            return k;
        }
        return k;
    };
    auto ready = [&](const Pk& k) { return items[k.i].own || reached(hal.sem_read(relay_l1), k.need); };
    auto read = [&](const Pk& k, uint32_t slot) {
        const RelayItem& x = items[k.i];
        const uint32_t src = x.own ? p.input + k.off : p.output + x.chip * p.slice + k.off, l1 = p.cb_l1 + slot * pk;
        if (!x.own) wait_at_least(hal, relay_l1, k.need);
        for (uint32_t o = 0; o < k.n; o += p.page)
            hal.noc_read(hal.noc_addr(dx, dy, src + o), l1 + o, k.n - o < p.page ? k.n - o : p.page);
    };
    cb_pipeline(hal, next, ready, read, [&](const Pk& cur, uint32_t slot) {
        const RelayItem& x = items[cur.i];
        const uint32_t l1 = p.cb_l1 + slot * pk;
        const uint32_t dst = p.output + x.chip * p.slice + cur.off;
        if (x.send) {  // one hop into the neighbour's output, page by page (scatter write)
            const uint32_t source = (p.rank & 0xFFu) | (cur.off << 8);
            send(data_header(p, Routing::unicast_1d, 1, dst, cur.n, false, 0, 0, source), l1, cur.n);
            const uint32_t np = (x.bytes + pk - 1) / pk;
            if ((cur.j + 1) % sync == 0 || cur.j + 1 == np)  // the sync: lands after the data (the router's write barrier)
                send(data_header(p, Routing::unicast_1d, 1, dst, 0, true, peer_xy, relay_l1, source), l1, 0);
        }
        if (x.own && d == 1 && p.relay_local) write_pages_waited(hal, l1, dx, dy, dst, cur.n, p.page);  // the own slice, locally
    });
    wait_at_least(hal, relay_l1, base + per_op);  // every slice that reaches this chip in direction d
}
}  // namespace detail

/// Structure::per_direction, the sender of mux channel c (direction d = c / p.workers: 0 E, 1 W;
/// without relay one sender per direction, c = d, the local copy with the backward one): reader
/// and writer of tt-metal's worker; each packet goes into a slot of the mux's channel c.
template <class H>
uint32_t run_sender(H& hal, const Plan& p, const MuxWiring& w, uint32_t c, uint32_t iters) {
    detail::check_plan(p);
    const uint32_t mx = w.mux_xy & 0xFFFFu, my = w.mux_xy >> 16;
    const uint32_t d = c / p.workers;
    const uint32_t mask = p.by_channel ? (c == p.local_channel ? tgt_local : tgt_fwd | tgt_bwd)  // all_to_all: the channel's streams
                          : d == 0     ? tgt_fwd
                                       : (tgt_bwd | tgt_local);  // the local copy with the backward sender, as tt-metal's (direction 1)
    uint32_t sent = 0, idx = 0;
    for (uint32_t it = 0; it < iters; ++it) {
        detail::wait_at_least(hal, w.credit_l1 + 16, it + 1);  // the mux says go: every chip finished op it - 1 (the start barrier)
        auto to_mux = [&](const HeaderFields& f, uint32_t l1, uint32_t n) { detail::to_mux(hal, p, w, c, f, l1, n, sent, idx); };
        if (p.relay) detail::relay_loop(hal, p, c, it, w.relay_l1, w.sender_xy[c], to_mux);
        else
            detail::packet_loop(
                hal, p, mask,
                [&](const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t l1, uint32_t dd) {
                    to_mux(detail::packet_header(p, s, off, n, last, dd, it), l1, n);
                },
                p.by_channel ? c : any_channel);
        hal.noc_write_barrier();  // the local copy landed
        hal.sem_inc(hal.noc_addr(mx, my, w.done_l1), 1);  // this sender's part of op it is done
    }
    return 0;
}

/// Structure::per_direction, the mux (tt-metal's fabric mux core; here the chip's fabric worker,
/// which owns the router connections), with the op's counts given: an op is `phases` programs
/// (tt-metal device operations: all_reduce is reduce_scatter then all_gather), each starting with
/// the start barrier and a "go" to every sender, then forwarding want[ph * nc + c] packets of
/// channel c into the router of its direction (giving each slot back) until every sender said
/// its part of the phase is done. The op ends when `expect` increments per op counted at the
/// plan's completion semaphores (0: none; the senders' own waits complete it).
template <class H, class Link>
uint32_t run_mux_counts(H& hal, Link& link, const Plan& p, const MuxWiring& w, const uint32_t* want, uint32_t phases, uint32_t expect,
                        uint32_t iters) {
    const uint32_t nc = p.channels();
    uint32_t taken[max_mux_channels] = {}, idx[max_mux_channels] = {};
    // Channels 0 .. ne - 1 go E, the others W (c / workers > 0). Each direction's channels take
    // turns for its router (first[d]: the one its scan starts with, counted from the direction's
    // first channel), as tt-metal's mux (tt_fabric_mux.cpp, a core per direction) loops over its
    // channels, a channel with a packet waiting for a free router slot before the next one is
    // looked at. A scan that restarted at channel 0 after every wait would give channel 0 every
    // router slot that frees while the link is congested, starving the others.
    const uint32_t ne = p.workers < nc ? p.workers : nc;
    uint32_t first[2] = {0, 0};
    for (uint32_t it = 0; it < iters; ++it) {
        for (uint32_t ph = 0; ph < phases; ++ph) {
            const uint32_t prog = it * phases + ph;  // programs started so far
            detail::start_barrier(hal, link, p, prog);
            for (uint32_t c = 0; c < nc; ++c) {
                const uint32_t sx = w.sender_xy[c] & 0xFFFFu, sy = w.sender_xy[c] >> 16;
                hal.sem_inc(hal.noc_addr(sx, sy, w.credit_l1 + 16), 1);  // go: program prog
            }
            uint32_t done[max_mux_channels] = {};
            for (;;) {
                bool moved = false, left = false;
                const uint32_t from[2] = {first[0], first[1]};  // this scan's start (first[] moves as channels are served)
                for (uint32_t i = 0; i < nc; ++i) {
                    const uint32_t d = i < ne ? 0u : 1u, m = d == 0 ? ne : nc - ne, b = d == 0 ? 0u : ne;
                    const uint32_t c = b + (from[d] + i - b) % m;  // direction d's channels, from from[d] on
                    if (done[c] == want[ph * nc + c]) continue;
                    left = true;
                    if (hal.sem_read(w.mux_fill_l1 + 16 * c) == taken[c]) continue;
                    Connection& cn = link.connection(d == 0 ? uint32_t(Dir::E) : uint32_t(Dir::W));
                    if (!cn.slot_free(hal)) continue;
                    const uint32_t slot = w.slot(p, c, idx[c]);
                    const volatile uint32_t* h = reinterpret_cast<const volatile uint32_t*>(hal.l1_ptr(slot, p.header_bytes));
                    cn.reserve(hal);
                    cn.write(hal, slot, p.header_bytes, slot + p.header_bytes, h[hw::payload]);  // left the slot on return
                    const uint32_t sx = w.sender_xy[c] & 0xFFFFu, sy = w.sender_xy[c] >> 16;
                    hal.sem_inc(hal.noc_addr(sx, sy, w.credit_l1), 1);
                    idx[c] = idx[c] + 1 == w.mux_slots ? 0 : idx[c] + 1;
                    ++taken[c];
                    ++done[c];
                    moved = true;
                    first[d] = c + 1 - b;  // round robin per direction: its next scan starts after the channel served
                }
                if (!left) break;
                if (!moved) hal.idle();
            }
            detail::wait_at_least(hal, w.done_l1, nc * (prog + 1));  // every sender's part of the phase
        }
        detail::wait_at_least(hal, p.sem_l1 + 64 * (it & 1), p.sem_initial + (it / 2 + 1) * expect);  // every stream that reaches this chip
    }
    return 0;
}

/// all_to_all's direct structure (Plan::direct; all_to_all_async_generic's one sender per link
/// connected to both routers without a mux): the fabric worker sends the remote destinations one
/// after another, the core of channel 0 (run_sender) copies the own chunk; an op ends when that
/// copy is done and every stream that reaches this chip signalled.
template <class H, class Link>
uint32_t run_direct(H& hal, Link& link, const Plan& p, const MuxWiring& w, uint32_t iters) {
    detail::check_plan(p);
    detail::check_runner(p, detail::Runner::direct);
    const uint32_t sx = w.sender_xy[0] & 0xFFFFu, sy = w.sender_xy[0] >> 16;
    for (uint32_t it = 0; it < iters; ++it) {
        detail::start_barrier(hal, link, p, it);
        hal.sem_inc(hal.noc_addr(sx, sy, w.credit_l1 + 16), 1);  // go: op it (the local copy)
        detail::packet_loop(
            hal, p, tgt_fwd | tgt_bwd,
            [&](const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t l1, uint32_t d) {
                detail::send_direct(hal, link, p, d, detail::packet_header(p, s, off, n, last, d, it), l1, n);
            },
            fabric_worker_channel);
        detail::wait_at_least(hal, w.done_l1, it + 1);  // the local copy
        detail::wait_at_least(hal, p.sem_l1 + 64 * (it & 1), p.sem_initial + (it / 2 + 1) * p.expect);  // every stream that reaches this chip
    }
    return 0;
}

/// Structure::per_direction, the mux with plan p's own counts (all_gather, all_to_all): one
/// program per op; it ends when every sender is done and every stream that reaches this chip
/// signalled.
template <class H, class Link>
uint32_t run_mux(H& hal, Link& link, const Plan& p, const MuxWiring& w, uint32_t iters) {
    detail::check_plan(p);
    detail::check_runner(p, detail::Runner::mux);
    uint32_t want[max_channels] = {};
    for (uint32_t c = 0; c < p.channels(); ++c) want[c] = detail::packets_to(p, c);
    return run_mux_counts(hal, link, p, w, want, 1, p.expect, iters);
}

}  // namespace kccl::fabric::ops
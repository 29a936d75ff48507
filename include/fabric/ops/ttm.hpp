// kccl/fabric/ops/ttm.hpp — tt-metal's op structure for all_gather and all_to_all on the chip
// fabric: DRAM tensors read page by page and sent as 1D fabric packets that the receiving routers
// write straight into the destination tensor's pages (scatter write). all_gather relays as
// tt-metal's minimal default program (make_all_gather_relay: 1-hop unicasts, each chip forwarding
// what it received out of its output tensor, announced by a semaphore every chunks_per_sync
// packets; make_all_gather: the older multicast streams); all_to_all sends a unicast stream per
// destination whose last packet is a fused write + semaphore increment. No collective executor,
// no message slots, no copies out of slots.
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
//     given (the reducing ops of ttm_reduce.hpp: all_reduce is two programs);
//   * packets of `pages_per_packet` pages (all_gather: tt-metal's min(4, packet payload / page) —
//     its scatter write takes 4 NoC addresses — so 3 pages of 2048 B in a 6144 B packet; all_to_all
//     likewise, all_to_all_async_generic's number_pages_per_packet), written by the delivering
//     router as one NoC write per page (`NocCmd::scatter_write`);
//   * all_gather, relay (make_all_gather_relay, the default of the per-direction structure): each
//     sender sends its part of the own slice one hop (unicast_1d, 1 hop) into the neighbour's
//     output, then the parts that arrived from upstream, read back out of its output tensor once
//     the relay semaphore counts their syncs (a header-only fused write + increment after every
//     chunks_per_sync packets and the last, executed by the delivering router after a write
//     barrier); a line forwards while a neighbour is downstream, a ring n/2 hops forward and
//     (n-1)/2 backward, an even ring splitting the opposite chip's slice per worker ("split
//     forwarding": first half forward, second half backward);
//   * all_gather, multicast (make_all_gather; one_core and relay off): chip r's slice goes forward
//     (E) to `num_targets_forward` chips and backward (W) to `num_targets_backward` (tt-metal's
//     get_forward_backward_line_mcast_distance), one multicast_1d packet per direction per packet
//     of the slice (start 1, range = the targets), split in halves on an even ring likewise;
//   * all_to_all (make_all_to_all_generic, all_to_all_async_generic's program factory): chunk j of
//     chip r goes to chip j by a unicast_1d stream (a line: towards j; a ring: the shorter way),
//     written at offset r * chunk of j's output, in a destination order common to every chip (a
//     line alternating ends, a ring 0..n-1). Small ops (under 16 packets per worker on a line, 4 on
//     a ring): the fabric worker sends the remote destinations one after another, connected to both
//     routers without a mux (run_direct); larger: 3 workers per direction (a line: at most n - 1),
//     each its share of the direction's destinations one after another, behind the mux. The own
//     chunk is copied by a core of its own. (make_all_to_all: every stream in turns from one core,
//     Structure one_core);
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
// Plans are computed on the device from a handful of numbers (make_all_gather / make_all_to_all),
// so a plan is what a kernel would derive from its runtime args. C++17, freestanding, no heap.
#pragma once

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
/// tt-metal's all_to_all (all_to_all_async_generic's program factory) pages per packet:
/// number_pages_per_packet = min(4, max payload / page) for its scatter schedule (the bank-owned
/// schedule needs more than 4 pages per payload): the all_gather rule, 3 pages of 2048 B in a 6144 B packet.
constexpr uint32_t ttm_a2a_pages_per_packet(uint32_t payload, uint32_t page) { return ttm_pages_per_packet(payload, page); }

/// tt-metal's all_to_all_async_generic workers per direction (its program factory, one link):
/// preferred 3, at most n - 1 on a line; used when the output's packets per lane
/// (pages / (workers x pages_per_packet)) reach 16 on a line, 4 on a ring; else 0, its original
/// schedule (one core sending every remote destination, a core for the local copy).
constexpr uint32_t ttm_a2a_workers_per_direction(uint64_t out_bytes, uint32_t page, uint32_t n, bool ring, uint32_t pages_per_packet) {
    const uint32_t w = ring ? 3u : (n - 1 < 3 ? n - 1 : 3u);
    const uint64_t lanes = out_bytes / page / (uint64_t(w) * pages_per_packet);
    return lanes >= (ring ? 4u : 16u) ? w : 0u;
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

/// all_gather of `slice` bytes per chip (output: ranks * slice, chip q's slice at q * slice).
/// On an even ring of more than 2 chips the slice goes as two streams, as tt-metal's "split
/// forwarding" (minimal default reader / writer: the opposite chip gets the first half of the slice
/// forward and the second half backward): the first half forward to n/2 chips and backward to
/// n/2 - 1, the second half forward to n/2 - 1 and backward to n/2, so both directions of every
/// link carry (n - 1) / 2 slices (4 and 3 without the split on 8 chips).
inline void make_all_gather(Plan& p, bool ring, uint32_t slice) {
    const uint32_t r = p.rank, n = p.ranks;
    p.ring = ring;
    auto add = [&](uint32_t off, uint32_t bytes, uint32_t fwd, uint32_t bwd) {
        Stream& s = p.s[p.nstreams++];
        s.src = off;
        s.dst = r * slice + off;
        s.bytes = bytes;
        s.targets = tgt_local | (fwd ? tgt_fwd : 0u) | (bwd ? tgt_bwd : 0u);
        s.routing[0] = s.routing[1] = uint32_t(Routing::multicast_1d);
        s.route[0] = 1u | (fwd << 16);
        s.route[1] = 1u | (bwd << 16);
    };
    const uint32_t pages = (slice + p.page - 1) / p.page;
    if (ring && n % 2 == 0 && n > 2 && pages >= 2) {  // tt-metal: split forwarding needs >= 2 tiles
        const uint32_t half = (pages / 2) * p.page;   // first_half_tiles = tiles / 2
        add(0, half, n / 2, n / 2 - 1);
        add(half, slice - half, n / 2 - 1, n / 2);
        p.expect = 2 * (n - 1);  // both halves reach every other chip
        return;
    }
    add(0, slice, ring ? n / 2 : n - 1 - r, ring ? (n - 1) / 2 : r);
    p.expect = n - 1;
}

/// tt-metal's workers per direction for an all_gather of `out_bytes` gathered bytes (its
/// default_workers: 4 above 256 KiB per link, 1 up to 4 KiB, else 2; a ring halves the bytes).
constexpr uint32_t ttm_workers_per_direction(uint64_t out_bytes, uint32_t n, bool ring) {
    const uint64_t per_link = out_bytes * (n - 1) / n / (ring ? 2 : 1);
    return per_link > 256u * 1024u ? 4u : per_link <= 4096u ? 1u : 2u;
}
/// tt-metal's chunks_per_sync: a worker's packets, at least 1, at most 160 (its
/// HEURISTIC_MAX_CHUNKS_PER_SYNC); a worker's pages are the slice's pages / workers.
constexpr uint32_t ttm_chunks_per_sync(uint32_t slice_pages, uint32_t workers, uint32_t pages_per_packet) {
    const uint32_t c = slice_pages / workers / pages_per_packet;
    return c < 1 ? 1u : c > 160 ? 160u : c;
}

/// all_gather as tt-metal's minimal default program relays it: every hop is a 1-hop unicast
/// into the neighbour's output tensor; a chip's sender of direction d first sends its own slice,
/// then, as the relay semaphore says chunks have arrived (a sync every `sync` packets), reads the
/// slices that came from upstream back out of its output tensor and sends them one hop on (its
/// reader: "read the next slice out of memory, and put it in CB for writer to forward"). A line
/// forwards while there is a neighbour downstream; a ring forwards a slice until it has travelled
/// its targets (n/2 forward, (n-1)/2 backward), and an even ring of more than 2 chips splits the
/// opposite chip's slice: its first half travels forward, its second half backward ("split
/// forwarding"). Direction 0 is forward (E), 1 backward (W).
inline void make_all_gather_relay(Plan& p, bool ring, uint32_t slice, uint32_t sync, uint32_t workers) {
    const uint32_t r = p.rank, n = p.ranks;
    p.ring = ring;
    const uint32_t pages = (slice + p.page - 1) / p.page;
    detail::check_workers(p, workers, "make_all_gather_relay");
    p.relay = true;
    p.workers = workers < 1 ? 1 : workers;  // 0: one worker
    p.slice = slice;
    p.relay_sync = sync ? sync : 1;
    p.expect = 0;  // completion is counted by the senders on their relay semaphores
    for (uint32_t c = 0; c < p.channels(); ++c) {
        // worker k's pages of every slice (tt-metal: input_tile_id_start / end per worker)
        const uint32_t d = c / p.workers, k = c % p.workers, W = p.workers;
        const uint32_t base = pages / W, rem = pages % W;
        const uint32_t a = k * base + (k < rem ? k : rem), b = (k + 1) * base + (k + 1 < rem ? k + 1 : rem);
        const uint32_t lo = a * p.page, hi = b * p.page < slice ? b * p.page : slice;
        const bool split = ring && n % 2 == 0 && n > 2 && b - a >= 2;  // tt-metal: >= 2 tiles of the worker
        const uint32_t mid = (a + (b - a) / 2) * p.page;
        uint32_t& m = p.nitems[c];
        m = 0;
        if (hi <= lo) continue;  // no pages for this worker
        const uint32_t hops = ring ? (split ? n / 2 : d == 0 ? n / 2 : (n - 1) / 2) : 0;
        const bool down = ring || (d == 0 ? r + 1 < n : r > 0);            // a neighbour downstream
        const uint32_t arrive = ring ? hops : (d == 0 ? r : n - 1 - r);   // slices that arrive here
        auto range = [&](uint32_t dist, uint32_t& off, uint32_t& bytes) {   // what travels distance dist
            off = lo;
            bytes = hi - lo;
            if (split && dist == n / 2) {
                off = d == 0 ? lo : mid;
                bytes = d == 0 ? mid - lo : hi - mid;
            }
        };
        if (down || d == 1) {  // the backward senders also copy the own slice locally (tt-metal's direction 1)
            RelayItem& it = p.items[c][m++] = RelayItem{};
            it.chip = r;
            it.off = lo;
            it.bytes = hi - lo;
            it.own = true;
            it.send = down;
        }
        for (uint32_t dist = 1; dist <= arrive; ++dist) {
            const uint32_t from = d == 0 ? (r + n - dist) % n : (r + dist) % n;
            const bool fwd = down && (!ring || dist < hops);
            uint32_t off, bytes, foff, fbytes;
            range(dist, off, bytes);
            range(dist + 1, foff, fbytes);
            if (fwd && (foff != off || fbytes != bytes)) {  // forwards only a half of what arrived
                RelayItem& x = p.items[c][m++] = RelayItem{};
                x.chip = from;
                x.off = off;
                x.bytes = bytes;
                x.recv = true;
                RelayItem& y = p.items[c][m++] = RelayItem{};
                y.chip = from;
                y.off = foff;
                y.bytes = fbytes;
                y.send = true;
                continue;
            }
            RelayItem& it = p.items[c][m++] = RelayItem{};
            it.chip = from;
            it.off = off;
            it.bytes = bytes;
            it.recv = true;
            it.send = fwd;
        }
    }
}

/// all_to_all of `chunk` bytes per pair (input and output: ranks * chunk; chunk j of chip r's
/// input lands at r * chunk of chip j's output), for Structure one_core: streams in an older
/// all_to_all_async_generic sender reader's order (a line chip 0, 1, .., n - 1; a ring from the
/// farthest chip inwards, distance (d + 1) / 2 for d = n - 1 .. 0, backward when d is odd), taking
/// turns packet by packet from the one core. tt-metal's schedule: make_all_to_all_generic.
inline void make_all_to_all(Plan& p, bool ring, uint32_t chunk) {
    const uint32_t r = p.rank, n = p.ranks;
    p.ring = ring;
    auto add = [&](uint32_t j, uint32_t dir, uint32_t hops) {
        Stream& s = p.s[p.nstreams++];
        s.src = j * chunk;
        s.dst = r * chunk;
        s.bytes = chunk;
        s.targets = dir == 2 ? tgt_local : dir == 0 ? tgt_fwd : tgt_bwd;
        s.routing[0] = s.routing[1] = uint32_t(Routing::unicast_1d);
        s.route[0] = s.route[1] = hops;
    };
    if (ring) {
        for (uint32_t d = n; d-- > 0;) {
            const uint32_t k = (d + 1) / 2;
            if (k == 0) add(r, 2, 0);
            else if (d % 2) add((r + n - k) % n, 1, k);  // backward distance k
            else add((r + k) % n, 0, k);                 // forward distance k
        }
    } else {
        for (uint32_t j = 0; j < n; ++j) add(j, j == r ? 2u : j > r ? 0u : 1u, j > r ? j - r : r - j);
    }
    p.expect = n - 1;
}

/// all_to_all as all_to_all_async_generic's program factory schedules it (one link), `chunk` bytes
/// per pair as make_all_to_all. Destination order, common to every chip: a line alternates ends
/// (chips 0, n - 1, 1, n - 2, ..); a ring goes 0, 1, .., n - 1, each the shorter way (an even
/// ring's opposite chip forward when its index is above this chip's, else backward). `workers`
/// (ttm_a2a_workers_per_direction): 0 or 1 — the direct structure: the remote destinations one
/// after another from the fabric worker, connected to both routers without a mux (its original
/// schedule; with one worker per direction only a 2-chip line, where a chip sends one way);
/// 2 or more — the direction-owned schedule: a forward destination goes to forward worker
/// (its index among the forward destinations) mod workers, a backward one likewise, each worker
/// sending its destinations one after another into the mux. The own chunk is copied by a core
/// of its own. Each destination's last packet carries its completion increment.
inline void make_all_to_all_generic(Plan& p, bool ring, uint32_t chunk, uint32_t workers) {
    const uint32_t r = p.rank, n = p.ranks;
    p.ring = ring;
    p.by_channel = p.in_order = true;
    detail::check_workers(p, workers, "make_all_to_all_generic");
    p.direct = workers <= 1;
    p.workers = p.direct ? 1u : workers;
    p.local_channel = p.direct ? 0u : 2 * p.workers;
    uint32_t fwd_i = 0, bwd_i = 0;
    for (uint32_t step = 0; step < n; ++step) {
        const uint32_t j = ring ? step : step % 2 == 0 ? step / 2 : n - 1 - step / 2;
        int32_t off = int32_t(j) - int32_t(r);
        if (ring && off < -int32_t(n / 2)) off += int32_t(n);
        else if (ring && off > int32_t(n / 2)) off -= int32_t(n);
        Stream& s = p.s[p.nstreams++];
        s.src = j * chunk;
        s.dst = r * chunk;
        s.bytes = chunk;
        s.targets = off == 0 ? tgt_local : off > 0 ? tgt_fwd : tgt_bwd;
        s.routing[0] = s.routing[1] = uint32_t(Routing::unicast_1d);
        s.route[0] = s.route[1] = uint32_t(off < 0 ? -off : off);
        s.channel = off == 0 ? p.local_channel
                    : p.direct ? fabric_worker_channel
                    : off > 0  ? fwd_i++ % p.workers
                               : p.workers + bwd_i++ % p.workers;
    }
    p.expect = n - 1;
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
    while (int32_t(hal.sem_read(l1) - want) < 0) hal.idle();
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
    while (sent - hal.sem_read(w.credit_l1) >= most) hal.idle();  // a free mux slot
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
    auto ready = [&](const Pk& k) { return items[k.i].own || int32_t(hal.sem_read(relay_l1) - k.need) >= 0; };
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

// kccl/fabric/chip/ops/ttm.hpp — tt-metal's op structure for all_gather and all_to_all on the chip
// fabric: DRAM tensors read page by page, every slice sent ONCE as a 1D fabric packet stream
// (multicast start + range on a line, both directions on a ring; unicast for all_to_all), the
// receiving routers writing straight into the destination tensor's pages (scatter write), the
// last packet of each stream a fused write + semaphore increment that tells the receiving chip's
// worker its data is complete. No collective executor, no message slots, no copies out of slots.
//
// WHAT IT MODELS (tt-metal's all_gather_async "minimal default" program, and its all_to_all)
//   * per direction a sender core (run_sender): tt-metal's reader kernel (DRAM input pages -> a
//     circular buffer of 3 packets in L1, its "triple buffering") and writer kernel (CB -> the
//     fabric; the E sender also writes the own part into the local output tensor); the reads of
//     packet k+1 are issued before packet k is written, so the two overlap as tt-metal's two RISCs;
//   * a mux (run_mux, tt-metal's fabric mux core between the workers and the router): the chip's
//     fabric worker, which owns the connections to the E and W routers, forwards each sender's
//     packets from its channel (MuxWiring::mux_slots slots, tt-metal's default 1) into the router;
//     `run` (Structure one_core) does reader, writer and mux work on that one core instead;
//   * packets of `pages_per_packet` pages (tt-metal: min(2, packet payload / page) — its scatter
//     write takes 2 NoC addresses — so 2 pages of 2048 B in a 6144 B channel), written by the
//     delivering router as one NoC write per page (`NocCmd::scatter_write`);
//   * all_gather: chip r's slice goes forward (E) to `num_targets_forward` chips and backward (W) to
//     `num_targets_backward` (tt-metal's get_forward_backward_line_mcast_distance: on a line, the
//     chips on each side; on a ring, n/2 forward and (n-1)/2 backward), one multicast_1d packet per
//     direction per packet of the slice (start 1, range = the targets);
//   * all_to_all: chunk j of chip r goes to chip j by a unicast_1d stream (a line: towards j; a
//     ring: the shorter way, ties E, as the fabric routes), written at offset r * chunk of j's
//     output; the chip's own chunk is copied locally; streams take turns packet by packet;
//   * completion: each receiving chip waits until its semaphore counted one increment per stream
//     that reaches it (n - 1 per op) and its local copy landed; the mux then lets the senders start
//     the next op. Even and odd ops count on two semaphores (a chip is at most one op ahead).
// Differences from tt-metal (docs/fabric.md, "tt-metal's op structure"): the router has one
// worker channel, so one mux serves both directions (tt-metal: a mux core per direction); one
// sender per direction (tt-metal's num_workers_per_direction default); pages of a tensor are
// contiguous in the one emulated DRAM endpoint, whose channel model stands for the interleaving.
//
// Plans are computed on the device from a handful of numbers (make_all_gather / make_all_to_all),
// so a plan is what a kernel would derive from its runtime args. C++17, freestanding, no heap.
#pragma once

#include <fabric/chip/header.hpp>
#include <fabric/chip/worker.hpp>
#include <hal/config.hpp>
#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::fabric::chip::ops {

inline constexpr uint32_t max_streams = 64;
inline constexpr uint32_t cb_packets = 3;       ///< tt-metal's sender CB: 3 packets ("triple buffering")
inline constexpr uint32_t tgt_fwd = 1, tgt_bwd = 2, tgt_local = 4;

/// One stream of packets: `bytes` from input offset `src` to output offset `dst` on its targets.
struct Stream {
    uint32_t src = 0, dst = 0, bytes = 0, targets = 0;
    uint32_t routing[2] = {0, 0}, route[2] = {0, 0};  ///< [0] forward (E), [1] backward (W)
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
    uint32_t header_l1 = 0;                ///< 2 headers of header_bytes
    uint32_t header_bytes = header_base_bytes;
    uint32_t cb_l1 = 0;                    ///< cb_packets packets
    uint32_t expect = 0;                   ///< increments per op at this chip
    uint32_t nstreams = 0;
    Stream s[max_streams];

    constexpr uint32_t packet_bytes() const { return page * pages_per_packet; }
    /// L1 bytes a core needs from the plan's base: 64 bytes of semaphores, 2 headers, then the CB
    /// (senders, one_core) or the mux channels (the mux: 2 x mux_slots slots of header + packet).
    static constexpr uint32_t l1_bytes(uint32_t header_bytes, uint32_t packet, uint32_t mux_slots) {
        return 80 + 2 * header_bytes +
               (cb_packets * packet > 2 * mux_slots * (header_bytes + packet) ? cb_packets * packet : 2 * mux_slots * (header_bytes + packet));
    }
};

/// tt-metal's pages per packet: the packet payload's whole pages, at most 2 (its scatter write).
constexpr uint32_t ttm_pages_per_packet(uint32_t payload, uint32_t page) {
    return payload / page < 2 ? payload / page : 2;
}

/// Lays out the plan's L1 from `base` (16-aligned) and the common fields.
inline void plan_common(Plan& p, uint32_t rank, uint32_t ranks, uint32_t dram_xy, uint32_t worker_xy, uint32_t input,
                        uint32_t output, uint32_t page, uint32_t pages_per_packet, uint32_t base, uint32_t header_bytes) {
    p.rank = rank;
    p.ranks = ranks;
    p.dram_xy = dram_xy;
    p.worker_xy = worker_xy;
    p.input = input;
    p.output = output;
    p.page = page;
    p.pages_per_packet = pages_per_packet;
    p.header_bytes = header_bytes;
    p.sem_l1 = base;  // + 16 .. + 48: the mux's / senders' semaphores (MuxWiring); + 64: odd ops' completion
    p.header_l1 = base + 80;
    p.cb_l1 = base + 80 + 2 * header_bytes;
    p.nstreams = 0;
}

/// all_gather of `slice` bytes per chip (output: ranks * slice, chip q's slice at q * slice).
inline void make_all_gather(Plan& p, bool ring, uint32_t slice) {
    const uint32_t r = p.rank, n = p.ranks;
    const uint32_t fwd = ring ? n / 2 : n - 1 - r, bwd = ring ? (n - 1) / 2 : r;
    Stream& s = p.s[p.nstreams++];
    s.src = 0;
    s.dst = r * slice;
    s.bytes = slice;
    s.targets = tgt_local | (fwd ? tgt_fwd : 0u) | (bwd ? tgt_bwd : 0u);
    s.routing[0] = s.routing[1] = uint32_t(Routing::multicast_1d);
    s.route[0] = 1u | (fwd << 16);
    s.route[1] = 1u | (bwd << 16);
    p.expect = n - 1;
}

/// all_to_all of `chunk` bytes per pair (input and output: ranks * chunk; chunk j of chip r's
/// input lands at r * chunk of chip j's output). Streams alternate forward and backward by distance.
inline void make_all_to_all(Plan& p, bool ring, uint32_t chunk) {
    const uint32_t r = p.rank, n = p.ranks;
    auto add = [&](uint32_t j, uint32_t dir, uint32_t hops) {
        Stream& s = p.s[p.nstreams++];
        s.src = j * chunk;
        s.dst = r * chunk;
        s.bytes = chunk;
        s.targets = dir == 2 ? tgt_local : dir == 0 ? tgt_fwd : tgt_bwd;
        s.routing[0] = s.routing[1] = uint32_t(Routing::unicast_1d);
        s.route[0] = s.route[1] = hops;
    };
    add(r, 2, 0);
    for (uint32_t k = 1; k < n; ++k) {  // distance k forward, then distance k backward
        if (ring) {
            const uint32_t j = (r + k) % n;  // forward distance k; the shorter way (ties forward)
            if (k <= n - k) add(j, 0, k);
            const uint32_t i = (r + n - k) % n;  // backward distance k
            if (k < n - k) add(i, 1, k);
        } else {
            if (r + k < n) add(r + k, 0, k);
            if (k <= r) add(r - k, 1, k);
        }
    }
    p.expect = n - 1;
}

/// The wiring of plan p's cores: mux at mux_xy, senders at s0 (E) and s1 (W), mux_slots per channel.
struct MuxWiring;
inline MuxWiring mux_wiring(const Plan& p, uint32_t mux_xy, uint32_t s0, uint32_t s1, uint32_t mux_slots);

/// Sender / mux wiring (Structure::per_direction): one sender core per direction and the chip's
/// fabric worker as the mux that forwards their packets into the routers.
struct MuxWiring {
    uint32_t mux_xy = 0;            ///< the fabric worker core (x | y << 16)
    uint32_t mux_slots_l1 = 0;      ///< on the mux: 2 channels x mux_slots slots of header + packet bytes
    uint32_t mux_slots = 1;         ///< tt-metal's fabric mux: num_buffers_per_channel, default 1
    uint32_t mux_fill_l1 = 0;       ///< on the mux: fill[d] at +16 d; senders' "iteration done" at +32
    uint32_t sender_xy[2] = {0, 0}; ///< the sender of direction d
    uint32_t credit_l1 = 0;         ///< on a sender: mux slots given back; "go" (next iteration) at +16
    constexpr uint32_t slot_bytes(const Plan& p) const { return p.header_bytes + p.packet_bytes(); }
    constexpr uint32_t slot(const Plan& p, uint32_t d, uint32_t i) const { return mux_slots_l1 + (d * mux_slots + i) * slot_bytes(p); }
};

inline MuxWiring mux_wiring(const Plan& p, uint32_t mux_xy, uint32_t s0, uint32_t s1, uint32_t mux_slots) {
    MuxWiring w;
    w.mux_xy = mux_xy;
    w.mux_slots = mux_slots;
    w.mux_slots_l1 = p.cb_l1;
    w.mux_fill_l1 = p.sem_l1 + 16;
    w.sender_xy[0] = s0;
    w.sender_xy[1] = s1;
    w.credit_l1 = p.sem_l1 + 16;
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

/// One op's packet loop: the streams' packets whose targets meet `mask`, in turns, each read from
/// the DRAM input into the CB (the reads of packet k+1 issued before packet k is written), then
/// `send(stream, off, n, last, cb_l1, d)` per fabric direction d and the local copy.
template <class H, class Send>
void packet_loop(H& hal, const Plan& p, uint32_t mask, Send send) {
    const uint32_t pk = p.packet_bytes();
    const uint32_t dx = p.dram_xy & 0xFFFFu, dy = p.dram_xy >> 16;
    struct Pk {
        uint32_t s = 0, off = 0, n = 0;
        bool valid = false, last = false;
    };
    uint32_t cursor[max_streams];
    for (uint32_t i = 0; i < p.nstreams; ++i) cursor[i] = (p.s[i].targets & mask) ? 0 : p.s[i].bytes;
    uint32_t rr = 0;
    auto next = [&]() {  // the next packet: streams take turns
        Pk k;
        for (uint32_t t = 0; t < p.nstreams; ++t) {
            const uint32_t i = (rr + t) % p.nstreams;
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
    Pk cur = next();
    uint32_t slot = 0;
    if (cur.valid) {
        read(cur, slot);
        hal.noc_read_barrier();
    }
    while (cur.valid) {
        const Pk nx = next();
        const uint32_t nslot = slot + 1 == cb_packets ? 0 : slot + 1;
        if (nx.valid) read(nx, nslot);  // overlaps the writes below (the slot's last writes were flushed)
        const Stream& s = p.s[cur.s];
        const uint32_t t = s.targets & mask, l1 = p.cb_l1 + slot * pk;
        if (t & tgt_fwd) send(s, cur.off, cur.n, cur.last, l1, 0u);
        if (t & tgt_bwd) send(s, cur.off, cur.n, cur.last, l1, 1u);
        if (t & tgt_local) {  // the own slice / chunk into the local output, page by page
            const uint32_t dst = p.output + s.dst + cur.off;
            for (uint32_t o = 0; o < cur.n; o += p.page)
                hal.noc_write(l1 + o, hal.noc_addr(dx, dy, dst + o), cur.n - o < p.page ? cur.n - o : p.page);
        }
        if (nx.valid) hal.noc_read_barrier();
        cur = nx;
        slot = nslot;
        hal.noc_writes_flushed();  // the CB slot read next was written out (N3)
    }
}

/// Fabric packets of direction d per op (the mux forwards exactly these).
inline uint32_t packets_to(const Plan& p, uint32_t d) {
    uint32_t n = 0;
    const uint32_t pk = p.packet_bytes(), bit = d == 0 ? tgt_fwd : tgt_bwd;
    for (uint32_t i = 0; i < p.nstreams; ++i)
        if (p.s[i].targets & bit) n += (p.s[i].bytes + pk - 1) / pk;
    return n;
}

template <class H>
void wait_at_least(H& hal, uint32_t l1, uint32_t want) {
    while (int32_t(hal.sem_read(l1) - want) < 0) hal.idle();
}

/// A sender's hand-off of one packet (header f, n payload bytes at l1) to channel d of the mux:
/// waits for a free slot (`sent` packets handed over so far, `idx` the next slot; at most `limit`
/// packets waiting in the mux, 0: every slot), writes header and payload into it and announces it.
/// Returns when the payload has left l1.
template <class H>
void to_mux(H& hal, const Plan& p, const MuxWiring& w, uint32_t d, const HeaderFields& f, uint32_t l1, uint32_t n, uint32_t& sent,
            uint32_t& idx, uint32_t limit = 0) {
    const uint32_t mx = w.mux_xy & 0xFFFFu, my = w.mux_xy >> 16, hl1 = p.header_l1;
    const uint32_t most = limit && limit < w.mux_slots ? limit : w.mux_slots;
    while (sent - hal.sem_read(w.credit_l1) >= most) hal.idle();  // a free mux slot
    volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(hl1, p.header_bytes));
    write_header(h, f, 0, [](uint32_t) { return uint8_t(0); });
    kccl::hal::l1_store_fence(hal, hl1, p.header_bytes);  // the header stores above (N7)
    const uint32_t slot = w.slot(p, d, idx);
    hal.noc_write(hl1, hal.noc_addr(mx, my, slot), p.header_bytes);
    hal.noc_write(l1, hal.noc_addr(mx, my, slot + p.header_bytes), n);
    hal.noc_writes_flushed();  // the packet before its announcement (N1, strict profile)
    hal.sem_inc(hal.noc_addr(mx, my, w.mux_fill_l1 + 16 * d), 1);
    idx = idx + 1 == w.mux_slots ? 0 : idx + 1;
    ++sent;
}
}  // namespace detail

/// Structure::one_core: runs `iters` ops of plan `p` on the chip's fabric worker alone (reader and
/// writer of both directions). Returns 0; the caller quiesces the link afterwards.
template <class H, class Link>
uint32_t run(H& hal, Link& link, const Plan& p, uint32_t iters) {
    detail::check_plan(p);
    for (uint32_t it = 0; it < iters; ++it) {
        detail::packet_loop(hal, p, tgt_fwd | tgt_bwd | tgt_local,
                            [&](const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t l1, uint32_t d) {
                                const uint32_t hl1 = p.header_l1 + d * p.header_bytes;
                                volatile uint32_t* h = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(hl1, p.header_bytes));
                                write_header(h, detail::packet_header(p, s, off, n, last, d, it), 0, [](uint32_t) { return uint8_t(0); });
                                Connection& c = link.connection(d == 0 ? uint32_t(Dir::E) : uint32_t(Dir::W));
                                c.reserve(hal);
                                c.write(hal, hl1, p.header_bytes, l1, n);  // returns when header and payload left L1
                            });
        detail::wait_at_least(hal, p.sem_l1 + 64 * (it & 1), p.sem_initial + (it / 2 + 1) * p.expect);  // every stream that reaches this chip
        hal.noc_write_barrier();  // the local copy landed
    }
    return 0;
}

/// Structure::per_direction, the sender of direction d (0: E, 1: W; the local copy goes with E):
/// reader and writer of tt-metal's worker; each packet goes into a slot of the mux's channel d.
template <class H>
uint32_t run_sender(H& hal, const Plan& p, const MuxWiring& w, uint32_t d, uint32_t iters) {
    detail::check_plan(p);
    const uint32_t mx = w.mux_xy & 0xFFFFu, my = w.mux_xy >> 16;
    const uint32_t mask = d == 0 ? (tgt_fwd | tgt_local) : tgt_bwd;
    uint32_t sent = 0, idx = 0;  // packets handed to the mux; the next mux slot
    for (uint32_t it = 0; it < iters; ++it) {
        if (it) detail::wait_at_least(hal, w.credit_l1 + 16, it);  // the chip finished op it - 1 (the mux says go)
        detail::packet_loop(hal, p, mask, [&](const Stream& s, uint32_t off, uint32_t n, bool last, uint32_t l1, uint32_t dd) {
            detail::to_mux(hal, p, w, d, detail::packet_header(p, s, off, n, last, dd, it), l1, n, sent, idx);
        });
        hal.noc_write_barrier();  // the local copy landed
        hal.sem_inc(hal.noc_addr(mx, my, w.mux_fill_l1 + 32), 1);  // this sender's part of op it is done
    }
    return 0;
}

/// Structure::per_direction, the mux (tt-metal's fabric mux core; here the chip's fabric worker,
/// which owns the router connections): forwards each sender's packets into the router of its
/// direction, gives the slot back, and ends an op when both senders are done and every stream
/// that reaches this chip signalled; then tells the senders to go on.
/// The op's counts are given: want0 / want1 packets per op from the E / W sender, and
/// `expect` completion increments per op at the plan's semaphores (0: none; the senders' own
/// waits make the op complete). The reducing ops (ttm_reduce.hpp) use it.
template <class H, class Link>
uint32_t run_mux_counts(H& hal, Link& link, const Plan& p, const MuxWiring& w, uint32_t want0, uint32_t want1, uint32_t expect,
                        uint32_t iters) {
    const uint32_t want[2] = {want0, want1};
    uint32_t taken[2] = {0, 0}, idx[2] = {0, 0};
    for (uint32_t it = 0; it < iters; ++it) {
        uint32_t done[2] = {0, 0};
        while (done[0] < want[0] || done[1] < want[1]) {
            bool moved = false;
            for (uint32_t d = 0; d < 2; ++d) {
                if (done[d] == want[d] || hal.sem_read(w.mux_fill_l1 + 16 * d) == taken[d]) continue;
                Connection& c = link.connection(d == 0 ? uint32_t(Dir::E) : uint32_t(Dir::W));
                if (!c.slot_free(hal)) continue;
                const uint32_t slot = w.slot(p, d, idx[d]);
                const volatile uint32_t* h = reinterpret_cast<const volatile uint32_t*>(hal.l1_ptr(slot, p.header_bytes));
                c.reserve(hal);
                c.write(hal, slot, p.header_bytes, slot + p.header_bytes, h[hw::payload]);  // left the slot on return
                const uint32_t sx = w.sender_xy[d] & 0xFFFFu, sy = w.sender_xy[d] >> 16;
                hal.sem_inc(hal.noc_addr(sx, sy, w.credit_l1), 1);
                idx[d] = idx[d] + 1 == w.mux_slots ? 0 : idx[d] + 1;
                ++taken[d];
                ++done[d];
                moved = true;
            }
            if (!moved) hal.idle();
        }
        detail::wait_at_least(hal, w.mux_fill_l1 + 32, 2 * (it + 1));                 // both senders' local work
        detail::wait_at_least(hal, p.sem_l1 + 64 * (it & 1), p.sem_initial + (it / 2 + 1) * expect);  // every stream that reaches this chip
        for (uint32_t d = 0; d < 2; ++d) {
            const uint32_t sx = w.sender_xy[d] & 0xFFFFu, sy = w.sender_xy[d] >> 16;
            hal.sem_inc(hal.noc_addr(sx, sy, w.credit_l1 + 16), 1);  // go: op it + 1
        }
    }
    return 0;
}

/// run_mux_counts with plan p's own counts (all_gather, all_to_all).
template <class H, class Link>
uint32_t run_mux(H& hal, Link& link, const Plan& p, const MuxWiring& w, uint32_t iters) {
    detail::check_plan(p);
    return run_mux_counts(hal, link, p, w, detail::packets_to(p, 0), detail::packets_to(p, 1), p.expect, iters);
}

}  // namespace kccl::fabric::chip::ops

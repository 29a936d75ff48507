// kccl/fabric/ops/all_gather.hpp — tt-metal's all_gather on the chip fabric: relayed as its
// minimal default program (make_all_gather_relay: 1-hop unicasts, each chip forwarding what it
// received out of its output tensor, announced by a semaphore every chunks_per_sync packets) or
// as the older multicast streams (make_all_gather). Run by common.hpp's runners.
//
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
//
// C++17, freestanding, no heap.
#pragma once

#include <fabric/ops/common.hpp>

#include <stdint.h>

namespace kccl::fabric::ops {

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
}  // namespace kccl::fabric::ops

// kccl/fabric/ops/all_to_all.hpp — tt-metal's all_to_all on the chip fabric: a unicast stream
// per destination whose last packet is a fused write + semaphore increment. Run by common.hpp's
// runners.
//
//   * all_to_all (make_all_to_all_generic, all_to_all_async_generic's program factory): chunk j of
//     chip r goes to chip j by a unicast_1d stream (a line: towards j; a ring: the shorter way),
//     written at offset r * chunk of j's output, in a destination order common to every chip (a
//     line alternating ends, a ring 0..n-1). Small ops (under 16 packets per worker on a line, 4 on
//     a ring): the fabric worker sends the remote destinations one after another, connected to both
//     routers without a mux (run_direct); larger: 3 workers per direction (a line: at most n - 1),
//     each its share of the direction's destinations one after another, behind the mux. The own
//     chunk is copied by a core of its own. (make_all_to_all: every stream in turns from one core,
//     Structure one_core);
//
// C++17, freestanding, no heap.
#pragma once

#include <fabric/ops/common.hpp>

#include <stdint.h>

namespace kccl::fabric::ops {

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
}  // namespace kccl::fabric::ops

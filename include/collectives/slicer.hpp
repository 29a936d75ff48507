// kccl/collectives/slicer.hpp — element ranges of schedule chunks: fragments, worker slices,
// packet-sized chunks, and reduce_scatter's zero padding.
//
// WHAT IT IS
//   A schedule (schedule.hpp) names chunks; the slicer says which elements each chunk is. The
//   tensor is cut three ways, outermost first:
//     fragment  the op's per-rank block (m elements): all_gather / gather / all_to_all: m = n;
//               reduce_scatter and all_reduce: m = ceil(n / p) (GCL: reduce_scatter output has
//               ceil(n/p) elements per rank, zero padded); single-block ops (broadcast, reduce,
//               send_recv): one fragment of n. Fragment f starts at element f*m of its buffer.
//     worker    W = links * workers_per_link independent copies of the schedule, each owning the
//               contiguous range [w*m/W, (w+1)*m/W) of EVERY fragment (slice lines are the same
//               in every fragment, as reduce_scatter requires). Worker w drives link w / workers_per_link.
//     chunk     each worker's range of a fragment is cut into s_w chunks of ce elements (the last
//               one shorter), ce = packet_bytes / elem_bytes: one chunk is one packet, so one
//               message never needs more than one slot. Shape::chunks = s_w for worker w.
//   Ranges past the end of the real data are empty (count 0): n = 0, n < p*W, the padding of
//   all_reduce's last fragments. Both ends of a link slice alike, so they agree on them:
//   execute_slice (sliced.hpp) moves them as chunk padding, and skips a worker whose whole slice
//   is empty on every rank.
//
// BUFFERING
//   Every schedule in algorithms/ is checked (host/checker.hpp) to finish with 2 message slots per
//   (sender, receiver, lane) channel (rings need the 2: one in flight, one bubble; everything else
//   needs 1), and every message is one chunk. So a link with >= 2 slots of >= ce*elem_bytes bytes
//   per channel never deadlocks, whatever n is: fits() checks exactly that. That is for
//   Shape::window = 1 (chunk-major); the pipelined ring schedules with window W need W + 1 slots
//   (window_slots(), checker-verified): fits(slots, bytes, W).
//
// Who includes it: device code (C++17, freestanding, no heap) and host planners/tests.
#pragma once

#include <collectives/schedule.hpp>

namespace kccl::coll {

struct ElemRange {
    uint32_t begin;  // element offset in the buffer
    uint32_t count;  // real elements (0 for padding / empty)
};

struct SliceConfig {
    uint32_t elem_bytes = 4;
    uint32_t packet_bytes = 4096;     // bytes per chunk (a link slot's payload)
    uint32_t links = 1;
    uint32_t workers_per_link = 1;
};

/// Minimum message slots per channel any schedule in algorithms/ needs (checker-verified).
inline constexpr uint32_t kSlotsNeeded = 2;

struct Slicer {
    Op op = Op::all_reduce;
    uint32_t n = 0;        // elements in the op's count convention (see elements())
    uint32_t p = 1;
    uint32_t m = 0;        // elements per fragment
    uint32_t workers = 1;  // W
    uint32_t per_link = 1;
    uint32_t ce = 1;       // elements per chunk (>= 1)
    uint32_t elem_bytes = 4;

    /// n is: all_gather / gather: elements each rank contributes; reduce_scatter / all_reduce:
    /// elements of each rank's input; broadcast / reduce / send_recv: elements of the tensor;
    /// scatter / all_to_all: elements per destination rank (the input holds p*n); barrier: ignored.
    constexpr Slicer(Op op_, uint32_t n_, uint32_t p_, const SliceConfig& c)
        : op(op_), n(op_ == Op::barrier ? 0 : n_), p(p_ == 0 ? 1 : p_), workers(1), per_link(1), ce(1),
          elem_bytes(c.elem_bytes == 0 ? 1 : c.elem_bytes) {
        m = (op == Op::reduce_scatter || op == Op::all_reduce) ? (n + p - 1) / p : n;
        per_link = c.workers_per_link == 0 ? 1 : c.workers_per_link;
        workers = (c.links == 0 ? 1 : c.links) * per_link;
        ce = c.packet_bytes / elem_bytes;
        if (ce == 0) ce = 1;
    }

    constexpr bool multi_fragment() const {
        return op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_reduce || op == Op::gather ||
               op == Op::scatter || op == Op::all_to_all;
    }
    /// Elements of each buffer (what the caller allocates). Output of reduce_scatter: m (padded).
    constexpr uint32_t in_elems() const {
        switch (op) {
            case Op::scatter:
            case Op::all_to_all: return p * n;
            default: return n;
        }
    }
    constexpr uint32_t out_elems() const {
        switch (op) {
            case Op::all_gather:
            case Op::gather:
            case Op::all_to_all: return p * n;
            case Op::reduce_scatter: return m;
            default: return n;
        }
    }
    /// Worker w's part [begin, begin+count) of every fragment (relative to the fragment start).
    constexpr ElemRange worker_range(uint32_t w) const {
        // floor(w * m / W) without 64-bit division (rv32 kernels have no __udivdi3): exact for W < 65536
        const uint32_t q = m / workers, r = m % workers;
        const uint32_t b = w * q + r * w / workers, e = (w + 1) * q + r * (w + 1) / workers;
        return {b, e - b};
    }
    constexpr uint32_t link_of(uint32_t w) const { return w / per_link; }
    /// Shape::chunks for worker w (at least 1, so the schedule runs even when it is empty).
    constexpr uint32_t chunks(uint32_t w) const {
        const uint32_t len = worker_range(w).count;
        return len == 0 ? 1 : (len + ce - 1) / ce;
    }
    /// Real elements of buffer b (reduce_scatter output: rank's unpadded part).
    constexpr uint32_t valid(Buf b, uint32_t rank) const {
        if (op == Op::reduce_scatter && b == Buf::output) {
            const uint64_t start = uint64_t(rank) * m;
            return start >= n ? 0 : (n - start < m ? uint32_t(n - start) : m);
        }
        return b == Buf::input ? in_elems() : out_elems();
    }
    /// Elements of chunk `chunk` of buffer b for worker w at rank `rank` (rank matters only for
    /// reduce_scatter's output). Chunk numbering is the schedule's: fragment f = chunk / s,
    /// j = chunk % s for multi-fragment buffers.
    constexpr ElemRange chunk_range(uint32_t w, Buf b, uint32_t chunk, uint32_t rank = 0) const {
        const uint32_t s = chunks(w);
        const bool frag_buf = multi_fragment() && !(op == Op::reduce_scatter && b == Buf::output) &&
                              !(op == Op::all_gather && b == Buf::input) && !(op == Op::gather && b == Buf::input) &&
                              !(op == Op::scatter && b == Buf::output);
        const uint32_t f = frag_buf ? chunk / s : 0, j = frag_buf ? chunk % s : chunk;
        const ElemRange wr = worker_range(w);
        const uint64_t frag_start = uint64_t(f) * m;
        uint64_t begin = frag_start + wr.begin + uint64_t(j) * ce;
        uint64_t end = begin + ce;
        const uint64_t wend = frag_start + wr.begin + wr.count;
        if (end > wend) end = wend;
        const uint64_t lim = valid(b, rank);
        if (end > lim) end = lim;
        if (begin > end) begin = end;
        return {uint32_t(begin), uint32_t(end - begin)};
    }
    /// reduce_scatter: output elements of `rank` that are padding and must be written as zeros.
    constexpr ElemRange rs_padding(uint32_t rank) const {
        if (op != Op::reduce_scatter) return {0, 0};
        const uint32_t v = valid(Buf::output, rank);
        return {v, m - v};
    }
    /// Does a link with `slots` slots of `slot_bytes` per channel carry every schedule, with a
    /// wavefront window of `window` chunks in flight on the ring ones (schedule.hpp)?
    constexpr bool fits(uint32_t slots, uint32_t slot_bytes, uint32_t window = 1) const {
        const uint32_t need = window <= 1 ? 2 : window == 0xFFFFFFFFu ? window : window + 1;  // saturates
        return slots >= (need > kSlotsNeeded ? need : kSlotsNeeded) && uint64_t(slot_bytes) >= uint64_t(ce) * elem_bytes;
    }
};

}  // namespace kccl::coll

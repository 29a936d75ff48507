// kccl/collectives/sliced.hpp — one worker's slice of a collective: several links, several
// workers per link (slicer.hpp), each worker running the schedule on its own link.
//
//   const kccl::coll::Slicer sl(Op::all_gather, n, p, {sizeof(float), packet_bytes, links, workers_per_link});
//   kccl::coll::SliceParams sp{shape, sl, worker, rank, input_l1, output_l1, work_l1};
//   kccl::coll::execute_slice<R>(link, sp, kccl::coll::RingDirs{rank, p, next, prev});
//
// Contract
//   * W = links x workers_per_link workers per rank; worker w of every rank forms one group with
//     its own link (worker w drives link w / workers_per_link). The host plans it: over IPCQ one
//     group per worker, each on its own cores and queues; over EDM one plan per Ethernet link whose
//     workers_per_link workers share that link's EDMs, each on its own channels
//     (host::GroupSpec::more_workers, at most host::max_workers_per_link). Every worker of a rank
//     sees the rank's whole input and output tensors in its L1 (as the op defines them:
//     Slicer::in_elems / out_elems elements, no chunk padding) and touches only its slice:
//     [w*m/W, (w+1)*m/W) of every fragment. Workers of one rank write disjoint output elements.
//   * The worker gathers its slice into a compact, chunk-aligned copy in `work` (the executor's
//     input, output and scratch grids: slice_work_bytes()), runs execute_any on it with
//     Shape::chunks = Slicer::chunks(w) and chunks of Slicer::ce elements (one packet each), and
//     scatters its output slice back. Both copies are local (NoC DMA to itself on hardware).
//     Elements past the real data are chunk padding (never reach a real element) and are not
//     copied back; reduce_scatter's output padding (Slicer::rs_padding) is written as zeros.
//   * Ops whose output only some ranks define (reduce, gather: the root; send_recv: the peer)
//     write only there; other ranks' outputs are untouched. Ops whose input only the root has
//     (broadcast, scatter, send_recv) read it only there.
//   * A worker whose slice is empty (fewer elements per fragment than workers) returns at once,
//     on every rank alike (a barrier always runs).
//   * The local copies go by NoC DMA when source, destination and length are 16-byte aligned,
//     else by the core (slice boundaries fall anywhere).
//   * The slicer and the shape must be the same on every rank and worker (they name the same
//     messages on both ends of every link). A slicer whose op or rank count differs from the
//     shape's is a device error.
//   * C++17, freestanding, no heap.
#pragma once

#include "executor.hpp"
#include "slicer.hpp"

#include <stdint.h>

namespace kccl::coll {

struct SliceParams {
    Shape shape{};          ///< op, topology, method, ranks, root, window... (chunks: set from the slicer)
    Slicer slicer{Op::all_reduce, 0, 1, SliceConfig{}};
    uint32_t worker = 0;    ///< w < slicer.workers
    uint32_t rank = 0;
    uint32_t input = 0;     ///< L1 of the rank's whole input (slicer.in_elems() elements)
    uint32_t output = 0;    ///< L1 of the rank's whole output (slicer.out_elems() elements)
    uint32_t work = 0;      ///< L1 of slice_work_bytes() bytes, 16-byte aligned
};

/// The worker's shape: the caller's with chunks = the worker's chunk count.
constexpr Shape slice_shape(const Shape& sh, const Slicer& sl, uint32_t worker) {
    Shape s = sh;
    s.chunks = sl.chunks(worker);
    return s;
}

namespace detail {
constexpr uint32_t align16(uint64_t b) { return uint32_t((b + 15) & ~uint64_t(15)); }
/// Byte offsets of the compact input, output and scratch grids in the work area, and its size.
struct SliceWork {
    uint32_t in, out, scratch, bytes;
};
constexpr SliceWork slice_work(const Shape& sh, const Slicer& sl, uint32_t worker) {
    const Shape s = slice_shape(sh, sl, worker);
    const uint64_t cb = uint64_t(sl.ce) * sl.elem_bytes;
    const uint32_t in = 0, out = align16(grid(s, Buf::input) * cb);
    const uint32_t scr = out + align16(grid(s, Buf::output) * cb);
    return {in, out, scr, scr + align16(scratch_chunks(s) * cb)};
}
}  // namespace detail

/// Bytes of the work area execute_slice needs for worker `worker`.
constexpr uint32_t slice_work_bytes(const Shape& sh, const Slicer& sl, uint32_t worker) {
    return detail::slice_work(sh, sl, worker).bytes;
}

/// Runs worker sp.worker's slice of the collective for rank sp.rank (see the contract above).
template <class Red, class Link, class DirOf>
void execute_slice(Link& link, const SliceParams& sp, DirOf&& dir_of) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = uint32_t(sizeof(T));
    const Slicer& sl = sp.slicer;
    if (KCCL_UNLIKELY(sl.op != sp.shape.op || sl.p != sp.shape.ranks || sl.elem_bytes != eb ||
                      sp.worker >= sl.workers || sp.rank >= sl.p)) {
        detail::Msg m;
        m.s("collectives: execute_slice: the slicer (").s(op_name(sl.op)).s(", ").u(sl.p).s(" ranks, ")
            .u(sl.elem_bytes).s("-byte elements, ").u(sl.workers).s(" workers) does not match the shape (")
            .s(op_name(sp.shape.op)).s(", ").u(sp.shape.ranks).s(" ranks, ").u(eb).s("-byte elements, worker ")
            .u(sp.worker).s(", rank ").u(sp.rank)
            .s("); build both from the same op, rank count and element type, with worker < workers and rank < ranks");
        detail::die(m);
    }
    auto& hal = link.hal();
    const Shape sh = slice_shape(sp.shape, sl, sp.worker);
    const Op op = sh.op;
    // An empty slice (fewer elements than workers) has nothing to move: every rank slices alike,
    // so the whole group of this worker skips it. A barrier always runs (its token is not data).
    if (sl.worker_range(sp.worker).count == 0 && op != Op::barrier) return;
    const detail::SliceWork wk = detail::slice_work(sp.shape, sl, sp.worker);
    const uint32_t cbytes = sl.ce * eb;
    // Local copies: NoC DMA (as the executor's) when both ends and the length are 16-byte
    // aligned; slice boundaries (w * m / W elements) need not be, and an L1-to-L1 NoC transfer
    // wants source and destination at the same 16-byte offset, so those go by the core itself.
    auto copy = [&hal](uint32_t dst, uint32_t src, uint32_t bytes) {
        if (((dst | src | bytes) & 15u) == 0) detail::copy_l1(hal, dst, src, bytes);
        else {
            memcpy(hal.l1_ptr(dst, bytes), hal.l1_ptr(src, bytes), bytes);
            kccl::hal::l1_store_fence(hal, dst, bytes);  // may be sent from later (contract N7)
        }
    };
    // gather the slice of the input into the compact grid (on the ranks that read an input)
    const bool rooted_input = op == Op::broadcast || op == Op::scatter || op == Op::send_recv;
    if (!rooted_input || sp.rank == sh.root) {
        const uint32_t in_chunks = grid(sh, Buf::input);
        for (uint32_t c = 0; c < in_chunks; ++c) {
            const ElemRange r = sl.chunk_range(sp.worker, Buf::input, c, sp.rank);
            if (r.count) copy(sp.work + wk.in + c * cbytes, sp.input + r.begin * eb, r.count * eb);
        }
    }
    ExecParams ep;
    ep.shape = sh;
    ep.rank = sp.rank;
    ep.chunk_elems = sl.ce;
    ep.buf = {sp.work + wk.in, sp.work + wk.out, sp.work + wk.scratch, sp.work + wk.in};
    ep.count = 0xFFFFFFFFu;  // reduce_scatter's zero padding is the slicer's, written below
    execute_any<Red>(link, ep, dir_of);
    // scatter the output slice back, where the op defines this rank's output
    const bool writes = (op == Op::reduce || op == Op::gather) ? sp.rank == sh.root
                      : op == Op::send_recv ? sp.rank == sh.peer
                      : op != Op::barrier;
    if (!writes) return;
    const uint32_t out_chunks = grid(sh, Buf::output);
    for (uint32_t c = 0; c < out_chunks; ++c) {
        const ElemRange r = sl.chunk_range(sp.worker, Buf::output, c, sp.rank);
        if (r.count) copy(sp.output + r.begin * eb, sp.work + wk.out + c * cbytes, r.count * eb);
    }
    if (op == Op::reduce_scatter) {  // the zero padding inside this worker's part of the output
        const ElemRange pad = sl.rs_padding(sp.rank), mine = sl.worker_range(sp.worker);
        const uint32_t b = pad.begin > mine.begin ? pad.begin : mine.begin;
        const uint32_t e = mine.begin + mine.count;
        if (b < e) memset(hal.l1_ptr(sp.output + b * eb, (e - b) * eb), 0, size_t(e - b) * eb);
    }
}

}  // namespace kccl::coll

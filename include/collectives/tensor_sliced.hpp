// kccl/collectives/tensor_sliced.hpp — one worker's share of an all_gather or reduce_scatter of an
// N-D tensor along its fracture dim, pages read from and written to where the tensors' layouts
// put them (tensor.hpp), the collective itself run by execute_slice (sliced.hpp).
//
//   TensorSliceParams tp{shape, split, workers, worker, rank, small_mem, big_mem, work, packet_bytes};
//   kccl::coll::execute_tensor_slice<R>(link, tp, kccl::coll::RingDirs{rank, p, next, prev});
//
// Contract
//   * split.small is each rank's tensor on the small side (all_gather: the input; reduce_scatter:
//     the output), split.big the big side (all_gather: the output; reduce_scatter: the input),
//     blocks of split.small along split.dim, one per rank (split.parts == shape.ranks). Their
//     memory layouts are independent: an all_gather whose input is width-sharded and whose output
//     is interleaved writes every page where the output's layout puts it (in-flight resharding).
//   * Each rank runs `workers` workers; worker w owns the small tensor's pages worker_rect(w)
//     (bands of page columns, else of page rows) and the same pages of every block of the big
//     tensor; each worker forms its own group over its own link. Workers write disjoint bytes.
//   * The worker packs its pages into a compact fragment in `work` (rectangle order, each page
//     whole: a tile is its 2048 / 4096 bytes with the faces as stored), runs the collective on
//     the compact buffers with Slicer(op, ...) and packets of packet_bytes (a multiple of the page
//     size makes every chunk whole pages, as tt-metal's packets are), and unpacks. For row-major
//     tensors a small page lands in the big tensor as a row segment: along W it is a strided
//     copy (the block's columns of every row), cut where a big page ends (for_each_run).
//   * Memory model: unit u (bank or core) of a tensor holds its share at TensorMem::base +
//     u * TensorMem::unit_stride in the worker's L1 view. In the emulation every worker sees the
//     rank's tensors in its own L1 this way; on hardware the same (unit, offset) pairs become NoC
//     addresses of DRAM banks or shard cores. Copies are byte copies by the core.
//   * Tile padding (H or W not a multiple of 32) is moved like data: pad elements go where the
//     big tensor's padding is (dims 0 and 1 only: TensorSplit check refuses a padded H / W fracture).
//   * The split, shape, workers and packet size must be the same on every rank. A split that
//     check() refuses, or a shape whose op is not all_gather / reduce_scatter, is a device error.
//   * C++17, freestanding, no heap.
#pragma once

#include "sliced.hpp"
#include "tensor.hpp"

#include <stdint.h>
#include <string.h>

namespace kccl::coll {

struct TensorMem {
    uint32_t base = 0;
    uint32_t unit_stride = 0;  ///< bytes between units; at least geometry().unit_bytes
    constexpr uint32_t addr(const TensorLoc& l) const { return base + l.unit * unit_stride + l.offset; }
};

struct TensorSliceParams {
    Shape shape{};  ///< op all_gather or reduce_scatter, ranks = split.parts
    TensorSplit split{};
    uint32_t workers = 1;
    uint32_t worker = 0;
    uint32_t rank = 0;
    TensorMem small{}, big{};
    uint32_t work = 0;  ///< L1 of tensor_work_bytes() bytes, 16-byte aligned
    uint32_t packet_bytes = 4096;
};

namespace detail {
struct TensorWork {
    uint32_t elems;  ///< elements of the worker's compact fragment (its pages)
    Slicer sl;
    uint32_t in, out, slice, bytes;
};
constexpr TensorWork tensor_work(const TensorSliceParams& tp) {
    const TensorGeom gs = geometry(tp.split.small);
    const uint32_t n = worker_rect(gs, tp.workers, tp.worker).pages() * gs.page_elems();
    const uint32_t p = tp.split.parts;
    const Slicer sl(tp.shape.op, tp.shape.op == Op::reduce_scatter ? p * n : n, p,
                    SliceConfig{tp.split.small.elem_bytes, tp.packet_bytes, 1, 1});
    const uint32_t eb = tp.split.small.elem_bytes;
    const uint32_t in = 0, out = align16(uint64_t(sl.in_elems()) * eb);
    const uint32_t slice = out + align16(uint64_t(sl.out_elems()) * eb);
    return {n, sl, in, out, slice, slice + slice_work_bytes(tp.shape, sl, 0)};
}
}  // namespace detail

/// Bytes of the work area execute_tensor_slice needs.
constexpr uint32_t tensor_work_bytes(const TensorSliceParams& tp) { return detail::tensor_work(tp).bytes; }

/// Runs worker tp.worker's share of the tensor collective for rank tp.rank (contract above).
template <class Red, class Link, class DirOf>
void execute_tensor_slice(Link& link, const TensorSliceParams& tp, DirOf&& dir_of) {
    using T = typename Red::value_type;
    const TensorSplit& t = tp.split;
    const Op op = tp.shape.op;
    const SplitError se = check(t);
    if (KCCL_UNLIKELY(se != SplitError::ok || (op != Op::all_gather && op != Op::reduce_scatter) ||
                      t.parts != tp.shape.ranks || t.small.elem_bytes != sizeof(T) || tp.worker >= tp.workers)) {
        detail::Msg m;
        m.s("collectives: execute_tensor_slice: ");
        if (se != SplitError::ok) m.s(split_error_text(se));
        else
            m.s("op ").s(op_name(op)).s(" with ").u(t.parts).s(" parts on ").u(tp.shape.ranks).s(" ranks, ")
                .u(t.small.elem_bytes).s("-byte elements for a ").u(uint32_t(sizeof(T))).s("-byte type, worker ")
                .u(tp.worker).s(" of ").u(tp.workers)
                .s("; allowed: all_gather or reduce_scatter, parts == ranks, the reducer's element size, worker < workers");
        detail::die(m);
    }
    auto& hal = link.hal();
    const TensorGeom gs = geometry(t.small), gb = geometry(t.big);
    const PageRect rect = worker_rect(gs, tp.workers, tp.worker);
    if (rect.pages() == 0) return;  // every rank alike: more workers than pages
    const detail::TensorWork wk = detail::tensor_work(tp);
    const uint32_t pb = gs.page_bytes, p = t.parts;
    auto bytes_at = [&hal](uint32_t a, uint32_t n) { return static_cast<uint8_t*>(hal.l1_ptr(a, n)); };
    auto copy = [&](uint32_t dst, uint32_t src, uint32_t n) { memcpy(bytes_at(dst, n), bytes_at(src, n), n); };
    const uint32_t cin = tp.work + wk.in, cout = tp.work + wk.out;
    // pack
    for (uint32_t k = 0; k < rect.pages(); ++k) {
        const uint32_t pr = rect.row_at(k), pc = rect.col_at(k);
        if (op == Op::all_gather) {
            copy(cin + k * pb, tp.small.addr(locate_page(t.small, gs, pr, pc)), pb);
        } else {
            for (uint32_t f = 0; f < p; ++f)
                for_each_run(t, gs, gb, pr, pc, f, [&](const PageRun& r) {
                    copy(cin + (f * rect.pages() + k) * pb + r.in_page, tp.big.addr(r.big), r.bytes);
                });
        }
    }
    SliceParams sp;
    sp.shape = tp.shape;
    sp.slicer = wk.sl;
    sp.worker = 0;
    sp.rank = tp.rank;
    sp.input = cin;
    sp.output = cout;
    sp.work = tp.work + wk.slice;
    execute_slice<Red>(link, sp, dir_of);
    // unpack: all_gather's block f of the output holds rank f's pages
    for (uint32_t k = 0; k < rect.pages(); ++k) {
        const uint32_t pr = rect.row_at(k), pc = rect.col_at(k);
        if (op == Op::reduce_scatter) {
            copy(tp.small.addr(locate_page(t.small, gs, pr, pc)), cout + k * pb, pb);
        } else {
            for (uint32_t f = 0; f < p; ++f)
                for_each_run(t, gs, gb, pr, pc, f, [&](const PageRun& r) {
                    copy(tp.big.addr(r.big), cout + (f * rect.pages() + k) * pb + r.in_page, r.bytes);
                });
        }
    }
}

}  // namespace kccl::coll

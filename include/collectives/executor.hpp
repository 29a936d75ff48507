// kccl/collectives/executor.hpp — runs one rank's part of a collective: the algorithm's step
// streams (schedule.hpp) on a link (link.hpp) with the primitives (primitives.hpp).
//
//   using R = kccl::coll::Reducer<float, kccl::coll::RedOp::sum>;
//   kccl::coll::ExecParams p{shape, rank, chunk_elems, {in_l1, out_l1, scratch_l1, in_l1}, count};
//   kccl::coll::execute<kccl::coll::algorithms::Ring, R>(link, p, [&](uint32_t peer) { return dir_of[peer]; });
//   link.quiesce();   // once, after the kernel's last collective
//
// Contract
//   * Buffers are in local L1 and cut into chunks of `chunk_elems` elements: chunk c of a buffer
//     starts at base + c * chunk_elems * sizeof(T). The input has grid(shape, input) chunks, the
//     output grid(shape, output), the scratch scratch_chunks(shape). A tensor whose element count
//     does not fill its chunk grid is PADDED: the caller sizes the buffers to the full grid and
//     the padding elements are moved and combined like the others (element-wise operators never
//     mix elements, so padding cannot reach a real element; its content is irrelevant and may be
//     uninitialised L1). choose_chunking() picks (chunks, chunk_elems) for a tensor.
//   * reduce_scatter: GCL zero-pads — output elements past the tensor's end (`count` elements in
//     the input) are written as zeros, so a rank's output is always ceil(count/p)-sized.
//   * Red::prepare is applied once to this rank's input before a reducing operation (all_reduce,
//     reduce_scatter, reduce, barrier) into `buf.prepared` (which may equal `buf.input`: then the
//     input is overwritten); Red::finalize once to every fully reduced output element this rank
//     holds (all_reduce, reduce_scatter: its whole output; reduce: the root's output).
//   * Lanes run one after the other, lane 0 first, on every rank. Each lane is a complete schedule
//     on its own, and every rank finishes its lane-0 messages before its lane-1 messages, so the
//     per-direction FIFO order matches on both ends even when two lanes share a direction (a
//     2-rank bidirectional ring).
//   * `dir_of(peer)` maps a peer rank to a link direction (the group plan's table); no_dir for a
//     peer the schedule names is a device error naming rank and peer.
//   * Deadlock: a step's send may block until the receiver takes pieces; choose chunk_elems so a
//     chunk fits the receiver's pipeline (choose_chunking's max_chunk_elems), see primitives.hpp.
//   * Does not quiesce the link (several collectives may run back to back on one link).
//   * C++17, freestanding, no heap.
#pragma once

#include "link.hpp"
#include "ops.hpp"
#include "primitives.hpp"
#include "schedule.hpp"

#include <stdint.h>
#include <string.h>

namespace kccl::coll {

struct ExecBuffers {
    uint32_t input = 0;     ///< L1 base of this rank's input
    uint32_t output = 0;    ///< L1 base of this rank's output
    uint32_t scratch = 0;   ///< L1 base of scratch_chunks(shape) chunks
    uint32_t prepared = 0;  ///< L1 base for the prepared input (only when Red::has_prepare)
};

struct ExecParams {
    Shape shape{};
    uint32_t rank = 0;
    uint32_t chunk_elems = 0;  ///< elements per chunk (every buffer)
    ExecBuffers buf{};
    uint32_t count = 0;        ///< real elements of the input tensor (reduce_scatter zero padding)
};

constexpr bool op_reduces(Op op) {
    return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce || op == Op::barrier;
}

/// Elements of one fragment of an operation over a tensor of `count` elements per rank input
/// (all_gather: its input; reduce_scatter / all_reduce / all_to_all / scatter: the whole input,
/// which has p fragments; broadcast / reduce / gather / send_recv: the input, one fragment).
constexpr uint32_t fragment_elems(Op op, uint32_t ranks, uint32_t count) {
    switch (op) {
        case Op::reduce_scatter:
        case Op::all_reduce:
        case Op::all_to_all:
        case Op::scatter: return ranks ? (count + ranks - 1) / ranks : 0;
        case Op::barrier: return 1;
        default: return count;
    }
}

struct Chunking {
    uint32_t chunks;       ///< s: chunks per fragment (Shape::chunks)
    uint32_t chunk_elems;  ///< elements per chunk
};

/// Splits a fragment into the fewest chunks of at most max_chunk_elems elements (at least one
/// chunk; 0 elements -> one empty chunk), then evens the chunks out.
constexpr Chunking choose_chunking(Op op, uint32_t ranks, uint32_t count, uint32_t max_chunk_elems,
                                   uint32_t min_chunks = 1) {
    const uint32_t f = fragment_elems(op, ranks, count);
    const uint32_t m = max_chunk_elems ? max_chunk_elems : 1;
    uint32_t s = (f + m - 1) / m;
    if (s < min_chunks) s = min_chunks;
    if (s == 0) s = 1;
    return {s, (f + s - 1) / s};
}

namespace detail {

template <class Link, class DirOf>
uint32_t direction(DirOf& dir_of, uint32_t rank, uint32_t peer, const Step& s) {
    const uint32_t d = dir_of(peer);
    if (KCCL_UNLIKELY(d == no_dir)) {
        Msg m;
        m.s("collectives: executor: rank ").u(rank).s(" has no link direction to rank ").u(peer)
            .s(" for a ").s(verb_name(s.verb)).s(" step (the schedule needs a peer the group plan does not connect)");
        die(m);
    }
    return d;
}

}  // namespace detail

/// Runs every lane of Algo for this rank. See the contract above.
template <class Algo, class Red, class Link, class DirOf>
void execute(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    using T = typename Red::value_type;
    constexpr uint32_t eb = uint32_t(sizeof(T));
    const Shape& sh = p.shape;
    const uint32_t ce = p.chunk_elems;
    auto& hal = link.hal();

    uint32_t in_base = p.buf.input;
    const uint32_t in_elems = grid(sh, Buf::input) * ce;
    if constexpr (Red::has_prepare) {
        if (op_reduces(sh.op) && in_elems) {
            Red::prepare(reinterpret_cast<T*>(hal.l1_ptr(p.buf.prepared, in_elems * eb)),
                         reinterpret_cast<const T*>(hal.l1_ptr(p.buf.input, in_elems * eb)), in_elems);
            in_base = p.buf.prepared;
        }
    }
    auto addr = [&](ChunkRef c) -> uint32_t {
        const uint32_t base = c.buf == Buf::input ? in_base : c.buf == Buf::output ? p.buf.output : p.buf.scratch;
        return base + c.chunk * ce * eb;
    };

    auto run = [&](const Step& s) {
        const uint32_t n = s.count * ce;
        const uint32_t from = verb_receives(s.verb) ? detail::direction<Link>(dir_of, p.rank, s.recv_peer, s) : no_dir;
        const uint32_t to = verb_sends(s.verb) ? detail::direction<Link>(dir_of, p.rank, s.send_peer, s) : no_dir;
        switch (s.verb) {
            case Verb::send: send<Red>(link, to, addr(s.src), n); break;
            case Verb::recv: recv<Red>(link, from, addr(s.dst), n); break;
            case Verb::recv_reduce_send: recv_reduce_send<Red>(link, from, to, addr(s.src), n); break;
            case Verb::recv_reduce_copy: recv_reduce_copy<Red>(link, from, addr(s.src), addr(s.dst), n); break;
            case Verb::recv_copy_send: recv_copy_send<Red>(link, from, to, addr(s.dst), n); break;
            case Verb::recv_reduce_copy_send:
                recv_reduce_copy_send<Red>(link, from, to, addr(s.src), addr(s.dst), n);
                break;
            case Verb::copy:
                if (n && addr(s.src) != addr(s.dst))
                    memmove(hal.l1_ptr(addr(s.dst), n * eb), hal.l1_ptr(addr(s.src), n * eb), n * eb);
                break;
            case Verb::reduce_local:
                if (n) {
                    T* d = reinterpret_cast<T*>(hal.l1_ptr(addr(s.dst), n * eb));
                    Red::combine(d, d, reinterpret_cast<const T*>(hal.l1_ptr(addr(s.src), n * eb)), n);
                }
                break;
        }
    };
    const uint32_t lanes = Algo::lanes(sh);
    for (uint32_t lane = 0; lane < lanes; ++lane) Algo::for_each(sh, p.rank, lane, run);

    const uint32_t out_elems = grid(sh, Buf::output) * ce;
    if constexpr (Red::has_finalize) {
        const bool holds = sh.op == Op::all_reduce || sh.op == Op::reduce_scatter ||
                           (sh.op == Op::reduce && p.rank == sh.root);
        if (holds && out_elems) Red::finalize(reinterpret_cast<T*>(hal.l1_ptr(p.buf.output, out_elems * eb)), out_elems, sh.ranks);
    }
    if (sh.op == Op::reduce_scatter && out_elems) {
        const uint64_t first = uint64_t(p.rank) * out_elems;  // this rank's slice of the input tensor
        const uint32_t valid = p.count <= first ? 0u
                               : (p.count - first >= out_elems ? out_elems : uint32_t(p.count - first));
        if (valid < out_elems) memset(static_cast<uint8_t*>(hal.l1_ptr(p.buf.output, out_elems * eb)) + valid * eb, 0,
                                      (out_elems - valid) * eb);
    }
}

}  // namespace kccl::coll

// kccl/collectives/executor.hpp — runs one rank's part of a collective: the algorithm's step
// streams (schedule.hpp) on a link (link.hpp) with the primitives (primitives.hpp).
//
//   using R = kccl::coll::Reducer<float, kccl::coll::RedOp::sum>;
//   kccl::coll::ExecParams p{shape, rank, chunk_elems, {in_l1, out_l1, scratch_l1, in_l1}, count};
//   kccl::coll::execute<kccl::coll::RingAllReduce, R>(link, p, kccl::coll::RingDirs{rank, p, next, prev});
//   kccl::coll::execute_any<R>(link, p, dirs);   // algorithm chosen from (shape.op, shape.method)
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
//   * `dir_of(peer, sending)` maps a peer rank to the link direction that sends to / receives from
//     it (RingDirs for the plan's ring / line groups); no_dir for a peer the schedule names is a
//     device error naming rank and peer. Multi-hop methods (trees, recursive doubling,
//     Rabenseifner, pairwise, direct) need a link that reaches non-neighbours: the ring/line group
//     plan does not, so they fail with that error there.
//   * Deadlock: a step's send may block until the receiver takes pieces; choose chunk_elems so a
//     chunk fits the receiver's pipeline (choose_chunking's max_chunk_elems), see primitives.hpp.
//   * Does not quiesce the link (several collectives may run back to back on one link).
//   * C++17, freestanding, no heap.
#pragma once

#include "link.hpp"
#include "ops.hpp"
#include "primitives.hpp"
#include "schedule.hpp"
#include "algorithms.hpp"

#include <stdint.h>
#include <string.h>
#include <type_traits>

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


/// Runs the steps of one rank on a link: the per-step dispatch to the primitives, plus the
/// prepare / finalize / padding work around them. Used through execute() / execute_any().
template <class Red, class Link, class DirOf>
class StepRunner {
public:
    using T = typename Red::value_type;
    static constexpr uint32_t eb = uint32_t(sizeof(T));

    StepRunner(Link& link, const ExecParams& p, DirOf& dir_of) : link_(link), p_(p), dir_of_(dir_of) {
        in_base_ = p.buf.input;
    }

    /// Before the first step: prepare this rank's contribution.
    void begin() {
        if constexpr (Red::has_prepare) {
            const uint32_t n = grid(p_.shape, Buf::input) * p_.chunk_elems;
            if (op_reduces(p_.shape.op) && n) {
                Red::prepare(ptr(p_.buf.prepared, n), ptr(p_.buf.input, n), n);
                in_base_ = p_.buf.prepared;
            }
        }
    }

    void operator()(const Step& s) {
        const uint32_t n = s.count * p_.chunk_elems;
        const uint32_t from = verb_receives(s.verb) ? dir(s.recv_peer, false, s) : no_dir;
        const uint32_t to = verb_sends(s.verb) ? dir(s.send_peer, true, s) : no_dir;
        switch (s.verb) {
            case Verb::send: send<Red>(link_, to, addr(s.src), n); break;
            case Verb::recv: recv<Red>(link_, from, addr(s.dst), n); break;
            case Verb::recv_reduce_send: recv_reduce_send<Red>(link_, from, to, addr(s.src), n); break;
            case Verb::recv_reduce_copy: recv_reduce_copy<Red>(link_, from, addr(s.src), addr(s.dst), n); break;
            case Verb::recv_copy_send: recv_copy_send<Red>(link_, from, to, addr(s.dst), n); break;
            case Verb::recv_reduce_copy_send:
                recv_reduce_copy_send<Red>(link_, from, to, addr(s.src), addr(s.dst), n);
                break;
            case Verb::copy:
                if (n && addr(s.src) != addr(s.dst)) {
                    const uint32_t d = addr(s.dst), sr = addr(s.src), nb = n * eb;
                    if (d + nb <= sr || sr + nb <= d) detail::copy_l1(link_.hal(), d, sr, nb);  // NoC DMA, like tt-metal
                    else memmove(ptr(d, n), ptr(sr, n), nb);
                }
                break;
            case Verb::reduce_local:
                if (n) Red::combine(ptr(addr(s.dst), n), ptr(addr(s.dst), n), ptr(addr(s.src), n), n);
                break;
        }
    }

    /// After the last step: finalize what this rank holds, zero reduce_scatter's padding.
    void end() {
        const Shape& sh = p_.shape;
        const uint32_t out = grid(sh, Buf::output) * p_.chunk_elems;
        if constexpr (Red::has_finalize) {
            const bool holds = sh.op == Op::all_reduce || sh.op == Op::reduce_scatter ||
                               (sh.op == Op::reduce && p_.rank == sh.root);
            if (holds && out) Red::finalize(ptr(p_.buf.output, out), out, sh.ranks);
        }
        if (sh.op == Op::reduce_scatter && out) {
            const uint64_t first = uint64_t(p_.rank) * out;  // this rank's slice of the input tensor
            const uint32_t valid = p_.count <= first ? 0u : (p_.count - first >= out ? out : uint32_t(p_.count - first));
            if (valid < out)
                memset(reinterpret_cast<uint8_t*>(ptr(p_.buf.output, out)) + size_t(valid) * eb, 0, size_t(out - valid) * eb);
        }
    }

private:
    T* ptr(uint32_t l1, uint32_t n) { return reinterpret_cast<T*>(link_.hal().l1_ptr(l1, n * eb)); }
    uint32_t addr(ChunkRef c) const {
        const uint32_t base = c.buf == Buf::input ? in_base_ : c.buf == Buf::output ? p_.buf.output : p_.buf.scratch;
        return base + c.chunk * p_.chunk_elems * eb;
    }
    uint32_t dir(uint32_t peer, bool sending, const Step& s) {
        const uint32_t d = dir_of_(peer, sending);
        if (KCCL_UNLIKELY(d == no_dir)) {
            detail::Msg m;
            m.s("collectives: executor: rank ").u(p_.rank).s(" has no link direction to rank ").u(peer)
                .s(" for a ").s(verb_name(s.verb))
                .s(" step (the schedule needs a peer the group plan does not connect; multi-hop methods need a routed link)");
            detail::die(m);
        }
        return d;
    }

    Link& link_;
    const ExecParams& p_;
    DirOf& dir_of_;
    uint32_t in_base_ = 0;
};

/// Type-erased step callback: the algorithms' generators are instantiated once for it, whatever
/// the reducer and link (keeps a sweep over types x operators x methods compilable).
struct StepSink {
    void* ctx;
    void (*fn)(void*, const Step&);
    void operator()(const Step& s) const { fn(ctx, s); }
};

/// Runs every lane of Algo for this rank. `dir_of(peer, sending)` gives the link direction that
/// sends to (sending) / receives from (!sending) `peer` — the two differ on a 2-rank ring, where
/// both directions reach the one peer (see ring_dir_of).
template <class Algo, class Red, class Link, class DirOf>
void execute(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    StepRunner<Red, Link, std::remove_reference_t<DirOf>> run(link, p, dir_of);
    run.begin();
    const uint32_t lanes = Algo::lanes(p.shape);
    for (uint32_t lane = 0; lane < lanes; ++lane) Algo::for_each(p.shape, p.rank, lane, run);
    run.end();
}

/// The same, with the algorithm chosen at run time from (shape.op, shape.method) (algorithms.hpp).
/// An unsupported pair is a device error naming it.
template <class Red, class Link, class DirOf>
void execute_any(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    using Runner = StepRunner<Red, Link, std::remove_reference_t<DirOf>>;
    Runner run(link, p, dir_of);
    const StepSink sink{&run, [](void* c, const Step& s) { (*static_cast<Runner*>(c))(s); }};
    const uint32_t n = lanes(p.shape);
    if (KCCL_UNLIKELY(n == 0)) {
        detail::Msg m;
        m.s("collectives: executor: ").s(op_name(p.shape.op)).s(" has no method ").s(method_name(p.shape.method))
            .s("; allowed: ").s(allowed_methods(p.shape.op));
        detail::die(m);
    }
    run.begin();
    for (uint32_t lane = 0; lane < n; ++lane) for_each_step(p.shape, p.rank, lane, sink);
    run.end();
}

/// The usual direction map of a ring or line group (GroupArgs: next_dir towards rank+1, prev_dir
/// towards rank-1). On a 2-rank ring both reach the one peer: sends go out on next, receives come
/// in on prev, which is where the peer's next arrives.
struct RingDirs {
    uint32_t rank, ranks, next_dir, prev_dir;
    uint32_t operator()(uint32_t peer, bool sending) const {
        const uint32_t next = ranks ? (rank + 1) % ranks : 0, prev = ranks ? (rank + ranks - 1) % ranks : 0;
        if (sending) {
            if (peer == next && next_dir != no_dir) return next_dir;
            if (peer == prev && prev_dir != no_dir) return prev_dir;
        } else {
            if (peer == prev && prev_dir != no_dir) return prev_dir;
            if (peer == next && next_dir != no_dir) return next_dir;
        }
        return no_dir;
    }
};

/// The direction map of a mesh group (and of any group where each neighbour is reached by exactly
/// one direction): the direction whose peer is `peer`, both ways (a message from a mesh neighbour
/// arrives on the direction facing it).
struct PeerDirs {
    uint32_t directions = 0;
    uint32_t peer_of_dir[max_group_dirs] = {};
    uint32_t operator()(uint32_t peer, bool) const {
        for (uint32_t d = 0; d < directions && d < max_group_dirs; ++d)
            if (peer_of_dir[d] == peer) return d;
        return no_dir;
    }
};

}  // namespace kccl::coll

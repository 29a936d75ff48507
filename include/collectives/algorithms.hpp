// kccl/collectives/algorithms.hpp — every algorithm, and the run-time choice of one by
// (Shape::op, Shape::method).
//
// THE METHOD TABLE. KCCL_COLL_ALGORITHMS below is the one place that says which op offers which
// method, with which algorithm type, on which topologies. Everything else is derived from it:
//   dispatch(shape, f)     calls f(AlgoTag<A>{}) with the row's algorithm type A and returns true,
//                          or returns false if the op has no such method;
//   kMethodTable           the rows as data {op, method, topologies, multi_hop} (host tools, tests);
//   offers(op, m)          is (op, m) a row; runs_on(op, m, topo) also on that topology;
//   allowed_methods(op)    the op's methods as printable text (error messages), built at compile
//                          time from the rows;
//   validate(shape)        the row, then the algorithm's own checks: nullptr or a sentence.
// Method names (the enum, kMethodCount, method_name) come from KCCL_COLL_METHODS in schedule.hpp.
// Adding a method: one line there, one row here per op it serves (and its algorithm type); the
// sweep in tests/collectives/schedule_test.cpp then checks every row on every topology it names.
// choose_method() is policy (cost thresholds), not derived; a test checks its choices are rows.
#pragma once

#include <collectives/algorithms/butterfly.hpp>
#include <collectives/algorithms/mesh.hpp>
#include <collectives/algorithms/ring.hpp>
#include <collectives/algorithms/tree.hpp>

namespace kccl::coll {

//  X(op,             method,                 algorithm type,        topologies)
#define KCCL_COLL_ALGORITHMS(X)                                                          \
    X(all_gather,     ring_cw,                RingAllGather,         topos::ring)        \
    X(all_gather,     ring_ccw,               RingAllGather,         topos::ring)        \
    X(all_gather,     ring_bidir,             RingAllGather,         topos::ring)        \
    X(all_gather,     ring_meet_middle,       RingAllGather,         topos::ring)        \
    X(all_gather,     line,                   RingAllGather,         topos::ring_line)   \
    X(all_gather,     mesh_2d,                Mesh2dAllGather,       topos::mesh_torus)  \
    X(reduce_scatter, ring_cw,                RingReduceScatter,     topos::ring)        \
    X(reduce_scatter, ring_ccw,               RingReduceScatter,     topos::ring)        \
    X(reduce_scatter, ring_bidir,             RingReduceScatter,     topos::ring)        \
    X(reduce_scatter, ring_meet_middle,       RingReduceScatter,     topos::ring)        \
    X(reduce_scatter, line,                   RingReduceScatter,     topos::ring_line)   \
    X(all_reduce,     ring_cw,                RingAllReduce,         topos::ring)        \
    X(all_reduce,     ring_ccw,               RingAllReduce,         topos::ring)        \
    X(all_reduce,     ring_bidir,             RingAllReduce,         topos::ring)        \
    X(all_reduce,     ring_meet_middle,       RingAllReduce,         topos::ring)        \
    X(all_reduce,     line,                   RingAllReduce,         topos::ring_line)   \
    X(all_reduce,     broadcast_local_reduce, BroadcastLocalReduce,  topos::ring_line)   \
    X(all_reduce,     reduce_broadcast_chain, ReduceBroadcastChain,  topos::ring_line)   \
    X(all_reduce,     reduce_broadcast_tree,  ReduceBroadcastTree,   topos::any)         \
    X(all_reduce,     tree,                   ReduceBroadcastTree,   topos::any)         \
    X(all_reduce,     recursive_doubling,     RecursiveDoubling,     topos::any)         \
    X(all_reduce,     rabenseifner,           Rabenseifner,          topos::any)         \
    X(all_reduce,     mesh_2d,                Mesh2dAllReduce,       topos::mesh_torus)  \
    X(broadcast,      ring_cw,                ChainBroadcast,        topos::ring)        \
    X(broadcast,      ring_ccw,               ChainBroadcast,        topos::ring)        \
    X(broadcast,      ring_meet_middle,       ChainBroadcast,        topos::ring)        \
    X(broadcast,      line,                   ChainBroadcast,        topos::ring_line)   \
    X(broadcast,      binomial_tree,          TreeBroadcast,         topos::any)         \
    X(broadcast,      tree,                   TreeBroadcast,         topos::any)         \
    X(reduce,         ring_cw,                ChainReduce,           topos::ring)        \
    X(reduce,         ring_ccw,               ChainReduce,           topos::ring)        \
    X(reduce,         ring_meet_middle,       ChainReduce,           topos::ring)        \
    X(reduce,         line,                   ChainReduce,           topos::ring_line)   \
    X(reduce,         binomial_tree,          TreeReduce,            topos::any)         \
    X(reduce,         tree,                   TreeReduce,            topos::any)         \
    X(gather,         ring_cw,                ChainGather,           topos::ring)        \
    X(gather,         ring_ccw,               ChainGather,           topos::ring)        \
    X(gather,         ring_meet_middle,       ChainGather,           topos::ring)        \
    X(gather,         line,                   ChainGather,           topos::ring_line)   \
    X(gather,         binomial_tree,          TreeGather,            topos::any)         \
    X(scatter,        ring_cw,                ChainScatter,          topos::ring)        \
    X(scatter,        ring_ccw,               ChainScatter,          topos::ring)        \
    X(scatter,        ring_meet_middle,       ChainScatter,          topos::ring)        \
    X(scatter,        line,                   ChainScatter,          topos::ring_line)   \
    X(scatter,        binomial_tree,          TreeScatter,           topos::any)         \
    X(all_to_all,     ring_cw,                RelayAllToAll,         topos::ring)        \
    X(all_to_all,     ring_ccw,               RelayAllToAll,         topos::ring)        \
    X(all_to_all,     ring_meet_middle,       RelayAllToAll,         topos::ring)        \
    X(all_to_all,     line,                   RelayAllToAll,         topos::ring_line)   \
    X(all_to_all,     pairwise,               PairwiseAllToAll,      topos::any)         \
    X(send_recv,      ring_cw,                RelaySendRecv,         topos::ring)        \
    X(send_recv,      ring_ccw,               RelaySendRecv,         topos::ring)        \
    X(send_recv,      ring_meet_middle,       RelaySendRecv,         topos::ring)        \
    X(send_recv,      line,                   RelaySendRecv,         topos::ring_line)   \
    X(send_recv,      direct,                 DirectSendRecv,        topos::any)         \
    X(barrier,        reduce_broadcast_chain, ReduceBroadcastChain,  topos::ring_line)   \
    X(barrier,        recursive_doubling,     RecursiveDoubling,     topos::any)

template <class A>
struct AlgoTag {
    using type = A;
};

/// One row of the method table as data. multi_hop: the algorithm sends to ranks that are not
/// topology neighbours (it needs a routed transport on every topology the row names).
struct MethodRow {
    Op op;
    Method method;
    TopoSet topologies;
    bool multi_hop;
};

inline constexpr MethodRow kMethodTable[] = {
#define KCCL_COLL_X(op_, m_, A_, topos_) {Op::op_, Method::m_, topos_, A_::multi_hop},
    KCCL_COLL_ALGORITHMS(KCCL_COLL_X)
#undef KCCL_COLL_X
};
inline constexpr uint32_t kMethodRows = uint32_t(sizeof(kMethodTable) / sizeof(kMethodTable[0]));

/// The key of an (op, method) pair: a switch over it lists every row once (a row given twice does
/// not compile: duplicate case labels).
constexpr uint32_t method_key(Op op, Method m) { return uint32_t(op) * kMethodCount + uint32_t(m); }

template <class F>
bool dispatch(const Shape& sh, F&& f) {
    switch (method_key(sh.op, sh.method)) {
#define KCCL_COLL_X(op_, m_, A_, topos_) \
    case method_key(Op::op_, Method::m_): return f(AlgoTag<A_>{}), true;
        KCCL_COLL_ALGORITHMS(KCCL_COLL_X)
#undef KCCL_COLL_X
        default: return false;
    }
}

/// The row of (op, m), or nullptr.
constexpr const MethodRow* method_row(Op op, Method m) {
    for (const MethodRow& r : kMethodTable)
        if (r.op == op && r.method == m) return &r;
    return nullptr;
}
constexpr bool offers(Op op, Method m) { return method_row(op, m) != nullptr; }
constexpr bool runs_on(Op op, Method m, Topology t) {
    const MethodRow* r = method_row(op, m);
    return r && r->topologies.has(t);
}

namespace detail {
constexpr uint32_t cstr_len(const char* s) {
    uint32_t n = 0;
    while (s[n]) ++n;
    return n;
}
/// Characters of every op's allowed-method text, each with its terminating NUL.
constexpr uint32_t allowed_text_size() {
    uint32_t n = 0;
    for (uint32_t op = 0; op < kOpCount; ++op) {
        bool first = true;
        for (const MethodRow& r : kMethodTable)
            if (uint32_t(r.op) == op) n += cstr_len(method_name(r.method)) + (first ? 0 : 2), first = false;
        ++n;
    }
    return n;
}
struct AllowedText {
    char text[allowed_text_size()] = {};
    uint32_t at[kOpCount] = {};
};
constexpr AllowedText make_allowed_text() {
    AllowedText t{};
    uint32_t n = 0;
    for (uint32_t op = 0; op < kOpCount; ++op) {
        t.at[op] = n;
        bool first = true;
        for (const MethodRow& r : kMethodTable) {
            if (uint32_t(r.op) != op) continue;
            if (!first) t.text[n++] = ',', t.text[n++] = ' ';
            first = false;
            for (const char* c = method_name(r.method); *c; ++c) t.text[n++] = *c;
        }
        t.text[n++] = 0;
    }
    return t;
}
inline constexpr AllowedText kAllowedText = make_allowed_text();
}  // namespace detail

/// The methods an op accepts, as printable text (for error messages), in table order.
constexpr const char* allowed_methods(Op op) {
    return uint32_t(op) < kOpCount ? detail::kAllowedText.text + detail::kAllowedText.at[uint32_t(op)] : "";
}

/// Whether (op, method) moves its chunks by puts on a link that has them (link.hpp PUTS; every
/// step marked Step::put): the ring and line all_gather. Such a chunk is one message whatever its
/// size, so a plan may make its chunks larger than a slot.
constexpr bool moves_by_puts(Op op, Method m) {
    return op == Op::all_gather && (m == Method::ring_cw || m == Method::ring_ccw || m == Method::ring_bidir ||
                                    m == Method::ring_meet_middle || m == Method::line);
}

/// A default method, like GCL's "auto": what the cost formulas in docs/collectives-algorithms.md favour for
/// `bytes` per rank (the op's input size) on this topology. `routed`: the transport can reach any
/// rank (multi-hop methods allowed). Thresholds (documented there):
///   * all_reduce with p * bytes <= 2048: broadcast_local_reduce (GCL's cut-off);
///   * ring all_gather / reduce_scatter / all_reduce: ring_meet_middle (floor(p/2) latencies) below
///     about p*p*26 KiB per rank, ring_bidir above (its extra p/2 - 1 latencies of ~2.5 us cost
///     less than meet's one-direction last step: tt-metal's small all_gather fit, 2.5 us per hop,
///     20.8 GB/s);
///   * routed all_reduce below 64 KiB: recursive_doubling; routed broadcast / reduce / gather /
///     scatter below 64 KiB: binomial_tree; all_to_all routed: pairwise;
///   * line: line; mesh / torus: mesh_2d (all_gather, all_reduce); otherwise chains / relays
///     (ring_meet_middle on a ring, line on a line) and reduce_broadcast_chain for a barrier.
/// Returns a method validate() accepts for the op and topology, except where none exists: on a
/// mesh or torus only all_gather and all_reduce have neighbour-only methods; the others need
/// `routed` (reduce_scatter has no mesh method at all).
constexpr Method choose_method(Op op, Topology topo, uint32_t p, uint64_t bytes, bool routed = false) {
    using M = Method;
    const bool ring = topo == Topology::ring, line = topo == Topology::line, mesh = !ring && !line;
    const uint64_t small = 64 * 1024;
    const M chain = ring ? M::ring_meet_middle : M::line;
    const M big_ring = bytes <= uint64_t(p) * p * 26 * 1024 ? M::ring_meet_middle : M::ring_bidir;
    switch (op) {
        case Op::all_reduce:
            if (!mesh && uint64_t(p) * bytes <= 2048) return M::broadcast_local_reduce;
            if (routed && bytes < small) return M::recursive_doubling;
            if (mesh) return routed ? M::rabenseifner : M::mesh_2d;
            return line ? M::line : big_ring;
        case Op::all_gather:
            if (mesh) return M::mesh_2d;
            return line ? M::line : big_ring;
        case Op::reduce_scatter:  // no mesh method: on a mesh validate() rejects the result
            return ring ? big_ring : M::line;
        case Op::broadcast:
        case Op::reduce:
        case Op::gather:
        case Op::scatter:
            if (routed && (bytes < small || mesh)) return M::binomial_tree;
            return chain;
        case Op::all_to_all: return routed ? M::pairwise : chain;
        case Op::send_recv: return routed ? M::direct : chain;
        case Op::barrier: return routed ? M::recursive_doubling : M::reduce_broadcast_chain;
    }
    return chain;
}

/// nullptr if the shape is supported, else a sentence (the op/method pair, or the algorithm's own
/// check). For the op/method pair the allowed methods are in allowed_methods(op).
inline const char* validate(const Shape& sh) {
    const char* err = "This op does not offer this method; allowed_methods(op) lists the methods it takes.";
    dispatch(sh, [&](auto tag) { err = decltype(tag)::type::validate(sh); });
    if (err == nullptr && !runs_on(sh.op, sh.method, sh.topo))  // the table's topology column
        return "This method does not run on this topology for this op (the method table in algorithms.hpp names "
               "the topologies of each op and method).";
    return err;
}

/// Lanes of the shape's algorithm (0 if unsupported).
inline uint32_t lanes(const Shape& sh) {
    uint32_t n = 0;
    dispatch(sh, [&](auto tag) { n = decltype(tag)::type::lanes(sh); });
    return n;
}

/// Calls f(step) for every step of (rank, lane) of the shape's algorithm.
template <class F>
void for_each_step(const Shape& sh, uint32_t rank, uint32_t lane, F&& f) {
    dispatch(sh, [&](auto tag) { decltype(tag)::type::for_each(sh, rank, lane, f); });
}

/// Calls f(peer) for every rank step s of `rank` sends to (its peer set, schedule.hpp Cast): the
/// unicast send_peer, or the children of `rank` in the shape's broadcast tree, farthest first.
/// Nothing for a step that does not send.
template <class F>
void for_each_send_peer(const Shape& sh, uint32_t rank, const Step& s, F&& f) {
    if (!verb_sends(s.verb)) return;
    if (s.cast == Cast::unicast) return f(s.send_peer);
    detail::bcast_tree(sh).children(rank, true, f);
}

/// Can a multicast step be lowered to unicasts (what it sends is kept in src or dst)?
constexpr bool cast_lowerable(Verb v) {
    return v == Verb::send || v == Verb::recv_copy_send || v == Verb::recv_reduce_copy_send;
}

/// Emits step s of `rank` with its multicast (if any) lowered to unicasts: the step itself to the
/// first peer, then a send of what it sent (src for send, dst otherwise) to each further peer; a
/// multicast to no peer becomes the step without its send (recv, recv_reduce_copy; a send of
/// nothing disappears). What an executor runs on a link that cannot multicast.
template <class F>
void lower_casts(const Shape& sh, uint32_t rank, const Step& s, F&& f) {
    if (s.cast == Cast::unicast || !verb_sends(s.verb)) return f(s);
    const ChunkRef sent = s.verb == Verb::send ? s.src : s.dst;
    bool first = true;
    for_each_send_peer(sh, rank, s, [&](uint32_t q) {
        Step u = s;
        u.cast = Cast::unicast;
        if (first) u.send_peer = q;
        else u = mk::send(q, sent, s.count);
        first = false;
        f(u);
    });
    if (!first || s.verb == Verb::send) return;
    Step u = s;  // no children: receive (and combine) only
    u.cast = Cast::unicast;
    u.send_peer = kNoPeer;
    u.verb = s.verb == Verb::recv_copy_send ? Verb::recv : Verb::recv_reduce_copy;
    f(u);
}

/// An emitter that lowers multicasts to unicasts (lower_casts) before passing each step on to
/// `out`; it forwards out's StepResume, so resumable generators stay resumable.
template <class Out>
struct LoweringEmitter {
    const Shape* sh;
    uint32_t rank;
    Out* out;
    StepResume* step_resume;
    void operator()(const Step& s) const { lower_casts(*sh, rank, s, *out); }
};

/// Calls f(step) for every step of (rank, lane) with multicasts lowered to unicasts.
template <class F>
void for_each_unicast_step(const Shape& sh, uint32_t rank, uint32_t lane, F&& f) {
    using Out = std::remove_reference_t<F>;
    LoweringEmitter<Out> low{&sh, rank, &f, resume_of(f)};
    for_each_step(sh, rank, lane, low);
}

/// Does the shape's algorithm send to ranks that are not topology neighbours?
inline bool multi_hop(const Shape& sh) {
    bool mh = false;
    dispatch(sh, [&](auto tag) { mh = decltype(tag)::type::multi_hop; });
    return mh;
}

}  // namespace kccl::coll

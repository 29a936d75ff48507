// kccl/collectives/algorithms.hpp — every algorithm, and the run-time choice of one by
// (Shape::op, Shape::method).
//
//   op              methods (topologies)
//   all_gather      ring_cw ring_ccw ring_bidir ring_meet_middle (ring); line (ring, line);
//                   mesh_2d (mesh, torus)
//   reduce_scatter  ring_cw ring_ccw ring_bidir ring_meet_middle (ring); line (ring, line)
//   all_reduce      ring_cw ring_ccw ring_bidir ring_meet_middle (ring); line (ring, line);
//                   broadcast_local_reduce, reduce_broadcast_chain (ring, line);
//                   reduce_broadcast_tree, recursive_doubling, rabenseifner (any, multi-hop);
//                   mesh_2d (mesh, torus)
//   broadcast       ring_cw ring_ccw ring_meet_middle (ring); line (ring, line);
//   reduce          binomial_tree, tree (any, multi-hop)
//   gather, scatter ring_cw ring_ccw ring_meet_middle (ring); line (ring, line);
//                   binomial_tree (any, multi-hop)
//   all_to_all      ring_cw ring_ccw ring_meet_middle (ring); line (ring, line): relays;
//                   pairwise (any, multi-hop)
//   send_recv       ring_cw ring_ccw ring_meet_middle (ring); line (ring, line); direct (multi-hop)
//   barrier         reduce_broadcast_chain (ring, line); recursive_doubling (any, multi-hop)
//
// dispatch(shape, f) calls f(AlgoTag<A>{}) with the algorithm type A for the shape's op and
// method and returns true, or returns false if the op has no such method. validate(shape) adds
// the algorithm's own checks and returns nullptr or a sentence naming what is allowed.
#pragma once

#include <collectives/algorithms/butterfly.hpp>
#include <collectives/algorithms/mesh.hpp>
#include <collectives/algorithms/ring.hpp>
#include <collectives/algorithms/tree.hpp>

namespace kccl::coll {

template <class A>
struct AlgoTag {
    using type = A;
};

template <class F>
bool dispatch(const Shape& sh, F&& f) {
    using M = Method;
    const M m = sh.method;
    const bool ringish = m == M::ring_cw || m == M::ring_ccw || m == M::ring_bidir || m == M::ring_meet_middle || m == M::line;
    const bool chainish = ringish && m != M::ring_bidir;
    switch (sh.op) {
        case Op::all_gather:
            if (ringish) return f(AlgoTag<RingAllGather>{}), true;
            if (m == M::mesh_2d) return f(AlgoTag<Mesh2dAllGather>{}), true;
            return false;
        case Op::reduce_scatter:
            if (ringish) return f(AlgoTag<RingReduceScatter>{}), true;
            return false;
        case Op::all_reduce:
            if (ringish) return f(AlgoTag<RingAllReduce>{}), true;
            switch (m) {
                case M::broadcast_local_reduce: return f(AlgoTag<BroadcastLocalReduce>{}), true;
                case M::reduce_broadcast_chain: return f(AlgoTag<ReduceBroadcastChain>{}), true;
                case M::reduce_broadcast_tree: return f(AlgoTag<ReduceBroadcastTree>{}), true;
                case M::recursive_doubling: return f(AlgoTag<RecursiveDoubling>{}), true;
                case M::rabenseifner: return f(AlgoTag<Rabenseifner>{}), true;
                case M::mesh_2d: return f(AlgoTag<Mesh2dAllReduce>{}), true;
                default: return false;
            }
        case Op::broadcast:
            if (chainish) return f(AlgoTag<ChainBroadcast>{}), true;
            if (m == M::binomial_tree || m == M::tree) return f(AlgoTag<TreeBroadcast>{}), true;
            return false;
        case Op::reduce:
            if (chainish) return f(AlgoTag<ChainReduce>{}), true;
            if (m == M::binomial_tree || m == M::tree) return f(AlgoTag<TreeReduce>{}), true;
            return false;
        case Op::gather:
            if (chainish) return f(AlgoTag<ChainGather>{}), true;
            if (m == M::binomial_tree) return f(AlgoTag<TreeGather>{}), true;
            return false;
        case Op::scatter:
            if (chainish) return f(AlgoTag<ChainScatter>{}), true;
            if (m == M::binomial_tree) return f(AlgoTag<TreeScatter>{}), true;
            return false;
        case Op::all_to_all:
            if (chainish) return f(AlgoTag<RelayAllToAll>{}), true;
            if (m == M::pairwise) return f(AlgoTag<PairwiseAllToAll>{}), true;
            return false;
        case Op::send_recv:
            if (chainish) return f(AlgoTag<RelaySendRecv>{}), true;
            if (m == M::direct) return f(AlgoTag<DirectSendRecv>{}), true;
            return false;
        case Op::barrier:
            if (m == M::reduce_broadcast_chain) return f(AlgoTag<ReduceBroadcastChain>{}), true;
            if (m == M::recursive_doubling) return f(AlgoTag<RecursiveDoubling>{}), true;
            return false;
    }
    return false;
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

/// The methods an op accepts, as printable text (for error messages).
constexpr const char* allowed_methods(Op op) {
    switch (op) {
        case Op::all_gather: return "ring_cw, ring_ccw, ring_bidir, ring_meet_middle, line, mesh_2d";
        case Op::reduce_scatter: return "ring_cw, ring_ccw, ring_bidir, ring_meet_middle, line";
        case Op::all_reduce:
            return "ring_cw, ring_ccw, ring_bidir, ring_meet_middle, line, broadcast_local_reduce, "
                   "reduce_broadcast_chain, reduce_broadcast_tree, recursive_doubling, rabenseifner, mesh_2d";
        case Op::broadcast:
        case Op::reduce: return "ring_cw, ring_ccw, ring_meet_middle, line, binomial_tree, tree";
        case Op::gather:
        case Op::scatter: return "ring_cw, ring_ccw, ring_meet_middle, line, binomial_tree";
        case Op::all_to_all: return "ring_cw, ring_ccw, ring_meet_middle, line, pairwise";
        case Op::send_recv: return "ring_cw, ring_ccw, ring_meet_middle, line, direct";
        case Op::barrier: return "reduce_broadcast_chain, recursive_doubling";
    }
    return "";
}

/// nullptr if the shape is supported, else a sentence (the op/method pair, or the algorithm's own
/// check). For the op/method pair the allowed methods are in allowed_methods(op).
inline const char* validate(const Shape& sh) {
    const char* err = "This op does not offer this method; allowed_methods(op) lists the methods it takes.";
    dispatch(sh, [&](auto tag) { err = decltype(tag)::type::validate(sh); });
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

/// Does the shape's algorithm send to ranks that are not topology neighbours?
inline bool multi_hop(const Shape& sh) {
    bool mh = false;
    dispatch(sh, [&](auto tag) { mh = decltype(tag)::type::multi_hop; });
    return mh;
}

}  // namespace kccl::coll

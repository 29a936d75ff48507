// kccl/collectives/algorithms/ring.hpp — ring and line algorithms (neighbour links only).
//
// Pipelining: RingAllGather, RingReduceScatter and RingAllReduce keep Shape::window chunks in
// flight per lane (wavefront order, arms.hpp; window + 1 slots per channel); the other types
// here are chunk-major (chains pipeline anyway: their first rank never waits).
// Methods: ring_cw, ring_ccw, ring_bidir (2 lanes: the first ceil(s/2) chunks of every fragment
// go cw, the rest ccw, each the full way round), ring_meet_middle, line. Which op takes which
// method: algorithms.hpp. Every type here sends only to topology neighbours (multi_hop = false).
// Reduction order: reduce_scatter computes each output fragment once, at its owner, as
// combine(combine(in_owner, partial of the +1 arm), partial of the -1 arm), each partial folded
// along the arm nearest-first from the far end; all_reduce then copies it everywhere.
#pragma once

#include <collectives/algorithms/arms.hpp>

namespace kccl::coll {

namespace detail {
constexpr uint32_t bidir_split(uint32_t s) { return (s + 1) / 2; }
constexpr uint32_t two_lane_methods(Method m) {
    return m == Method::ring_bidir || m == Method::ring_meet_middle || m == Method::line ? 2 : 1;
}
}  // namespace detail

/// all_gather on a ring or line. Lanes: cw/ccw 1; bidir 2 (chunk halves); meet/line 2 (one per
/// direction, each carrying full fragments).
struct RingAllGather : AlgorithmBase<RingAllGather> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_gather) return "RingAllGather computes Op::all_gather only.";
        return detail::validate_ring_method(sh);
    }
    static uint32_t lanes(const Shape& sh) { return detail::two_lane_methods(sh.method); }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t lane, E& e) {
        using namespace detail;
        const uint32_t s = sh.chunks;
        AllGather1D a;
        a.flow = method_flow(sh.method);
        a.arms = flow_arms(a.flow);
        a.own = mk::in(0);
        a.dst = Frag{Buf::output, 0, s};
        a.chunks = {0, s};
        a.window = sh.window;
        a.put = true;  // every rank's output holds fragment f at the same chunks
        if (sh.method == Method::ring_bidir) {  // lane 0: the first half of the chunks cw, lane 1 the rest ccw
            const uint32_t h = bidir_split(s);
            a.flow = lane == 0 ? Flow::cw : Flow::ccw;
            a.arms = lane == 0 ? Arms::plus : Arms::minus;
            a.chunks = lane == 0 ? ChunkRange{0, h} : ChunkRange{h, s};
        } else if (lanes(sh) == 2) {  // one arm per lane; lane 0 places the own fragment
            a.arms = lane == 0 ? Arms::plus : Arms::minus;
            a.own_fragment = lane == 0 ? OwnFragment::copy : OwnFragment::in_place;
        }
        ag_1d(e, whole(sh, rank), a);
    }
};

/// reduce_scatter on a ring or line. Lanes: bidir 2 (chunk halves); others 1 (meet and line fold
/// both arms into the owner's fragment in one lane, so the final combines are ordered).
struct RingReduceScatter : AlgorithmBase<RingReduceScatter> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::reduce_scatter) return "RingReduceScatter computes Op::reduce_scatter only.";
        return detail::validate_ring_method(sh);
    }
    static uint32_t lanes(const Shape& sh) { return sh.method == Method::ring_bidir ? 2 : 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t lane, E& e) {
        using namespace detail;
        const uint32_t s = sh.chunks;
        ReduceScatter1D a;
        a.flow = method_flow(sh.method);
        a.arms = flow_arms(a.flow);
        a.src = Frag{Buf::input, 0, s};
        a.dst = Frag{Buf::output, 0, 0};
        a.chunks = {0, s};
        a.window = sh.window;
        if (sh.method == Method::ring_bidir) {
            const uint32_t h = bidir_split(s);
            a.flow = lane == 0 ? Flow::cw : Flow::ccw;
            a.arms = lane == 0 ? Arms::plus : Arms::minus;
            a.chunks = lane == 0 ? ChunkRange{0, h} : ChunkRange{h, s};
        }
        rs_1d(e, whole(sh, rank), a);
    }
};

/// all_reduce = reduce_scatter + all_gather (GCL: AllReduce == AllGather(ReduceScatter)), on a
/// ring or line, same method for both halves. Lanes: bidir 2, others 1.
struct RingAllReduce : AlgorithmBase<RingAllReduce> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_reduce) return "RingAllReduce computes Op::all_reduce only.";
        return detail::validate_ring_method(sh);
    }
    static uint32_t lanes(const Shape& sh) { return sh.method == Method::ring_bidir ? 2 : 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t lane, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const uint32_t s = sh.chunks;
        ReduceScatter1D rs;
        rs.flow = method_flow(sh.method);
        rs.arms = flow_arms(rs.flow);
        rs.src = Frag{Buf::input, 0, s};
        rs.dst = Frag{Buf::output, 0, s};
        rs.chunks = {0, s};
        rs.window = sh.window;
        if (sh.method == Method::ring_bidir) {
            const uint32_t h = bidir_split(s);
            rs.flow = lane == 0 ? Flow::cw : Flow::ccw;
            rs.arms = lane == 0 ? Arms::plus : Arms::minus;
            rs.chunks = lane == 0 ? ChunkRange{0, h} : ChunkRange{h, s};
        }
        rs_1d(e, G, rs);
        AllGather1D ag;  // the same arms and chunks; my reduced fragment is already in place
        ag.flow = rs.flow;
        ag.arms = rs.arms;
        ag.own = mk::out(rank * s);
        ag.dst = rs.dst;
        ag.chunks = rs.chunks;
        ag.own_fragment = OwnFragment::in_place;
        ag.window = sh.window;
        ag_1d(e, G, ag);
    }
};

namespace detail {
constexpr const char* validate_rooted_chain(const Shape& sh, Op op, const char* who) {
    if (sh.op != op) return who;
    if (sh.method == Method::ring_bidir)
        return "This op's ring methods are ring_cw, ring_ccw, ring_meet_middle and line (ring_bidir splits chunks over two "
               "full rings, which only all_gather, reduce_scatter and all_reduce offer).";
    return validate_ring_method(sh);
}
}  // namespace detail

/// broadcast by a pipelined chain (per chunk) from root: cw / ccw (one arm, p-1 hops), meet (both
/// arms), line (both arms to the line's ends). One lane.
struct ChainBroadcast : AlgorithmBase<ChainBroadcast> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::broadcast, "ChainBroadcast computes Op::broadcast only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        AllGather1D a;
        a.flow = method_flow(sh.method);
        a.arms = flow_arms(a.flow);
        a.origins = Origins::only(sh.root);
        a.own = mk::in(0);
        a.dst = Frag{Buf::output, 0, 0};
        a.chunks = {0, sh.chunks};
        ag_1d(e, whole(sh, rank), a);
    }
};

/// reduce to root by a pipelined chain: each arm folds its partial from the far end towards root.
struct ChainReduce : AlgorithmBase<ChainReduce> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::reduce, "ChainReduce computes Op::reduce only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        ReduceScatter1D a;
        a.flow = method_flow(sh.method);
        a.arms = flow_arms(a.flow);
        a.origins = Origins::only(sh.root);
        a.src = Frag{Buf::input, 0, 0};
        a.dst = Frag{Buf::output, 0, 0};
        a.chunks = {0, sh.chunks};
        rs_1d(e, whole(sh, rank), a);
    }
};

/// gather to root along the arms: every rank sends its own fragment towards root, then relays
/// (through scratch) the fragments of the ranks behind it, nearest first.
struct ChainGather : AlgorithmBase<ChainGather> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::gather, "ChainGather computes Op::gather only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const Flow f = method_flow(sh.method);
        const uint32_t s = sh.chunks, root = sh.root;
        const Arms arms = flow_arms(f);
        if (rank == root)
            for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(j), mk::out(root * s + j)));
        for (int d = +1; d >= -1; d -= 2) {
            if (!uses_arm(arms, d)) continue;
            const uint32_t T = rs_hops(f, G, root, d);  // ranks behind root on this arm
            if (rank == root) {
                const uint32_t prv = G.step_pos(root, -d, 1);
                for (uint32_t u = 1; u <= T; ++u) {
                    const uint32_t o = G.step_pos(root, -d, u);
                    for (uint32_t j = 0; j < s; ++j) e(mk::recv(G.rank(prv), mk::out(o * s + j)));
                }
                continue;
            }
            for (uint32_t t = 1; t <= T; ++t) {
                if (G.step_pos(root, -d, t) != rank) continue;
                const uint32_t nxt = G.step_pos(rank, d, 1), prv = G.step_pos(rank, -d, 1);
                for (uint32_t j = 0; j < s; ++j) e(mk::send(G.rank(nxt), mk::in(j)));
                for (uint32_t u = t + 1; u <= T; ++u)
                    for (uint32_t j = 0; j < s; ++j) e(mk::recv_copy_send(G.rank(prv), G.rank(nxt), mk::scr(j)));
            }
        }
    }
};

/// scatter from root along the arms: root sends the farthest rank's fragment first; each rank
/// relays (through scratch) the fragments for ranks beyond it, then receives its own.
struct ChainScatter : AlgorithmBase<ChainScatter> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::scatter, "ChainScatter computes Op::scatter only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const Flow f = method_flow(sh.method);
        const uint32_t s = sh.chunks, root = sh.root;
        const Arms arms = flow_arms(f);
        if (rank == root)
            for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(root * s + j), mk::out(j)));
        for (int d = +1; d >= -1; d -= 2) {
            if (!uses_arm(arms, d)) continue;
            const uint32_t T = ag_hops(f, G, root, d);  // ranks beyond root on this arm
            if (rank == root) {
                const uint32_t nxt = G.step_pos(root, d, 1);
                for (uint32_t u = T; u >= 1; --u) {
                    const uint32_t o = G.step_pos(root, d, u);
                    for (uint32_t j = 0; j < s; ++j) e(mk::send(G.rank(nxt), mk::in(o * s + j)));
                }
                continue;
            }
            for (uint32_t t = 1; t <= T; ++t) {
                if (G.step_pos(root, d, t) != rank) continue;
                const uint32_t nxt = G.step_pos(rank, d, 1), prv = G.step_pos(rank, -d, 1);
                for (uint32_t u = T; u > t; --u)
                    for (uint32_t j = 0; j < s; ++j) e(mk::recv_copy_send(G.rank(prv), G.rank(nxt), mk::scr(j)));
                for (uint32_t j = 0; j < s; ++j) e(mk::recv(G.rank(prv), mk::out(j)));
            }
        }
    }
};

/// send_recv relayed hop by hop from root (sender) to peer (receiver): ring_cw / ring_ccw go that
/// way round, ring_meet_middle the shorter way (ties cw), line along the line.
struct RelaySendRecv : AlgorithmBase<RelaySendRecv> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::send_recv, "RelaySendRecv computes Op::send_recv only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const uint32_t p = sh.ranks, s = sh.chunks, a = sh.root, b = sh.peer;
        if (a == b) {
            if (rank == a)
                for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(j), mk::out(j)));
            return;
        }
        const uint32_t fwd = (b + p - a) % p, bwd = p - fwd;
        int d = +1;
        uint32_t dist = fwd;
        if (!G.ring) { d = b > a ? +1 : -1; dist = b > a ? b - a : a - b; }
        else if (sh.method == Method::ring_ccw || (sh.method == Method::ring_meet_middle && bwd < fwd)) { d = -1; dist = bwd; }
        for (uint32_t t = 0; t <= dist; ++t) {
            if (G.step_pos(a, d, t) != rank) continue;
            const uint32_t nxt = G.step_pos(rank, d, 1), prv = G.step_pos(rank, -d, 1);
            for (uint32_t j = 0; j < s; ++j) {
                if (t == 0) e(mk::send(G.rank(nxt), mk::in(j)));
                else if (t == dist) e(mk::recv(G.rank(prv), mk::out(j)));
                else e(mk::recv_copy_send(G.rank(prv), G.rank(nxt), mk::scr(j)));
            }
        }
    }
};

/// all_reduce (or barrier: one token chunk) as a pipelined chain reduce to root followed by a
/// chain broadcast of the result from root: meet-in-the-middle arms on a ring, line arms on a
/// line. The value is computed once at root and copied everywhere.
struct ReduceBroadcastChain : AlgorithmBase<ReduceBroadcastChain> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_reduce && sh.op != Op::barrier)
            return "ReduceBroadcastChain computes Op::all_reduce or Op::barrier only.";
        if (const char* err = detail::validate_common(sh)) return err;
        if (sh.topo != Topology::ring && sh.topo != Topology::line)
            return "reduce_broadcast_chain runs on a ring or a line topology.";
        return nullptr;
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const Flow f = sh.topo == Topology::ring ? Flow::meet : Flow::line;
        const uint32_t n = tensor_chunks(sh);
        ReduceScatter1D rs;  // chain reduce to root along both arms
        rs.flow = f;
        rs.arms = Arms::both;
        rs.origins = Origins::only(sh.root);
        rs.src = Frag{Buf::input, 0, 0};
        rs.dst = Frag{Buf::output, 0, 0};
        rs.chunks = {0, n};
        rs_1d(e, G, rs);
        AllGather1D ag;  // chain broadcast of the root's result
        ag.flow = f;
        ag.arms = Arms::both;
        ag.origins = Origins::only(sh.root);
        ag.own = mk::out(0);
        ag.dst = Frag{Buf::output, 0, 0};
        ag.chunks = {0, n};
        ag.own_fragment = OwnFragment::in_place;
        ag_1d(e, G, ag);
    }
};

/// all_reduce for small tensors (GCL "broadcast"): every rank's whole input goes to every rank
/// (meet-in-the-middle arms on a ring, line arms on a line) into scratch[q*n ..], then each rank
/// reduces locally in rank order 0, 1, ..., p-1 (same combine tree everywhere). Latency is paid
/// once; memory is p*n chunks of scratch. GCL's cut-off: group_size * bytes <= 2048.
struct BroadcastLocalReduce : AlgorithmBase<BroadcastLocalReduce> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_reduce) return "BroadcastLocalReduce computes Op::all_reduce only.";
        if (const char* err = detail::validate_common(sh)) return err;
        if (sh.topo != Topology::ring && sh.topo != Topology::line)
            return "broadcast_local_reduce runs on a ring or a line topology.";
        return nullptr;
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const Flow f = sh.topo == Topology::ring ? Flow::meet : Flow::line;
        const uint32_t n = tensor_chunks(sh), p = sh.ranks;
        AllGather1D a;  // every rank's whole input into scratch[q*n ..] (my own stays in the input)
        a.flow = f;
        a.arms = Arms::both;
        a.own = mk::in(0);
        a.dst = Frag{Buf::scratch, 0, n};
        a.chunks = {0, n};
        a.own_fragment = OwnFragment::in_place;
        ag_1d(e, G, a);
        for (uint32_t q = 0; q < p; ++q) {
            const ChunkRef src = q == rank ? mk::in(0) : mk::scr(q * n);
            if (q == 0) e(mk::copy(src, mk::out(0), n));
            else e(mk::reduce_local(src, mk::out(0), n));
        }
    }
};

/// all_to_all by relaying bundles along the arms (neighbour links only): ring_cw / ring_ccw (one
/// arm, every destination p-1 hops away at most), ring_meet_middle (destinations up to p/2 hops
/// one way and (p-1)/2 the other), line (each way to the end of the line). In round t (1..p-1) a
/// rank sends its neighbour the fragments that have travelled t-1 hops and must go further
/// (those that started t-1 ranks behind it; in round 1 its own, from the input), alternating with
/// receiving the bundle that started t ranks behind: the fragment addressed to this rank goes to
/// the output, the rest to scratch (two alternating bundles per arm) for round t+1.
/// Cost (p-1) alpha + (p-1)/2 n beta for one arm (p(p-1)/2 fragment hops), about half with two.
struct RelayAllToAll : AlgorithmBase<RelayAllToAll> {
    static constexpr bool multi_hop = false;
    static const char* validate(const Shape& sh) {
        return detail::validate_rooted_chain(sh, Op::all_to_all, "RelayAllToAll computes Op::all_to_all only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        using namespace detail;
        const Group1D G = whole(sh, rank);
        const Flow fl = method_flow(sh.method);
        const Arms arms = flow_arms(fl);
        const uint32_t p = sh.ranks, s = sh.chunks;
        for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(rank * s + j), mk::out(rank * s + j)));
        auto slot = [&](uint32_t t, int d, uint32_t k, uint32_t j) {
            return mk::scr((((t % 2) * 2 + (d > 0 ? 0u : 1u)) * p + k) * s + j);
        };
        for (uint32_t t = 1; t < p; ++t)
            for (int d = +1; d >= -1; d -= 2) {
                if (!uses_arm(arms, d)) continue;
                const uint32_t os = G.step_pos(rank, -d, t - 1), orr = G.step_pos(rank, -d, t);
                const uint32_t ks = os == kNoPeer ? 0 : ag_hops(fl, G, os, d);
                const uint32_t kr = (orr == kNoPeer || (G.ring && orr == rank)) ? 0 : ag_hops(fl, G, orr, d);
                const uint32_t nsend = ks >= t ? ks - t + 1 : 0, nrecv = kr >= t ? kr - t + 1 : 0;
                const uint32_t nxt = G.step_pos(rank, d, 1), prv = G.step_pos(rank, -d, 1);
                for (uint32_t i = 0; i < nsend || i < nrecv; ++i)
                    for (uint32_t j = 0; j < s; ++j) {
                        const uint32_t k = t + i;
                        if (i < nsend) {
                            const uint32_t dest = G.step_pos(os, d, k);
                            e(mk::send(G.rank(nxt), t == 1 ? mk::in(dest * s + j) : slot(t - 1, d, k, j)));
                        }
                        if (i < nrecv) e(mk::recv(G.rank(prv), k == t ? mk::out(orr * s + j) : slot(t, d, k, j)));
                    }
            }
    }
};

}  // namespace kccl::coll

// kccl/collectives/algorithms/arms.hpp — the 1D building blocks of the ring, line and mesh methods.
//
// WHAT IT IS
//   A Group1D is a set of g ranks in a row (rank(i) = base + i*stride), closed into a ring or open
//   (a line). Data moves along "arms": in direction d = +1 (position i -> i+1) or d = -1. A Flow
//   says how far data travels on each arm:
//     cw    everything goes the full way in +1            (GCL "clockwise ring")
//     ccw   everything goes the full way in -1            (GCL "anticlockwise ring")
//     meet  g/2 hops in +1 and (g-1)/2 in -1               (GCL "meet-in-the-middle")
//     line  as far as the ends of the line in each direction (tt-metal line all-gather)
//   The generators below emit the steps of ONE rank (G.me) for one arm and one round ("time") t, so
//   callers can interleave arms in one lane or give each arm its own lane. Within an arm a rank
//   handles at most one fragment per round (the round is the time the fragment reaches the rank:
//   hops travelled, plus, on a line reduce-scatter whose partials all start at the end rank, the
//   fragment's place in that rank's send order), and every rank orders the same items the same
//   way, so FIFO matching holds by construction. ag_1d / rs_1d order the (chunk, round) items as a
//   wavefront with `window` chunks in flight (wavefront() below): window 1 is chunk-major (each
//   chunk a small collective of its own; 2 slots per channel whatever s is), window W keeps W
//   chunks going round at once and needs W + 1 slots per channel.
//
// Who includes it: the algorithm headers. C++17, freestanding, no heap.
#pragma once

#include <collectives/schedule.hpp>

namespace kccl::coll::detail {

enum class Flow : uint8_t { cw, ccw, meet, line };

struct Group1D {
    uint32_t g = 1, me = 0, base = 0, stride = 1;
    bool ring = true;
    constexpr uint32_t rank(uint32_t i) const { return base + i * stride; }
    /// Position i + d*t, or kNoPeer if it falls off a line (or wraps onto itself on a ring).
    constexpr uint32_t step_pos(uint32_t i, int d, uint32_t t) const {
        if (ring) {
            const uint32_t tt = t % g;
            return d > 0 ? (i + tt) % g : (i + g - tt) % g;
        }
        if (d > 0) return i + t < g ? i + t : kNoPeer;
        return t <= i ? i - t : kNoPeer;
    }
};

/// A fragment layout in one buffer: fragment f, chunk j -> base + f*stride + j.
struct Frag {
    Buf buf;
    uint32_t base, stride;
    constexpr ChunkRef at(uint32_t f, uint32_t j) const { return {buf, base + f * stride + j}; }
};

/// The arms a 1D collective uses: +1 only, -1 only, or both (interleaved per round in one lane).
enum class Arms : uint8_t { plus = 1, minus = 2, both = 3 };
constexpr bool uses_arm(Arms a, int d) { return (uint8_t(a) & (d > 0 ? 1u : 2u)) != 0; }

/// Whose fragments a 1D collective moves: every rank's (all_gather, reduce_scatter), or one
/// root's only (a chain broadcast sends only the root's fragment; a chain reduce builds only the
/// root's).
struct Origins {
    uint32_t root = kNoPeer;  ///< kNoPeer: every rank's
    static constexpr Origins every() { return {}; }
    static constexpr Origins only(uint32_t r) { return {r}; }
    constexpr bool all() const { return root == kNoPeer; }
    constexpr bool has(uint32_t o) const { return root == kNoPeer || root == o; }
};

/// Chunks [begin, end) of every fragment.
struct ChunkRange {
    uint32_t begin = 0, end = 0;
    constexpr uint32_t size() const { return end > begin ? end - begin : 0; }
};

/// all_gather: does the rank first copy its own fragment into place, or is it already there?
enum class OwnFragment : uint8_t { copy, in_place };

/// ag_1d's arguments. Required: flow, arms, own (where my own fragment's chunk 0 is), dst (the
/// layout every fragment lands in), chunks.
struct AllGather1D {
    Flow flow = Flow::cw;
    Arms arms = Arms::plus;
    ChunkRef own{};
    Frag dst{Buf::output, 0, 0};
    ChunkRange chunks{};
    Origins origins = Origins::every();
    OwnFragment own_fragment = OwnFragment::copy;
    uint32_t window = 1;  ///< chunks in flight (wavefront(); 1 = chunk-major)
    /// Mark the steps Step::put: every rank of the group lays out `dst` alike, so a chunk lands
    /// at the same output chunk on the sender and each receiver.
    bool put = false;
};

/// rs_1d's arguments. Fragment f's partial is built from src.at(f, j) and lands in dst.at(f, j).
struct ReduceScatter1D {
    Flow flow = Flow::cw;
    Arms arms = Arms::plus;
    Frag src{Buf::input, 0, 0};
    Frag dst{Buf::output, 0, 0};
    ChunkRange chunks{};
    Origins origins = Origins::every();  ///< only(root): a chain reduce to root
    uint32_t window = 1;
};

/// all-gather reach of origin o in direction d (how many hops its fragment travels that way).
constexpr uint32_t ag_hops(Flow f, const Group1D& G, uint32_t o, int d) {
    const uint32_t g = G.g;
    switch (f) {
        case Flow::cw: return d > 0 ? g - 1 : 0;
        case Flow::ccw: return d < 0 ? g - 1 : 0;
        case Flow::meet: return d > 0 ? g / 2 : (g - 1) / 2;
        case Flow::line: return d > 0 ? g - 1 - o : o;
    }
    return 0;
}
/// reduce-scatter: how many contributors of fragment f arrive at f along direction d.
constexpr uint32_t rs_hops(Flow f, const Group1D& G, uint32_t frag, int d) {
    const uint32_t g = G.g;
    switch (f) {
        case Flow::cw: return d > 0 ? g - 1 : 0;
        case Flow::ccw: return d < 0 ? g - 1 : 0;
        case Flow::meet: return d > 0 ? g / 2 : (g - 1) / 2;
        case Flow::line: return d > 0 ? frag : g - 1 - frag;
    }
    return 0;
}

/// All-gather arm, round t, for rank G.me. Only origins o in `origins`
/// travel. Round 0 sends the own fragment (from own_src + j); round t >= 1 receives origin
/// me - d*t into dst.at(o, j) and forwards it if it has further to go. Chunks [j0, j1).
template <class E>
void ag_round(E& e, const Group1D& G, Flow fl, int d, Origins origins, ChunkRef own_src, const Frag& dst,
              uint32_t j0, uint32_t j1, uint32_t t, bool put = false) {
    const uint32_t me = G.me;
    const uint32_t nxt = G.step_pos(me, d, 1), prv = G.step_pos(me, -d, 1);
    auto mark = [put](Step s) {
        s.put = put;
        return s;
    };
    if (t == 0) {
        if (origins.has(me) && ag_hops(fl, G, me, d) >= 1 && nxt != kNoPeer)
            for (uint32_t j = j0; j < j1; ++j) {
                Step s = mk::send(G.rank(nxt), {own_src.buf, own_src.chunk + j});
                if (put) s.dst = dst.at(me, j);  // where the receiver stores it
                e(mark(s));
            }
        return;
    }
    const uint32_t o = G.step_pos(me, -d, t);
    if (o == kNoPeer || o == me || !origins.has(o)) return;
    const uint32_t h = ag_hops(fl, G, o, d);
    if (h < t) return;
    for (uint32_t j = j0; j < j1; ++j) {
        if (h > t && nxt != kNoPeer) e(mark(mk::recv_copy_send(G.rank(prv), G.rank(nxt), dst.at(o, j))));
        else e(mark(mk::recv(G.rank(prv), dst.at(o, j))));
    }
}

/// Reduce-scatter arm, round k, for rank G.me: every fragment f whose partial passes me at round k
/// (k = hops(f) - distance(me -> f) + its place in the start rank's send order), by increasing
/// distance. Distance 0 is the final combine at the owner; with two arms (two_finals) the first
/// goes to scratch and the second combines scratch into dst; `first_final_done` tracks which.
/// Position of fragment f in its start rank's send order: on a line every partial of an arm
/// starts at the same end rank, which sends them nearest first; on a ring each rank starts one.
constexpr uint32_t rs_start_index(Flow fl, const Group1D& G, Origins origins, uint32_t f, int d) {
    if (fl != Flow::line || !origins.all()) return 0;
    return d > 0 ? (f >= 1 ? f - 1 : 0) : (G.g >= 2 + f ? G.g - 2 - f : 0);
}

template <class E>
void rs_round(E& e, const Group1D& G, Flow fl, int d, Origins origins, const Frag& src, const Frag& dst,
              uint32_t j0, uint32_t j1, uint32_t k, bool& first_final_done, bool two_finals) {
    const uint32_t me = G.me, g = G.g;
    const uint32_t nxt = G.step_pos(me, d, 1), prv = G.step_pos(me, -d, 1);
    for (uint32_t t = 0; t < g; ++t) {
        const uint32_t f = G.step_pos(me, d, t);
        if (f == kNoPeer) break;
        if (t > 0 && f == me) break;  // wrapped around a ring
        if (!origins.has(f)) continue;
        const uint32_t h = rs_hops(fl, G, f, d);
        if (h < t || h - t + rs_start_index(fl, G, origins, f, d) != k) continue;
        if (t == 0) {
            if (h == 0) continue;
            // with two arms the first partial is folded into scratch (same index as the output
            // chunk) and the second writes the output: the output is written exactly once
            for (uint32_t j = j0; j < j1; ++j) {
                const ChunkRef out = dst.at(f, j), tmp{Buf::scratch, out.chunk};
                if (!first_final_done) e(mk::recv_reduce_copy(G.rank(prv), src.at(f, j), two_finals ? tmp : out));
                else e(mk::recv_reduce_copy(G.rank(prv), tmp, out));
            }
            first_final_done = true;
        } else if (t == h) {
            for (uint32_t j = j0; j < j1; ++j) e(mk::send(G.rank(nxt), src.at(f, j)));
        } else {
            for (uint32_t j = j0; j < j1; ++j) e(mk::recv_reduce_send(G.rank(prv), G.rank(nxt), src.at(f, j)));
        }
    }
}

/// Wavefront order of a 1D collective's items (round t of chunk j): chunk j starts at "time"
/// sigma = j * D and its round t runs at sigma = j * D + t, with D = ceil(R / window) for R rounds
/// per chunk, so at most `window` chunks are in flight at once and a rank injects chunk j + 1
/// before chunk j has gone round. window = 1 gives D = R: chunk-major (each chunk a collective of
/// its own). Items of one sigma run oldest chunk first. The order is the same on every rank and
/// shifts with the data (what a rank does at (sigma, j) its successor does at (sigma + 1, j)), so
/// FIFO matching holds; a ring needs window + 1 message slots per channel (checked).
/// wavefront_from() starts at time sig0 and (at sig0) chunk item0 on; with a StepResume `r`, marks every
/// item and stops once r is full (schedule.hpp, "resuming a lane's step stream").
template <class F>
void wavefront_from(uint32_t n_chunks, uint32_t rounds, uint32_t window, uint32_t sig0, uint32_t item0,
                    StepResume* r, F&& f) {
    if (n_chunks == 0 || rounds == 0) return;
    // A window of `rounds` or more already starts a chunk every round (D = 1); clamping keeps
    // rounds + W - 1 from wrapping (a window near 2^32 made D 0, a division by zero).
    const uint32_t W = window == 0 ? 1 : window < rounds ? window : rounds;
    const uint32_t D = (rounds + W - 1) / W;
    const uint32_t end = (n_chunks - 1) * D + rounds;
    for (uint32_t sig = sig0; sig < end; ++sig) {
        const uint32_t lo = sig >= rounds ? (sig - rounds) / D + 1 : 0;
        const uint32_t hi0 = sig / D, hi = hi0 < n_chunks - 1 ? hi0 : n_chunks - 1;
        const uint32_t first = sig == sig0 && item0 > lo ? item0 : lo;
        for (uint32_t jj = first; jj <= hi; ++jj) {
            if (r) r->mark(sig, jj);
            f(jj, sig - jj * D);
            if (r && r->full) return;
        }
    }
}

/// The whole wavefront: f(chunk, round) for every item, in order.
template <class F>
void wavefront(uint32_t n_chunks, uint32_t rounds, uint32_t window, F&& f) {
    wavefront_from(n_chunks, rounds, window, 0, 0, nullptr, f);
}

/// The wavefront of a generator's emitter `e`: one phase of a resumable stream (it skips what is
/// before the StepResume's cursor and stops when full); plain emitters see every item.
template <class E, class F>
void wavefront_phase(E& e, uint32_t n_chunks, uint32_t rounds, uint32_t window, F&& f) {
    StepResume* r = resume_of(e);
    if (!r) return wavefront_from(n_chunks, rounds, window, 0, 0, nullptr, f);
    if (!r->enter_phase()) return;
    const bool here = r->resumes_here();
    wavefront_from(n_chunks, rounds, window, here ? r->from.sigma : 0, here ? r->from.item : 0, r, f);
}

/// A plain loop f(j) for j in [j0, j1) as one phase of a resumable stream (like wavefront_phase).
template <class E, class F>
void item_phase(E& e, uint32_t j0, uint32_t j1, F&& f) {
    StepResume* r = resume_of(e);
    uint32_t j = j0;
    if (r) {
        if (!r->enter_phase()) return;
        if (r->resumes_here() && r->from.item > j) j = r->from.item;
    }
    for (; j < j1; ++j) {
        if (r) r->mark(0, j);
        f(j);
        if (r && r->full) return;
    }
}

/// A whole 1D all-gather for rank G.me in one lane, on the arms a.arms (both: interleaved per
/// round). With OwnFragment::copy it first copies a.own -> a.dst.at(me) (skip with in_place when
/// the own fragment is already there).
template <class E>
void ag_1d(E& e, const Group1D& G, const AllGather1D& a) {
    const Flow fl = a.flow;
    const uint32_t j0 = a.chunks.begin, j1 = a.chunks.end;
    if (a.own_fragment == OwnFragment::copy && a.origins.has(G.me))
        item_phase(e, j0, j1, [&](uint32_t j) {
            const ChunkRef s{a.own.buf, a.own.chunk + j};
            const ChunkRef d = a.dst.at(G.me, j);
            if (s.buf != d.buf || s.chunk != d.chunk) e(mk::copy(s, d));
        });
    // rounds per chunk: 1 + the farthest reach of an arm (meet: g/2 + 1, not g), so a window's
    // chunks are spaced by the rounds that really carry data
    uint32_t reach = 0;
    for (uint32_t o = 0; o < G.g; ++o) {
        if (uses_arm(a.arms, +1)) reach = ag_hops(fl, G, o, +1) > reach ? ag_hops(fl, G, o, +1) : reach;
        if (uses_arm(a.arms, -1)) reach = ag_hops(fl, G, o, -1) > reach ? ag_hops(fl, G, o, -1) : reach;
        if (fl != Flow::line) break;  // the same for every origin
    }
    wavefront_phase(e, a.chunks.size(), reach + 1 < G.g ? reach + 1 : G.g, a.window, [&](uint32_t jj, uint32_t t) {
        const uint32_t j = j0 + jj;
        if (uses_arm(a.arms, +1)) ag_round(e, G, fl, +1, a.origins, a.own, a.dst, j, j + 1, t, a.put);
        if (uses_arm(a.arms, -1)) ag_round(e, G, fl, -1, a.origins, a.own, a.dst, j, j + 1, t, a.put);
    });
}

/// A whole 1D reduce-scatter (or, with Origins::only(root), a chain reduce) for rank G.me in one
/// lane. When no arm brings anything to my own fragment (g == 1), copies src -> dst.
template <class E>
void rs_1d(E& e, const Group1D& G, const ReduceScatter1D& a) {
    const Flow fl = a.flow;
    const uint32_t j0 = a.chunks.begin, j1 = a.chunks.end;
    const Frag& src = a.src;
    const Frag& dst = a.dst;
    const bool use_p = uses_arm(a.arms, +1), use_m = uses_arm(a.arms, -1);
    const bool plus = use_p && rs_hops(fl, G, G.me, +1) > 0, minus = use_m && rs_hops(fl, G, G.me, -1) > 0;
    // rounds of the owner's final combines on each arm: with two arms the earlier one (the +1 arm
    // first on a tie) goes to scratch, the later one writes the output
    const uint32_t kp = rs_hops(fl, G, G.me, +1) + rs_start_index(fl, G, a.origins, G.me, +1);
    const uint32_t km = rs_hops(fl, G, G.me, -1) + rs_start_index(fl, G, a.origins, G.me, -1);
    // rounds per chunk: a partial reaches its owner after at most g - 1 hops, plus on a line its
    // place in the end rank's send order (< g)
    const uint32_t reach = fl == Flow::meet ? G.g / 2 + 1 : G.g;
    const uint32_t rounds = fl == Flow::line && a.origins.all() ? 2 * G.g : reach < G.g ? reach : G.g;
    wavefront_phase(e, a.chunks.size(), rounds, a.window, [&](uint32_t jj, uint32_t k) {
        const uint32_t j = j0 + jj;
        if (use_p) {
            bool first = minus && km < kp;
            rs_round(e, G, fl, +1, a.origins, src, dst, j, j + 1, k, first, plus && minus);
        }
        if (use_m) {
            bool first = plus && kp <= km;
            rs_round(e, G, fl, -1, a.origins, src, dst, j, j + 1, k, first, plus && minus);
        }
    });
    if (a.origins.has(G.me) && !plus && !minus)
        item_phase(e, j0, j1, [&](uint32_t j) {
            const ChunkRef s = src.at(G.me, j), d = dst.at(G.me, j);
            if (s.buf != d.buf || s.chunk != d.chunk) e(mk::copy(s, d));
        });
}

/// Which arms a flow uses.
constexpr Arms flow_arms(Flow f) { return f == Flow::cw ? Arms::plus : f == Flow::ccw ? Arms::minus : Arms::both; }

/// The 1D group of the whole shape (ring or line topology; mesh callers build their own).
constexpr Group1D whole(const Shape& sh, uint32_t rank) {
    Group1D G;
    G.g = sh.ranks;
    G.me = rank;
    G.ring = sh.topo == Topology::ring && sh.method != Method::line;
    return G;
}

/// Flow of a ring/line method; Method::line on a ring uses the ring as a line (no wrap link).
constexpr Flow method_flow(Method m) {
    switch (m) {
        case Method::ring_cw: return Flow::cw;
        case Method::ring_ccw: return Flow::ccw;
        case Method::ring_meet_middle: return Flow::meet;
        default: return Flow::line;
    }
}

/// Shape-level checks shared by all algorithms. Returns nullptr or a sentence.
constexpr const char* validate_common(const Shape& sh) {
    if (sh.ranks == 0) return "The rank count must be at least 1.";
    if (sh.chunks == 0 && sh.op != Op::barrier) return "The chunk count (chunks per fragment) must be at least 1.";
    if ((sh.topo == Topology::mesh || sh.topo == Topology::torus) &&
        (sh.rows == 0 || sh.cols == 0 || uint64_t(sh.rows) * sh.cols != sh.ranks))
        return "A mesh or torus topology needs rows * cols == ranks with rows, cols >= 1.";
    if (grid_wide(sh, Buf::input) > 0xFFFFFFFFu || grid_wide(sh, Buf::output) > 0xFFFFFFFFu ||
        scratch_chunks_wide(sh) > 0xFFFFFFFFu)
        return "The chunk grid is too large: ranks x chunks (and the scratch, up to ranks x ranks x chunks) must be "
               "at most 2^32 - 1 chunks per buffer.";
    if (sh.root >= sh.ranks) return "The root must be a rank (root < ranks).";
    if (sh.op == Op::send_recv && sh.peer >= sh.ranks) return "The send_recv peer must be a rank (peer < ranks).";
    return nullptr;
}

/// Ring methods (cw, ccw, bidir, meet) need a ring; line runs on a ring or a line.
constexpr const char* validate_ring_method(const Shape& sh) {
    if (const char* e = validate_common(sh)) return e;
    if (sh.topo != Topology::ring && sh.topo != Topology::line)
        return "This method runs on a ring or a line topology; on a mesh or torus all_gather and all_reduce take "
               "Method::mesh_2d, the other ops a multi-hop method (binomial_tree, pairwise, direct, ...).";
    if (sh.method != Method::line && sh.topo != Topology::ring)
        return "Ring methods (ring_cw, ring_ccw, ring_bidir, ring_meet_middle) need a ring topology; use Method::line on a line.";
    return nullptr;
}

}  // namespace kccl::coll::detail

// kccl/collectives/schedule.hpp — the schedule description every collective algorithm is written in.
//
// WHAT IT IS
//   A collective algorithm is described ONCE, as a per-rank stream of Steps (verbs over chunks of
//   three buffers). The same description drives the device executor (ops' executor.hpp, which maps
//   each Step to a primitive of primitives.hpp), the symbolic checker (host/checker.hpp, which runs
//   every rank's streams with sets of contributors instead of numbers) and the pictures in
//   docs/collectives-algorithms.md (host/picture.hpp).
//
// THE VOCABULARY
//   Shape      what is computed: op, rank count p, topology (ring / line / mesh / torus with rows x
//              cols), root (rooted ops; the sender of send_recv), peer (the receiver of send_recv),
//              chunks s, method, and for Method::tree a parent array (all_reduce: two, the
//              reduce's and the broadcast's).
//   chunk grid every buffer is cut into equal chunks; grid(shape, buf) gives the chunk count of
//              each buffer (see grid() below for every op). A chunk's element range comes from
//              slicer.hpp. Steps name chunks, never bytes.
//   Step       one verb on `count` consecutive chunks: src..src+count-1 and dst..dst+count-1.
//   lane       an independent step stream of a rank (a bidirectional ring pair has 2). Lanes of one
//              rank never touch the same output/scratch chunk (the checker enforces it), so an
//              executor may run them on different cores or interleave them freely.
//   message    every send is one message of `count` chunks. Between (sender, receiver, lane)
//              messages are FIFO: the k-th send r->q in lane l matches the k-th receive at q from
//              r in lane l, and both must name the same count.
//
// VERB SEMANTICS (recv = a message from recv_peer; "send" goes to the step's peer set: send_peer,
// or with a multicast Cast every rank of the set, one message queued to each)
//   send                   send src
//   recv                   dst = recv
//   recv_reduce_send       send combine(src, recv)                     (nothing stored locally)
//   recv_reduce_copy       dst = combine(src, recv)                    (src may equal dst)
//   recv_copy_send         dst = recv; send dst
//   recv_reduce_copy_send  dst = combine(src, recv); send dst
//   copy                   dst = src
//   reduce_local           dst = combine(dst, src)
//   A step's send has consumed its source when the step returns (the executor copies into the
//   link or waits), so the next step may overwrite it.
//
// COMBINE ORDER: combine(a, b) = Reducer::combine(out, a, b) with a = the operand already here
// (the LOCAL src of a receiving verb; reduce_local's dst, the running value) and b = the one
// coming in (the received partial; reduce_local's src). primitives.hpp and executor.hpp pass the
// operands in this order and the checker models it (host/checker.hpp tracks each value's
// contributors in this order and its combine tree with operand order); tests/collectives/
// order_test.cpp holds the code to it with a non-commutative operator. Why this order: NCCL and
// GCL offer only commutative operators and promise no operand order; MPI does, for a user operator
// that is not commutative: contributions in ascending rank order. With "local first", a node of a
// tree reduce folds its own input and then its children closest first, so every pre-order
// numbered tree rooted at rank 0 (the chain, binomial, two-phase and optimal pre-order trees of
// the Cerebras WSE reduce/allreduce thesis) reduces in exactly that order (tested), and a running
// value in reduce_local stays on the left as in a plain loop.
//
// ORDER (bitwise identical results)
//   Every method computes each output value either exactly once and then distributes copies of
//   it (ring / line / mesh reduce_scatter + all_gather, reduce + broadcast, Rabenseifner), or on
//   every rank by the same tree of combines up to swapping the two operands of a combine
//   (recursive doubling: each partner computes combine(mine, theirs), broadcast-then-local-reduce
//   computes the same rank-order fold everywhere). Every supported operator's combine is
//   commutative bit for bit (IEEE add/mul/min/max, integer and boolean ops; low precision
//   accumulates in float and rounds once per combine), so results are bitwise identical on every
//   rank and from run to run. The checker verifies this; with CheckOptions::non_commutative it
//   also requires the same operand order everywhere (every method but recursive doubling has it).
//
// MULTICAST AND ROUTES
//   A step's send reaches a peer set (Cast): one rank (unicast, send_peer) or, for a multicast,
//   a set the shape defines (Cast::children: the sender's children in the shape's broadcast tree).
//   A multicast is one message: a transport that can inject once to several directions (a link
//   with send_multicast, primitives.hpp) sends it once per piece; on any other the executor
//   lowers it to one unicast per receiver (lower_casts() in algorithms.hpp: the step to the first
//   receiver, then sends of what it sent to the others, largest subtree first). Peers need not be
//   neighbours (multi_hop algorithms): a message follows the topology's shortest route, hops()
//   long, which the checker's logical time and the pictures charge.
//
// ALGORITHM TYPE (see AlgorithmBase below and algorithms/*.hpp)
//   struct A : AlgorithmBase<A> {
//     static constexpr bool multi_hop;   // sends to ranks that are not topology neighbours
//     static const char* validate(const Shape&);   // nullptr if supported, else a full sentence
//     static uint32_t lanes(const Shape&);
//     template <class Emit> static void generate(const Shape&, uint32_t rank, uint32_t lane, Emit& emit);
//   };
//   AlgorithmBase gives steps(shape, rank, lane), step(shape, rank, lane, i) and
//   for_each(shape, rank, lane, f): every step is computed on the fly from (shape, rank, lane, i)
//   by running the generator (no heap, no tables); executors should prefer for_each (one pass).
//
// Who includes it: device code (C++17, freestanding, no heap), host tools and tests.
#pragma once

#include <hal/config.hpp>

#include <stdint.h>
#include <type_traits>

namespace kccl::coll {

enum class Verb : uint8_t {
    send,
    recv,  // = recv_copy
    recv_reduce_send,
    recv_reduce_copy,
    recv_copy_send,
    recv_reduce_copy_send,
    copy,
    reduce_local
};

enum class Buf : uint8_t { input, output, scratch };

struct ChunkRef {
    Buf buf;
    uint32_t chunk;  // index in that buffer's chunk grid
};

inline constexpr uint32_t kNoPeer = 0xFFFFFFFFu;

/// Who a step's send reaches (its peer set).
enum class Cast : uint8_t {
    unicast,   ///< send_peer
    children,  ///< multicast: the sending rank's children in the shape's broadcast tree (tree.hpp:
               ///< the binomial tree, or Shape::bcast_tree / Shape::tree); send_peer is kNoPeer.
               ///< One message, delivered to each child over its own (sender, child, lane) FIFO.
               ///< Allowed on send, recv_copy_send and recv_reduce_copy_send (what is sent is then
               ///< in src / dst, so an executor can lower it to one unicast per child).
};

struct Step {
    Verb verb;
    uint32_t recv_peer;  // rank received from (verbs that receive), else kNoPeer
    uint32_t send_peer;  // rank sent to (verbs that send, Cast::unicast), else kNoPeer
    ChunkRef src;        // local operand: what is sent, or the reduce operand
    ChunkRef dst;        // local destination (copies / reduce results)
    uint32_t count;      // number of consecutive chunks this step covers (>= 1)
    Cast cast = Cast::unicast;  // the peer set of the send (for_each_send_peer(), algorithms.hpp)
    /// The chunk lands at the same place on both ends: a send's receiver stores it at `dst` (a
    /// chunk of ITS output), a receiving step's sender wrote it for this step's `dst`, and a
    /// recv_copy_send's next receiver stores it at the same `dst`. A link with puts (link.hpp)
    /// then writes it there directly (no slot, no copy); others ignore it.
    bool put = false;
};

constexpr bool verb_receives(Verb v) {
    return v != Verb::send && v != Verb::copy && v != Verb::reduce_local;
}
constexpr bool verb_sends(Verb v) {
    return v == Verb::send || v == Verb::recv_reduce_send || v == Verb::recv_copy_send ||
           v == Verb::recv_reduce_copy_send;
}
constexpr bool verb_reduces(Verb v) {
    return v == Verb::recv_reduce_send || v == Verb::recv_reduce_copy ||
           v == Verb::recv_reduce_copy_send || v == Verb::reduce_local;
}
constexpr bool verb_reads_src(Verb v) {
    return v == Verb::send || verb_reduces(v) || v == Verb::copy;
}
constexpr bool verb_writes_dst(Verb v) {
    return v == Verb::recv || v == Verb::recv_reduce_copy || v == Verb::recv_copy_send ||
           v == Verb::recv_reduce_copy_send || v == Verb::copy || v == Verb::reduce_local;
}

constexpr const char* verb_name(Verb v) {
    switch (v) {
        case Verb::send: return "send";
        case Verb::recv: return "recv";
        case Verb::recv_reduce_send: return "recv_reduce_send";
        case Verb::recv_reduce_copy: return "recv_reduce_copy";
        case Verb::recv_copy_send: return "recv_copy_send";
        case Verb::recv_reduce_copy_send: return "recv_reduce_copy_send";
        case Verb::copy: return "copy";
        case Verb::reduce_local: return "reduce_local";
    }
    return "?";
}
constexpr const char* buf_name(Buf b) {
    return b == Buf::input ? "in" : b == Buf::output ? "out" : "scratch";
}

enum class Op : uint8_t {
    all_gather,
    reduce_scatter,
    all_reduce,
    broadcast,
    reduce,
    gather,
    scatter,
    all_to_all,
    send_recv,
    barrier
};
inline constexpr uint32_t kOpCount = 10;

constexpr const char* op_name(Op o) {
    switch (o) {
        case Op::all_gather: return "all_gather";
        case Op::reduce_scatter: return "reduce_scatter";
        case Op::all_reduce: return "all_reduce";
        case Op::broadcast: return "broadcast";
        case Op::reduce: return "reduce";
        case Op::gather: return "gather";
        case Op::scatter: return "scatter";
        case Op::all_to_all: return "all_to_all";
        case Op::send_recv: return "send_recv";
        case Op::barrier: return "barrier";
    }
    return "?";
}

/// ring: r <-> r+1 mod p.  line: r <-> r+1 for r+1 < p.  mesh: rank = y*cols + x, links to the
/// N/S/E/W neighbours inside the grid (rows and columns are lines).  torus: mesh whose rows and
/// columns wrap (rows and columns are rings).
enum class Topology : uint8_t { ring, line, mesh, torus };

constexpr const char* topology_name(Topology t) {
    return t == Topology::ring ? "ring" : t == Topology::line ? "line" : t == Topology::mesh ? "mesh" : "torus";
}
inline constexpr uint32_t kTopologyCount = 4;

/// A set of topologies (the method table's column in algorithms.hpp).
struct TopoSet {
    uint8_t bits = 0;
    constexpr bool has(Topology t) const { return (bits >> uint32_t(t)) & 1u; }
};
namespace topos {
inline constexpr TopoSet ring{1}, line{2}, ring_line{3}, mesh_torus{12}, any{15};
}

/// Methods (GCL's names where it has them), in enum order (values are stable: append new ones).
/// This list gives Method, kMethodCount and method_name(); which op runs which method with which
/// algorithm on which topologies is the one table KCCL_COLL_ALGORITHMS in algorithms.hpp.
#define KCCL_COLL_METHODS(X)                                                                              \
    X(ring_cw)                /* clockwise ring: data flows r -> r+1 */                                    \
    X(ring_ccw)               /* anticlockwise ring: r -> r-1 */                                           \
    X(ring_bidir)             /* bidirectional ring pair: half the chunks cw, half ccw, each the full way */ \
    X(ring_meet_middle)       /* meet in the middle: everything halfway each way */                        \
    X(line)                   /* line (both directions, reach limited by the ends); also runs on a ring */ \
    X(broadcast_local_reduce) /* all_reduce: gather every full input everywhere, reduce locally */         \
    X(reduce_broadcast_chain) /* all_reduce / barrier: chain reduce to root, chain broadcast */            \
    X(reduce_broadcast_tree)  /* all_reduce: binomial tree reduce to root, binomial tree broadcast */      \
    X(binomial_tree)          /* broadcast / reduce / gather / scatter: binomial tree (multi-hop) */       \
    X(tree)                   /* broadcast / reduce / all_reduce: parent arrays (multi-hop) */             \
    X(recursive_doubling)     /* all_reduce / barrier: butterfly exchange of the whole vector */           \
    X(rabenseifner)           /* all_reduce: recursive halving reduce_scatter + doubling all_gather */     \
    X(pairwise)               /* all_to_all: p-1 direct exchanges (multi-hop) */                           \
    X(direct)                 /* send_recv: one message straight to the peer (multi-hop) */                \
    X(mesh_2d)                /* all_gather / all_reduce on mesh/torus: rows then columns */

enum class Method : uint8_t {
#define KCCL_COLL_X(m) m,
    KCCL_COLL_METHODS(KCCL_COLL_X)
#undef KCCL_COLL_X
};
inline constexpr uint32_t kMethodCount = 0
#define KCCL_COLL_X(m) +1
    KCCL_COLL_METHODS(KCCL_COLL_X)
#undef KCCL_COLL_X
    ;

constexpr const char* method_name(Method m) {
    switch (m) {
#define KCCL_COLL_X(x) \
    case Method::x: return #x;
        KCCL_COLL_METHODS(KCCL_COLL_X)
#undef KCCL_COLL_X
    }
    return "?";
}

inline constexpr uint32_t kMaxLanes = 2;

struct Shape {
    Op op = Op::all_reduce;
    Topology topo = Topology::ring;
    Method method = Method::ring_cw;
    uint32_t ranks = 1;       // p
    uint32_t rows = 0;        // mesh / torus only: rows * cols == ranks
    uint32_t cols = 0;
    uint32_t root = 0;        // broadcast, reduce, gather, scatter, reduce+broadcast; send_recv: sender
    uint32_t peer = 0;        // send_recv: receiver
    uint32_t chunks = 1;      // s: chunks per fragment (see grid())
    uint32_t window = 1;      // ring all_gather / reduce_scatter / all_reduce: chunks in flight per
                              // lane (wavefront order, algorithms/arms.hpp); 1 = chunk-major. Needs
                              // window + 1 message slots per channel (window_slots()); 0 acts as 1
    const uint32_t* tree = nullptr;  // Method::tree: parent[r] for r < p, parent[root] == root
    const uint32_t* bcast_tree = nullptr;  // all_reduce Method::tree: the broadcast's parent array
                                           // (rooted at root too); nullptr: `tree` both ways
    const uint8_t* tree_store = nullptr;   // reduce Method::tree: tree_store[r] != 0 makes rank r
                                           // combine all its children before sending the result on
                                           // (no relay of its last child: the Cerebras thesis's 2D
                                           // reduce finishes a column, then reduces the row);
                                           // nullptr: every inner rank relays its last child
    const uint32_t* tree_children = nullptr;        // optional index of `tree`'s children
    const uint32_t* bcast_tree_children = nullptr;  // ... and of `bcast_tree`'s (tree_children_index:
                                                    // 2p + 1 words); nullptr: a rank finds its children
                                                    // by scanning the parent array (O(p) per rank), which
                                                    // is fine on a device and quadratic for a host that
                                                    // generates every rank's steps of a large tree
};

/// Chunk grid of each buffer. s = shape.chunks; fragment f of a per-rank-fragment tensor is chunks
/// [f*s, f*s + s).
///   all_gather      in s         out p*s   out[f*s+j] = in_f[j] on every rank
///   reduce_scatter  in p*s       out s     out_r[j] = op over q of in_q[r*s+j]
///   all_reduce      in p*s       out p*s   out[c] = op over q of in_q[c] on every rank
///   broadcast       in s         out s     out[j] = in_root[j] on every rank (root: copy)
///   reduce          in s         out s     out_root[j] = op over q of in_q[j] (root only)
///   gather          in s         out p*s   out_root[f*s+j] = in_f[j] (root only)
///   scatter         in p*s       out s     out_r[j] = in_root[r*s+j]
///   all_to_all      in p*s       out p*s   out_r[f*s+j] = in_f[r*s+j]
///   send_recv       in s         out s     out_peer[j] = in_root[j] (only the peer writes)
///   barrier         in 1         out 1     out[0] = op over q of in_q[0] on every rank (a token)
/// Scratch: algorithm-specific, scratch_chunks() below.
constexpr uint32_t tensor_chunks(const Shape& sh) {
    switch (sh.op) {
        case Op::reduce_scatter:
        case Op::all_reduce:
        case Op::all_to_all: return sh.ranks * sh.chunks;
        case Op::barrier: return 1;
        default: return sh.chunks;
    }
}
/// grid() in 64 bits: exact for every shape (ranks x chunks may exceed 2^32 - 1).
constexpr uint64_t grid_wide(const Shape& sh, Buf b) {
    const uint64_t p = sh.ranks, s = sh.chunks;
    const bool in = b == Buf::input;
    switch (sh.op) {
        case Op::all_gather: return in ? s : p * s;
        case Op::reduce_scatter: return in ? p * s : s;
        case Op::all_reduce: return p * s;
        case Op::broadcast:
        case Op::reduce:
        case Op::send_recv: return s;
        case Op::gather: return in ? s : p * s;
        case Op::scatter: return in ? p * s : s;
        case Op::all_to_all: return p * s;
        case Op::barrier: return 1;
    }
    return 0;
}
/// Chunks of buffer b. Saturates at 2^32 - 1 instead of wrapping; validate() rejects a shape whose
/// grid (or scratch) does not fit 32 bits, so a validated shape never saturates.
constexpr uint32_t grid(const Shape& sh, Buf b) {
    const uint64_t g = grid_wide(sh, b);
    return g > 0xFFFFFFFFu ? 0xFFFFFFFFu : uint32_t(g);
}

/// Scratch chunks an algorithm may use (an upper bound every algorithm stays inside; the checker
/// rejects a step outside it). n = tensor_chunks: relays and tree nodes use < 2n; all_to_all
/// relays keep 2 bundles per direction (4n); broadcast_local_reduce keeps every rank's input (p*n).
/// scratch_chunks_wide is exact in 64 bits; scratch_chunks saturates at 2^32 - 1 (as grid()).
constexpr uint64_t scratch_chunks_wide(const Shape& sh) {
    const uint64_t n = sh.op == Op::barrier ? 1 : uint64_t(sh.ranks) * sh.chunks;
    if (sh.method == Method::broadcast_local_reduce) return uint64_t(sh.ranks) * n;  // < 2^64: ranks^2 * chunks
    return sh.op == Op::all_to_all ? 4 * n : 2 * n;
}
constexpr uint32_t scratch_chunks(const Shape& sh) {
    const uint64_t g = scratch_chunks_wide(sh);
    return g > 0xFFFFFFFFu ? 0xFFFFFFFFu : uint32_t(g);
}

/// Message slots per (sender, receiver, lane) channel the shape's schedule needs to finish (the
/// checker verifies it): window + 1 (a ring's chunks in flight plus one "bubble"); methods that
/// ignore the window need at most 2.
/// Saturates at 2^32 - 1 (a window of 2^32 - 1 would otherwise wrap to 0 slots).
constexpr uint32_t window_slots(const Shape& sh) {
    return sh.window <= 1 ? 2 : sh.window == 0xFFFFFFFFu ? 0xFFFFFFFFu : sh.window + 1;
}

/// Does the shape's algorithm honour Shape::window (a wavefront of window chunks in flight)? The
/// ring / line all_gather, reduce_scatter and all_reduce do (window 0 and 1: chunk-major); every
/// other algorithm ignores it.
constexpr bool uses_window(const Shape& sh) {
    const bool op = sh.op == Op::all_gather || sh.op == Op::reduce_scatter || sh.op == Op::all_reduce;
    const bool m = sh.method == Method::ring_cw || sh.method == Method::ring_ccw || sh.method == Method::ring_bidir ||
                   sh.method == Method::ring_meet_middle || sh.method == Method::line;
    return op && m;
}

/// An upper bound of the chunks a windowed schedule keeps in flight per lane: the window (0 acts
/// as 1), clamped as the wavefront clamps it at a chunk's rounds, which are at most 2 * ranks.
constexpr uint32_t window_in_flight(const Shape& sh) {
    const uint32_t w = sh.window == 0 ? 1 : sh.window;
    const uint64_t cap = 2ull * (sh.ranks ? sh.ranks : 1);
    return w < cap ? w : uint32_t(cap);
}

/// Message slots per channel an executor needs for the shape when a chunk travels as `pieces`
/// messages (executor.hpp checks it at the first send on each direction): for the windowed
/// methods window_in_flight x pieces + 1 (the symbolic checker shows it suffices for every one of
/// them, in every lane model, and is tight for some rings; it is an upper bound, a ring of few
/// ranks needs less), but 1 for a line's chunk-major schedule of one-message chunks. Every other
/// algorithm: 1, i.e. not checked at run time (the sweep checks them all with kSlotsNeeded = 2
/// slots of one-message chunks, slicer.hpp; chains and trees run with 1).
constexpr uint64_t slots_needed(const Shape& sh, uint32_t pieces) {
    if (!uses_window(sh)) return 1;
    const uint32_t w = window_in_flight(sh);
    const bool ring = sh.topo == Topology::ring && sh.method != Method::line;
    if (!ring && w == 1 && pieces <= 1) return 1;
    return uint64_t(w) * (pieces ? pieces : 1) + 1;
}

/// May an executor merge a rank's lanes step by step on one worker (executor.hpp)? Only where
/// every rank's lanes are the same streams up to rotation, so that step i of every rank happens
/// at about the same time: ring_bidir and ring_meet_middle on a ring. A line's arms are not (its
/// end ranks have one-sided lanes, and merging by step index deadlocks them; the checker shows
/// it), so line lanes run in turn (or piece by piece with execute_any_interleaved).
constexpr bool lanes_mergeable(const Shape& sh) {
    return sh.topo == Topology::ring && (sh.method == Method::ring_bidir || sh.method == Method::ring_meet_middle);
}

/// Is q a topology neighbour of r (a rank this rank can send to without routing)?
constexpr bool linked(const Shape& sh, uint32_t r, uint32_t q) {
    const uint32_t p = sh.ranks;
    if (r >= p || q >= p || r == q) return false;
    switch (sh.topo) {
        case Topology::ring: return q == (r + 1) % p || r == (q + 1) % p;
        case Topology::line: return q == r + 1 || r == q + 1;
        case Topology::mesh:
        case Topology::torus: {
            const uint32_t c = sh.cols, rw = sh.rows;
            if (c == 0 || rw == 0 || c * rw != p) return false;
            const uint32_t ry = r / c, rx = r % c, qy = q / c, qx = q % c;
            const bool wrap = sh.topo == Topology::torus;
            if (ry == qy) return qx == rx + 1 || rx == qx + 1 || (wrap && (qx == (rx + 1) % c || rx == (qx + 1) % c));
            if (rx == qx) return qy == ry + 1 || ry == qy + 1 || (wrap && (qy == (ry + 1) % rw || ry == (qy + 1) % rw));
            return false;
        }
    }
    return false;
}

/// Hops of the shortest route from r to q on the topology (ring: the shorter way round; mesh:
/// |dx| + |dy|; torus: each dimension the shorter way): the latency of a message between them in
/// message times, 1 between neighbours (the checker's logical time, host/checker.hpp).
constexpr uint32_t hops(const Shape& sh, uint32_t r, uint32_t q) {
    const uint32_t p = sh.ranks;
    if (r >= p || q >= p || r == q) return r == q ? 0 : 1;
    auto ring_dist = [](uint32_t a, uint32_t b, uint32_t n) {
        const uint32_t d = a > b ? a - b : b - a;
        return d < n - d ? d : n - d;
    };
    auto line_dist = [](uint32_t a, uint32_t b) { return a > b ? a - b : b - a; };
    switch (sh.topo) {
        case Topology::ring: return ring_dist(r, q, p);
        case Topology::line: return line_dist(r, q);
        case Topology::mesh:
        case Topology::torus: {
            const uint32_t c = sh.cols;
            if (c == 0 || sh.rows == 0 || c * sh.rows != p) return 1;
            const uint32_t ry = r / c, rx = r % c, qy = q / c, qx = q % c;
            if (sh.topo == Topology::mesh) return line_dist(rx, qx) + line_dist(ry, qy);
            return ring_dist(rx, qx, c) + ring_dist(ry, qy, sh.rows);
        }
    }
    return 1;
}

// ---- resuming a lane's step stream -----------------------------------------------------------
// An executor that reads a lane a few steps at a time (merged or interleaved lanes, executor.hpp)
// must not re-run the generator from the start for every few steps: that is quadratic in the
// lane's length. So a generator's position is named by a StepCursor (phase, sigma, item, sub):
//   phase  the generator's big loops (wavefront() and item_phase() in algorithms/arms.hpp) each
//          open a phase, numbered 1, 2, ... in the order the generator runs them; 0 is "before
//          the first";
//   sigma, item  inside a phase, the loop's position (wavefront: time sigma and chunk; a plain
//          loop: sigma 0 and the index), set by StepResume::mark before each item;
//   sub    the steps emitted since the last mark.
// Positions grow strictly along a lane's stream, so "skip every step before cursor c" is exact.
// A generator run with a StepResume (reached through the emitter's `step_resume` member, resume_of())
// skips whole phases before c and starts its loops at c's sigma and item, keeps up to `cap`
// steps, and stops its loops as soon as it has them, so one refill costs O(cap) steps plus the
// generator's set-up, whatever the position. A generator without phases stays correct (every
// step is at phase 0 and is skipped by counting) but re-runs its prefix; the algorithms whose
// lanes are merged or interleaved (ring / line all_gather, reduce_scatter, all_reduce) use phases.

struct StepCursor {
    uint32_t phase = 0, sigma = 0, item = 0, sub = 0;
};
constexpr bool cursor_less(const StepCursor& a, const StepCursor& b) {
    if (a.phase != b.phase) return a.phase < b.phase;
    if (a.sigma != b.sigma) return a.sigma < b.sigma;
    if (a.item != b.item) return a.item < b.item;
    return a.sub < b.sub;
}

/// One run of a generator from cursor `from`: keeps the steps at and after `from`, up to `cap` of
/// them, in `out`; `full` once a step did not fit, `stop` then names that step (the next run's
/// `from`). Device code, no heap: the caller owns `out`.
struct StepResume {
    StepCursor from{};   ///< first position to keep
    StepCursor at{};     ///< the generator's current position
    StepCursor stop{};   ///< when full: the position of the first step not kept
    Step* out = nullptr;
    uint32_t cap = 0, n = 0;
    bool full = false;

    /// A generator loop opens a phase; true if it must run (false: it is before `from`, or full).
    bool enter_phase() {
        ++at.phase;
        at.sigma = at.item = at.sub = 0;
        return !full && at.phase >= from.phase;
    }
    /// The loop's first (sigma, item) in the phase just entered (from's, if resuming inside it).
    bool resumes_here() const { return at.phase == from.phase; }
    void mark(uint32_t sigma, uint32_t item) {
        at.sigma = sigma;
        at.item = item;
        at.sub = 0;
    }
    void take(const Step& s) {
        const StepCursor p = at;
        ++at.sub;
        if (full || cursor_less(p, from)) return;
        if (n == cap) {
            full = true;
            stop = p;
            return;
        }
        out[n++] = s;
    }
};

namespace detail {
template <class E, class = void>
struct has_resume : std::false_type {};
template <class E>
struct has_resume<E, std::void_t<decltype(std::declval<E&>().step_resume)>> : std::true_type {};
}  // namespace detail

/// The StepResume an emitter carries (StepSink's `step_resume`; a member of that name is how a
/// generator recognises a resumable emitter), or nullptr (plain callbacks: the
/// checker, pictures, tests — they see every step).
template <class E>
StepResume* resume_of(E& e) {
    if constexpr (detail::has_resume<E>::value) return e.step_resume;
    else return nullptr;
}

/// Base of every algorithm: random access to a generator's steps. Derived supplies lanes() and
/// generate(shape, rank, lane, emit) where emit(const Step&) is called once per step, in order.
template <class Derived>
struct AlgorithmBase {
    template <class F>
    static void for_each(const Shape& sh, uint32_t rank, uint32_t lane, F&& f) {
        Derived::generate(sh, rank, lane, f);
    }
    static uint32_t steps(const Shape& sh, uint32_t rank, uint32_t lane) {
        uint32_t n = 0;
        auto count = [&n](const Step&) { ++n; };
        Derived::generate(sh, rank, lane, count);
        return n;
    }
    static Step step(const Shape& sh, uint32_t rank, uint32_t lane, uint32_t i) {
        Step out{Verb::copy, kNoPeer, kNoPeer, {Buf::input, 0}, {Buf::output, 0}, 0};
        uint32_t n = 0;
        auto pick = [&](const Step& s) {
            if (n++ == i) out = s;
        };
        Derived::generate(sh, rank, lane, pick);
        return out;  // count == 0 if i >= steps()
    }
};

// ---- step constructors (used by the generators) ----
namespace mk {
constexpr ChunkRef in(uint32_t c) { return {Buf::input, c}; }
constexpr ChunkRef out(uint32_t c) { return {Buf::output, c}; }
constexpr ChunkRef scr(uint32_t c) { return {Buf::scratch, c}; }
constexpr ChunkRef none() { return {Buf::input, 0}; }
constexpr Step send(uint32_t to, ChunkRef src, uint32_t n = 1) { return {Verb::send, kNoPeer, to, src, none(), n}; }
constexpr Step recv(uint32_t from, ChunkRef dst, uint32_t n = 1) { return {Verb::recv, from, kNoPeer, none(), dst, n}; }
constexpr Step recv_reduce_send(uint32_t from, uint32_t to, ChunkRef src, uint32_t n = 1) {
    return {Verb::recv_reduce_send, from, to, src, none(), n};
}
constexpr Step recv_reduce_copy(uint32_t from, ChunkRef src, ChunkRef dst, uint32_t n = 1) {
    return {Verb::recv_reduce_copy, from, kNoPeer, src, dst, n};
}
constexpr Step recv_copy_send(uint32_t from, uint32_t to, ChunkRef dst, uint32_t n = 1) {
    return {Verb::recv_copy_send, from, to, dst, dst, n};
}
constexpr Step recv_reduce_copy_send(uint32_t from, uint32_t to, ChunkRef src, ChunkRef dst, uint32_t n = 1) {
    return {Verb::recv_reduce_copy_send, from, to, src, dst, n};
}
/// Multicasts to the sender's children in the shape's broadcast tree (Cast::children).
constexpr Step send_children(ChunkRef src, uint32_t n = 1) {
    return {Verb::send, kNoPeer, kNoPeer, src, none(), n, Cast::children};
}
constexpr Step recv_copy_send_children(uint32_t from, ChunkRef dst, uint32_t n = 1) {
    return {Verb::recv_copy_send, from, kNoPeer, dst, dst, n, Cast::children};
}
constexpr Step copy(ChunkRef src, ChunkRef dst, uint32_t n = 1) { return {Verb::copy, kNoPeer, kNoPeer, src, dst, n}; }
constexpr Step reduce_local(ChunkRef src, ChunkRef dst, uint32_t n = 1) {
    return {Verb::reduce_local, kNoPeer, kNoPeer, src, dst, n};
}
}  // namespace mk

// ---- parent arrays for Method::tree (the reduce patterns of the Cerebras thesis, "Communication
// Collectives for the Cerebras Wafer-Scale Engine", ETH Zurich, 2023; caller owns the array) ----
// Ranks are positions 0..n-1 of a row (or of the rank order); the root is parent of itself.
// Each returns false if the arguments are out of range.

/// Chain: i -> i-1, root 0 (the Cerebras thesis's "chain": the vector flows towards PE 0).
constexpr bool tree_chain(uint32_t* parent, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) parent[i] = i == 0 ? 0 : i - 1;
    return true;
}
/// The children of every rank of a parent array (Shape::tree_children): out[0..n] are offsets,
/// out[n + 1 + out[m] .. n + 1 + out[m + 1]) rank m's children in ascending rank order. `out` holds
/// 2n + 1 words; the root (its own parent) is nobody's child.
constexpr bool tree_children_index(const uint32_t* parent, uint32_t n, uint32_t* out) {
    for (uint32_t m = 0; m <= n; ++m) out[m] = 0;
    for (uint32_t c = 0; c < n; ++c)
        if (parent[c] != c) {
            if (parent[c] >= n) return false;
            ++out[parent[c] + 1];
        }
    for (uint32_t m = 0; m < n; ++m) out[m + 1] += out[m];
    uint32_t* list = out + n + 1;
    // fill in ascending child order, using out[m] as rank m's cursor, then shift the offsets back
    for (uint32_t c = 0; c < n; ++c)
        if (parent[c] != c) list[out[parent[c]]++] = c;
    for (uint32_t m = n; m > 0; --m) out[m] = out[m - 1];
    out[0] = 0;
    return true;
}
/// Binomial tree rooted at 0: parent(i) = i with its lowest set bit cleared.
constexpr bool tree_binomial(uint32_t* parent, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) parent[i] = i & (i - 1);
    return true;
}
/// Two-phase (Cerebras thesis, Fig. 5.4): chains inside groups of S consecutive PEs assigned from the END
/// (n-1 backwards), each group's head then chains towards 0.
constexpr bool tree_two_phase(uint32_t* parent, uint32_t n, uint32_t S) {
    if (S == 0) return false;
    // group boundaries from the end: groups [n-S, n), [n-2S, n-S), ..., first group [0, rem)
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t from_end = n - 1 - i;       // 0 for the last PE
        const uint32_t g_end = n - 1 - (from_end / S) * S;  // last PE of i's group
        const uint32_t g_len = g_end + 1 >= S ? S : g_end + 1;
        const uint32_t head = g_end + 1 - g_len;   // first PE of the group
        if (i != head) parent[i] = i - 1;          // chain inside the group towards its head
        else parent[i] = 0;                        // heads: chained below
    }
    // heads chain towards 0: each head's parent is the previous group's head
    for (uint32_t i = 1; i < n; ++i) {
        const uint32_t from_end = n - 1 - i;
        const uint32_t g_end = n - 1 - (from_end / S) * S;
        const uint32_t g_len = g_end + 1 >= S ? S : g_end + 1;
        const uint32_t head = g_end + 1 - g_len;
        if (i == head) {
            const uint32_t prev_end = head - 1;
            const uint32_t prev_len = prev_end + 1 >= S ? S : prev_end + 1;
            parent[i] = prev_end + 1 - prev_len;
        }
    }
    parent[0] = 0;
    return true;
}
/// Star (the Cerebras thesis's "scalar" reduce, section 5.1, and a one-multicast broadcast): every
/// rank's parent is `root`.
constexpr bool tree_star(uint32_t* parent, uint32_t n, uint32_t root = 0) {
    if (root >= n) return false;
    for (uint32_t i = 0; i < n; ++i) parent[i] = root;
    return true;
}
/// The thesis's optimal pre-order reduce (Lemma 5.9) for vectors of B elements and router latency
/// t_r, its dynamic programme: T(1) = 0; the root of m nodes takes as its last child node i
/// minimising max(T(i) + B, T(m-i) + i + 2 t_r + 1) (i < m-1), or max(T(m-1) + B, B + m + 2 t_r)
/// (i = m-1), the smallest such i = split[m]. Fills T[0..n] and split[0..n] (T(m): the cycles of
/// the best tree of m nodes; the wafer cost model reads them as T_OPT).
template <class TT, class ST>
constexpr void optimal_splits(TT* T, ST* split, uint32_t n, uint64_t B, uint64_t t_r) {
    T[0] = T[1] = 0;
    split[0] = split[1] = 0;
    for (uint32_t m = 2; m <= n; ++m) {
        uint64_t best = ~uint64_t(0);
        for (uint32_t i = 1; i < m; ++i) {
            const uint64_t a = i == m - 1 ? T[m - 1] + B : T[i] + B;
            const uint64_t b = i == m - 1 ? B + m + 2 * t_r : T[m - i] + i + 2 * t_r + 1;
            const uint64_t c = a > b ? a : b;
            if (c < best) best = c, split[m] = ST(i);
        }
        T[m] = TT(best);
    }
}
/// The optimal tree of n nodes from its splits: nodes [0, i) form the root's earlier subtree,
/// [i, n) the last child's (i = split[n]), recursively. `stack` holds n + 1 entries. Children
/// ascend = closest first.
template <class ST>
constexpr void tree_from_splits(uint32_t* parent, uint32_t n, const ST* split, uint64_t* stack) {
    // group [off, off+m) reduces to off: [off, off+i) to off, [off+i, off+m) to off+i (off's last child)
    parent[0] = 0;
    uint32_t top = 0;
    stack[top++] = uint64_t(n);
    while (top > 0) {
        const uint64_t g = stack[--top];
        const uint32_t off = uint32_t(g >> 32), m = uint32_t(g);
        if (m < 2) continue;
        const uint32_t i = uint32_t(split[m]);
        parent[off + i] = off;
        stack[top++] = uint64_t(off) << 32 | i;
        stack[top++] = uint64_t(off + i) << 32 | (m - i);
    }
}
/// The optimal pre-order tree (optimal_splits, tree_from_splits). `work` holds 2 (n + 1) entries
/// (the caller owns it).
constexpr bool tree_optimal(uint32_t* parent, uint32_t n, uint64_t B, uint64_t t_r, uint64_t* work) {
    if (n == 0) return false;
    optimal_splits(work, work + n + 1, n, B, t_r);
    tree_from_splits(parent, n, work + n + 1, work);  // T is no longer needed: it becomes the stack
    return true;
}
/// Two trees joined (the thesis's left-right and jump reduces, sections 6.1 and 6.3): `first` over
/// ranks [0, a) rooted at 0, `second` over ranks [a, a+b) (its entries relative to a, rooted at its
/// 0); the second's root becomes rank 0's LAST child. Pre-order stays pre-order.
constexpr bool tree_join(uint32_t* parent, uint32_t a, const uint32_t* first, uint32_t b, const uint32_t* second) {
    if (a == 0 || b == 0) return false;
    for (uint32_t i = 0; i < a; ++i) parent[i] = first[i];
    for (uint32_t i = 0; i < b; ++i) parent[a + i] = i == 0 ? 0 : a + second[i];
    return true;
}
/// 2D mesh rows x cols (rank = y*cols + x): every row reduces with `row` (a parent array over
/// cols positions, root position 0) into its column-0 PE, then column 0 reduces with `col` (over
/// rows positions, root 0). The result's root is rank 0. Edges may be multi-hop (tree edges of a
/// row tree skip PEs: on the wafer the wavelets pass through routers).
constexpr bool tree_rows_then_cols(uint32_t* parent, uint32_t rows, uint32_t cols, const uint32_t* row,
                                   const uint32_t* col) {
    for (uint32_t y = 0; y < rows; ++y)
        for (uint32_t x = 0; x < cols; ++x)
            parent[y * cols + x] = x != 0 ? y * cols + row[x] : col[y] * cols;
    return true;
}

}  // namespace kccl::coll

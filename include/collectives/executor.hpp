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
//   * Lanes (execute / execute_any): when a rank's lanes send on pairwise different link
//     directions and receive on pairwise different ones and the method allows it
//     (lanes_mergeable: a bidirectional ring pair, meet in the middle, on 3 or more ranks), they run MERGED
//     (in proportion to the lanes' lengths; equal lanes alternate step by step), so
//     both link directions carry data at once (the checker's merged_lanes model, verified for
//     every schedule). Otherwise (two lanes share a direction: a 2-rank ring) they run one after
//     the other, lane 0 first: every rank finishes its lane-0 messages before its lane-1
//     messages, so the per-direction FIFO order matches on both ends (serial_lanes).
//     execute_any_interleaved interleaves them piece by piece with non-blocking calls instead.
//   * `dir_of(peer, sending)` maps a peer rank to the link direction that sends to / receives from
//     it (RingDirs for the plan's ring / line groups); no_dir for a peer the schedule names is a
//     device error naming rank and peer. Multi-hop methods (trees, recursive doubling,
//     Rabenseifner, pairwise, direct) need a link that reaches non-neighbours: the ring / line /
//     mesh group plans do not, so they fail with that error there; the all_pairs group plan
//     (GroupShape::all_pairs, map AllPairsDirs) reaches every rank in one hop and runs them all.
//     CommGroupDirs runs one communication group (groups.hpp) of such a link's ranks.
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
#include "groups.hpp"

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
        case Op::scatter: return ranks ? count / ranks + (count % ranks != 0) : 0;  // ceil, without wrapping
        case Op::barrier: return 1;
        default: return count;
    }
}

struct Chunking {
    uint32_t chunks;       ///< s: chunks per fragment (Shape::chunks)
    uint32_t chunk_elems;  ///< elements per chunk
};

/// Splits a fragment into the fewest chunks of at most max_chunk_elems elements (at least one
/// chunk; 0 elements -> one empty chunk), then evens the chunks out. No step wraps, whatever the
/// count (ceilings are q + (r != 0)); whether the resulting buffers fit L1's 32-bit addresses is
/// check_exec_params' question.
constexpr Chunking choose_chunking(Op op, uint32_t ranks, uint32_t count, uint32_t max_chunk_elems,
                                   uint32_t min_chunks = 1) {
    const uint32_t f = fragment_elems(op, ranks, count);
    const uint32_t m = max_chunk_elems ? max_chunk_elems : 1;
    uint32_t s = f / m + (f % m != 0);
    if (s < min_chunks) s = min_chunks;
    if (s == 0) s = 1;
    return {s, f / s + (f % s != 0)};
}

// ---- parameter checks ----------------------------------------------------------------------
// Every execute* checks its ExecParams first and reports a bad one through the device error path
// (kccl::detail::assert_fail; the emulation fails the core with the message), naming the rank and
// the value; the host checks the same before launch (host::check_exec_params throws PlanError).
// Rejected: rank, root or send_recv peer out of range; no ranks; no chunks; chunk_elems 0 while
// the tensor has elements; a chunk grid beyond 2^32 - 1 chunks; a buffer that ends beyond the
// 32-bit L1 address space (chunks x chunk_elems x element bytes, computed in 64 bits, so none of
// the executor's 32-bit address arithmetic can wrap); two of input, output, scratch and the
// prepared input that overlap, except output == input for the (op, method) pairs in_place_safe
// names, and the prepared input equal to the input (which it then overwrites). Buffers of 0 bytes
// overlap nothing.

enum class ParamError : uint32_t {
    ok = 0,
    no_ranks,          ///< shape.ranks == 0
    rank_range,        ///< rank >= ranks
    root_range,        ///< shape.root >= ranks
    peer_range,        ///< send_recv: shape.peer >= ranks
    no_chunks,         ///< shape.chunks == 0 (not a barrier)
    zero_chunk_elems,  ///< chunk_elems == 0 with elements to move
    grid_overflow,     ///< a buffer's chunk grid exceeds 2^32 - 1 chunks
    buffer_overflow,   ///< a buffer ends beyond the 32-bit L1 address space
    overlap,           ///< two buffers overlap
};

/// The buffers of ExecParams, for ParamCheck.
enum class ParamBuf : uint32_t { input = 0, output = 1, scratch = 2, prepared = 3 };
constexpr const char* param_buf_name(ParamBuf b) {
    return b == ParamBuf::input ? "input" : b == ParamBuf::output ? "output" : b == ParamBuf::scratch ? "scratch"
                                                                                                      : "prepared input";
}

/// What check_exec_params found: the error, the offending value and, for buffers, which ones.
struct ParamCheck {
    ParamError error = ParamError::ok;
    uint64_t value = 0;              ///< the bad value (rank, root, peer, count, chunks, end address)
    ParamBuf a = ParamBuf::input;    ///< the buffer concerned (grid / buffer overflow, overlap)
    ParamBuf b = ParamBuf::input;    ///< overlap: the other buffer
    bool ok() const { return error == ParamError::ok; }
};

/// Chunks of each buffer of p's shape (64 bits: exact), the prepared input's as the input's.
constexpr uint64_t param_buf_chunks(const ExecParams& p, ParamBuf b) {
    return b == ParamBuf::output ? grid_wide(p.shape, Buf::output)
         : b == ParamBuf::scratch ? scratch_chunks_wide(p.shape) : grid_wide(p.shape, Buf::input);
}
constexpr uint32_t param_buf_base(const ExecParams& p, ParamBuf b) {
    return b == ParamBuf::input ? p.buf.input : b == ParamBuf::output ? p.buf.output
         : b == ParamBuf::scratch ? p.buf.scratch : p.buf.prepared;
}

/// Whether (op, method) may run in place, with the output at the input's address (docs/host-api.md,
/// "In place"; each pair tested both ways in tests/collectives/host_api_test.cpp). Anything else
/// with input == output is rejected as an overlap.
constexpr bool in_place_safe(Op op, Method m) {
    using M = Method;
    const bool ring = m == M::ring_cw || m == M::ring_ccw;
    switch (op) {
        case Op::all_reduce: return m != M::broadcast_local_reduce;
        case Op::all_gather: return ring || m == M::ring_bidir;
        case Op::reduce_scatter: return ring || m == M::ring_bidir || m == M::ring_meet_middle;
        case Op::broadcast:
        case Op::reduce:
        case Op::gather:
        case Op::send_recv: return true;
        default: return false;
    }
}

/// Checks one rank's executor parameters for elements of `elem_bytes` bytes; `uses_prepared`:
/// the reducer prepares its input (Red::has_prepare) and the op reduces, so buf.prepared is
/// written. Returns the first problem found (ParamCheck::ok() if none).
constexpr ParamCheck check_exec_params(const ExecParams& p, uint32_t elem_bytes, bool uses_prepared) {
    const Shape& sh = p.shape;
    ParamCheck c;
    auto fail = [&c](ParamError e, uint64_t v, ParamBuf a = ParamBuf::input, ParamBuf b = ParamBuf::input) {
        c.error = e;
        c.value = v;
        c.a = a;
        c.b = b;
        return c;
    };
    if (sh.ranks == 0) return fail(ParamError::no_ranks, 0);
    if (p.rank >= sh.ranks) return fail(ParamError::rank_range, p.rank);
    if (sh.root >= sh.ranks) return fail(ParamError::root_range, sh.root);
    if (sh.op == Op::send_recv && sh.peer >= sh.ranks) return fail(ParamError::peer_range, sh.peer);
    if (sh.chunks == 0 && sh.op != Op::barrier) return fail(ParamError::no_chunks, 0);
    if (p.chunk_elems == 0 && fragment_elems(sh.op, sh.ranks, p.count) != 0)
        return fail(ParamError::zero_chunk_elems, p.count);
    const bool prep = uses_prepared && p.buf.prepared != p.buf.input;
    const ParamBuf all[4] = {ParamBuf::input, ParamBuf::output, ParamBuf::scratch, ParamBuf::prepared};
    uint64_t end[4] = {};
    for (uint32_t i = 0; i < (prep ? 4u : 3u); ++i) {
        const uint64_t chunks = param_buf_chunks(p, all[i]);
        if (chunks > 0xFFFFFFFFu) return fail(ParamError::grid_overflow, chunks, all[i]);
        const uint64_t elems = chunks * p.chunk_elems;  // both < 2^32: no 64-bit wrap
        const uint64_t limit = (uint64_t(1) << 32) - param_buf_base(p, all[i]);
        // No 64-bit division (32-bit RISC-V cores have no instruction for it): elements beyond
        // the limit overflow whatever their size; below it, elems x elem_bytes < 2^64.
        if (elems > limit || elems * elem_bytes > limit) return fail(ParamError::buffer_overflow, elems, all[i]);
        end[i] = param_buf_base(p, all[i]) + elems * elem_bytes;
    }
    for (uint32_t i = 0; i < (prep ? 4u : 3u); ++i)
        for (uint32_t j = i + 1; j < (prep ? 4u : 3u); ++j) {
            const uint64_t bi = param_buf_base(p, all[i]), bj = param_buf_base(p, all[j]);
            if (end[i] == bi || end[j] == bj) continue;  // an empty buffer overlaps nothing
            const bool in_place = all[i] == ParamBuf::input && all[j] == ParamBuf::output && bi == bj &&
                                  in_place_safe(sh.op, sh.method);
            if (bi < end[j] && bj < end[i] && !in_place) return fail(ParamError::overlap, 0, all[i], all[j]);
        }
    return c;
}

namespace detail {
/// Appends v in decimal (Msg::u takes 32 bits). Digits by subtracting powers of ten: a 64-bit
/// division would call a runtime helper that 32-bit RISC-V kernels do not link.
inline Msg& u64(Msg& m, uint64_t v) {
    if (v <= 0xFFFFFFFFu) return m.u(uint32_t(v));
    uint64_t pw[20];
    uint32_t n = 0;
    for (uint64_t q = 1;; q *= 10) {  // the powers of ten <= v (10^19 is the last below 2^64)
        if (q > v) break;
        pw[n++] = q;
        if (n == 20) break;
    }
    while (n--) {
        uint32_t digit = 0;
        while (v >= pw[n]) {
            v -= pw[n];
            ++digit;
        }
        m.u(digit);
    }
    return m;
}
/// "the output buffer [0x10000, +4096 bytes)" (bytes in 64 bits: they may exceed L1).
inline Msg& buffer_range(Msg& m, const ExecParams& p, ParamBuf b, uint32_t elem_bytes) {
    m.s("the ").s(param_buf_name(b)).s(" buffer [").hex(param_buf_base(p, b)).s(", +");
    const uint64_t elems = param_buf_chunks(p, b) * p.chunk_elems;  // chunks < 2^32 here
    if (elems >> 56 || elem_bytes >> 8) return m.s("2^56 or more bytes)");  // (no 64-bit division)
    return u64(m, elems * elem_bytes).s(" bytes)");
}
}  // namespace detail

/// Describes a failed check in one sentence naming the rank, the value and what is allowed.
inline void describe_param_error(detail::Msg& m, const ExecParams& p, const ParamCheck& c, uint32_t elem_bytes) {
    const Shape& sh = p.shape;
    m.s("collectives: executor: rank ").u(p.rank).s(" (").s(op_name(sh.op)).s(" ").s(method_name(sh.method)).s("): ");
    switch (c.error) {
        case ParamError::ok: m.s("parameters are valid"); break;
        case ParamError::no_ranks: m.s("shape.ranks is 0 (allowed: at least 1)"); break;
        case ParamError::rank_range:
            m.s("rank ").u(p.rank).s(" is out of range (allowed: rank < ranks = ").u(sh.ranks).s(")");
            break;
        case ParamError::root_range:
            m.s("root ").u(sh.root).s(" is out of range (allowed: root < ranks = ").u(sh.ranks).s(")");
            break;
        case ParamError::peer_range:
            m.s("send_recv peer ").u(sh.peer).s(" is out of range (allowed: peer < ranks = ").u(sh.ranks).s(")");
            break;
        case ParamError::no_chunks: m.s("shape.chunks is 0 (allowed: at least 1 chunk per fragment)"); break;
        case ParamError::zero_chunk_elems:
            m.s("chunk_elems is 0 but the tensor has ").u(p.count)
                .s(" elements to move (allowed: chunk_elems >= 1; choose_chunking picks it)");
            break;
        case ParamError::grid_overflow:
            m.s("the ").s(param_buf_name(c.a)).s(" buffer's chunk grid has ");
            detail::u64(m, c.value).s(" chunks (ranks ").u(sh.ranks).s(" x chunks ").u(sh.chunks)
                .s("; allowed: at most 2^32 - 1)");
            break;
        case ParamError::buffer_overflow:
            detail::buffer_range(m, p, c.a, elem_bytes).s(" (");
            detail::u64(m, param_buf_chunks(p, c.a)).s(" chunks x ").u(p.chunk_elems).s(" elements x ").u(elem_bytes)
                .s(" bytes) ends beyond the 32-bit L1 address space (allowed: base + bytes <= 2^32)");
            break;
        case ParamError::overlap:
            detail::buffer_range(m, p, c.a, elem_bytes).s(" and ");
            detail::buffer_range(m, p, c.b, elem_bytes)
                .s(" overlap (allowed: disjoint buffers; output == input where in_place_safe(op, method))");
            break;
    }
}

namespace detail {
/// The device side of check_exec_params: a bad parameter is a device error.
template <class Red>
void check_params_or_die(const ExecParams& p) {
    const ParamCheck c = check_exec_params(p, uint32_t(sizeof(typename Red::value_type)),
                                           Red::has_prepare && op_reduces(p.shape.op));
    if (KCCL_LIKELY(c.ok())) return;
    Msg m;
    describe_param_error(m, p, c, uint32_t(sizeof(typename Red::value_type)));
    die(m);
}
/// The shape's own check (the algorithm's validate()): a rejected shape is a device error.
inline void check_shape_or_die(const ExecParams& p, const char* err) {
    if (KCCL_LIKELY(!err)) return;
    Msg m;
    m.s("collectives: executor: rank ").u(p.rank).s(" (").s(op_name(p.shape.op)).s(" ").s(method_name(p.shape.method))
        .s("): the shape is not supported: ").s(err);
    die(m);
}
}  // namespace detail


/// Type-erased step callback: the algorithms' generators are instantiated once for it, whatever
/// the reducer and link (keeps a sweep over types x operators x methods compilable).
struct StepSink {
    void* ctx;
    void (*fn)(void*, const Step&);
    StepResume* step_resume = nullptr;  ///< set when reading a lane a few steps at a time (LaneStream)
    void operator()(const Step& s) const { fn(ctx, s); }
};

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

    /// Before the first step: open this collective's put window (links with puts: one epoch per
    /// collective on every rank, so the counts match), prepare this rank's contribution.
    void begin() {
        // Steps marked Step::put write into the receiver's output: it opens its window now, when
        // nothing of its previous collective is still read there (it returned from it).
        // An output that overlaps the input (in place) is not free at the start: no puts then.
        if constexpr (link_puts<Link>) {
            const uint64_t in_b = uint64_t(grid(p_.shape, Buf::input)) * p_.chunk_elems * eb;
            const uint64_t out_b = uint64_t(grid(p_.shape, Buf::output)) * p_.chunk_elems * eb;
            const uint64_t i0 = p_.buf.input, o0 = p_.buf.output;
            puts_on_ = !(in_b && out_b && i0 < o0 + out_b && o0 < i0 + in_b);
            link_.open_window(puts_on_ ? p_.buf.output : kNoWindow);
        }
        if constexpr (Red::has_prepare) {
            const uint32_t n = grid(p_.shape, Buf::input) * p_.chunk_elems;
            if (op_reduces(p_.shape.op) && n) {
                Red::prepare(ptr(p_.buf.prepared, n), ptr(p_.buf.input, n), n);
                kccl::hal::l1_store_fence(link_.hal(), p_.buf.prepared, n * eb);  // sent from later (N7)
                in_base_ = p_.buf.prepared;
            }
        }
    }

    void operator()(const Step& s) {
        if (KCCL_UNLIKELY(s.cast != Cast::unicast)) return multicast(s);
        const uint32_t n = s.count * p_.chunk_elems;
        const uint32_t from = verb_receives(s.verb) ? dir(s.recv_peer, false, s) : no_dir;
        const uint32_t to = verb_sends(s.verb) ? tx(s.send_peer, s) : no_dir;
        if constexpr (link_puts<Link>) {  // a chunk lands at its place on the receiver, in one put
            if (puts(s) && s.verb == Verb::send) return put<Red>(link_, to, addr(s.src), n, remote(to, addr(s.dst)));
            if (puts(s) && s.verb == Verb::recv_copy_send)
                return recv_copy_put<Red>(link_, from, to, addr(s.dst), n, remote(to, addr(s.dst)));
            if (puts(s) && s.verb == Verb::recv) return recv_put<Red>(link_, from, addr(s.dst), n);
        }
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
                    else {
                        memmove(ptr(d, n), ptr(sr, n), nb);
                        kccl::hal::l1_store_fence(link_.hal(), d, nb);  // may be sent from later (N7)
                    }
                }
                break;
            case Verb::reduce_local:
                if (n) {
                    // out = combine(dst, src), fenced: dst may be sent from later (N7)
                    detail::combine_l1<Red>(link_.hal(), addr(s.dst), addr(s.dst), addr(s.src), n);
                }
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
            if (valid < out)  // only the padding is stored to (a pointer to the whole output would cost its every byte)
                memset(ptr(p_.buf.output + valid * eb, out - valid), 0, size_t(out - valid) * eb);
        }
    }

    // ---- interleaved lanes (execute_any_interleaved) ----------------------------------------
    /// One lane's position: its current step and piece, and a piece whose send is still pending.
    struct Cursor {
        uint32_t lane = 0, index = 0;
        bool have = false, done = false;
        Step s{};
        uint32_t from = no_dir, to = no_dir, n = 0, piece = 0, pieces = 0, off = 0;
        detail::PieceState ps{};  ///< a received piece whose send is pending
    };

    /// The directions a lane sends on (tx) and receives on (rx), as bit masks.
    /// `steps` (if given) gets the lane's step count.
    template <class ForLane>
    void lane_dirs(ForLane&& for_lane, uint32_t lane, uint32_t& tx, uint32_t& rx, uint32_t* steps = nullptr) {
        tx = rx = 0;
        uint32_t n = 0;
        struct Ctx { StepRunner* self; uint32_t* tx; uint32_t* rx; uint32_t* n; } ctx{this, &tx, &rx, &n};
        for_lane(lane, StepSink{&ctx, [](void* c, const Step& s) {
            Ctx& x = *static_cast<Ctx*>(c);
            ++*x.n;
            for_each_send_peer(x.self->p_.shape, x.self->p_.rank, s,
                               [&](uint32_t q) { *x.tx |= 1u << (x.self->dir(q, true, s) & 31u); });
            if (verb_receives(s.verb)) *x.rx |= 1u << (x.self->dir(s.recv_peer, false, s) & 31u);
        }});
        if (steps) *steps = n;
    }

    /// Advances lane c by at most one piece without blocking; true if it made progress.
    /// `fetch(lane, index, step)` gives the lane's next step, the index-th (false past its last).
    template <class Fetch>
    bool advance(Cursor& c, Fetch&& fetch) {
        if (c.done) return false;
        if (!c.have) {
            if (!fetch(c.lane, c.index, c.s)) {
                c.done = true;
                return true;
            }
            c.have = true;
            c.n = c.s.count * p_.chunk_elems;
            c.from = verb_receives(c.s.verb) ? dir(c.s.recv_peer, false, c.s) : no_dir;
            c.to = verb_sends(c.s.verb) ? tx(c.s.send_peer, c.s) : no_dir;
            // pieces only for steps that use the link: local steps have none, and a one-rank
            // group's link has no message size at all (piece_elems would fail); a put moves the
            // chunk in one message
            c.pieces = (c.from != no_dir || c.to != no_dir) && !puts(c.s) ? detail::pieces(c.n, piece_elems<T>(link_)) : 1;
            c.piece = 0;
            c.off = 0;
        }
        if (!verb_receives(c.s.verb) && !verb_sends(c.s.verb)) {  // copy / reduce_local: local work
            (*this)(c.s);
            next_step(c);
            return true;
        }
        const uint32_t pe = puts(c.s) ? c.n : piece_elems<T>(link_);
        const uint32_t e = c.n - c.off < pe ? c.n - c.off : pe;
        const bool was_pending = c.ps.pending;
        if (!poll_piece(c, c.off * eb, e)) return c.ps.pending != was_pending;  // received, its send waits
        next_piece(c, e);
        return true;
    }

private:
    /// A multicast step (schedule.hpp Cast): on a link with send_multicast, send and
    /// recv_copy_send inject one message per piece to every receiver's direction; otherwise (and
    /// for the other verbs) it runs as its unicasts (lower_casts).
    KCCL_NOINLINE void multicast(const Step& s) {
        if constexpr (link_multicasts<Link>) {
            if (s.verb == Verb::send || s.verb == Verb::recv_copy_send) {
                uint32_t to[max_group_dirs];
                uint32_t k = 0;
                for_each_send_peer(p_.shape, p_.rank, s, [&](uint32_t q) {
                    const uint32_t d = tx(q, s);
                    for (uint32_t i = 0; i < k; ++i)
                        if (to[i] == d) return;  // two receivers behind one direction: one copy
                    if (KCCL_UNLIKELY(k == max_group_dirs)) {
                        detail::Msg m;
                        m.s("collectives: executor: rank ").u(p_.rank).s(" multicasts to more than ").u(max_group_dirs)
                            .s(" directions (allowed: max_group_dirs)");
                        detail::die(m);
                    }
                    to[k++] = d;
                });
                const uint32_t n = s.count * p_.chunk_elems;
                if (s.verb == Verb::send) send_multicast<Red>(link_, to, k, addr(s.src), n);
                else recv_copy_send_multicast<Red>(link_, dir(s.recv_peer, false, s), to, k, addr(s.dst), n);
                return;
            }
        }
        lower_casts(p_.shape, p_.rank, s, [this](const Step& u) { (*this)(u); });
    }

    /// The current piece of c's step, polled (primitives.hpp detail::piece, the verbs' one
    /// definition); sends go out with try_send, or as puts where the step puts its chunk.
    bool poll_piece(Cursor& c, uint32_t o, uint32_t e) {
        const uint32_t src = addr(c.s.src) + o, dst = addr(c.s.dst) + o, b = e * eb;
        auto out = [&](uint32_t l1, uint32_t bytes) {
            if constexpr (link_puts<Link>) {
                if (puts(c.s) && (c.s.verb == Verb::send || c.s.verb == Verb::recv_copy_send)) {  // into the same chunk there
                    uint32_t peer;
                    return remote(c.to, dst, peer, false) && link_.try_put(c.to, l1, bytes, peer);
                }
            }
            return link_.try_send(c.to, l1, bytes);
        };
        switch (c.s.verb) {
            case Verb::send: return detail::piece<Verb::send, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
            case Verb::recv: return detail::piece<Verb::recv, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
            case Verb::recv_reduce_send:
                return detail::piece<Verb::recv_reduce_send, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
            case Verb::recv_reduce_copy:
                return detail::piece<Verb::recv_reduce_copy, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
            case Verb::recv_copy_send:
                return detail::piece<Verb::recv_copy_send, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
            default:
                return detail::piece<Verb::recv_reduce_copy_send, Red, true>(link_, c.from, src, dst, c.s.put, b, e, c.ps, out);
        }
    }
    void next_piece(Cursor& c, uint32_t e) {
        c.off += e;
        if (++c.piece >= c.pieces) next_step(c);
    }
    void next_step(Cursor& c) {
        c.have = false;
        ++c.index;
    }

    /// A step whose chunk is put (Step::put: the same output chunk on both ends) on this link.
    bool puts(const Step& s) const { return link_puts<Link> && puts_on_ && s.put && s.dst.buf == Buf::output; }
    /// The window base of a receiver that takes no puts this collective (its output overlaps its input).
    static constexpr uint32_t kNoWindow = 0xFFFFFFFFu;
    [[noreturn]] KCCL_NOINLINE void no_window(uint32_t d) const {
        detail::Msg m;
        m.s("collectives: executor: rank ").u(p_.rank).s(" puts on direction ").u(d)
            .s(" to a rank whose output overlaps its input (in place), which takes no puts: every rank of a group runs ")
            .s(op_name(p_.shape.op)).s(" in place, or none");
        detail::die(m);
    }
    /// Puts: the receiver's L1 address of local output address `local` (the same output chunk,
    /// at the base of the window the receiver on d opened for this collective), in `out`. The
    /// window is read once per direction per collective; `block`: wait for it, else false while
    /// it is not open.
    bool remote(uint32_t d, uint32_t local, uint32_t& out, bool block) {
        const uint32_t bit = 1u << (d & 31u), i = d & (max_group_dirs - 1);
        if (!(have_window_ & bit)) {
            if (block) window_[i] = link_.peer_window(d);
            else if (!link_.try_peer_window(d, window_[i])) return false;
            if (KCCL_UNLIKELY(window_[i] == kNoWindow)) no_window(d);
            have_window_ |= bit;
        }
        out = window_[i] + (local - p_.buf.output);
        return true;
    }
    uint32_t remote(uint32_t d, uint32_t local) {
        uint32_t out = 0;
        remote(d, local, out, true);
        return out;
    }

    T* ptr(uint32_t l1, uint32_t n) { return reinterpret_cast<T*>(link_.hal().l1_ptr(l1, n * eb)); }
    uint32_t addr(ChunkRef c) const {
        const uint32_t base = c.buf == Buf::input ? in_base_ : c.buf == Buf::output ? p_.buf.output : p_.buf.scratch;
        return base + c.chunk * p_.chunk_elems * eb;
    }
    /// The direction a step sends on; the first send on each direction checks that it holds what
    /// the schedule keeps in flight (slots_needed), else a device error: too few slots
    /// deadlock the ring, which on hardware would hang without a message.
    uint32_t tx(uint32_t peer, const Step& s) {
        const uint32_t d = dir(peer, true, s);
        if (KCCL_UNLIKELY(!(checked_ & (1u << (d & 31u))))) check_slots(d, puts(s));
        return d;
    }
    KCCL_NOINLINE void check_slots(uint32_t d, bool put) {
        checked_ |= 1u << (d & 31u);
        const uint32_t have = link_.slots(d);
        const uint32_t k = put ? 1u : detail::pieces(p_.chunk_elems, piece_elems<T>(link_));  // a put: one message a chunk
        const uint64_t need = slots_needed(p_.shape, k);
        if (KCCL_LIKELY(have >= need)) return;
        const uint32_t w = window_in_flight(p_.shape);
        detail::Msg m;
        m.s("collectives: executor: rank ").u(p_.rank).s(" sends on direction ").u(d).s(" with a wavefront window of ")
            .u(w).s(" chunks (Shape::window ").u(p_.shape.window).s(") of ").u(k)
            .s(k == 1 ? " message each" : " messages (pieces) each").s(", which needs window x pieces + 1 = ")
            .u(uint32_t(need > 0xFFFFFFFFu ? 0xFFFFFFFFu : need)).s(" message slots per channel, but the link's direction ")
            .u(d).s(" holds ").u(have)
            .s(" (allowed: window x pieces <= slots - 1; lower Shape::window, make a chunk one message, or give the link more slots)");
        detail::die(m);
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
    uint32_t checked_ = 0;  ///< directions whose slots were checked (bit d)
    bool puts_on_ = false;                   ///< puts this collective (a link with puts, not in place)
    uint32_t have_window_ = 0;               ///< puts: directions whose window base is read (bit d)
    uint32_t window_[max_group_dirs] = {};   ///< puts: the base each direction's receiver opened
};

/// Steps of a lane the merged / interleaved executors keep at once (LaneStream): a refill resumes
/// the lane's generator where the last one stopped (schedule.hpp, "resuming a lane's step stream").
inline constexpr uint32_t lane_stream_steps = 8;
/// Lanes the merged / interleaved executors run at once (every algorithm has at most kMaxLanes).
inline constexpr uint32_t exec_max_lanes = kMaxLanes;

namespace detail {

/// Reads one lane's steps in order, lane_stream_steps at a time, each refill resuming the
/// generator at the cursor where the previous one stopped: a lane of S steps costs O(S) generator
/// work in all (a generator without phases, none of which is merged or interleaved today, costs
/// O(S^2 / lane_stream_steps)). About 300 bytes: the executors keep one per lane.
struct LaneStream {
    Step buf[lane_stream_steps];
    uint32_t n = 0, pos = 0;
    StepCursor next{};
    bool ended = false;

    /// The lane's next step into out; false past its last. `for_lane(lane, sink)` runs the
    /// lane's generator into sink.
    template <class ForLane>
    bool get(ForLane& for_lane, uint32_t lane, Step& out) {
        if (pos == n) {
            if (ended) return false;
            StepResume r;
            r.from = next;
            r.out = buf;
            r.cap = lane_stream_steps;
            for_lane(lane, StepSink{&r, [](void* c, const Step& st) { static_cast<StepResume*>(c)->take(st); }, &r});
            n = r.n;
            pos = 0;
            ended = !r.full;
            next = r.stop;
            if (n == 0) return false;
        }
        out = buf[pos++];
        return true;
    }
};

/// Whether no two of lanes 0..n-1 (n <= exec_max_lanes) send on, or receive from, the same link
/// direction; walks each lane's steps once (stopping at the first shared direction). `len`, if
/// given, gets each walked lane's step count.
template <class Runner, class ForLane>
bool lanes_disjoint(Runner& run, ForLane& for_lane, uint32_t n, uint32_t* len = nullptr) {
    uint32_t tx_all = 0, rx_all = 0;
    for (uint32_t l = 0; l < n; ++l) {
        uint32_t tx, rx;
        run.lane_dirs(for_lane, l, tx, rx, len ? &len[l] : nullptr);
        if ((tx & tx_all) || (rx & rx_all)) return false;
        tx_all |= tx;
        rx_all |= rx;
    }
    return true;
}

/// Runs a rank's lanes on the calling worker: MERGED (in proportion to their lengths: the next
/// step comes from the lane with the smallest share of its steps done, ties to the lower lane, so
/// equal lanes alternate step by step — host::merge_lanes, the checker's merged_lanes model) when the method's lanes
/// may merge (lanes_mergeable: ring_bidir, ring_meet_middle on a ring), there are 2 ..
/// exec_max_lanes lanes and no two of them send on, or receive from, the same link direction;
/// else one after the other, lane 0 first (the checker's serial_lanes model). Merged lanes keep
/// both directions of a bidirectional method busy at once; each step still blocks as in the
/// serial order, so a lane waits while another lane's step waits (the wavefront window keeps
/// enough in flight that both flows move at the same pace).
template <class Runner, class ForLane>
KCCL_NOINLINE void run_merged(Runner& run, uint32_t n, const uint32_t* len, ForLane& for_lane) {
    LaneStream stream[exec_max_lanes];
    uint32_t index[exec_max_lanes] = {};
    for (;;) {
        // the unfinished lane with the smallest share of its steps done (ties: the lower lane)
        uint32_t best = n;
        for (uint32_t l = 0; l < n; ++l) {
            if (index[l] >= len[l]) continue;
            if (best == n || uint64_t(index[l]) * len[best] < uint64_t(index[best]) * len[l]) best = l;
        }
        if (best == n) break;
        Step s;
        if (!stream[best].get(for_lane, best, s)) break;  // cannot happen: len counted the steps
        run(s);
        ++index[best];
    }
}

template <class Runner, class ForLane>
void run_lanes(Runner& run, const Shape& sh, uint32_t n, ForLane&& for_lane) {
    uint32_t len[exec_max_lanes] = {};
    const bool disjoint =
        n >= 2 && n <= exec_max_lanes && lanes_mergeable(sh) && lanes_disjoint(run, for_lane, n, len);
    if (!disjoint) {
        const StepSink sink{&run, [](void* c, const Step& s) { (*static_cast<Runner*>(c))(s); }};
        for (uint32_t lane = 0; lane < n; ++lane) for_lane(lane, sink);
        return;
    }
    // its own (not inlined) frame: the lane streams' ~600 bytes of stack only when lanes merge
    run_merged(run, n, len, for_lane);
}

}  // namespace detail

/// Runs every lane of Algo for this rank. `dir_of(peer, sending)` gives the link direction that
/// sends to (sending) / receives from (!sending) `peer` — the two differ on a 2-rank ring, where
/// both directions reach the one peer (see ring_dir_of).
template <class Algo, class Red, class Link, class DirOf>
void execute(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    detail::check_params_or_die<Red>(p);
    detail::check_shape_or_die(p, Algo::validate(p.shape));
    StepRunner<Red, Link, std::remove_reference_t<DirOf>> run(link, p, dir_of);
    run.begin();
    const Shape sh = p.shape;
    const uint32_t rank = p.rank;
    detail::run_lanes(run, sh, Algo::lanes(sh), [&](uint32_t lane, const StepSink& sink) {
        if constexpr (link_multicasts<Link>) Algo::for_each(sh, rank, lane, sink);
        else Algo::for_each(sh, rank, lane, LoweringEmitter<const StepSink>{&sh, rank, &sink, sink.step_resume});
    });
    run.end();
}

/// The same, with the algorithm chosen at run time from (shape.op, shape.method) (algorithms.hpp).
/// An unsupported pair is a device error naming it.
template <class Red, class Link, class DirOf>
void execute_any(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    using Runner = StepRunner<Red, Link, std::remove_reference_t<DirOf>>;
    Runner run(link, p, dir_of);
    const uint32_t n = lanes(p.shape);
    if (KCCL_UNLIKELY(n == 0)) {
        detail::Msg m;
        m.s("collectives: executor: ").s(op_name(p.shape.op)).s(" has no method ").s(method_name(p.shape.method))
            .s("; allowed: ").s(allowed_methods(p.shape.op));
        detail::die(m);
    }
    detail::check_params_or_die<Red>(p);
    detail::check_shape_or_die(p, validate(p.shape));
    run.begin();
    const Shape sh = p.shape;
    const uint32_t rank = p.rank;
    detail::run_lanes(run, sh, n, [&](uint32_t lane, const StepSink& sink) {
        if constexpr (link_multicasts<Link>) for_each_step(sh, rank, lane, sink);
        else for_each_unicast_step(sh, rank, lane, sink);  // multicasts as unicasts (lower_casts)
    });
    run.end();
}

/// Like execute_any, but runs the lanes INTERLEAVED, piece by piece, on the one worker: each turn
/// every unfinished lane advances by at most one piece without blocking (try_recv / try_send);
/// when no lane can move the worker calls hal.idle(). A lane never waits for another, so the
/// lanes progress as if each had its own core — the checker's concurrent model (CheckOptions
/// default: one FIFO per (sender, receiver, lane)) — PROVIDED no two lanes share a link
/// direction for sending or for receiving (then each lane's messages have their own channel).
/// That is checked first, per rank, by walking every lane's steps once: if two lanes share a
/// direction (a 2-rank all_pairs group, where next and prev are one direction) the lanes run
/// one after the other as in execute_any (the checker's serial_lanes model). A one-lane method
/// runs as in execute_any. Ranks may differ in that choice: a serial rank still only waits for
/// messages of the lane it runs, which its interleaving peers keep sending.
template <class Red, class Link, class DirOf>
void execute_any_interleaved(Link& link, const ExecParams& p, DirOf&& dir_of) {
    static_assert(check_link<Link>(), "");
    using Runner = StepRunner<Red, Link, std::remove_reference_t<DirOf>>;
    constexpr uint32_t kMaxLanes = exec_max_lanes;
    const uint32_t n = lanes(p.shape);
    if (n <= 1 || n > kMaxLanes) return execute_any<Red>(link, p, dir_of);
    detail::check_params_or_die<Red>(p);
    detail::check_shape_or_die(p, validate(p.shape));
    Runner run(link, p, dir_of);
    const Shape sh = p.shape;
    const uint32_t rank = p.rank;
    auto for_lane = [&](uint32_t lane, const StepSink& sink) { for_each_unicast_step(sh, rank, lane, sink); };
    if (!detail::lanes_disjoint(run, for_lane, n)) return execute_any<Red>(link, p, dir_of);
    detail::LaneStream streams[kMaxLanes];  // each lane's steps, lane_stream_steps at a time
    auto fetch = [&](uint32_t lane, uint32_t, Step& out) { return streams[lane].get(for_lane, lane, out); };
    typename Runner::Cursor cur[kMaxLanes];
    for (uint32_t l = 0; l < n; ++l) cur[l].lane = l;
    run.begin();
    for (;;) {
        bool moved = false, all_done = true;
        for (uint32_t l = 0; l < n; ++l) {
            moved = run.advance(cur[l], fetch) || moved;
            all_done = all_done && cur[l].done;
        }
        if (all_done) break;
        if (!moved) link.hal().idle();
    }
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

/// The direction map of an all_pairs group (GroupShape::all_pairs): every other rank is one hop
/// away, on direction all_pairs_dir(rank, peer), both ways. Constant time, so multi-hop methods
/// (trees, recursive doubling, Rabenseifner, pairwise, direct) pay no search per step.
struct AllPairsDirs {
    uint32_t rank, ranks;
    uint32_t operator()(uint32_t peer, bool) const {
        return peer < ranks && peer != rank ? all_pairs_dir(rank, peer) : no_dir;
    }
};

/// The direction map of one communication group (groups.hpp) over a link on which every replica
/// of the job is one hop away (an all_pairs group; the chip fabric's FabricLink, whose ranks are
/// the replicas): the collective runs on the group's ranks 0..k-1 (rank_in_group, replica order),
/// and group rank i is replica member(group, replicas, group_of(replica), i), reached on
/// all_pairs_dir(replica, that replica), both ways. Several groups of one job (a mesh's rows, then
/// its columns; strided orthogonal groups) thus run over one link, each replica driving its own
/// group's collective with Shape::ranks = the group size. A group that validate() refuses, a
/// replica outside the job, a peer outside the group or the replica itself give no_dir (the
/// executor's named error).
struct CommGroupDirs {
    CommGroup group{};
    uint32_t replicas = 0;  ///< the link's ranks
    uint32_t replica = 0;   ///< this core's rank on the link
    uint32_t operator()(uint32_t peer, bool) const {
        if (validate(group, replicas) != GroupError::ok || replica >= replicas) return no_dir;
        if (peer >= group_size(group, replicas)) return no_dir;
        const uint32_t q = member(group, replicas, group_of(group, replicas, replica), peer);
        return q != replica ? all_pairs_dir(replica, q) : no_dir;
    }
};

}  // namespace kccl::coll

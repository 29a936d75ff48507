// kccl/collectives/primitives.hpp — the NCCL-style verbs every schedule is made of, written once
// over the link concept (collectives/link.hpp), for both transports.
//
//   using R = kccl::coll::Reducer<float, kccl::coll::RedOp::sum>;    // from collectives/ops.hpp
//   kccl::coll::send<R>(link, dir, src_l1, n);                          // n elements of R::value_type
//   kccl::coll::recv_reduce_send<R>(link, from, to, src_l1, n);
//
// VERBS (one chunk of n elements each; addresses are local L1; `from`/`to` are directions)
//   send                   (to, src, n)            src                   -> to
//   recv                   (from, dst, n)          from                  -> dst
//   recv_reduce_send       (from, to, src, n)      from (+) src          -> to
//   recv_reduce_copy       (from, src, dst, n)     from (+) src          -> dst
//   recv_copy_send         (from, to, dst, n)      from                  -> dst and -> to
//   recv_reduce_copy_send  (from, to, src, dst, n) from (+) src          -> dst and -> to
//   (+) is Red::combine(out, local, received): the LOCAL operand (src) is the first operand, the
//   received partial the second — the order of schedule.hpp ("combine order"), which the symbolic
//   checker models and tests/collectives/order_test.cpp holds the code to with a non-commutative
//   combine. Red::prepare / Red::finalize are not applied here: the caller prepares its
//   contribution (e.g. squares it for square_add) and finalizes results.
//   The first template argument is the reducer; for the verbs that do not reduce it may also be a
//   plain element type (send<float>(...)).
//
// PIPELINING. A chunk travels as pieces of P = piece_elems<T>(link) elements (the largest
// multiple of 16 bytes that fits link.max_message_bytes(); the last piece is shorter), one message
// each; a chunk of 0 elements is ONE 0-byte message, so every verb moves at least one message and
// sender and receiver stay matched. Piece k is received, reduced and forwarded before piece k+1
// is received, so a chunk larger than a slot streams through a forwarding rank, and the work per
// piece happens in place: a received piece is reduced into its own view (IPCQ: the rx slot; EDM:
// the landing buffer) or straight into dst, and forwarded from there — no staging copy.
// Both ends must use the same n and links with the same max_message_bytes (the plan does both);
// a piece whose length differs from what the receiver expects is a device error naming both.
//
// DEADLOCK NOTE. A send of a chunk of p pieces may block until the receiver takes pieces. In a
// cycle where every rank sends before it receives (a ring step), keep chunks within the pipeline
// depth the plan reports (GroupArgs::pipeline_messages pieces); chains have no such limit.
//
// C++17, freestanding, no heap.
#pragma once

#include "link.hpp"
#include "ops.hpp"
#include "schedule.hpp"

#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace kccl::coll {

namespace detail {
template <class X, class = void>
struct elem_of {
    using type = X;
};
template <class X>
struct elem_of<X, void_t<typename X::value_type>> {
    using type = typename X::value_type;
};
}  // namespace detail

/// The element type of a reducer (its value_type), or X itself for a plain type.
template <class X>
using elem_t = typename detail::elem_of<X>::type;

/// Elements per piece on `link`: the largest multiple of 16 bytes within max_message_bytes()
/// (all of it if it is smaller than 16), in elements of T. At least 1, else a device error.
template <class T, class L>
uint32_t piece_elems(L& link) {
    const uint32_t max = link.max_message_bytes();
    const uint32_t bytes = max >= 16 ? (max & ~15u) : max;
    const uint32_t p = bytes / uint32_t(sizeof(T));
    if (KCCL_UNLIKELY(p == 0)) {
        detail::Msg m;
        m.s("collectives: the link's largest message (").u(max).s(" bytes) holds no element of ").u(uint32_t(sizeof(T)))
            .s(" bytes; give the plan a larger message size");
        detail::die(m);
    }
    return p;
}

namespace detail {

/// Pieces of a chunk of n elements: max(1, ceil(n / p)).
inline uint32_t pieces(uint32_t n, uint32_t p) { return n == 0 ? 1u : (n + p - 1) / p; }

/// Calls f(byte_offset, bytes, elems) for each piece of a chunk of n elements of T on `link`, in
/// order (one 0-byte piece for n = 0): the loop every verb is made of.
template <class T, class L, class F>
KCCL_FORCEINLINE void for_each_piece(L& link, uint32_t n, F&& f) {
    const uint32_t p = piece_elems<T>(link), k = pieces(n, p);
    for (uint32_t i = 0, off = 0; i < k; ++i) {
        const uint32_t e = n - off < p ? n - off : p;
        f(off * uint32_t(sizeof(T)), e * uint32_t(sizeof(T)), e);
        off += e;
    }
}

/// A received piece must have the length this rank expects.
inline void check_piece(uint32_t from, uint32_t got, uint32_t expect_bytes, const char* verb) {
    if (KCCL_UNLIKELY(got != expect_bytes)) {
        Msg m;
        m.s("collectives: ").s(verb).s(": a piece from direction ").u(from).s(" has ").u(got)
            .s(" bytes but this rank expects ").u(expect_bytes)
            .s(" (sender and receiver must agree on the chunk size and use links with one message size)");
        die(m);
    }
}

/// A put (link.hpp PUTS) arrived at a step that did not tell its sender where to put.
[[noreturn]] KCCL_COLD inline void unexpected_put(uint32_t from, const View& v, const char* verb) {
    Msg m;
    m.s("collectives: ").s(verb).s(": a piece from direction ").u(from).s(" was put at L1 ").hex(v.l1)
        .s(", but this step does not receive puts (sender and receiver schedules disagree on Step::put)");
    die(m);
}
/// A put landed somewhere other than where this step receives it.
[[noreturn]] KCCL_COLD inline void misplaced_put(uint32_t from, const View& v, uint32_t want, const char* verb) {
    Msg m;
    m.s("collectives: ").s(verb).s(": a piece from direction ").u(from).s(" was put at L1 ").hex(v.l1)
        .s(" but this rank receives it at ").hex(want).s(" (sender and receiver disagree on where it lands)");
    die(m);
}

/// Receives the next piece as a view (IPCQ: the rx slot; EDM: the landing buffer), checking its
/// length. A put is an error here: the verbs that take views reduce into them.
template <class L>
View recv_piece(L& link, uint32_t from, uint32_t expect_bytes, const char* verb) {
    View v = link.recv(from);
    check_piece(from, v.bytes, expect_bytes, verb);
    if (KCCL_UNLIKELY(v.landed)) unexpected_put(from, v, verb);
    return v;
}

/// Receives the next piece straight into dst (the link's recv_into: EDM reads the packet from the
/// EDM's slot into dst, IPCQ copies the rx slot into dst, both by NoC DMA), checking its length.
template <class L>
void recv_piece_into(L& link, uint32_t from, uint32_t dst_l1, uint32_t expect_bytes, const char* verb) {
    check_piece(from, link.recv_into(from, dst_l1, expect_bytes), expect_bytes, verb);
}

/// out = Red::combine(local, received): the schedule's combine order (schedule.hpp), local first.
template <class Red, class H>
void combine_l1(H& hal, uint32_t out, uint32_t local, uint32_t received, uint32_t n) {
    using T = typename Red::value_type;
    if (n == 0) return;
    const uint32_t b = n * uint32_t(sizeof(T));
    if constexpr (on_compute_engine_v<Red>) {
        kccl::hal::compute_reduce<Red>(hal, out, local, received, n);  // unpack, FPU, pack (ops.hpp)
    } else {
        Red::combine(reinterpret_cast<T*>(hal.l1_ptr(out, b)), reinterpret_cast<const T*>(hal.l1_ptr(local, b)),
                     reinterpret_cast<const T*>(hal.l1_ptr(received, b)), n);
    }
    kccl::hal::l1_store_fence(hal, out, b);  // out may be the source of the next send (contract N7)
}

/// A local copy moves the bytes with the core's NoC DMA (a write to its own L1), as tt-metal's
/// data-movement kernels do, not with RISC-V loads and stores: the NoC moves a 32 B flit per cycle,
/// a RISC-V copy 4 B per load and per store. The barrier makes dst complete (and src free) before
/// the caller releases or reuses either.
template <class H>
void copy_l1(H& hal, uint32_t dst, uint32_t src, uint32_t bytes) {
    if (!bytes || dst == src) return;
    hal.noc_write(src, hal.noc_addr(hal.core_x(), hal.core_y(), dst), bytes);
    hal.noc_write_barrier();
}

// ---- every verb once: the work on one piece ---------------------------------------------------
// piece<V, Red, Poll> is the one definition of verb V on one piece. Poll = false (the blocking
// verbs below, which loop it over the chunk's pieces): it waits with the link's own blocking
// send / recv / recv_into (their wait and sleep discipline, and on EDM the one-transfer
// recv_into). Poll = true (the executor's interleaved lanes, StepRunner::advance): it uses
// try_recv / the caller's non-blocking send and returns false where it would block; PieceState
// keeps a received piece whose send must wait, and the caller polls again later. Both are
// resolved at compile time: the blocking instantiation has no branch the old loop did not.
//
// What a verb that receives and sends forwards: recv_reduce_send the sum formed in the received
// view (sent from there, then released); recv_copy_send and recv_reduce_copy_send the piece
// stored in dst, sent FROM dst (what is sent stays in dst, as multicast lowering and puts need:
// schedule.hpp Cast, docs/collectives.md), the view released before the send.

/// A received piece that waits for its send (kept between polls; fresh for every piece).
struct PieceState {
    bool pending = false;  ///< received (and reduced); its send has not gone yet
    bool holding = false;  ///< sent from the held view `v`, released after the send
    View v{};
    uint32_t send_l1 = 0;
};

/// Receives the next piece as a view (see recv_piece); polling: false if none has arrived.
template <bool Poll, class L>
KCCL_FORCEINLINE bool take_view(L& link, uint32_t from, uint32_t b, View& v, const char* verb) {
    if constexpr (!Poll) {
        v = recv_piece(link, from, b, verb);
    } else {
        if (!link.try_recv(from, v)) return false;
        check_piece(from, v.bytes, b, verb);
        if (KCCL_UNLIKELY(v.landed)) unexpected_put(from, v, verb);
    }
    return true;
}

/// Receives the next piece into dst (see recv_piece_into); polling: false if none has arrived,
/// and a put is accepted where the step receives one (`put_ok`: Step::put), landed at dst.
template <bool Poll, class L>
KCCL_FORCEINLINE bool take_into(L& link, uint32_t from, uint32_t dst, uint32_t b, bool put_ok, const char* verb) {
    if constexpr (!Poll) {
        recv_piece_into(link, from, dst, b, verb);
    } else {
        View v;
        if (!link.try_recv(from, v)) return false;
        check_piece(from, v.bytes, b, verb);
        if (KCCL_UNLIKELY(v.landed)) {
            if (!put_ok) unexpected_put(from, v, verb);
            if (v.l1 != dst) misplaced_put(from, v, dst, verb);
        }
        copy_l1(link.hal(), dst, v.l1, b);  // nothing to copy for a put
        link.release(v);
    }
    return true;
}

/// Verb V on one piece of b bytes (e elements) at local src / dst (the piece's own addresses);
/// `tx(l1, bytes)` sends (true once handed over). True when the piece is done.
template <Verb V, class Red, bool Poll, class L, class Tx>
KCCL_FORCEINLINE bool piece(L& link, uint32_t from, uint32_t src, uint32_t dst, bool put_ok, uint32_t b, uint32_t e,
                            PieceState& st, Tx&& tx) {
    constexpr const char* name = verb_name(V);
    if constexpr (V == Verb::send) {
        return tx(src, b);
    } else {
        if (!st.pending) {
            if constexpr (V == Verb::recv || V == Verb::recv_copy_send) {
                if (!take_into<Poll>(link, from, dst, b, put_ok, name)) return false;
                if constexpr (V == Verb::recv) return true;
                st.send_l1 = dst;
            } else {
                View v;
                if (!take_view<Poll>(link, from, b, v, name)) return false;
                if constexpr (V == Verb::recv_reduce_send) {  // the sum is formed in the view
                    combine_l1<Red>(link.hal(), v.l1, src, v.l1, e);
                    st.v = v, st.holding = true, st.send_l1 = v.l1;
                } else {
                    combine_l1<Red>(link.hal(), dst, src, v.l1, e);
                    link.release(v);
                    if constexpr (V == Verb::recv_reduce_copy) return true;
                    st.send_l1 = dst;
                }
            }
            st.pending = true;
        }
        if (!tx(st.send_l1, b)) return false;
        if (st.holding) link.release(st.v);
        st.pending = st.holding = false;
        return true;
    }
}

/// The blocking verb V over a chunk of n elements: piece<V> on each piece, in order, sending
/// with tx (SendTo: the link's blocking send; or a multicast).
template <Verb V, class Red, class L, class Tx>
void blocking(L& link, uint32_t from, uint32_t src_l1, uint32_t dst_l1, uint32_t n, Tx&& tx) {
    static_assert(check_link<L>(), "");
    for_each_piece<elem_t<Red>>(link, n, [&](uint32_t o, uint32_t b, uint32_t e) {
        PieceState st;
        piece<V, Red, false>(link, from, src_l1 + o, dst_l1 + o, false, b, e, st, tx);
    });
}
template <class L>
struct SendTo {
    L& link;
    uint32_t to;
    KCCL_FORCEINLINE bool operator()(uint32_t l1, uint32_t b) const {
        link.send(to, l1, b);
        return true;
    }
};

}  // namespace detail

// ---- multicast (optional link capability) -----------------------------------------------------
// A link that can inject one message to several directions at once (a fabric or NoC multicast)
// offers `void send_multicast(const uint32_t* dirs, uint32_t n_dirs, uint32_t l1, uint32_t bytes)`:
// the same FIFO promises per direction as n_dirs sends, and the source reusable on return. The
// executor runs a schedule's multicast steps (schedule.hpp Cast) with it, and lowers them to one
// unicast per receiver on a link without it (algorithms.hpp lower_casts).
namespace detail {
template <class L, class = void>
struct has_send_multicast : std::false_type {};
template <class L>
struct has_send_multicast<L, void_t<decltype(std::declval<L&>().send_multicast(
                                 static_cast<const uint32_t*>(nullptr), uint32_t{}, uint32_t{}, uint32_t{}))>>
    : std::true_type {};
}  // namespace detail
template <class L>
inline constexpr bool link_multicasts = detail::has_send_multicast<L>::value;

namespace detail {
template <class L>
struct MulticastTo {
    L& link;
    const uint32_t* to;
    uint32_t n_to;
    KCCL_FORCEINLINE bool operator()(uint32_t l1, uint32_t b) const {
        link.send_multicast(to, n_to, l1, b);
        return true;
    }
};
}  // namespace detail

/// src -> every direction of to[0 .. n_to), one multicast per piece.
template <class X, class L>
void send_multicast(L& link, const uint32_t* to, uint32_t n_to, uint32_t src_l1, uint32_t n) {
    static_assert(link_multicasts<L>, "send_multicast needs a link with send_multicast(dirs, n_dirs, l1, bytes).");
    detail::blocking<Verb::send, X>(link, no_dir, src_l1, 0, n, detail::MulticastTo<L>{link, to, n_to});
}

/// from -> dst, and from -> every direction of to[0 .. n_to) (a multicast of each piece from dst).
template <class X, class L>
void recv_copy_send_multicast(L& link, uint32_t from, const uint32_t* to, uint32_t n_to, uint32_t dst_l1, uint32_t n) {
    static_assert(link_multicasts<L>, "recv_copy_send_multicast needs a link with send_multicast(dirs, n_dirs, l1, bytes).");
    detail::blocking<Verb::recv_copy_send, X>(link, from, 0, dst_l1, n, detail::MulticastTo<L>{link, to, n_to});
}

// Puts (link.hpp PUTS): a chunk moves as ONE put of all its bytes — a put is not limited by the
// slot, so a chunk need not be cut into pieces — and the receiver takes it as one message. Both
// ends of a put step use these three (the executor: steps marked Step::put, on a link with puts).

/// src -> the receiver's L1 at peer_dst (inside the window peer_window(to) gave), one put.
template <class X, class L>
void put(L& link, uint32_t to, uint32_t src_l1, uint32_t n, uint32_t peer_dst) {
    static_assert(link_puts<L>, "put needs a link with puts (link.hpp PUTS).");
    link.put(to, src_l1, n * uint32_t(sizeof(elem_t<X>)), peer_dst);
}

/// from -> dst, where the sender put it (nothing copied; a put that landed elsewhere, or a plain
/// message, is handled as recv_into says).
template <class X, class L>
void recv_put(L& link, uint32_t from, uint32_t dst_l1, uint32_t n) {
    static_assert(link_puts<L>, "recv_put needs a link with puts (link.hpp PUTS).");
    detail::recv_piece_into(link, from, dst_l1, n * uint32_t(sizeof(elem_t<X>)), "recv");
}

/// from -> dst (put there by the sender), and dst -> the next receiver's L1 at peer_dst (one put).
template <class X, class L>
void recv_copy_put(L& link, uint32_t from, uint32_t to, uint32_t dst_l1, uint32_t n, uint32_t peer_dst) {
    static_assert(link_puts<L>, "recv_copy_put needs a link with puts (link.hpp PUTS).");
    const uint32_t b = n * uint32_t(sizeof(elem_t<X>));
    detail::recv_piece_into(link, from, dst_l1, b, "recv_copy_send");
    link.put(to, dst_l1, b, peer_dst);
}

// The blocking verbs (one chunk each; detail::piece is their one definition).

/// src -> to.
template <class X, class L>
void send(L& link, uint32_t to, uint32_t src_l1, uint32_t n) {
    detail::blocking<Verb::send, X>(link, no_dir, src_l1, 0, n, detail::SendTo<L>{link, to});
}

/// from -> dst.
template <class X, class L>
void recv(L& link, uint32_t from, uint32_t dst_l1, uint32_t n) {
    detail::blocking<Verb::recv, X>(link, from, 0, dst_l1, n, detail::SendTo<L>{link, no_dir});
}

/// (from (+) src) -> to. The sum is formed in the received piece's view and sent from there.
template <class Red, class L>
void recv_reduce_send(L& link, uint32_t from, uint32_t to, uint32_t src_l1, uint32_t n) {
    detail::blocking<Verb::recv_reduce_send, Red>(link, from, src_l1, 0, n, detail::SendTo<L>{link, to});
}

/// (from (+) src) -> dst.
template <class Red, class L>
void recv_reduce_copy(L& link, uint32_t from, uint32_t src_l1, uint32_t dst_l1, uint32_t n) {
    detail::blocking<Verb::recv_reduce_copy, Red>(link, from, src_l1, dst_l1, n, detail::SendTo<L>{link, no_dir});
}

/// from -> dst, and from -> to (received into dst, forwarded from there: on EDM one NoC transfer of
/// the piece fewer than landing it and copying it).
template <class X, class L>
void recv_copy_send(L& link, uint32_t from, uint32_t to, uint32_t dst_l1, uint32_t n) {
    detail::blocking<Verb::recv_copy_send, X>(link, from, 0, dst_l1, n, detail::SendTo<L>{link, to});
}

/// (from (+) src) -> dst, and the same -> to (sent from dst).
template <class Red, class L>
void recv_reduce_copy_send(L& link, uint32_t from, uint32_t to, uint32_t src_l1, uint32_t dst_l1, uint32_t n) {
    detail::blocking<Verb::recv_reduce_copy_send, Red>(link, from, src_l1, dst_l1, n, detail::SendTo<L>{link, to});
}

}  // namespace kccl::coll

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

/// src -> every direction of to[0 .. n_to), one multicast per piece.
template <class X, class L>
void send_multicast(L& link, const uint32_t* to, uint32_t n_to, uint32_t src_l1, uint32_t n) {
    static_assert(link_multicasts<L>, "send_multicast needs a link with send_multicast(dirs, n_dirs, l1, bytes).");
    detail::for_each_piece<elem_t<X>>(link, n, [&](uint32_t o, uint32_t b, uint32_t) {
        link.send_multicast(to, n_to, src_l1 + o, b);
    });
}

/// from -> dst, and from -> every direction of to[0 .. n_to) (a multicast of each piece from dst).
template <class X, class L>
void recv_copy_send_multicast(L& link, uint32_t from, const uint32_t* to, uint32_t n_to, uint32_t dst_l1, uint32_t n) {
    static_assert(link_multicasts<L>, "recv_copy_send_multicast needs a link with send_multicast(dirs, n_dirs, l1, bytes).");
    detail::for_each_piece<elem_t<X>>(link, n, [&](uint32_t o, uint32_t b, uint32_t) {
        detail::recv_piece_into(link, from, dst_l1 + o, b, "recv_copy_send");
        link.send_multicast(to, n_to, dst_l1 + o, b);
    });
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

/// src -> to.
template <class X, class L>
void send(L& link, uint32_t to, uint32_t src_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<elem_t<X>>(link, n, [&](uint32_t o, uint32_t b, uint32_t) { link.send(to, src_l1 + o, b); });
}

/// from -> dst.
template <class X, class L>
void recv(L& link, uint32_t from, uint32_t dst_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<elem_t<X>>(link, n, [&](uint32_t o, uint32_t b, uint32_t) {
        detail::recv_piece_into(link, from, dst_l1 + o, b, "recv");
    });
}

/// (from (+) src) -> to. The sum is formed in the received piece's view and sent from there.
template <class Red, class L>
void recv_reduce_send(L& link, uint32_t from, uint32_t to, uint32_t src_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<typename Red::value_type>(link, n, [&](uint32_t o, uint32_t b, uint32_t e) {
        const View v = detail::recv_piece(link, from, b, "recv_reduce_send");
        detail::combine_l1<Red>(link.hal(), v.l1, src_l1 + o, v.l1, e);
        link.send(to, v.l1, b);
        link.release(v);
    });
}

/// (from (+) src) -> dst.
template <class Red, class L>
void recv_reduce_copy(L& link, uint32_t from, uint32_t src_l1, uint32_t dst_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<typename Red::value_type>(link, n, [&](uint32_t o, uint32_t b, uint32_t e) {
        const View v = detail::recv_piece(link, from, b, "recv_reduce_copy");
        detail::combine_l1<Red>(link.hal(), dst_l1 + o, src_l1 + o, v.l1, e);
        link.release(v);
    });
}

/// from -> dst, and from -> to (received into dst, forwarded from there: on EDM one NoC transfer of
/// the piece fewer than landing it and copying it).
template <class X, class L>
void recv_copy_send(L& link, uint32_t from, uint32_t to, uint32_t dst_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<elem_t<X>>(link, n, [&](uint32_t o, uint32_t b, uint32_t) {
        detail::recv_piece_into(link, from, dst_l1 + o, b, "recv_copy_send");
        link.send(to, dst_l1 + o, b);
    });
}

/// (from (+) src) -> dst, and the same -> to (sent from dst).
template <class Red, class L>
void recv_reduce_copy_send(L& link, uint32_t from, uint32_t to, uint32_t src_l1, uint32_t dst_l1, uint32_t n) {
    static_assert(check_link<L>(), "");
    detail::for_each_piece<typename Red::value_type>(link, n, [&](uint32_t o, uint32_t b, uint32_t e) {
        const View v = detail::recv_piece(link, from, b, "recv_reduce_copy_send");
        detail::combine_l1<Red>(link.hal(), dst_l1 + o, src_l1 + o, v.l1, e);
        link.release(v);
        link.send(to, dst_l1 + o, b);
    });
}

}  // namespace kccl::coll

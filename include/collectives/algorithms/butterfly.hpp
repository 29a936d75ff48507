// kccl/collectives/algorithms/butterfly.hpp — recursive doubling, Rabenseifner, pairwise
// all_to_all and direct send_recv: exchanges between ranks that are not neighbours (multi-hop).
//
// Non-powers of two: P = the largest power of two <= p, rem = p - P. Ranks P..p-1 first send
// their input to rank r-P, which folds it in (recv_reduce_copy); the P low ranks run the power-of-
// two algorithm; at the end rank r-P sends the result back to r (the usual fold of the extra ranks,
// 2 more message latencies).
// Every message is one chunk and exchanges alternate send / receive chunk by chunk, so one message
// slot per link is enough (a whole-vector message would need the vector's size in buffering).
// Reduction order: recursive doubling combines (mine, partner's) on each side of every exchange:
// the same combine tree on every rank up to operand swaps, which every supported operator makes
// bit-identical. Rabenseifner's halving computes each block once (at its owner), doubling copies it.
#pragma once

#include <collectives/algorithms/arms.hpp>

namespace kccl::coll {

namespace detail {
constexpr uint32_t pow2_floor(uint32_t p) {
    uint32_t P = 1;
    while (P * 2 <= p) P *= 2;
    return P;
}
constexpr const char* validate_allreduce_like(const Shape& sh, const char* who) {
    if (sh.op != Op::all_reduce && sh.op != Op::barrier) return who;
    return validate_common(sh);
}
/// The fold of the extra ranks; returns false if `m` is an extra rank (it is done after this).
template <class E>
bool fold_in(E& e, uint32_t m, uint32_t p, uint32_t n) {
    const uint32_t P = pow2_floor(p), rem = p - P;
    if (m >= P) {
        for (uint32_t j = 0; j < n; ++j) e(mk::send(m - P, mk::in(j)));
        for (uint32_t j = 0; j < n; ++j) e(mk::recv(m - P, mk::out(j)));
        return false;
    }
    if (m < rem)
        for (uint32_t j = 0; j < n; ++j) e(mk::recv_reduce_copy(m + P, mk::in(j), mk::out(j)));
    else e(mk::copy(mk::in(0), mk::out(0), n));
    return true;
}
template <class E>
void fold_out(E& e, uint32_t m, uint32_t p, uint32_t n) {
    const uint32_t P = pow2_floor(p);
    if (m < p - P)
        for (uint32_t j = 0; j < n; ++j) e(mk::send(m + P, mk::out(j)));
}
}  // namespace detail

/// all_reduce / barrier by recursive doubling: lg P exchanges of the whole vector.
struct RecursiveDoubling : AlgorithmBase<RecursiveDoubling> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        return detail::validate_allreduce_like(sh, "RecursiveDoubling computes Op::all_reduce or Op::barrier only.");
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t m, uint32_t, E& e) {
        const uint32_t p = sh.ranks, n = tensor_chunks(sh), P = detail::pow2_floor(p);
        if (!detail::fold_in(e, m, p, n)) return;
        for (uint32_t d = 1; d < P; d <<= 1) {
            const uint32_t q = m ^ d;
            for (uint32_t j = 0; j < n; ++j) {
                e(mk::send(q, mk::out(j)));
                e(mk::recv_reduce_copy(q, mk::out(j), mk::out(j)));
            }
        }
        detail::fold_out(e, m, p, n);
    }
};

/// all_reduce by Rabenseifner: recursive halving reduce_scatter (distance P/2 first; the rank with
/// the bit clear keeps the lower half of its range) then recursive doubling all_gather in reverse.
/// Ranges split at lo + (hi-lo)/2 chunks, so any chunk count works (empty halves send nothing).
struct Rabenseifner : AlgorithmBase<Rabenseifner> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_reduce) return "Rabenseifner computes Op::all_reduce only.";
        return detail::validate_common(sh);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    /// The chunk range rank m holds before the halving level at distance d (levels P/2 .. 2d done).
    static void range_before(uint32_t m, uint32_t P, uint32_t n, uint32_t d, uint32_t& lo, uint32_t& hi) {
        lo = 0;
        hi = n;
        for (uint32_t dd = P / 2; dd > d; dd >>= 1) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (m & dd) lo = mid;
            else hi = mid;
        }
    }
    template <class E>
    static void generate(const Shape& sh, uint32_t m, uint32_t, E& e) {
        const uint32_t p = sh.ranks, n = tensor_chunks(sh), P = detail::pow2_floor(p);
        if (!detail::fold_in(e, m, p, n)) return;
        for (uint32_t d = P / 2; d >= 1; d >>= 1) {
            uint32_t lo, hi;
            range_before(m, P, n, d, lo, hi);
            const uint32_t mid = lo + (hi - lo) / 2, q = m ^ d;
            const bool upper = (m & d) != 0;
            const uint32_t klo = upper ? mid : lo, khi = upper ? hi : mid;
            const uint32_t slo = upper ? lo : mid, shi = upper ? mid : hi;
            for (uint32_t i = 0; i < shi - slo || i < khi - klo; ++i) {
                if (i < shi - slo) e(mk::send(q, mk::out(slo + i)));
                if (i < khi - klo) e(mk::recv_reduce_copy(q, mk::out(klo + i), mk::out(klo + i)));
            }
        }
        for (uint32_t d = 1; d < P; d <<= 1) {
            uint32_t lo, hi;
            range_before(m, P, n, d, lo, hi);
            const uint32_t mid = lo + (hi - lo) / 2, q = m ^ d;
            const bool upper = (m & d) != 0;
            const uint32_t mlo = upper ? mid : lo, mhi = upper ? hi : mid;
            const uint32_t tlo = upper ? lo : mid, thi = upper ? mid : hi;
            for (uint32_t i = 0; i < mhi - mlo || i < thi - tlo; ++i) {
                if (i < mhi - mlo) e(mk::send(q, mk::out(mlo + i)));
                if (i < thi - tlo) e(mk::recv(q, mk::out(tlo + i)));
            }
        }
        detail::fold_out(e, m, p, n);
    }
};

/// all_to_all by p-1 pairwise exchanges: in round t rank r sends its block for r+t and receives
/// r-t's block for r (whole fragments, one message each).
struct PairwiseAllToAll : AlgorithmBase<PairwiseAllToAll> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_to_all) return "PairwiseAllToAll computes Op::all_to_all only.";
        return detail::validate_common(sh);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t m, uint32_t, E& e) {
        const uint32_t p = sh.ranks, s = sh.chunks;
        e(mk::copy(mk::in(m * s), mk::out(m * s), s));
        for (uint32_t t = 1; t < p; ++t) {
            const uint32_t to = (m + t) % p, from = (m + p - t) % p;
            for (uint32_t j = 0; j < s; ++j) {
                e(mk::send(to, mk::in(to * s + j)));
                e(mk::recv(from, mk::out(from * s + j)));
            }
        }
    }
};

/// send_recv as one message from root straight to peer (the transport routes it).
struct DirectSendRecv : AlgorithmBase<DirectSendRecv> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::send_recv) return "DirectSendRecv computes Op::send_recv only.";
        return detail::validate_common(sh);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t m, uint32_t, E& e) {
        const uint32_t s = sh.chunks;
        if (sh.root == sh.peer) {
            if (m == sh.root) e(mk::copy(mk::in(0), mk::out(0), s));
        } else if (m == sh.root) {
            for (uint32_t j = 0; j < s; ++j) e(mk::send(sh.peer, mk::in(j)));
        } else if (m == sh.peer) {
            for (uint32_t j = 0; j < s; ++j) e(mk::recv(sh.root, mk::out(j)));
        }
    }
};

}  // namespace kccl::coll

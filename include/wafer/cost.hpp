// kccl/wafer/cost.hpp — the cost model of the Cerebras WSE reduce/allreduce thesis as code.
//
// Contract
//   * Every formula of the thesis (chapters 3-7) as a constexpr function of (P, B, T_R, root,
//     S, G, M, N), in cycles. P: PEs in the row; B: vector length in 32-bit wavelets (one element
//     per wavelet); T_R: router <-> processor latency (2 on the thesis's simulator and the WSE-2).
//   * Two families:
//       printed_*  the closed form exactly as the thesis prints it (section / lemma in the comment),
//                  kept so its figures and claims can be reproduced;
//       t_*        the cycles the model's own rules give (one wavelet per cycle per link direction
//                  and per ramp, 1 cycle per hop, T_R per ramp, send and store 1 cycle), checked
//                  against the per-wavelet reference simulator (host/model_sim.hpp) exhaustively
//                  on small grids. Where the two agree, t_* just calls printed_*; where a printed
//                  form is off, docs/wafer_model.md says by how much and why.
//   * Reduce patterns of chapter 5 are evaluated as the pre-order trees they are (Section 5.5):
//     a PE takes its children's streams closest first, stores all but the last and relays the
//     last one towards its parent, adding its own data; the time at which a PE finishes is
//         t = 0;  for each child c in order:  t = max(t + B, L(c) + d(c) + 2 T_R + 1)
//     with d(c) the hops to c and L(c) the cycle c emits its last wavelet (B for a leaf). This is
//     the recursion of Lemma 5.9 applied to a given tree (`preorder_cycles`).
//   * Bounds: functions that need per-PE tables take P <= kMaxCostPes (1024) and return
//     kCostInvalid for anything they cannot evaluate (P = 0, P too large, a root outside the
//     row, a base a pattern cannot take). The optimal pre-order reduce is an O(P^2) dynamic
//     programme (`OptimalTable`); build it once per (B, T_R) and read T_OPT(n) for every n <= P.
//   * Device-safe: C++17, freestanding, no heap; the per-PE tables are local arrays, so the
//     functions are meant for the host and for constant evaluation (keep P small there).
#pragma once

#include <collectives/schedule.hpp>
#include <wafer/patterns.hpp>
#include <stdint.h>

namespace kccl::wafer::cost {

inline constexpr uint64_t kCostInvalid = ~uint64_t(0);
inline constexpr uint32_t kMaxCostPes = 1024;
inline constexpr uint32_t kDefaultTr = 2;

constexpr uint64_t max2(uint64_t a, uint64_t b) { return a > b ? a : b; }
constexpr uint64_t min2(uint64_t a, uint64_t b) { return a < b ? a : b; }
constexpr uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
constexpr uint32_t ceil_log2(uint32_t n) {
    uint32_t k = 0;
    while ((uint64_t(1) << k) < n) ++k;
    return k;
}
constexpr uint32_t ceil_sqrt(uint32_t n) {
    uint32_t s = 0;
    while (uint64_t(s) * s < n) ++s;
    return s;
}

// ---------------------------------------------------------------- chapter 3: the model
/// Lemma 3.2 / Corollary 3.4: a vector of B wavelets from the rightmost to the leftmost of P PEs
/// (P - 1 hops): send 1 + T_R + (P - 1) hops + T_R + store 1, then one wavelet per cycle.
constexpr uint64_t printed_t_message(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return 2ull * tr + P + B;
}
constexpr uint64_t t_message(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) { return printed_t_message(P, B, tr); }
/// Lemma 3.3: the same message entering V processors on its way (each adds 2 T_R + 1).
constexpr uint64_t printed_t_visit(uint32_t P, uint32_t B, uint32_t V, uint32_t tr = kDefaultTr) {
    return uint64_t(P) + (uint64_t(V) + 1) * (2ull * tr + 1) + B - 1;
}
constexpr uint64_t t_visit(uint32_t P, uint32_t B, uint32_t V, uint32_t tr = kDefaultTr) {
    return printed_t_visit(P, B, V, tr);
}

// ---------------------------------------------------------------- chapter 4: broadcast
/// Lemma 4.1: 1D broadcast from an end PE = T_message(P, B) (multicast costs nothing).
constexpr uint64_t printed_t_broadcast(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return printed_t_message(P, B, tr);
}
/// 1D broadcast from any root: the farthest PE is max(root, P-1-root) hops away.
constexpr uint64_t t_broadcast(uint32_t P, uint32_t B, uint32_t root = 0, uint32_t tr = kDefaultTr) {
    if (P == 0 || root >= P) return kCostInvalid;
    const uint32_t far = root > P - 1 - root ? root : P - 1 - root;
    return P == 1 ? 0 : t_message(far + 1, B, tr);
}
/// Section 4.2: 2D broadcast on M x N from p_{i,j} (i row, j column), printed as
/// T_broadcast(M - i + N - j, B) with i, j taken in the near half (w.l.o.g. i < M/2, j < N/2).
constexpr uint64_t printed_t_broadcast_2d(uint32_t M, uint32_t N, uint32_t B, uint32_t i, uint32_t j,
                                          uint32_t tr = kDefaultTr) {
    const uint32_t ii = i < M - 1 - i ? i : M - 1 - i, jj = j < N - 1 - j ? j : N - 1 - j;
    return printed_t_broadcast(M - ii + N - jj, B, tr);
}
/// 2D broadcast by the model: row multicast, each row PE multicasts along its column; the
/// farthest PE is max(i, M-1-i) + max(j, N-1-j) hops away. (The printed form counts one hop more.)
constexpr uint64_t t_broadcast_2d(uint32_t M, uint32_t N, uint32_t B, uint32_t i, uint32_t j,
                                  uint32_t tr = kDefaultTr) {
    if (M == 0 || N == 0 || i >= M || j >= N) return kCostInvalid;
    const uint32_t fi = i > M - 1 - i ? i : M - 1 - i, fj = j > N - 1 - j ? j : N - 1 - j;
    return M * N == 1 ? 0 : t_message(fi + fj + 1, B, tr);
}

// ---------------------------------------------------------------- chapter 5: reduce to PE 0
/// Lemma 5.1: scalar reduce, PE 0 takes one wavelet per cycle from everyone.
constexpr uint64_t printed_t_scalar(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return 2ull + 2ull * tr + uint64_t(P - 1) * B;
}
/// Lemma 5.2: chain reduce (a visit of every PE).
constexpr uint64_t printed_t_chain(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return 2ull * (P - 1) * (tr + 1) + B;
}
/// Lemma 5.4: the printed lower bound of the tree's stalls.
constexpr uint64_t printed_t_tree_stall(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    uint64_t s = 0;
    const uint32_t L = ceil_log2(P);
    for (uint32_t i = 0; i + 2 <= L; ++i) {
        const uint64_t cut = 2ull * ((1ull << i) + tr) + 1;
        if (B > cut) s += B - cut;
    }
    return s;
}
/// Corollary 5.5: tree reduce = T_visit(P, B, ceil(log2 P) - 1) + stalls (Lemmas 5.3, 5.4).
constexpr uint64_t printed_t_tree(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return (2ull * tr + 1) * ceil_log2(P) + P - 1 + B + printed_t_tree_stall(P, B, tr);
}
/// Lemma 5.6: two-phase without stalls, T_visit(P, B, S + ceil(P/S) - 1).
constexpr uint64_t printed_t_two_phase_nostall(uint32_t P, uint32_t B, uint32_t S, uint32_t tr = kDefaultTr) {
    return printed_t_visit(P, B, S + ceil_div(P, S) - 1, tr);
}
/// Lemmas 5.7 and 5.8 (and T_2phase(P, B, P) = T_chain(P, B)) as printed.
constexpr uint64_t printed_t_two_phase(uint32_t P, uint32_t B, uint32_t S, uint32_t tr = kDefaultTr) {
    if (S == 0 || S > P) return kCostInvalid;
    if (S == P || S == 1) return printed_t_chain(P, B, tr);
    if (2 * S >= P) return max2(printed_t_chain(P - S, B, tr) + B, printed_t_visit(P, B, S, tr));
    const uint64_t cut = uint64_t(S) + 2ull * tr + 1;
    return uint64_t(B) + P - 1 + (uint64_t(S) + ceil_div(P, S)) * (2ull * tr + 1) + (B > cut ? B - cut : 0);
}

// ---------------------------------------------------------------- the pre-order evaluator
/// Shapes of the chapter 5 reduce trees, on logical positions 0..n-1 with root 0 (pre-order).
enum class TreeShape : uint8_t { scalar, chain, binomial, two_phase, optimal };

/// T_OPT(n, B) for n = 1..P (Lemma 5.9) and the split each uses (p_0's last child is p_split).
template <uint32_t MaxP = kMaxCostPes>
struct OptimalTable {
    uint64_t t[MaxP + 1] = {};
    uint32_t split[MaxP + 1] = {};
    uint32_t P = 0, B = 0, tr = 0;

    constexpr OptimalTable() = default;
    constexpr OptimalTable(uint32_t P_, uint32_t B_, uint32_t tr_ = kDefaultTr) : P(P_), B(B_), tr(tr_) {
        if (P_ == 0 || P_ > MaxP) {
            P = 0;
            return;
        }
        coll::optimal_splits(t, split, P_, B_, tr_);
    }
    constexpr bool valid() const { return P != 0; }
    constexpr uint64_t at(uint32_t n) const { return n >= 1 && n <= P ? t[n] : kCostInvalid; }
};

/// The pre-order evaluation of a chapter 5 tree of n logical PEs placed at physical positions
/// pos(0..n-1) (pos(0) is the root). Returns the cycle the root stores its last element, which is
/// also the cycle it emits its last element when it relays the result on instead of storing it
/// (0 for n == 1: nothing to do). `opt` is read for TreeShape::optimal only (built for at least n
/// PEs and the same B and T_R). The trees are the collectives' parent arrays (schedule.hpp
/// tree_*: the one definition, which the wafer's schedules run); host/model_patterns.hpp builds
/// them again from the thesis's text as the independent check of this evaluation.
template <uint32_t MaxP = kMaxCostPes, class Pos>
constexpr uint64_t preorder_cycles(TreeShape shape, uint32_t n, uint32_t B, uint32_t S, Pos pos,
                                   uint32_t tr = kDefaultTr, const OptimalTable<MaxP>* opt = nullptr) {
    if (n == 0 || n > MaxP) return kCostInvalid;
    if (shape == TreeShape::two_phase && (S == 0 || S > n)) return kCostInvalid;
    if (shape == TreeShape::optimal &&
        (opt == nullptr || !opt->valid() || opt->P < n || opt->B != B || opt->tr != tr))
        return kCostInvalid;
    uint32_t parent[MaxP] = {};
    uint64_t L[MaxP + 1] = {};  // cycle node v emits its last wavelet towards its parent; first tree_from_splits' stack
    switch (shape) {
        case TreeShape::scalar: coll::tree_star(parent, n, 0); break;
        case TreeShape::chain: coll::tree_chain(parent, n); break;
        case TreeShape::binomial: coll::tree_binomial(parent, n); break;
        case TreeShape::two_phase: coll::tree_two_phase(parent, n, S); break;
        case TreeShape::optimal: coll::tree_from_splits(parent, n, opt->split, L); break;
    }
    uint32_t first[MaxP] = {};  // v's first child, closest first (0: none); pre-order: a parent precedes its children
    uint32_t next[MaxP] = {};   // the child v takes after this one (0: none)
    for (uint32_t c = n; c-- > 1;) {
        next[c] = first[parent[c]];
        first[parent[c]] = c;
    }
    uint64_t root = 0;
    for (uint32_t v = n; v-- > 0;) {
        uint64_t t = 0;
        const int64_t pv = int64_t(pos(v));
        for (uint32_t c = first[v]; c != 0; c = next[c]) {
            const int64_t dc = int64_t(pos(c)) - pv;
            const uint64_t d = uint64_t(dc < 0 ? -dc : dc);
            t = max2(t + B, L[c] + d + 2ull * tr + 1);
        }
        L[v] = first[v] != 0 ? t : uint64_t(B);
        if (v == 0) root = first[v] != 0 ? t : 0;
    }
    return root;
}

/// Identity placement (reduce to the leftmost PE of a row).
struct Straight {
    constexpr uint32_t operator()(uint32_t j) const { return j; }
};

/// Lemma 5.1, by the model (equal to the printed form).
constexpr uint64_t t_scalar(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return P == 0 ? kCostInvalid : P == 1 ? 0 : printed_t_scalar(P, B, tr);
}
/// Lemma 5.2, by the model (equal to the printed form).
constexpr uint64_t t_chain(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return P == 0 ? kCostInvalid : P == 1 ? 0 : printed_t_chain(P, B, tr);
}
/// Section 5.3, tree reduce by the model: the binomial pre-order tree, evaluated exactly.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_tree(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return preorder_cycles<MaxP>(TreeShape::binomial, P, B, 0, Straight{}, tr);
}
/// Section 5.4, two-phase reduce with group size S by the model (S = P and S = 1 are the chain).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_two_phase(uint32_t P, uint32_t B, uint32_t S, uint32_t tr = kDefaultTr) {
    return preorder_cycles<MaxP>(TreeShape::two_phase, P, B, S, Straight{}, tr);
}
/// The thesis's default group size: ceil(sqrt(P)) (end of Section 5.4).
constexpr uint32_t default_s(uint32_t P) { return P == 0 ? 0 : ceil_sqrt(P); }
/// The S in 1..P with the fewest model cycles (Section 5.4 evaluates every viable S); ties: smallest.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint32_t best_s(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    uint32_t arg = 1;
    uint64_t best = kCostInvalid;
    for (uint32_t S = 1; S <= P; ++S) {
        const uint64_t v = t_two_phase<MaxP>(P, B, S, tr);
        if (v < best) {
            best = v;
            arg = S;
        }
    }
    return arg;
}
/// Section 5.5, Lemma 5.9: the optimal pre-order reduce, T_OPT(P, B).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_optimal(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    if (P == 0 || P > MaxP) return kCostInvalid;
    const OptimalTable<MaxP> opt(P, B, tr);
    return opt.at(P);
}

// ---------------------------------------------------------------- chapter 6: any root
/// Lemma 6.1 as printed: max(T_pl(root + 1) + B, T_pr(P - root - 1) + 2 T_R + 2), given the two
/// groups' reduce times (root in the left group, w.l.o.g.).
constexpr uint64_t printed_t_left_right(uint64_t t_left_group, uint64_t t_right_group, uint32_t B,
                                        uint32_t tr = kDefaultTr) {
    return max2(t_left_group + B, t_right_group + 2ull * tr + 2);
}
/// Lemma 6.2 as printed: left-right with chain on both sides, root in (1, P/2).
constexpr uint64_t printed_t_left_right_chain(uint32_t P, uint32_t B, uint32_t root, uint32_t tr = kDefaultTr) {
    return max2(2ull * root * (tr + 1) + 2ull * B, 2ull * (P - root - 1) * (tr + 1) + B);
}
/// Lemma 6.3 as printed: ring reduce = T_chain(P) + P - 3.
constexpr uint64_t printed_t_ring(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return printed_t_chain(P, B, tr) + P - 3;
}
/// Lemma 6.4 as printed: jump = T_p(P - 1, B) + 2 T_R + 1 + root, given T_p(P - 1, B).
constexpr uint64_t printed_t_jump(uint64_t t_base_p_minus_1, uint32_t root, uint32_t tr = kDefaultTr) {
    return t_base_p_minus_1 + 2ull * tr + 1 + root;
}

/// The ring order of Section 6.2: data flows 0 -> 2 -> 4 -> ... -> (turn) -> ... -> 3 -> 1 -> 0.
/// ring_next(P, q) is the PE that q sends to.
constexpr uint32_t ring_next(uint32_t P, uint32_t q) {
    if (P <= 1) return 0;
    if (q % 2 == 0) {
        if (q + 2 < P) return q + 2;
        return q + 1 < P ? q + 1 : q - 1;  // the turn at the east end
    }
    return q == 1 ? 0 : q - 2;
}
constexpr uint32_t ring_prev(uint32_t P, uint32_t q) {
    for (uint32_t p = 0; p < P; ++p)
        if (ring_next(P, p) == q) return p;
    return 0;
}

namespace detail {
constexpr bool shape_of(Pattern p, TreeShape& out) {
    switch (p) {
        case Pattern::scalar: out = TreeShape::scalar; return true;
        case Pattern::chain: out = TreeShape::chain; return true;
        case Pattern::tree: out = TreeShape::binomial; return true;
        case Pattern::two_phase: out = TreeShape::two_phase; return true;
        case Pattern::optimal: out = TreeShape::optimal; return true;
        default: return false;
    }
}
struct Mirror {  // logical j -> root - j (a group to the west of its root, reduced eastwards)
    uint32_t root;
    constexpr uint32_t operator()(uint32_t j) const { return root - j; }
};
struct Offset {  // logical j -> first + j
    uint32_t first;
    constexpr uint32_t operator()(uint32_t j) const { return first + j; }
};
struct SkipRoot {  // logical j -> the j-th non-root PE counted from `end` (0: west end, 1: east end)
    uint32_t P, root;
    bool from_east;
    constexpr uint32_t operator()(uint32_t j) const {
        const uint32_t x = from_east ? P - 1 - j : j;
        return from_east ? (x <= root ? x - 1 : x) : (x >= root ? x + 1 : x);
    }
};
struct RingOrder {  // logical j -> the PE j steps before `root` along the ring
    uint32_t P, root;
    constexpr uint32_t operator()(uint32_t j) const {
        uint32_t q = root;
        for (uint32_t k = 0; k < j; ++k) q = ring_prev(P, q);
        return q;
    }
};
}  // namespace detail

/// A chapter 5 pattern (scalar, chain, tree, two_phase, optimal) on n logical PEs placed by pos.
template <uint32_t MaxP = kMaxCostPes, class Pos>
constexpr uint64_t leftmost_cycles(Pattern p, uint32_t n, uint32_t B, uint32_t S, Pos pos, uint32_t tr) {
    TreeShape shape = TreeShape::chain;
    if (!detail::shape_of(p, shape) || n == 0 || n > MaxP) return kCostInvalid;
    if (shape == TreeShape::two_phase) {
        if (S == 0) S = default_s(n);
        if (S > n) S = n;
    }
    if (shape == TreeShape::optimal) {
        const OptimalTable<MaxP> opt(n, B, tr);
        return preorder_cycles<MaxP>(shape, n, B, S, pos, tr, &opt);
    }
    return preorder_cycles<MaxP>(shape, n, B, S, pos, tr);
}

/// Section 6.1 left-right reduce to `root` over base `base` by the model: the root joins the
/// smaller side (the west side on a tie); the root's side reduces to the root, the other side to
/// the root's neighbour, which relays its result to the root; the root takes its own side first.
/// With the root at an end there is one side, the whole row: the base itself (not the root alone
/// and the rest relayed through its neighbour, which is jump's tree at an end; docs/wafer_model.md).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_left_right(uint32_t P, uint32_t B, uint32_t root, Pattern base, uint32_t S = 0,
                                uint32_t tr = kDefaultTr) {
    if (P == 0 || root >= P || P > MaxP) return kCostInvalid;
    if (root == 0) return leftmost_cycles<MaxP>(base, P, B, S, Straight{}, tr);
    if (root == P - 1) return leftmost_cycles<MaxP>(base, P, B, S, detail::Mirror{P - 1}, tr);
    const bool root_west = root + 1 <= P - 1 - root;  // root joins the west group {0..root}
    const uint32_t own = root_west ? root + 1 : P - root;
    const uint32_t other = P - own;
    const uint64_t t_own = root_west ? leftmost_cycles<MaxP>(base, own, B, S, detail::Mirror{root}, tr)
                                     : leftmost_cycles<MaxP>(base, own, B, S, detail::Offset{root}, tr);
    if (t_own == kCostInvalid) return kCostInvalid;
    if (other == 0) return t_own;
    const uint64_t t_other = root_west ? leftmost_cycles<MaxP>(base, other, B, S, detail::Offset{root + 1}, tr)
                                       : leftmost_cycles<MaxP>(base, other, B, S, detail::Mirror{root - 1}, tr);
    if (t_other == kCostInvalid) return kCostInvalid;
    const uint64_t l_other = other == 1 ? uint64_t(B) : t_other;  // cycle the neighbour emits its last wavelet
    return max2(t_own + B, l_other + 1 + 2ull * tr + 1);
}

/// Section 6.2 ring reduce to `root` by the model: a chain along the ring order ending at root.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_ring(uint32_t P, uint32_t B, uint32_t root = 0, uint32_t tr = kDefaultTr) {
    if (P == 0 || root >= P || P > MaxP) return kCostInvalid;
    if (P == 1) return 0;
    uint64_t hops = 0;
    uint32_t q = root;
    for (uint32_t k = 0; k + 1 < P; ++k) {
        const uint32_t p = ring_prev(P, q);
        hops += p > q ? p - q : q - p;
        q = p;
    }
    return uint64_t(B) + hops + uint64_t(P - 1) * (2ull * tr + 1);
}

/// Section 6.3 jump reduce to `root` over base `base` by the model: the base reduces the P - 1
/// other PEs to the end PE nearer the root (PE 0 on a tie; PE 1 when the root is PE 0), stepping
/// over the root, and that PE relays the result to the root.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_jump(uint32_t P, uint32_t B, uint32_t root, Pattern base, uint32_t S = 0,
                          uint32_t tr = kDefaultTr) {
    if (P == 0 || root >= P || P > MaxP) return kCostInvalid;
    if (P == 1) return 0;
    const bool from_east = root > P - 1 - root;
    const detail::SkipRoot pos{P, root, from_east};
    const uint64_t t_base = leftmost_cycles<MaxP>(base, P - 1, B, S, pos, tr);
    if (t_base == kCostInvalid) return kCostInvalid;
    const uint64_t l_end = P - 1 == 1 ? uint64_t(B) : t_base;
    const uint32_t e = pos(0);
    return l_end + (e > root ? e - root : root - e) + 2ull * tr + 1;
}

/// A 1D reduce to `root` by a pattern (and its base, for left_right and jump). Chapter 5 patterns
/// reduce to PE 0, or to PE P-1 mirrored; any other root is invalid for them.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_reduce_1d(Pattern p, Pattern base, uint32_t P, uint32_t B, uint32_t root, uint32_t S = 0,
                               uint32_t tr = kDefaultTr) {
    if (P == 0 || root >= P || P > MaxP) return kCostInvalid;
    TreeShape shape = TreeShape::chain;
    if (detail::shape_of(p, shape)) {
        if (root == 0) return leftmost_cycles<MaxP>(p, P, B, S, Straight{}, tr);
        if (root == P - 1) return leftmost_cycles<MaxP>(p, P, B, S, detail::Mirror{P - 1}, tr);
        return kCostInvalid;
    }
    switch (p) {
        case Pattern::left_right: return t_left_right<MaxP>(P, B, root, base, S, tr);
        case Pattern::jump: return t_jump<MaxP>(P, B, root, base, S, tr);
        case Pattern::ring: return t_ring<MaxP>(P, B, root, tr);
        default: return kCostInvalid;
    }
}

/// Section 6.4: 2D reduce to p_{i,j} on M x N: the 1D pattern down every column to row i, then
/// along row i to column j: T_p(M, B, i) + T_p(N, B, j) (the row phase starts when the columns end).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_reduce_2d(uint32_t M, uint32_t N, uint32_t B, uint32_t i, uint32_t j, Pattern p,
                               Pattern base = Pattern::chain, uint32_t S = 0, uint32_t tr = kDefaultTr) {
    const uint64_t a = t_reduce_1d<MaxP>(p, base, M, B, i, S, tr);
    const uint64_t b = t_reduce_1d<MaxP>(p, base, N, B, j, S, tr);
    return a == kCostInvalid || b == kCostInvalid ? kCostInvalid : a + b;
}

// ---------------------------------------------------------------- chapter 7: allreduce
/// Lemma 7.1 as printed (root < P/2): T_p(P, B, root) + T_broadcast(P - root, B).
constexpr uint64_t printed_t_allreduce_naive(uint64_t t_reduce, uint32_t P, uint32_t B, uint32_t root,
                                             uint32_t tr = kDefaultTr) {
    const uint32_t r = root < P - 1 - root ? root : P - 1 - root;
    return t_reduce + printed_t_broadcast(P - r, B, tr);
}
/// Naive allreduce by the model: the reduce, then the root broadcasts (phases do not overlap).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_allreduce_naive(uint32_t P, uint32_t B, uint32_t root, Pattern p, Pattern base = Pattern::chain,
                                     uint32_t S = 0, uint32_t tr = kDefaultTr) {
    const uint64_t r = t_reduce_1d<MaxP>(p, base, P, B, root, S, tr);
    if (r == kCostInvalid) return kCostInvalid;
    return r + t_broadcast(P, B, root, tr);
}
/// Lemma 7.2 as printed: ring allreduce, 2(P-1) rounds of B/P + T_R + 2 + T_R + 1 cycles.
constexpr uint64_t printed_t_allreduce_ring(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    return 2ull * (P - 1) * (uint64_t(B) / P + 2ull * tr + 3);
}

namespace detail {
/// Segment s of B split into g near-equal parts (the first B % g are one longer).
constexpr uint32_t seg_len(uint32_t B, uint32_t g, uint32_t s) { return B / g + (s < B % g ? 1 : 0); }

/// One ring allreduce of B elements among the g PEs `member(0..g-1)` (member(k) sends to
/// member((k+1) % g) in each of 2(g-1) rounds: reduce-scatter, then allgather), each PE starting
/// round 0 in cycle start[member(k)] and every next round in the cycle after its previous one
/// ended. Writes each member's last cycle to end[member(k)]. No two members' streams share a
/// link direction (true for the ring order of Section 6.2).
template <class Member, class Pos>
constexpr void ring_rounds(uint32_t g, uint32_t B, Member member, Pos pos, const uint64_t* start, uint64_t* end,
                           uint64_t* S, uint64_t* D, uint32_t tr) {
    for (uint32_t k = 0; k < g; ++k) S[k] = start[member(k)];
    for (uint32_t R = 0; R + 2 < 2 * g; ++R) {
        const bool rs = R + 1 < g;
        const uint32_t r = rs ? R : R - (g - 1);
        for (uint32_t k = 0; k < g; ++k) {
            const uint32_t prev = (k + g - 1) % g;
            const uint32_t sseg = rs ? (k + g - r % g) % g : (k + 1 + g - r % g) % g;
            const uint32_t rseg = rs ? (k + 2 * g - r % g - 1) % g : (k + g - r % g) % g;
            const uint32_t ns = seg_len(B, g, sseg), nr = seg_len(B, g, rseg);
            const int64_t dd = int64_t(pos(member(k))) - int64_t(pos(member(prev)));
            const uint64_t d = uint64_t(dd < 0 ? -dd : dd);
            uint64_t done = S[k] - 1;
            if (ns > 0) done = max2(done, S[k] + ns - 1);
            if (nr > 0) done = max2(done, max2(S[k] + nr - 1, S[prev] + nr - 1 + 2ull * tr + d + 1));
            D[k] = done;
        }
        for (uint32_t k = 0; k < g; ++k) S[k] = D[k] + 1;
    }
    for (uint32_t k = 0; k < g; ++k) end[member(k)] = S[k] - 1;
}
struct RingMember {  // ring index k -> PE
    uint32_t P;
    constexpr uint32_t operator()(uint32_t k) const {
        uint32_t q = 0;
        for (uint32_t i = 0; i < k; ++i) q = ring_next(P, q);
        return q;
    }
};
}  // namespace detail

/// Section 7.2 ring allreduce by the model: 2(P-1) rounds over the ring order of Section 6.2
/// (segments of ceil or floor B/P), each PE starting a round when it has finished the last one.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_allreduce_ring(uint32_t P, uint32_t B, uint32_t tr = kDefaultTr) {
    if (P == 0 || P > MaxP) return kCostInvalid;
    if (P == 1) return 0;
    uint64_t start[MaxP] = {}, end[MaxP] = {}, S[MaxP] = {}, D[MaxP] = {};
    uint32_t member[MaxP] = {};
    uint32_t q = 0;
    for (uint32_t k = 0; k < P; ++k, q = ring_next(P, q)) member[k] = q;
    for (uint32_t p = 0; p < P; ++p) start[p] = 1;
    detail::ring_rounds(P, B, [&](uint32_t k) { return member[k]; }, Straight{}, start, end, S, D, tr);
    uint64_t t = 0;
    for (uint32_t p = 0; p < P; ++p) t = max2(t, end[p]);
    return t;
}

/// log_G(P) if P is a power of G (G >= 2), else 0.
constexpr uint32_t log_of(uint32_t P, uint32_t G) {
    if (G < 2 || P < 1) return 0;
    uint32_t k = 0;
    uint64_t x = 1;
    while (x < P) {
        x *= G;
        ++k;
    }
    return x == P ? k : 0;
}
/// Section 7.3, Lemma 7.3 as printed: the sum over the log_G(P) rounds of a ring allreduce of G
/// PEs whose neighbours are d_i hops apart (d_i = 2 G^(i-1), or 2^(i-1) for G = 2), each round
/// costed like Lemma 7.2 with d_i in place of 2: 2(G-1)(B/G + 2 T_R + d_i + 1). (The printed sum
/// runs to log_2(G); it can only mean log_G(P), the number of rounds.)
constexpr uint64_t printed_t_butterfly(uint32_t P, uint32_t B, uint32_t G, uint32_t tr = kDefaultTr) {
    const uint32_t k = log_of(P, G);
    if (k == 0) return P == 1 ? 0 : kCostInvalid;
    uint64_t t = 0, gi = 1;
    for (uint32_t i = 1; i <= k; ++i, gi *= G) {
        const uint64_t d = G == 2 ? gi : 2 * gi;
        t += 2ull * (G - 1) * (uint64_t(B) / G + 2ull * tr + d + 1);
    }
    return t;
}
/// Butterfly by the model's rounds, IGNORING link contention between the groups of a round (a
/// lower bound): in round i, groups of G PEs G^(i-1) apart run a ring allreduce (ring order over
/// the members). The simulator shares links between interleaved groups and is slower.
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_butterfly_no_contention(uint32_t P, uint32_t B, uint32_t G, uint32_t tr = kDefaultTr) {
    const uint32_t k = log_of(P, G);
    if (P > MaxP) return kCostInvalid;
    if (k == 0) return P == 1 ? 0 : kCostInvalid;
    uint64_t cur[MaxP] = {}, nxt[MaxP] = {}, S[MaxP] = {}, D[MaxP] = {};
    for (uint32_t p = 0; p < P; ++p) cur[p] = 1;
    uint32_t d = 1;
    for (uint32_t i = 1; i <= k; ++i, d *= G) {
        for (uint32_t base = 0; base < P; ++base) {
            if ((base / d) % G != 0) continue;  // base: the member 0 of its group
            const uint32_t b0 = base;
            const uint32_t dd = d;
            const uint32_t gg = G;
            detail::ring_rounds(
                G, B, [b0, dd, gg](uint32_t m) { return b0 + detail::RingMember{gg}(m)*dd; }, Straight{}, cur, nxt, S,
                D, tr);
        }
        for (uint32_t p = 0; p < P; ++p) cur[p] = nxt[p] + 1;
    }
    uint64_t t = 0;
    for (uint32_t p = 0; p < P; ++p) t = max2(t, cur[p] - 1);
    return t;
}

/// Section 7.4: 2D allreduce, a 1D allreduce down every column, then along every row:
/// T_p(M, B) + T_p(N, B).
constexpr uint64_t t_allreduce_2d(uint64_t t_columns, uint64_t t_rows) {
    return t_columns == kCostInvalid || t_rows == kCostInvalid ? kCostInvalid : t_columns + t_rows;
}

// ---------------------------------------------------------------- any pattern by its description
namespace detail {
template <uint32_t MaxP>
constexpr uint64_t allreduce_1d(const PatternArgs& a, uint32_t depth, uint32_t P, uint32_t B, uint32_t root,
                                uint32_t tr) {
    const Pattern p = depth == 0 ? a.pattern : a.base[depth - 1];
    const Pattern base = a.base[depth];
    const Pattern base2 = depth + 1 < kMaxBaseDepth ? a.base[depth + 1] : Pattern::chain;
    switch (p) {
        case Pattern::allreduce_naive: return t_allreduce_naive<MaxP>(P, B, root, base, base2, a.s, tr);
        case Pattern::allreduce_ring: return t_allreduce_ring<MaxP>(P, B, tr);
        case Pattern::butterfly: return t_butterfly_no_contention<MaxP>(P, B, a.g == 0 ? 3 : a.g, tr);
        default: return kCostInvalid;
    }
}
}  // namespace detail

/// The model's cycles for a run described by `a` on `rows` x `cols` PEs (1D: rows == 1) and B
/// elements; kCostInvalid if `check_args` rejects it or the model cannot evaluate it (butterfly:
/// P must be a power of G; its value ignores link contention, see t_butterfly_no_contention).
template <uint32_t MaxP = kMaxCostPes>
constexpr uint64_t t_pattern(const PatternArgs& a, uint32_t rows, uint32_t cols, uint32_t B,
                             uint32_t tr = kDefaultTr) {
    if (check_args(a, rows, cols) != ArgsError::ok) return kCostInvalid;
    const uint32_t P = cols;
    switch (a.pattern) {
        case Pattern::scalar:
        case Pattern::chain:
        case Pattern::tree:
        case Pattern::two_phase:
        case Pattern::optimal:
        case Pattern::left_right:
        case Pattern::ring:
        case Pattern::jump: return t_reduce_1d<MaxP>(a.pattern, a.base[0], P, B, a.root, a.s, tr);
        case Pattern::reduce_2d:
            return t_reduce_2d<MaxP>(rows, cols, B, a.root_y, a.root, a.base[0], a.base[1], a.s, tr);
        case Pattern::bcast_1d: return t_broadcast(P, B, a.root, tr);
        case Pattern::bcast_2d: return t_broadcast_2d(rows, cols, B, a.root_y, a.root, tr);
        case Pattern::allreduce_naive:
        case Pattern::allreduce_ring:
        case Pattern::butterfly: return detail::allreduce_1d<MaxP>(a, 0, P, B, a.root, tr);
        case Pattern::allreduce_2d:
            return t_allreduce_2d(detail::allreduce_1d<MaxP>(a, 1, rows, B, a.root_y, tr),
                                  detail::allreduce_1d<MaxP>(a, 1, cols, B, a.root, tr));
    }
    return kCostInvalid;
}

}  // namespace kccl::wafer::cost

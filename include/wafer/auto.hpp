// kccl/wafer/auto.hpp — "auto": the pattern, its parameters and its base chosen from the cost
// model of the Cerebras WSE reduce/allreduce thesis (wafer/cost.hpp).
//
// Contract
//   * `choose(req)` evaluates every candidate run for the request (collective, row of P PEs or
//     M x N grid, B, root, T_R) with `cost::t_pattern` and returns the cheapest one, its modelled
//     cycles and how many candidates it looked at. Ties go to the candidate listed first (simpler
//     patterns are listed first). The rule, per collective:
//       reduce (1D, root r)    r at an end: scalar, chain, tree, two_phase (every S), optimal;
//                              any r: ring, and left_right and jump over each of those five
//                              bases (two_phase: the default S and the best S for the bigger side)
//       reduce (2D, (i, j))    reduce_2d over each base above that can reach both i and j
//       broadcast              bcast_1d / bcast_2d (the only broadcast, optimal by Section 4.1)
//       allreduce (1D)         allreduce_naive over every 1D reduce above, at root 0, at the
//                              middle PE and at the three roots a sweep of every root finds best
//                              (left_right over each base and ring, costed from per-size tables);
//                              allreduce_ring; butterfly for every G with P = G^k
//       allreduce (2D)         allreduce_2d over each 1D allreduce above, the naive one rooted at
//                              (0, 0), at the middles, and at each axis's best swept root
//     Butterfly is costed without link sharing between groups (a lower bound, see cost.hpp); the
//     thesis finds it never fastest, and so does the model, so the bound never decides.
//   * `describe(args, out, cap)` writes a human-readable name: "jump(two_phase S=23) root=255".
//   * Host-oriented: C++17, freestanding, no heap, but it builds per-PE tables on the stack
//     (tens of KiB at P = 1024); P, M, N <= cost::kMaxCostPes.
#pragma once

#include <wafer/cost.hpp>
#include <wafer/patterns.hpp>
#include <stdint.h>

namespace kccl::wafer {

struct AutoRequest {
    coll::Op collective = coll::Op::reduce;  ///< reduce, all_reduce or broadcast
    uint32_t rows = 1;    ///< M (1 for a row)
    uint32_t cols = 1;    ///< N, or P for a row
    uint32_t B = 1;       ///< elements (wavelets)
    uint32_t root = 0;    ///< root PE (1D) or root column (2D); allreduce: ignored (auto picks)
    uint32_t root_y = 0;  ///< root row (2D)
    uint32_t tr = cost::kDefaultTr;
};

struct AutoChoice {
    PatternArgs args;
    uint64_t cycles = cost::kCostInvalid;  ///< kCostInvalid: nothing could be evaluated (bad request)
    uint32_t candidates = 0;               ///< runs evaluated
};

namespace detail {
inline constexpr Pattern kLeftmost[] = {Pattern::scalar, Pattern::chain, Pattern::tree, Pattern::two_phase,
                                        Pattern::optimal};

struct Best {
    AutoChoice c;
    constexpr void offer(const PatternArgs& a, uint64_t t) {
        ++c.candidates;
        if (t < c.cycles) {
            c.cycles = t;
            c.args = a;
        }
    }
};

// Every 1D reduce run to `root` on `n` PEs (pattern at stack depth `d` of a), offered to f.
template <class F>
constexpr void each_reduce(PatternArgs a, uint32_t d, uint32_t n, uint32_t root, uint32_t B, uint32_t tr, F&& f) {
    auto set = [&](Pattern p, Pattern base) {
        if (d == 0) {
            a.pattern = p;
            a.base[0] = base;
        } else {
            a.base[d - 1] = p;
            if (d < kMaxBaseDepth) a.base[d] = base;
        }
    };
    const bool end = root == 0 || root + 1 == n;
    for (Pattern p : kLeftmost) {
        if (!end) break;
        if (p == Pattern::two_phase) {
            set(p, Pattern::chain);
            a.s = cost::best_s(n, B, tr);
            f(a);
            a.s = 0;
        } else {
            set(p, Pattern::chain);
            f(a);
        }
    }
    set(Pattern::ring, Pattern::chain);
    f(a);
    const uint32_t bigger = root + 1 > n - root ? root + 1 : n - root;
    const Pattern wraps[2] = {Pattern::left_right, Pattern::jump};
    for (Pattern wrap : wraps) {
        if (d + 1 > kMaxBaseDepth) break;
        for (Pattern b : kLeftmost) {
            set(wrap, b);
            if (b == Pattern::two_phase) {
                a.s = 0;
                f(a);
                a.s = cost::best_s(wrap == Pattern::jump ? n - 1 : bigger, B, tr);
                if (a.s == 0) a.s = 1;
            }
            f(a);
            a.s = 0;
        }
    }
}

/// The naive allreduce's root matters (reduce to it, broadcast from it). Sweep every root with
/// left_right over each chapter 5 base (whose halves cost T_base(n), n their sizes: one table per
/// base) and ring, and return the `k` best roots (fewest cycles first) in `out`.
template <uint32_t MaxP = cost::kMaxCostPes>
constexpr uint32_t best_naive_roots(uint32_t n, uint32_t B, uint32_t tr, uint32_t* out, uint32_t k) {
    if (n == 0 || n > MaxP || k == 0) return 0;
    const cost::OptimalTable<MaxP> opt(n, B, tr);
    uint64_t tb[5][MaxP + 1] = {};
    for (uint32_t m = 1; m <= n; ++m) {
        tb[0][m] = cost::t_scalar(m, B, tr);
        tb[1][m] = cost::t_chain(m, B, tr);
        tb[2][m] = cost::t_tree<MaxP>(m, B, tr);
        tb[3][m] = cost::t_two_phase<MaxP>(m, B, cost::default_s(m), tr);
        tb[4][m] = opt.at(m);
    }
    uint64_t best_t[8] = {};
    uint32_t found = 0;
    if (k > 8) k = 8;
    for (uint32_t r = 0; r < n; ++r) {
        const bool root_west = r + 1 <= n - 1 - r;
        const uint32_t own = root_west ? r + 1 : n - r, other = n - own;
        uint64_t t = cost::t_ring<MaxP>(n, B, r, tr);
        const bool end = r == 0 || r + 1 == n;  // left_right at an end: the base over the row
        for (uint32_t b = 0; b < 5; ++b) {
            const uint64_t lo = other == 0 ? 0 : other == 1 ? uint64_t(B) : tb[b][other];
            const uint64_t v = end ? tb[b][n] : cost::max2(tb[b][own] + B, lo + 2ull * tr + 2);
            t = cost::min2(t, v);
        }
        t += cost::t_broadcast(n, B, r, tr);
        // insert into the k best
        uint32_t pos = found;
        while (pos > 0 && best_t[pos - 1] > t) --pos;
        if (pos >= k) continue;
        for (uint32_t i = (found < k ? found : k - 1); i > pos; --i) {
            best_t[i] = best_t[i - 1];
            out[i] = out[i - 1];
        }
        best_t[pos] = t;
        out[pos] = r;
        if (found < k) ++found;
    }
    return found;
}

template <class F>
constexpr void each_allreduce(PatternArgs a, uint32_t d, uint32_t n, uint32_t B, uint32_t tr, F&& f,
                              bool sweep_roots = true) {
    auto set = [&](Pattern p) {
        if (d == 0)
            a.pattern = p;
        else
            a.base[d - 1] = p;
    };
    set(Pattern::allreduce_naive);
    uint32_t roots[5] = {0, (n - 1) / 2, 0, 0, 0};
    uint32_t nroots = 2;
    if (sweep_roots) nroots += best_naive_roots(n, B, tr, roots + 2, 3);
    for (uint32_t k = 0; k < nroots; ++k) {
        const uint32_t root = roots[k];
        bool seen = false;
        for (uint32_t j = 0; j < k; ++j) seen |= roots[j] == root;
        if (seen) continue;
        if (d == 0) a.root = root;
        each_reduce(a, d + 1, n, root, B, tr, f);
    }
    if (d == 0) a.root = 0;
    set(Pattern::allreduce_ring);
    f(a);
    set(Pattern::butterfly);
    for (uint32_t G = 2; G <= 16 && G <= n; ++G)
        if (cost::log_of(n, G) != 0) {
            a.g = G;
            f(a);
        }
    a.g = 0;
}
}  // namespace detail

constexpr AutoChoice choose(const AutoRequest& q) {
    detail::Best best;
    const uint32_t M = q.rows, N = q.cols;
    if (M == 0 || N == 0 || M > cost::kMaxCostPes || N > cost::kMaxCostPes || q.B == 0) return best.c;
    auto eval = [&](const PatternArgs& a) { best.offer(a, cost::t_pattern(a, M, N, q.B, q.tr)); };
    PatternArgs a;
    if (q.collective == coll::Op::broadcast) {
        a.pattern = M == 1 ? Pattern::bcast_1d : Pattern::bcast_2d;
        a.root = q.root;
        a.root_y = q.root_y;
        eval(a);
        return best.c;
    }
    if (M == 1) {
        if (q.collective == coll::Op::reduce) {
            a.root = q.root;
            detail::each_reduce(a, 0, N, q.root, q.B, q.tr, eval);
        } else {
            detail::each_allreduce(a, 0, N, q.B, q.tr, eval);
        }
        return best.c;
    }
    if (q.collective == coll::Op::reduce) {
        a.pattern = Pattern::reduce_2d;
        a.root = q.root;
        a.root_y = q.root_y;
        // The same base on both axes: enumerate on the longer axis, evaluate on the grid.
        detail::each_reduce(a, 1, M > N ? M : N, M > N ? q.root_y : q.root, q.B, q.tr, eval);
        if (M != N) detail::each_reduce(a, 1, M > N ? N : M, M > N ? q.root : q.root_y, q.B, q.tr, eval);
        return best.c;
    }
    a.pattern = Pattern::allreduce_2d;
    // Naive bases at (0, 0), at the middles and at each axis's best root; the rest ignore the root.
    uint32_t rx[3] = {0, (N - 1) / 2, 0}, ry[3] = {0, (M - 1) / 2, 0};
    uint32_t nr = 2;
    if (detail::best_naive_roots(N, q.B, q.tr, rx + 2, 1) == 1 && detail::best_naive_roots(M, q.B, q.tr, ry + 2, 1) == 1)
        nr = 3;
    for (uint32_t k = 0; k < nr; ++k) {
        a.root = rx[k];
        a.root_y = ry[k];
        detail::each_allreduce(a, 1, M > N ? M : N, q.B, q.tr, eval, false);
    }
    return best.c;
}

/// "two_phase S=23", "jump(two_phase S=23) root=255", "allreduce_2d(allreduce_naive(left_right(chain)))".
constexpr uint32_t describe(const PatternArgs& a, char* out, uint32_t cap) {
    uint32_t n = 0;
    auto put = [&](const char* s) {
        for (; *s != '\0'; ++s) {
            if (n + 1 < cap) out[n] = *s;
            ++n;
        }
    };
    auto num = [&](uint32_t v) {
        char d[11] = {};
        int k = 0;
        do {
            d[k++] = char('0' + v % 10);
            v /= 10;
        } while (v != 0 && k < 10);
        while (k > 0) {
            const char c[2] = {d[--k], '\0'};
            put(c);
        }
    };
    Pattern st[kMaxBaseDepth + 1] = {};
    const uint32_t depth = pattern_stack(a, st);
    for (uint32_t i = 0; i < depth; ++i) {
        put(pattern_name(st[i]));
        if (i + 1 < depth) put("(");
    }
    for (uint32_t i = 1; i < depth; ++i) put(")");
    if (args_take(a, param_s) && a.s != 0) {
        put(" S=");
        num(a.s);
    }
    if (args_take(a, param_g)) {
        put(" G=");
        num(a.g == 0 ? 3 : a.g);
    }
    if (pattern_info(a.pattern).takes(param_root)) {
        put(" root=");
        num(a.root);
        if (pattern_info(a.pattern).dim == Dim::two_d) {
            put(",");
            num(a.root_y);
        }
    }
    if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

}  // namespace kccl::wafer

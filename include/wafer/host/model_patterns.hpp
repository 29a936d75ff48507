// kccl/wafer/host/model_patterns.hpp — every pattern of the Cerebras WSE reduce/allreduce thesis
// written as streams + programs for the reference simulator (model_sim.hpp).
//
// WHAT IT IS
//   The communication structure of each pattern, as the thesis describes it, built on a
//   `ModelSim` and run: `simulate(args, rows, cols, B, t_r)` returns the model's cycles for any
//   `PatternArgs` (patterns.hpp). THE INDEPENDENT CHECK: every other user of the thesis's trees
//   (the schedules, the cost model, the emulated fabric) takes them from one definition, the
//   collectives' parent arrays (collectives/schedule.hpp tree_*); this file alone writes the
//   trees, ring order and optimal-tree search again from the thesis's text and uses neither
//   schedule.hpp nor cost.hpp, so the tests comparing the cost model and the emulation with it
//   compare two independently written things.
//
// THE STRUCTURES
//   * Reduce trees (chapter 5, and the trees chapter 6 builds from them): every non-root PE sends
//     one stream to its parent. A PE takes its children's streams in its order (closest first;
//     left-right: its own side first), stores all but the last and relays the last towards its
//     parent (add + send per wavelet). A leaf sends its vector. Stream keys follow the pre-order
//     of the tree, so where two streams share a link or an off-ramp, the one taken first passes
//     first (the switch positions of the thesis's implementations).
//       scalar: every PE is a child of PE 0.  chain: PE v's child is v+1.
//       tree: binomial: v's children are v + 1, v + 2, v + 4, ... below v's lowest set bit.
//       two_phase(S): groups of S from the east end, chain inside a group, chain over leaders.
//       optimal: Lemma 5.9's recursion, searched here by memoised recursion over the split.
//   * left_right, jump, ring: trees over the row with a root anywhere (Sections 6.1-6.3).
//   * reduce_2d: a tree down every column to the root's row, then one along that row; the row
//     phase of a PE starts after its column phase (Section 6.4).
//   * Broadcasts: one multicast stream (Sections 4.1, 4.2); allreduce_naive: reduce, then
//     broadcast from the root (7.1); allreduce_ring: 2(P-1) rounds, each PE sending one segment
//     to its ring successor and receiving one from its predecessor per round (7.2); butterfly:
//     log_G(P) rounds of ring allreduces in groups of G PEs G^(i-1) apart, all groups of a round
//     at once, sharing links (7.3); allreduce_2d: columns, then rows (7.4).
#pragma once

#include <wafer/host/model_sim.hpp>
#include <wafer/patterns.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kccl::wafer::host {

/// A reduce tree over PEs: children[v] in the order v takes them; root has parent -1.
struct ReduceTree {
    uint32_t root = 0;
    std::vector<std::vector<uint32_t>> children;  ///< indexed by the node's id
};

/// Logical trees on 0..n-1 (root 0), the chapter 5 shapes.
inline ReduceTree scalar_tree(uint32_t n) {
    ReduceTree t;
    t.children.resize(n);
    for (uint32_t c = 1; c < n; ++c) t.children[0].push_back(c);
    return t;
}
inline ReduceTree chain_tree(uint32_t n) {
    ReduceTree t;
    t.children.resize(n);
    for (uint32_t v = 0; v + 1 < n; ++v) t.children[v].push_back(v + 1);
    return t;
}
inline ReduceTree binomial_tree(uint32_t n) {
    ReduceTree t;
    t.children.resize(n);
    for (uint32_t v = 1; v < n; ++v) t.children[v - (v & (~v + 1))].push_back(v);  // parent: clear lowest bit
    for (auto& c : t.children) std::sort(c.begin(), c.end());
    return t;
}
inline ReduceTree two_phase_tree(uint32_t n, uint32_t S) {
    if (S < 1 || S > n) throw ModelSimError("model_patterns: two_phase needs 1 <= S <= P");
    ReduceTree t;
    t.children.resize(n);
    std::vector<uint32_t> leaders;
    for (int64_t g = int64_t(n) - S; g > -int64_t(S); g -= S) leaders.push_back(uint32_t(std::max<int64_t>(g, 0)));
    std::reverse(leaders.begin(), leaders.end());  // ascending; leaders[0] == 0
    for (size_t k = 0; k < leaders.size(); ++k) {
        const uint32_t end = k + 1 < leaders.size() ? leaders[k + 1] : n;
        for (uint32_t v = leaders[k]; v + 1 < end; ++v) t.children[v].push_back(v + 1);
        if (k + 1 < leaders.size()) t.children[leaders[k]].push_back(leaders[k + 1]);
    }
    return t;
}
/// Lemma 5.9 searched by memoised recursion; the tree it describes.
inline ReduceTree optimal_tree(uint32_t n, uint32_t B, uint32_t tr) {
    std::vector<uint64_t> memo(n + 1, ~uint64_t(0));
    std::vector<uint32_t> split(n + 1, 0);
    std::function<uint64_t(uint32_t)> T = [&](uint32_t m) -> uint64_t {
        if (m <= 1) return 0;
        if (memo[m] != ~uint64_t(0)) return memo[m];
        uint64_t best = ~uint64_t(0);
        for (uint32_t i = 1; i < m; ++i) {
            const uint64_t v = i == m - 1 ? std::max<uint64_t>(T(m - 1) + B, uint64_t(B) + m + 2 * tr)
                                          : std::max<uint64_t>(T(i) + B, T(m - i) + i + 2 * tr + 1);
            if (v < best) {
                best = v;
                split[m] = i;
            }
        }
        return memo[m] = best;
    };
    T(n);
    ReduceTree t;
    t.children.resize(n);
    std::function<void(uint32_t, uint32_t)> build = [&](uint32_t first, uint32_t m) {
        if (m <= 1) return;
        const uint32_t i = split[m];
        build(first, i);                       // p_first's earlier children: those of [first, first + i)
        t.children[first].push_back(first + i);  // then the group [first + i, first + m), taken last
        build(first + i, m - i);
    };
    build(0, n);
    return t;
}

/// Place logical tree `lt` on PEs `at[j]`, grafted under `parent_pe` of `into` (or as its root).
inline void graft(ReduceTree& into, const ReduceTree& lt, const std::vector<uint32_t>& at, int64_t parent_pe) {
    for (uint32_t v = 0; v < lt.children.size(); ++v)
        for (uint32_t c : lt.children[v]) into.children[at[v]].push_back(at[c]);
    if (parent_pe < 0)
        into.root = at[0];
    else
        into.children[size_t(parent_pe)].push_back(at[0]);
}

class PatternBuilder {
public:
    PatternBuilder(ModelSim& sim, uint32_t B, uint32_t tr) : sim_(sim), B_(B), tr_(tr) {}

    /// Streams and program phases of a reduce over `t` (node ids are PE ids).
    void reduce(const ReduceTree& t) {
        std::vector<int64_t> out(sim_.pes(), -1);
        // Pre-order from the root: streams get keys in that order.
        std::vector<uint32_t> order;
        std::vector<uint32_t> stack{t.root};
        std::vector<int64_t> parent(sim_.pes(), -1);
        while (!stack.empty()) {
            const uint32_t v = stack.back();
            stack.pop_back();
            order.push_back(v);
            const auto& ch = t.children[v];
            for (size_t i = ch.size(); i-- > 0;) {
                parent[ch[i]] = v;
                stack.push_back(ch[i]);
            }
        }
        for (uint32_t v : order) {
            if (v == t.root) continue;
            const uint32_t s = sim_.add_stream(v, B_, key_++);
            sim_.deliver(s, sim_.path(s, 0, uint32_t(parent[v])));
            out[v] = s;
        }
        for (uint32_t v : order) {
            const auto& ch = t.children[v];
            for (size_t i = 0; i < ch.size(); ++i) {
                sim_.phase(v);
                const bool last = i + 1 == ch.size();
                if (last && v != t.root)
                    sim_.op(v, ModelSim::OpKind::relay, out[ch[i]], out[v], B_);
                else
                    sim_.op(v, ModelSim::OpKind::store, out[ch[i]], -1, B_);
            }
            if (ch.empty() && v != t.root) {
                sim_.phase(v);
                sim_.op(v, ModelSim::OpKind::send, -1, out[v], B_);
            }
        }
    }

    /// Broadcast from `line[root]` along `line` (a row or column, in order).
    void broadcast(const std::vector<uint32_t>& line, uint32_t root) {
        if (line.size() < 2) return;
        const uint32_t s = sim_.add_stream(line[root], B_, key_++);
        if (root > 0) sim_.deliver(s, sim_.path(s, 0, line.front(), true));
        if (root + 1 < line.size()) sim_.deliver(s, sim_.path(s, 0, line.back(), true));
        for (size_t k = 0; k < line.size(); ++k) {
            sim_.phase(line[k]);
            if (k == root)
                sim_.op(line[k], ModelSim::OpKind::send, -1, s, B_);
            else
                sim_.op(line[k], ModelSim::OpKind::store, s, -1, B_);
        }
    }

    /// 2D broadcast from (rx, ry): along the row, every row router also along its column.
    void broadcast_2d(uint32_t rx, uint32_t ry) {
        const uint32_t C = sim_.cols(), R = sim_.rows();
        if (C * R < 2) return;
        const uint32_t root = sim_.pe(rx, ry);
        const uint32_t s = sim_.add_stream(root, B_, key_++);
        std::vector<uint32_t> row_node(C, 0);
        row_node[rx] = 0;
        for (uint32_t x = rx; x-- > 0;) row_node[x] = sim_.hop(s, row_node[x + 1], Dir::W);
        for (uint32_t x = rx + 1; x < C; ++x) row_node[x] = sim_.hop(s, row_node[x - 1], Dir::E);
        for (uint32_t x = 0; x < C; ++x) {
            if (x != rx) sim_.deliver(s, row_node[x]);
            if (ry > 0) sim_.deliver(s, sim_.path(s, row_node[x], sim_.pe(x, 0), true));
            if (ry + 1 < R) sim_.deliver(s, sim_.path(s, row_node[x], sim_.pe(x, R - 1), true));
        }
        for (uint32_t p = 0; p < C * R; ++p) {
            sim_.phase(p);
            if (p == root)
                sim_.op(p, ModelSim::OpKind::send, -1, s, B_);
            else
                sim_.op(p, ModelSim::OpKind::store, s, -1, B_);
        }
    }

    /// One ring allreduce among `members` (PE ids; member k sends to member k+1 mod g), all
    /// groups given at once so that they share links. Every stream gets `key`: the groups'
    /// streams are on different colors, which no switch position orders, so where they meet on
    /// a link they share it cycle by cycle (a group's own streams never share a link).
    void ring_allreduce(const std::vector<std::vector<uint32_t>>& groups, uint64_t key) {
        if (groups.empty()) return;
        const uint32_t g = uint32_t(groups[0].size());
        if (g < 2) return;
        auto seg = [&](uint32_t s) { return B_ / g + (s < B_ % g ? 1u : 0u); };
        for (uint32_t R = 0; R + 2 < 2 * g; ++R) {
            const bool rs = R + 1 < g;
            const uint32_t r = rs ? R : R - (g - 1);
            for (const auto& m : groups) {
                std::vector<int64_t> st(g, -1);
                std::vector<uint32_t> ns(g);
                for (uint32_t k = 0; k < g; ++k) {
                    const uint32_t sseg = rs ? (k + g - r) % g : (k + 1 + g - r) % g;
                    ns[k] = seg(sseg);
                    if (ns[k] == 0) continue;
                    st[k] = sim_.add_stream(m[k], ns[k], key);
                    sim_.deliver(uint32_t(st[k]), sim_.path(uint32_t(st[k]), 0, m[(k + 1) % g]));
                }
                for (uint32_t k = 0; k < g; ++k) {
                    const uint32_t prev = (k + g - 1) % g;
                    sim_.phase(m[k]);
                    if (st[k] >= 0) sim_.op(m[k], ModelSim::OpKind::send, -1, st[k], ns[k]);
                    if (st[prev] >= 0) sim_.op(m[k], ModelSim::OpKind::store, st[prev], -1, ns[prev]);
                }
            }
        }
    }

    uint64_t take_key() { return key_++; }

private:
    ModelSim& sim_;
    uint32_t B_, tr_;
    uint64_t key_ = 0;
};

/// The ring order of Section 6.2 over n positions: 0, 2, 4, ..., (turn), ..., 5, 3, 1.
inline std::vector<uint32_t> ring_order(uint32_t n) {
    std::vector<uint32_t> o;
    for (uint32_t q = 0; q < n; q += 2) o.push_back(q);
    for (uint32_t q = (n % 2 == 0 ? n - 1 : n - 2); q < n && q >= 1; q -= 2) {
        o.push_back(q);
        if (q < 2) break;
    }
    return o;
}

/// Logical chapter 5 tree of a pattern.
inline ReduceTree leftmost_tree(Pattern p, uint32_t n, uint32_t B, uint32_t S, uint32_t tr) {
    switch (p) {
        case Pattern::scalar: return scalar_tree(n);
        case Pattern::chain: return chain_tree(n);
        case Pattern::tree: return binomial_tree(n);
        case Pattern::two_phase: {
            uint32_t s = S;
            if (s == 0)
                while (uint64_t(s) * s < n) ++s;
            return two_phase_tree(n, std::min(std::max(s, 1u), n));
        }
        case Pattern::optimal: return optimal_tree(n, B, tr);
        default: throw ModelSimError(std::string("model_patterns: ") + pattern_name(p) + " is not a reduce to PE 0");
    }
}

/// A 1D reduce tree over `line` (PE ids in order along a row or column) to position `root`.
inline ReduceTree reduce_tree_1d(Pattern p, Pattern base, const std::vector<uint32_t>& line, uint32_t root,
                                 uint32_t B, uint32_t S, uint32_t tr, uint32_t pes) {
    const uint32_t P = uint32_t(line.size());
    ReduceTree t;
    t.children.resize(pes);
    auto place = [&](const ReduceTree& lt, std::vector<uint32_t> at, int64_t parent) { graft(t, lt, at, parent); };
    switch (p) {
        case Pattern::scalar:
        case Pattern::chain:
        case Pattern::tree:
        case Pattern::two_phase:
        case Pattern::optimal: {
            std::vector<uint32_t> at(line);
            if (root == P - 1 && P > 1)
                std::reverse(at.begin(), at.end());
            else if (root != 0)
                throw ModelSimError(std::string("model_patterns: ") + pattern_name(p) +
                                    " reduces to an end of the line, not to position " + std::to_string(root));
            place(leftmost_tree(p, P, B, S, tr), at, -1);
            return t;
        }
        case Pattern::left_right: {
            if (root == 0 || root + 1 == P) return reduce_tree_1d(base, base, line, root, B, S, tr, pes);  // one side: the base
            const bool root_west = root + 1 <= P - 1 - root;
            std::vector<uint32_t> own, other;
            if (root_west) {
                for (uint32_t j = 0; j <= root; ++j) own.push_back(line[root - j]);
                for (uint32_t j = root + 1; j < P; ++j) other.push_back(line[j]);
            } else {
                for (uint32_t j = root; j < P; ++j) own.push_back(line[j]);
                for (uint32_t j = root; j-- > 0;) other.push_back(line[j]);
            }
            place(leftmost_tree(base, uint32_t(own.size()), B, S, tr), own, -1);
            if (!other.empty()) place(leftmost_tree(base, uint32_t(other.size()), B, S, tr), other, line[root]);
            return t;
        }
        case Pattern::jump: {
            t.root = line[root];
            if (P == 1) return t;
            const bool from_east = root > P - 1 - root;
            std::vector<uint32_t> rest;
            for (uint32_t j = 0; j < P; ++j)
                if (j != root) rest.push_back(line[j]);
            if (from_east) std::reverse(rest.begin(), rest.end());
            place(leftmost_tree(base, P - 1, B, S, tr), rest, line[root]);
            return t;
        }
        case Pattern::ring: {
            // chain along the ring order, ending at root: logical k = k steps before root
            const auto o = ring_order(P);
            const size_t at_root = size_t(std::find(o.begin(), o.end(), root) - o.begin());
            std::vector<uint32_t> at;
            for (uint32_t k = 0; k < P; ++k) at.push_back(line[o[(at_root + P - k) % P]]);
            place(chain_tree(P), at, -1);
            return t;
        }
        default: throw ModelSimError(std::string("model_patterns: ") + pattern_name(p) + " is not a 1D reduce");
    }
}

namespace detail {
inline std::vector<uint32_t> row_line(const ModelSim& s, uint32_t y) {
    std::vector<uint32_t> l;
    for (uint32_t x = 0; x < s.cols(); ++x) l.push_back(s.pe(x, y));
    return l;
}
inline std::vector<uint32_t> col_line(const ModelSim& s, uint32_t x) {
    std::vector<uint32_t> l;
    for (uint32_t y = 0; y < s.rows(); ++y) l.push_back(s.pe(x, y));
    return l;
}

// A 1D allreduce (args' pattern stack from `depth`) over `lines` at once (they share no links).
inline void allreduce_lines(ModelSim& sim, PatternBuilder& b, const PatternArgs& a, uint32_t depth,
                            const std::vector<std::vector<uint32_t>>& lines, uint32_t root, uint32_t B, uint32_t tr) {
    const Pattern p = depth == 0 ? a.pattern : a.base[depth - 1];
    const uint32_t P = uint32_t(lines[0].size());
    switch (p) {
        case Pattern::allreduce_naive: {
            const Pattern rp = a.base[depth];
            const Pattern rb = depth + 1 < kMaxBaseDepth ? a.base[depth + 1] : Pattern::chain;
            for (const auto& l : lines) b.reduce(reduce_tree_1d(rp, rb, l, root, B, a.s, tr, sim.pes()));
            for (const auto& l : lines) b.broadcast(l, root);
            return;
        }
        case Pattern::allreduce_ring: {
            const auto o = ring_order(P);
            std::vector<std::vector<uint32_t>> groups;
            for (const auto& l : lines) {
                std::vector<uint32_t> m;
                for (uint32_t q : o) m.push_back(l[q]);
                groups.push_back(m);
            }
            b.ring_allreduce(groups, b.take_key());
            return;
        }
        case Pattern::butterfly: {
            const uint32_t G = a.g == 0 ? 3 : a.g;
            uint64_t x = 1;
            while (x < P) x *= G;
            if (x != P) throw ModelSimError("model_patterns: butterfly needs P a power of G");
            const auto o = ring_order(G);
            const uint64_t key = b.take_key();
            for (uint32_t d = 1; d < P; d *= G) {
                std::vector<std::vector<uint32_t>> groups;
                for (const auto& l : lines)
                    for (uint32_t b0 = 0; b0 < P; ++b0) {
                        if ((b0 / d) % G != 0) continue;
                        std::vector<uint32_t> m;
                        for (uint32_t q : o) m.push_back(l[b0 + q * d]);
                        groups.push_back(m);
                    }
                b.ring_allreduce(groups, key);
            }
            return;
        }
        default: throw ModelSimError(std::string("model_patterns: ") + pattern_name(p) + " is not a 1D allreduce");
    }
}
}  // namespace detail

/// Build the run `a` on a fresh simulator of rows x cols PEs, run it, return its cycles.
inline ModelSim::Result simulate_run(const PatternArgs& a, uint32_t rows, uint32_t cols, uint32_t B, uint32_t tr) {
    const ArgsError e = check_args(a, rows, cols);
    if (e != ArgsError::ok) throw ModelSimError(std::string("model_patterns: ") + args_error_text(e));
    if (B < 1) throw ModelSimError("model_patterns: B must be at least 1 element");
    ModelSim sim(cols, rows, tr);
    PatternBuilder b(sim, B, tr);
    const uint32_t pes = sim.pes();
    switch (a.pattern) {
        case Pattern::scalar:
        case Pattern::chain:
        case Pattern::tree:
        case Pattern::two_phase:
        case Pattern::optimal:
        case Pattern::left_right:
        case Pattern::jump:
        case Pattern::ring:
            b.reduce(reduce_tree_1d(a.pattern, a.base[0], detail::row_line(sim, 0), a.root, B, a.s, tr, pes));
            break;
        case Pattern::reduce_2d:
            for (uint32_t x = 0; x < cols; ++x)
                b.reduce(reduce_tree_1d(a.base[0], a.base[1], detail::col_line(sim, x), a.root_y, B, a.s, tr, pes));
            b.reduce(reduce_tree_1d(a.base[0], a.base[1], detail::row_line(sim, a.root_y), a.root, B, a.s, tr, pes));
            break;
        case Pattern::bcast_1d: b.broadcast(detail::row_line(sim, 0), a.root); break;
        case Pattern::bcast_2d: b.broadcast_2d(a.root, a.root_y); break;
        case Pattern::allreduce_naive:
        case Pattern::allreduce_ring:
        case Pattern::butterfly: detail::allreduce_lines(sim, b, a, 0, {detail::row_line(sim, 0)}, a.root, B, tr); break;
        case Pattern::allreduce_2d: {
            std::vector<std::vector<uint32_t>> cols_l, rows_l;
            for (uint32_t x = 0; x < cols; ++x) cols_l.push_back(detail::col_line(sim, x));
            for (uint32_t y = 0; y < rows; ++y) rows_l.push_back(detail::row_line(sim, y));
            if (rows > 1) detail::allreduce_lines(sim, b, a, 1, cols_l, a.root_y, B, tr);
            if (cols > 1) detail::allreduce_lines(sim, b, a, 1, rows_l, a.root, B, tr);
            break;
        }
    }
    return sim.run();
}
inline uint64_t simulate(const PatternArgs& a, uint32_t rows, uint32_t cols, uint32_t B, uint32_t tr = 2) {
    return simulate_run(a, rows, cols, B, tr).cycles;
}

}  // namespace kccl::wafer::host

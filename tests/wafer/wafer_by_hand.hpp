// tests/wafer/wafer_by_hand.hpp — the Cerebras WSE reduce/allreduce thesis's patterns as fabric
// layouts written by hand (streams and steps per PE, pattern by pattern): the reference the
// patterns' schedules (wafer/host/collectives.hpp pattern_schedule / pattern_parts, lowered by
// wafer/host/lower.hpp) are tested against, cycle for cycle and step for step
// (wafer_schedule_test.cpp). build() does not use it.
//
// Contract
//   * `build_by_hand(spec)`: the layout of every pattern build() knows (same PatternSpec, same
//     Expect), written directly on a Layout.
//   * Errors (std::invalid_argument) name the bad parameter and what is allowed.
//   * Host-only; C++20 (test side).
#pragma once

#include <wafer/host/collectives.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::wafer::host {

/// A reduction tree over nodes 0..n-1 (node 0 the root): parent and ordered children.
struct Tree {
    std::vector<int> parent;
    std::vector<std::vector<int>> children;
    explicit Tree(size_t n = 0) : parent(n, -1), children(n) {}
    void link(int child, int par) {
        parent[size_t(child)] = par;
        children[size_t(par)].push_back(child);
    }
};


namespace detail {

inline void chain_tree(Tree& t, int off, int n) {
    for (int i = 1; i < n; ++i) t.link(off + i, off + i - 1);
}

/// The thesis's tree (5.3): node m sends to m - 2^tz(m); receives from m+1, m+2, m+4, ...
inline void binary_tree(Tree& t, int n) {
    for (int m = 0; m < n; ++m)
        for (int d = 1; m + d < n && (m == 0 || d < (m & -m)); d *= 2) t.link(m + d, m);
}

/// Two phase (5.4): groups of S from the end, chain inside each group to its first PE, then a
/// chain over the groups' first PEs. Children: the group's next PE first, then the next leader.
inline void two_phase_tree(Tree& t, int n, int S) {
    std::vector<int> leaders;
    for (int end = n; end > 0; end -= S) {
        const int start = std::max(0, end - S);
        leaders.push_back(start);
    }
    // leaders are from the right; walk groups left to right so children come closest first.
    std::reverse(leaders.begin(), leaders.end());
    for (size_t g = 0; g < leaders.size(); ++g) {
        const int start = leaders[g], end = g + 1 < leaders.size() ? leaders[g + 1] : n;
        for (int i = start + 1; i < end; ++i) t.link(i, i - 1);
        if (g + 1 < leaders.size()) t.link(leaders[g + 1], start);
    }
}

/// The thesis's optimal pre-order reduce (Lemma 5.9): T(1) = 0; for n >= 2 the root's last child
/// is node i minimising max(T(i) + B, T(n-i) + i + 2 T_R + 1) for i < n-1, and
/// max(T(n-1) + B, B + n + 2 T_R) for i = n-1. Returns T for 1..n and builds the tree.
inline std::vector<uint64_t> optimal_tree(Tree& t, int n, uint64_t B, uint64_t t_r) {
    std::vector<uint64_t> T(size_t(n) + 1, 0);
    std::vector<int> split(size_t(n) + 1, 0);
    for (int m = 2; m <= n; ++m) {
        uint64_t best = UINT64_MAX;
        for (int i = 1; i < m; ++i) {
            const uint64_t c = i == m - 1 ? std::max(T[size_t(m - 1)] + B, B + uint64_t(m) + 2 * t_r)
                                          : std::max(T[size_t(i)] + B, T[size_t(m - i)] + uint64_t(i) + 2 * t_r + 1);
            if (c < best) best = c, split[size_t(m)] = i;
        }
        T[size_t(m)] = best;
    }
    // Group [off, off+m) reduced to off: its first i nodes to off, then [off+i, off+m) to off+i.
    std::function<void(int, int)> build = [&](int off, int m) {
        if (m < 2) return;
        const int i = split[size_t(m)];
        build(off, i);
        t.link(off + i, off);
        build(off + i, m - i);
    };
    build(0, n);
    return T;
}

}  // namespace detail

/// The base pattern `name` over n nodes (node 0 the root, nodes in line order from it).
inline Tree base_tree(const std::string& name, int n, const PatternSpec& spec, uint32_t t_r) {
    Tree t{size_t(n)};
    if (name == "chain") detail::chain_tree(t, 0, n);
    else if (name == "scalar") {
        for (int i = 1; i < n; ++i) t.link(i, 0);  // 5.1: every PE to the root, closest first
    }
    else if (name == "tree") detail::binary_tree(t, n);
    else if (name == "two_phase") {
        const int S = int(spec.S ? spec.S : detail::ceil_sqrt(uint32_t(n)));
        if (S < 1) throw std::invalid_argument("fabric pattern two_phase: S must be >= 1");
        detail::two_phase_tree(t, n, S);
    } else if (name == "optimal") detail::optimal_tree(t, n, spec.B, t_r);
    else
        throw std::invalid_argument("fabric pattern: base '" + name + "' is not a reduce-to-an-end pattern; allowed: scalar, chain, tree, two_phase, optimal");
    return t;
}

/// Adds the steps and streams of reduction tree `t` whose node i sits at `at[i]`; node 0's
/// result stays in its buffer (or, with `out` >= 0, node 0 relays its last child's stream into
/// stream `out` instead of storing: the jump / left-right hand-off). Returns node -> stream to parent.
inline std::vector<int> add_tree(Layout& L, const Tree& t, const std::vector<Coord>& at, uint32_t B, kccl::coll::RedOp op, int out = -1) {
    const size_t n = at.size();
    std::vector<int> up(n, -1);
    // One color group per parent: its children's streams follow each other on one color, closest
    // first (node order is line order from the root); each child but the last advances after
    // sending, which lets the next one through its router.
    std::vector<int> grp(n, -1);
    for (size_t m = 0; m < n; ++m)
        if (!t.children[m].empty()) grp[m] = int(L.group());
    for (size_t c = 1; c < n; ++c)
        if (t.parent[c] >= 0) up[c] = int(L.path(at[c], at[size_t(t.parent[c])], grp[size_t(t.parent[c])]));
    auto not_last = [&](size_t m) { return t.parent[m] >= 0 && size_t(t.children[size_t(t.parent[m])].back()) != m; };
    for (size_t m = 0; m < n; ++m) {
        const auto& ch = t.children[m];
        const int to = m == 0 ? out : up[m];
        for (size_t k = 0; k + 1 < ch.size(); ++k) L.recv(at[m], uint32_t(up[size_t(ch[k])]), 0, B, op);
        if (ch.empty()) {
            if (to >= 0) L.send(at[m], uint32_t(to), 0, B);
        } else if (to >= 0) {
            L.relay(at[m], uint32_t(up[size_t(ch.back())]), uint32_t(to), 0, B, op);
        } else {
            L.recv(at[m], uint32_t(up[size_t(ch.back())]), 0, B, op);
        }
        if (m != 0 && not_last(m)) L.advance(at[m], uint32_t(up[m]));
    }
    return up;
}

/// Reduce over the PEs `line` (in line order, all in one row or column) to line[root].
/// Ends (root 0 or last): the base directly (left_right with the root at an end has one side).
/// Inside: left_right (thesis 6.1) over the base.
inline void reduce_line(Layout& L, const std::vector<Coord>& line, uint32_t root, const std::string& base, const PatternSpec& spec, uint32_t t_r) {
    const int n = int(line.size());
    if (n < 2) return;
    auto ordered = [&](int from, int to) {  // the PEs from `from` to `to` inclusive, in that order
        std::vector<Coord> v;
        for (int i = from;; i += from <= to ? 1 : -1) {
            v.push_back(line[size_t(i)]);
            if (i == to) break;
        }
        return v;
    };
    if (root == 0 || root + 1 == uint32_t(n)) {
        const auto at = root == 0 ? ordered(0, n - 1) : ordered(n - 1, 0);
        add_tree(L, base_tree(base, n, spec, t_r), at, spec.B, spec.op);
        return;
    }
    // left_right: the root in the smaller group; the other group reduces to its PE next to the
    // root, which relays into the root; the root takes its own group's children first.
    const int r = int(root);
    const bool left_small = r + 1 <= n - r;
    const auto own = left_small ? ordered(r, 0) : ordered(r, n - 1);         // root first
    const auto other = left_small ? ordered(r + 1, n - 1) : ordered(r - 1, 0);  // next to root first
    const Tree t_own = base_tree(base, int(own.size()), spec, t_r);
    const Tree t_other = base_tree(base, int(other.size()), spec, t_r);
    const uint32_t hand = L.path(other.front(), line[size_t(r)]);
    add_tree(L, t_other, other, spec.B, spec.op, int(hand));
    add_tree(L, t_own, own, spec.B, spec.op);
    L.recv(line[size_t(r)], hand, 0, spec.B, spec.op);
}

/// 1D multicast from line[root] to every other PE of `line`, one stream; every PE receives it.
inline uint32_t bcast_line(Layout& L, const std::vector<Coord>& line, uint32_t root, uint32_t B, bool receive = true) {
    const uint32_t s = L.stream();
    const size_t n = line.size();
    const Coord r = line[root];
    DirSet out;
    if (root + 1 < n) out = out | DirSet(toward(r, line[root + 1]));
    if (root > 0) out = out | DirSet(toward(r, line[root - 1]));
    L.add_hop(s, r, Dir::ramp, out);
    for (int side : {1, -1}) {
        for (long i = long(root) + side; i >= 0 && i < long(n); i += side) {
            const Coord c = line[size_t(i)];
            const Dir from = opposite(toward(line[size_t(i - side)], c));
            const bool last = (side == 1 && size_t(i) + 1 == n) || (side == -1 && i == 0);
            L.add_hop(s, c, from, last ? DirSet(Dir::ramp) : DirSet{toward(c, line[size_t(i + side)]), Dir::ramp});
            if (receive) L.recv(c, s, 0, B, kCopy);
        }
    }
    return s;
}


inline std::vector<Coord> row_line(uint32_t P) {
    std::vector<Coord> v;
    for (uint32_t i = 0; i < P; ++i) v.push_back(Coord{i, 0});
    return v;
}


/// A row + column multicast from `root` over a rows x cols grid, one stream: along the root's
/// row, and every router of that row also down and up its column; every PE but the root gets a
/// copy (its RAMP is in the tx set). Returns the stream.
inline uint32_t grid_multicast(Layout& L, Coord root, uint32_t rows, uint32_t cols) {
    const uint32_t s = L.stream();
    const uint32_t rx = root.x, ry = root.y;
    DirSet col;
    if (ry + 1 < rows) col = col | DirSet(Dir::S);
    if (ry > 0) col = col | DirSet(Dir::N);
    for (uint32_t x = 0; x < cols; ++x) {
        DirSet tx = col;
        Dir rxd = Dir::ramp;
        if (x == rx) {
            if (rx + 1 < cols) tx = tx | DirSet(Dir::E);
            if (rx > 0) tx = tx | DirSet(Dir::W);
        } else {
            const bool east = x > rx;
            rxd = east ? Dir::W : Dir::E;
            if (east && x + 1 < cols) tx = tx | DirSet(Dir::E);
            if (!east && x > 0) tx = tx | DirSet(Dir::W);
            tx = tx | DirSet(Dir::ramp);
        }
        L.add_hop(s, Coord{x, ry}, rxd, tx);
        for (uint32_t y = ry + 1; y < rows; ++y) L.add_hop(s, Coord{x, y}, Dir::N, y + 1 < rows ? DirSet{Dir::S, Dir::ramp} : DirSet(Dir::ramp));
        for (uint32_t y = ry; y-- > 0;) L.add_hop(s, Coord{x, y}, Dir::S, y > 0 ? DirSet{Dir::N, Dir::ramp} : DirSet(Dir::ramp));
    }
    return s;
}


/// Any 1D reduce pattern `nm` on the PEs `line` (one row or column, in line order) to line[root].
/// An end pattern with the root inside the line runs as left_right over it (`inside_ok`), else
/// it is an error.
inline void reduce_on_line(Layout& L, const std::vector<Coord>& line, uint32_t root, const std::string& nm, const std::string& sub,
                           const PatternSpec& spec, uint32_t t_r, bool inside_ok) {
    const uint32_t P = uint32_t(line.size()), B = spec.B;
    if (P < 2) return;
    if (is_end_reduce(nm)) {
        if (root != 0 && root + 1 != P && !inside_ok)
            throw std::invalid_argument("fabric pattern " + nm + " reduces to an end of the row (root 0 or " + std::to_string(P - 1) + ", got " +
                                        std::to_string(root) + "); for another root use left_right, ring or jump with base " + nm);
        reduce_line(L, line, root, nm, spec, t_r);
    } else if (nm == "left_right") {
        reduce_line(L, line, root, sub, spec, t_r);
    } else if (nm == "jump") {
        // Every PE but the root reduces with the base to the end nearer the root (thesis 6.3);
        // that end relays the result on to the root instead of storing it.
        std::vector<Coord> at;  // every PE but the root, from the end nearer the root
        for (uint32_t i = 0; i < P; ++i)
            if (i != root) at.push_back(line[i]);
        const uint32_t first = root == 0 ? 1 : 0, last = root + 1 == P ? P - 2 : P - 1;
        if ((root > first ? root - first : first - root) > (root > last ? root - last : last - root)) std::reverse(at.begin(), at.end());
        const uint32_t hand = L.path(at.front(), line[root]);
        add_tree(L, base_tree(sub, int(at.size()), spec, t_r), at, B, spec.op, int(hand));
        L.recv(line[root], hand, 0, B, spec.op);
    } else if (nm == "ring") {
        // A chain over the ring order, ending at the root (thesis 6.2).
        const auto order = ring_sequence(P);
        size_t pos = 0;
        while (order[pos] != root) ++pos;
        std::vector<Coord> at;  // the root first, then backwards around the cycle
        for (size_t k = 0; k < P; ++k) at.push_back(line[order[(pos + P - k) % P]]);
        Tree t(P);
        detail::chain_tree(t, 0, int(P));
        add_tree(L, t, at, B, spec.op);
    } else {
        throw std::invalid_argument("fabric pattern: '" + nm + "' is not a 1D reduce; allowed: scalar, chain, tree, two_phase, optimal, left_right, ring, jump");
    }
}

/// Ring allreduce on `line` (thesis 7.2): reduce-scatter then allgather around the ring order,
/// P-1 rounds each; in round k ring position q sends segment q-k and receives segment q-k-1.
inline void allreduce_ring_line(Layout& L, const std::vector<Coord>& line, const PatternSpec& spec) {
    const uint32_t P = uint32_t(line.size()), B = spec.B;
    if (P < 2) return;
    const auto order = ring_sequence(P);
    std::vector<uint32_t> next(P);
    for (uint32_t q = 0; q < P; ++q) next[q] = L.path(line[order[q]], line[order[(q + 1) % P]]);
    // Segment s: B / P elements, one more for the first B % P segments (the cost model's split).
    auto seg = [&](uint32_t s, uint32_t& off, uint32_t& n) {
        off = s * (B / P) + std::min(s, B % P);
        n = B / P + (s < B % P ? 1u : 0u);
    };
    // Each round a PE sends one segment and receives another at the same time (exchange: one
    // wavelet out and one in per cycle, the thesis's assumption for this pattern).
    for (int phase = 0; phase < 2; ++phase)
        for (uint32_t k = 0; k + 1 < P; ++k)
            for (uint32_t q = 0; q < P; ++q) {
                uint32_t so, sn, ro, rn;
                seg((q + phase + P - k) % P, so, sn);
                seg((q + phase + 2 * P - k - 1) % P, ro, rn);
                L.exchange(line[order[q]], next[q], 4 * so, sn, next[(q + P - 1) % P], 4 * ro, rn, phase == 0 ? spec.op : kCopy);
            }
}

/// A 1D allreduce on `line`: naive (a reduce `base` to line[root], then a broadcast from it) or
/// ring (`kind` "allreduce_ring").
inline void allreduce_on_line(Layout& L, const std::vector<Coord>& line, uint32_t root, const std::string& kind, const std::string& base,
                              const PatternSpec& spec, uint32_t t_r) {
    if (line.size() < 2) return;
    if (kind == "allreduce_ring") {
        allreduce_ring_line(L, line, spec);
        return;
    }
    if (kind != "allreduce_naive")
        throw std::invalid_argument("fabric pattern: '" + kind + "' is not a 1D allreduce; allowed: allreduce_naive, allreduce_ring");
    reduce_on_line(L, line, root, base, spec.base2, spec, t_r, true);
    L.send(line[root], bcast_line(L, line, root, spec.B), 0, spec.B);
}


/// The layouts written here by hand, every pattern as it was written before it became a schedule:
/// the reference the schedules' layouts are tested against (build() does not use them).
inline Built build_by_hand(const PatternSpec& spec, uint32_t t_r = 2) {
    validate_spec(spec);
    const bool two_d = spec.M != 0;
    const std::string& nm = spec.name;
    const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
    const uint32_t P = spec.P, B = spec.B;
    Built out{two_d ? Layout(cols, rows) : Layout(P, 1), Expect{}};
    Layout& L = out.layout;
    Expect& e = out.expect;
    if (two_d) {
        for (uint32_t y = 0; y < rows; ++y)
            for (uint32_t x = 0; x < cols; ++x) e.pes.push_back(Coord{x, y});
        e.root = Coord{spec.root_x, spec.root_y};
    } else {
        e.pes = row_line(P);
        e.root = Coord{spec.root, 0};
    }
    const auto line = two_d ? std::vector<Coord>{} : row_line(P);
    auto column = [&](uint32_t x) {
        std::vector<Coord> v;
        for (uint32_t y = 0; y < rows; ++y) v.push_back(Coord{x, y});
        return v;
    };
    auto rowv = [&](uint32_t y) {
        std::vector<Coord> v;
        for (uint32_t x = 0; x < cols; ++x) v.push_back(Coord{x, y});
        return v;
    };

    if (is_reduce_1d(nm)) {
        reduce_on_line(L, line, spec.root, nm, spec.base, spec, t_r, false);
    } else if (nm == "bcast_1d") {
        e.kind = kccl::coll::Op::broadcast;
        L.send(line[spec.root], bcast_line(L, line, spec.root, B), 0, B);
    } else if (nm == "allreduce_naive") {
        e.kind = kccl::coll::Op::all_reduce;
        allreduce_on_line(L, line, spec.root, nm, spec.base, spec, t_r);
    } else if (nm == "allreduce_ring") {
        e.kind = kccl::coll::Op::all_reduce;
        allreduce_ring_line(L, line, spec);
    } else if (nm == "butterfly") {
        // Thesis 7.3: log_G(P) rounds; in round i (stride d = G^(i-1)) the PEs b + o + j d
        // (j < G) of every block of G^i PEs allreduce their whole vectors with the ring pattern.
        e.kind = kccl::coll::Op::all_reduce;
        const uint32_t G = spec.G;
        if (G < 2) throw std::invalid_argument("fabric pattern butterfly: G must be >= 2 (got " + std::to_string(G) + ")");
        uint64_t pw = 1;
        while (pw < P) pw *= G;
        if (pw != P)
            throw std::invalid_argument("fabric pattern butterfly: P = " + std::to_string(P) + " is not a power of G = " + std::to_string(G));
        for (uint64_t d = 1; d < P; d *= G)
            for (uint64_t b = 0; b < P; b += d * G)
                for (uint64_t o = 0; o < d; ++o) {
                    std::vector<Coord> members;
                    for (uint64_t j = 0; j < G; ++j) members.push_back(line[size_t(b + o + j * d)]);
                    allreduce_ring_line(L, members, spec);
                }
    } else if (nm == "reduce_2d") {
        // Thesis 6.4: the base down every column to the root's row, then along that row.
        if (!is_reduce_1d(spec.base)) throw std::invalid_argument("fabric pattern reduce_2d: base '" + spec.base + "' is not a 1D reduce");
        for (uint32_t x = 0; x < cols; ++x) reduce_on_line(L, column(x), spec.root_y, spec.base, spec.base2, spec, t_r, true);
        reduce_on_line(L, rowv(spec.root_y), spec.root_x, spec.base, spec.base2, spec, t_r, true);
    } else if (nm == "allreduce_2d") {
        // Thesis 7.4: a 1D allreduce down every column, then along every row. base: a 1D
        // allreduce (allreduce_ring), or a 1D reduce for the naive allreduce.
        e.kind = kccl::coll::Op::all_reduce;
        const bool ring = spec.base == "allreduce_ring";
        if (!ring && !is_reduce_1d(spec.base))
            throw std::invalid_argument("fabric pattern allreduce_2d: base '" + spec.base + "' is neither allreduce_ring nor a 1D reduce (for the naive allreduce)");
        const std::string kind = ring ? "allreduce_ring" : "allreduce_naive";
        for (uint32_t x = 0; x < cols; ++x) allreduce_on_line(L, column(x), spec.root_y, kind, spec.base, spec, t_r);
        for (uint32_t y = 0; y < rows; ++y) allreduce_on_line(L, rowv(y), spec.root_x, kind, spec.base, spec, t_r);
    } else if (nm == "bcast_2d") {
        // One multicast tree (thesis 4.2): along the root's row; every router of that row also
        // sends down and up its column.
        e.kind = kccl::coll::Op::broadcast;
        const Coord root{spec.root_x, spec.root_y};
        const uint32_t s = grid_multicast(L, root, rows, cols);
        L.send(root, s, 0, B);
        for (const Coord& c : e.pes)
            if (c != root) L.recv(c, s, 0, B, kCopy);
    }
    return out;
}


}  // namespace kccl::wafer::host

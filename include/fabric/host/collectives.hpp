// kccl/fabric/host/collectives.hpp — the reduce, allreduce and broadcast patterns of the Cerebras
// WSE reduce/allreduce thesis (chapters 4-7) as fabric layouts: which streams, which steps per PE.
//
// Contract
//   * `build(spec)` returns the Layout of pattern `spec.name` on a 1 x P row (spec.P) or an
//     M x N grid (spec.M rows, spec.N columns), on vectors of spec.B elements kept in place at offset 0 of every PE's
//     memory, and what the result must be (Expect). Names: chain, tree, two_phase, optimal,
//     left_right, ring, jump, reduce_2d, bcast_1d, bcast_2d, allreduce_naive, allreduce_ring,
//     allreduce_2d, scalar, butterfly (P a power of G; its interleaved groups need many colors,
//     so large P runs out of them: the layout's "too many colors" error).
//   * Every reduce is a pre-order reduction tree (thesis, section 5.5): a PE receives its
//     children's vectors closest first, adding each into its own; the last child's stream is
//     relayed (combined with the PE's partial and forwarded word by word: the thesis's "visit"),
//     the root stores it. The base patterns (chain, tree, two_phase, optimal) reduce to an end
//     PE (0 or P-1); left_right, ring and jump reduce to any root (over a base: spec.base).
//   * scalar (5.1) is the star: every PE's stream to the root on one color, each PE's router
//     switching from its own send to passing the next one on (so the root adds one wavelet per
//     cycle without two inputs ever overlapping).
//   * 2D (thesis 6.4, 7.4): every column to the root's row, then the root's row to the root,
//     each line with the 1D pattern spec.base (an end pattern runs as left_right over it when the
//     root is inside the line); allreduce_2d takes allreduce_ring or a reduce (naive) as base.
//   * Patterns as schedules (docs/wafer.md): `pattern_schedule(spec)` writes scalar, chain, tree,
//     two_phase, optimal, left_right, ring, jump, reduce_2d, allreduce_naive, bcast_1d and
//     bcast_2d as a collective Shape (Method::tree, parent arrays from collectives/schedule.hpp),
//     allreduce_ring as the collectives' ring all_reduce (Method::ring_cw), and a rank -> PE
//     placement; `build_from_schedule` lowers it (fabric/host/lower.hpp). build() takes every one
//     of them that way (built_from_schedule; reduce_2d with Shape::tree_store so every column
//     finishes before the row, as in the thesis); butterfly and allreduce_2d are several ring (or
//     naive) allreduce schedules run one after the other (pattern_parts, lower_into). build()
//     takes every pattern through schedules; `build_by_hand` keeps the layouts written here, the
//     reference the schedules' cycles are tested against.
//   * Errors (std::invalid_argument) name the bad parameter and what is allowed.
//   * Host-only; C++17.
#pragma once

#include <fabric/host/layout.hpp>
#include <fabric/host/lower.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::fabric::host {

struct PatternSpec {
    std::string name = "chain";
    uint32_t P = 0;          ///< 1D: PEs in a row (1 x P)
    uint32_t M = 0;          ///< 2D: M rows (P must be 0)
    uint32_t N = 0;          ///< 2D: N columns (0: N = M)
    uint32_t B = 1;          ///< elements per PE (32-bit each)
    uint32_t root = 0;       ///< 1D root; 2D: root_x / root_y
    uint32_t root_x = 0, root_y = 0;
    uint32_t S = 0;          ///< two_phase group size (0: ceil(sqrt(P)), the thesis's default)
    uint32_t G = 2;          ///< butterfly group size
    std::string base = "chain";  ///< the base pattern of left_right, jump, 2D and naive allreduce
    std::string base2 = "chain"; ///< the base of that base, when it is left_right or jump
    DType type = DType::f32;
    Op op = Op::add;
};

/// What a correct run leaves behind.
struct Expect {
    enum Kind : uint8_t { reduce, allreduce, broadcast } kind = reduce;
    std::vector<Coord> pes;  ///< every participating PE (its input is its buffer at offset 0)
    Coord root;              ///< reduce: holds the result; broadcast: the source
};

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

inline uint32_t ceil_sqrt(uint32_t p) {
    uint32_t s = uint32_t(std::sqrt(double(p)));
    while (s * s < p) ++s;
    while (s > 1 && (s - 1) * (s - 1) >= p) --s;
    return s;
}

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
inline std::vector<int> add_tree(Layout& L, const Tree& t, const std::vector<Coord>& at, uint32_t B, Op op, int out = -1) {
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
/// Ends (root 0 or last): the base directly. Inside: left_right (thesis 6.1) over the base.
inline void reduce_line(Layout& L, const std::vector<Coord>& line, uint32_t root, const std::string& base, const PatternSpec& spec, uint32_t t_r,
                        bool force_lr = false) {
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
    if (!force_lr && (root == 0 || root + 1 == uint32_t(n))) {
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
    auto dir_to = [](Coord a, Coord b) { return a.x < b.x ? Dir::east : a.x > b.x ? Dir::west : a.y < b.y ? Dir::south : Dir::north; };
    DirSet out;
    if (root + 1 < n) out = out | DirSet(dir_to(r, line[root + 1]));
    if (root > 0) out = out | DirSet(dir_to(r, line[root - 1]));
    L.add_hop(s, r, Dir::ramp, out);
    for (int side : {1, -1}) {
        for (long i = long(root) + side; i >= 0 && i < long(n); i += side) {
            const Coord c = line[size_t(i)];
            const Dir from = opposite(dir_to(line[size_t(i - side)], c));
            const bool last = (side == 1 && size_t(i) + 1 == n) || (side == -1 && i == 0);
            L.add_hop(s, c, from, last ? DirSet(Dir::ramp) : DirSet{dir_to(c, line[size_t(i + side)]), Dir::ramp});
            if (receive) L.recv(c, s, 0, B, Op::copy);
        }
    }
    return s;
}

struct Built {
    Layout layout;
    Expect expect;
};

inline std::vector<Coord> row_line(uint32_t P) {
    std::vector<Coord> v;
    for (uint32_t i = 0; i < P; ++i) v.push_back(Coord{i, 0});
    return v;
}

/// The ring order of the thesis's ring reduce (6.2): even PEs eastwards, then odd PEs back west,
/// so that neighbours in the order are at most 2 apart and the order closes into a cycle.
inline std::vector<uint32_t> ring_sequence(uint32_t P) {
    std::vector<uint32_t> v;
    for (uint32_t i = 0; i < P; i += 2) v.push_back(i);
    for (uint32_t i = (P % 2 == 0 ? P - 1 : P - 2); i < P; i -= 2) v.push_back(i);
    return v;
}

/// A row + column multicast from `root` over a rows x cols grid, one stream: along the root's
/// row, and every router of that row also down and up its column; every PE but the root gets a
/// copy (its RAMP is in the tx set). Returns the stream.
inline uint32_t grid_multicast(Layout& L, Coord root, uint32_t rows, uint32_t cols) {
    const uint32_t s = L.stream();
    const uint32_t rx = root.x, ry = root.y;
    DirSet col;
    if (ry + 1 < rows) col = col | DirSet(Dir::south);
    if (ry > 0) col = col | DirSet(Dir::north);
    for (uint32_t x = 0; x < cols; ++x) {
        DirSet tx = col;
        Dir rxd = Dir::ramp;
        if (x == rx) {
            if (rx + 1 < cols) tx = tx | DirSet(Dir::east);
            if (rx > 0) tx = tx | DirSet(Dir::west);
        } else {
            const bool east = x > rx;
            rxd = east ? Dir::west : Dir::east;
            if (east && x + 1 < cols) tx = tx | DirSet(Dir::east);
            if (!east && x > 0) tx = tx | DirSet(Dir::west);
            tx = tx | DirSet(Dir::ramp);
        }
        L.add_hop(s, Coord{x, ry}, rxd, tx);
        for (uint32_t y = ry + 1; y < rows; ++y) L.add_hop(s, Coord{x, y}, Dir::north, y + 1 < rows ? DirSet{Dir::south, Dir::ramp} : DirSet(Dir::ramp));
        for (uint32_t y = ry; y-- > 0;) L.add_hop(s, Coord{x, y}, Dir::south, y > 0 ? DirSet{Dir::north, Dir::ramp} : DirSet(Dir::ramp));
    }
    return s;
}

inline bool is_end_reduce(const std::string& nm) {
    return nm == "scalar" || nm == "chain" || nm == "tree" || nm == "two_phase" || nm == "optimal";
}
inline bool is_reduce_1d(const std::string& nm) { return is_end_reduce(nm) || nm == "left_right" || nm == "ring" || nm == "jump"; }

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
        reduce_line(L, line, root, sub, spec, t_r, true);
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
                L.exchange(line[order[q]], next[q], 4 * so, sn, next[(q + P - 1) % P], 4 * ro, rn, phase == 0 ? spec.op : Op::copy);
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

/// Refuses a spec build() cannot build (unknown name, P or M missing or both, B = 0, root outside).
inline void validate_spec(const PatternSpec& spec) {
    const bool two_d = spec.M != 0;
    const std::string& nm = spec.name;
    static const char* const kBuilt =
        "built: scalar, chain, tree, two_phase, optimal, left_right, ring, jump, reduce_2d, bcast_1d, bcast_2d, allreduce_naive, allreduce_ring, butterfly, "
        "allreduce_2d";
    const bool known = is_reduce_1d(nm) || nm == "reduce_2d" || nm == "bcast_1d" || nm == "bcast_2d" || nm == "allreduce_naive" ||
                       nm == "allreduce_ring" || nm == "allreduce_2d" || nm == "butterfly";
    if (!known) throw std::invalid_argument("fabric pattern '" + nm + "' is unknown; " + kBuilt);
    if (two_d == (spec.P != 0)) throw std::invalid_argument("fabric pattern " + nm + ": give either P (a 1 x P row) or M (an M x N grid)");
    if (spec.B == 0) throw std::invalid_argument("fabric pattern " + nm + ": B (elements per PE) must be >= 1");
    const bool wants_2d = nm == "reduce_2d" || nm == "bcast_2d" || nm == "allreduce_2d";
    if (wants_2d != two_d)
        throw std::invalid_argument("fabric pattern " + nm + (wants_2d ? " runs on an M x N grid: give M (and N), not P" : " runs on a 1 x P row: give P, not M"));
    const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
    if (!two_d && spec.P < 2) throw std::invalid_argument("fabric pattern " + nm + ": P must be >= 2");
    if (two_d && rows * cols < 2) throw std::invalid_argument("fabric pattern " + nm + ": the grid needs at least 2 PEs");
    if (!two_d && spec.root >= spec.P)
        throw std::invalid_argument("fabric pattern " + nm + ": root " + std::to_string(spec.root) + " is not a PE of the row (0.." + std::to_string(spec.P - 1) + ")");
    if (two_d && (spec.root_x >= cols || spec.root_y >= rows))
        throw std::invalid_argument("fabric pattern " + nm + ": root (" + std::to_string(spec.root_x) + "," + std::to_string(spec.root_y) + ") is outside the " +
                                    std::to_string(rows) + " x " + std::to_string(cols) + " grid (x < " + std::to_string(cols) + ", y < " +
                                    std::to_string(rows) + ")");
}

// ---- the patterns as collective schedules (docs/wafer.md, "Patterns as schedules") -------------

/// The base pattern `name`'s parent array over n ranks (rank 0 the root, ranks in line order from
/// it: pre-order, children closest first), from the collectives' builders (schedule.hpp).
inline std::vector<uint32_t> base_parents(const std::string& name, uint32_t n, const PatternSpec& spec, uint32_t t_r) {
    std::vector<uint32_t> par(n, 0);
    if (name == "chain") coll::tree_chain(par.data(), n);
    else if (name == "scalar") coll::tree_star(par.data(), n, 0);
    else if (name == "tree") coll::tree_binomial(par.data(), n);
    else if (name == "two_phase") {
        const uint32_t S = spec.S ? spec.S : detail::ceil_sqrt(n);
        coll::tree_two_phase(par.data(), n, S);
    } else if (name == "optimal") {
        std::vector<uint64_t> work(2 * (size_t(n) + 1));
        coll::tree_optimal(par.data(), n, spec.B, t_r, work.data());
    } else
        throw std::invalid_argument("fabric pattern: base '" + name + "' is not a reduce-to-an-end pattern; allowed: scalar, chain, tree, two_phase, optimal");
    return par;
}

/// A reduce on a line of n PEs as a tree: parent[rank] and the line index of each rank.
struct LineTree {
    std::vector<uint32_t> parent;
    std::vector<uint32_t> pos;
};

/// Any 1D reduce `nm` (over `sub` for left_right / jump) on a line of n PEs to line index `root`,
/// as reduce_on_line builds it; an end pattern with the root inside runs as left_right over it
/// when `inside_ok`, else it is an error.
inline LineTree line_tree(uint32_t n, uint32_t root, const std::string& nm, const std::string& sub, const PatternSpec& spec, uint32_t t_r, bool inside_ok) {
    LineTree t;
    auto run = [](uint32_t from, uint32_t to) {  // line indices from `from` to `to` inclusive
        std::vector<uint32_t> v;
        for (uint32_t i = from;; i = from <= to ? i + 1 : i - 1) {
            v.push_back(i);
            if (i == to) break;
        }
        return v;
    };
    auto join = [&](const std::vector<uint32_t>& own, const std::string& b1, const std::vector<uint32_t>& other, const std::string& b2) {
        const auto p1 = base_parents(b1, uint32_t(own.size()), spec, t_r), p2 = base_parents(b2, uint32_t(other.size()), spec, t_r);
        t.parent.assign(n, 0);
        coll::tree_join(t.parent.data(), uint32_t(own.size()), p1.data(), uint32_t(other.size()), p2.data());
        t.pos = own;
        t.pos.insert(t.pos.end(), other.begin(), other.end());
    };
    if (n < 2) {
        t.parent = {0};
        t.pos = {root};
        return t;
    }
    const bool end = root == 0 || root + 1 == n;
    if (is_end_reduce(nm) && (end || !inside_ok)) {
        if (!end)
            throw std::invalid_argument("fabric pattern " + nm + " reduces to an end of the row (root 0 or " + std::to_string(n - 1) + ", got " + std::to_string(root) +
                                        "); for another root use left_right, ring or jump with base " + nm);
        t.parent = base_parents(nm, n, spec, t_r);
        t.pos = root == 0 ? run(0, n - 1) : run(n - 1, 0);
    } else if (is_end_reduce(nm) || nm == "left_right") {
        // left_right (thesis 6.1): the root's own (smaller) side, root first; then the other side
        // from the PE next to the root, whose root is the root's last child.
        const std::string& b = nm == "left_right" ? sub : nm;
        const bool left_small = root + 1 <= n - root;
        join(left_small ? run(root, 0) : run(root, n - 1), b, left_small ? run(root + 1, n - 1) : run(root - 1, 0), b);
    } else if (nm == "jump") {
        // jump (thesis 6.3): every PE but the root reduces with the base to the end nearer the
        // root, which is the root's only child.
        std::vector<uint32_t> at;
        for (uint32_t i = 0; i < n; ++i)
            if (i != root) at.push_back(i);
        const uint32_t first = root == 0 ? 1 : 0, last = root + 1 == n ? n - 2 : n - 1;
        if ((root > first ? root - first : first - root) > (root > last ? root - last : last - root)) std::reverse(at.begin(), at.end());
        join({root}, "chain", at, sub);
    } else if (nm == "ring") {
        // ring (thesis 6.2): a chain over the ring order, from the root backwards around the cycle.
        const auto order = ring_sequence(n);
        size_t k0 = 0;
        while (order[k0] != root) ++k0;
        t.parent = base_parents("chain", n, spec, t_r);
        for (size_t k = 0; k < n; ++k) t.pos.push_back(order[(k0 + n - k) % n]);
    } else {
        throw std::invalid_argument("fabric pattern: '" + nm + "' is not a 1D reduce; allowed: scalar, chain, tree, two_phase, optimal, left_right, ring, jump");
    }
    return t;
}

/// A pattern written as a collective schedule: the Shape (its parent arrays owned here) and the PE
/// of every rank. `shape()` points the Shape at the arrays (take it again after a copy).
struct PatternSchedule {
    coll::Shape base;
    std::vector<uint32_t> tree, bcast;  ///< Method::tree's parent arrays (bcast: empty = none)
    std::vector<uint8_t> store;         ///< Shape::tree_store (empty = none)
    std::vector<Coord> place;           ///< rank -> PE
    uint32_t width = 0, height = 0;     ///< the grid
    Expect expect;
    coll::Shape shape() const {
        coll::Shape s = base;
        s.tree = tree.empty() ? nullptr : tree.data();
        s.bcast_tree = bcast.empty() ? nullptr : bcast.data();
        s.tree_store = store.empty() ? nullptr : store.data();
        return s;
    }
};

/// The patterns written as schedules: the 1D reduces (scalar, chain, tree, two_phase, optimal,
/// left_right, ring, jump) as Method::tree reduces; reduce_2d as one tree (columns, then the root's
/// row; Shape::tree_store at the row's leaves so each column finishes first); allreduce_naive as an all_reduce Method::tree (the reduce's tree, then a star multicast);
/// bcast_1d and bcast_2d as a broadcast Method::tree down a star (one multicast).
/// allreduce_ring as the collectives' ring all_reduce (Method::ring_cw, one chunk per fragment).
inline bool has_schedule(const std::string& nm) {
    return is_reduce_1d(nm) || nm == "reduce_2d" || nm == "allreduce_naive" || nm == "allreduce_ring" || nm == "bcast_1d" || nm == "bcast_2d";
}

inline PatternSchedule pattern_schedule(const PatternSpec& spec, uint32_t t_r = 2, bool single_tree = false) {
    validate_spec(spec);
    const std::string& nm = spec.name;
    if (!has_schedule(nm))
        throw std::invalid_argument("fabric pattern " + nm +
                                    " is not written as a schedule; those that are: scalar, chain, tree, two_phase, optimal, left_right, ring, jump, reduce_2d, "
                                    "allreduce_naive, allreduce_ring, bcast_1d, bcast_2d");
    PatternSchedule ps;
    coll::Shape& sh = ps.base;
    sh.method = coll::Method::tree;
    sh.topo = coll::Topology::line;
    sh.chunks = 1;
    const bool two_d = spec.M != 0;
    const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
    ps.width = two_d ? cols : spec.P;
    ps.height = two_d ? rows : 1;
    for (uint32_t y = 0; y < ps.height; ++y)
        for (uint32_t x = 0; x < ps.width; ++x) ps.expect.pes.push_back(Coord{x, y});
    ps.expect.root = two_d ? Coord{spec.root_x, spec.root_y} : Coord{spec.root, 0};
    sh.ranks = ps.width * ps.height;
    if (nm == "bcast_1d" || nm == "bcast_2d") {
        // One multicast from the root to every PE: a star; ranks are PEs in row-major order.
        ps.expect.kind = Expect::broadcast;
        sh.op = coll::Op::broadcast;
        if (two_d) sh.topo = coll::Topology::mesh, sh.rows = rows, sh.cols = cols;
        sh.root = ps.expect.root.y * ps.width + ps.expect.root.x;
        ps.tree.resize(sh.ranks);
        coll::tree_star(ps.tree.data(), sh.ranks, sh.root);
        ps.place = ps.expect.pes;
        return ps;
    }
    if (nm == "allreduce_ring") {
        // Thesis 7.2: P-1 reduce-scatter rounds, then P-1 allgather rounds around the ring order;
        // in each round ring position q sends one segment to q+1 while receiving another from
        // q-1. The collectives' clockwise ring all_reduce with one chunk per fragment has exactly
        // these rounds once lowered (each recv_reduce_send / recv_copy_send received in one round
        // and sent in the next, fused with that round's receive into an exchange): its rank r
        // sends fragment r-1 first and ends owning fragment r, as ring position r-1 does.
        ps.expect.kind = Expect::allreduce;
        sh.op = coll::Op::all_reduce;
        sh.method = coll::Method::ring_cw;
        sh.topo = coll::Topology::ring;
        const auto order = ring_sequence(spec.P);
        for (uint32_t r = 0; r < spec.P; ++r) ps.place.push_back(Coord{order[(r + spec.P - 1) % spec.P], 0});
        return ps;
    }
    LineTree lt;
    if (nm == "reduce_2d") {
        // Thesis 6.4: every column to the root's row, then that row: rank a*M + b is the b-th PE
        // of the column that is the a-th PE of the row (in the lines' tree orders); each column
        // tree's root takes its column's children first, then its row children.
        if (!is_reduce_1d(spec.base)) throw std::invalid_argument("fabric pattern reduce_2d: base '" + spec.base + "' is not a 1D reduce");
        const LineTree col = line_tree(rows, spec.root_y, spec.base, spec.base2, spec, t_r, true);
        const LineTree row = line_tree(cols, spec.root_x, spec.base, spec.base2, spec, t_r, true);
        sh.op = coll::Op::reduce;
        ps.tree.resize(sh.ranks);
        coll::tree_rows_then_cols(ps.tree.data(), cols, rows, col.parent.data(), row.parent.data());
        for (uint32_t a = 0; a < cols; ++a)
            for (uint32_t b = 0; b < rows; ++b) ps.place.push_back(Coord{row.pos[a], col.pos[b]});
        // The thesis finishes every column before the row: a column's root that is a leaf of the
        // row tree stores its last column child too and then sends (Shape::tree_store), where one
        // tree alone would relay that child straight into the row (`single_tree`: kept as a variant).
        if (!single_tree && rows >= 2) {
            ps.store.assign(sh.ranks, 0);
            for (uint32_t a = 1; a < cols; ++a) {
                bool row_leaf = true;
                for (uint32_t a2 = 0; a2 < cols; ++a2) row_leaf = row_leaf && (a2 == a || row.parent[a2] != a);
                if (row_leaf) ps.store[a * rows] = 1;
            }
        }
        return ps;
    }
    if (nm == "allreduce_naive") {
        lt = line_tree(spec.P, spec.root, spec.base, spec.base2, spec, t_r, true);
        ps.expect.kind = Expect::allreduce;
        sh.op = coll::Op::all_reduce;
        ps.bcast.resize(sh.ranks);
        coll::tree_star(ps.bcast.data(), sh.ranks, 0);
    } else {
        lt = line_tree(spec.P, spec.root, nm, spec.base, spec, t_r, false);
        sh.op = coll::Op::reduce;
    }
    ps.tree = lt.parent;
    for (uint32_t i : lt.pos) ps.place.push_back(Coord{i, 0});
    return ps;
}

/// The patterns made of several schedules run one after the other (pattern_parts): butterfly
/// (thesis 7.3: log_G P rounds of ring allreduces in groups of G at stride G^i) and allreduce_2d
/// (7.4: a 1D allreduce, ring or naive, down every column, then along every row).
inline bool has_parts(const std::string& nm) { return nm == "butterfly" || nm == "allreduce_2d"; }

/// The schedules of a pattern made of several (has_parts), in the order they run; each is a 1D
/// pattern's schedule (allreduce_ring, or allreduce_naive for allreduce_2d over a 1D reduce) with
/// its ranks placed on the group's PEs. Schedules of one round touch disjoint PEs.
inline std::vector<PatternSchedule> pattern_parts(const PatternSpec& spec, uint32_t t_r = 2) {
    validate_spec(spec);
    const std::string& nm = spec.name;
    if (!has_parts(nm)) throw std::invalid_argument("fabric pattern " + nm + " is not made of several schedules; those that are: butterfly, allreduce_2d");
    std::vector<PatternSchedule> out;
    const bool two_d = spec.M != 0;
    const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
    const uint32_t width = two_d ? cols : spec.P, height = two_d ? rows : 1;
    auto part = [&](const std::string& kind, const std::vector<Coord>& pes, uint32_t root) {
        if (pes.size() < 2) return;
        PatternSpec sub = spec;
        sub.name = kind;
        sub.P = uint32_t(pes.size());
        sub.M = sub.N = 0;
        sub.root = root;
        sub.base = spec.base;
        sub.base2 = spec.base2;
        PatternSchedule ps = pattern_schedule(sub, t_r);
        for (Coord& c : ps.place) c = pes[c.x];
        ps.width = width;
        ps.height = height;
        ps.expect.pes = pes;
        ps.expect.root = pes[root];
        out.push_back(std::move(ps));
    };
    if (nm == "butterfly") {
        const uint32_t G = spec.G, P = spec.P;
        if (G < 2) throw std::invalid_argument("fabric pattern butterfly: G must be >= 2 (got " + std::to_string(G) + ")");
        uint64_t pw = 1;
        while (pw < P) pw *= G;
        if (pw != P) throw std::invalid_argument("fabric pattern butterfly: P = " + std::to_string(P) + " is not a power of G = " + std::to_string(G));
        for (uint64_t d = 1; d < P; d *= G)
            for (uint64_t b = 0; b < P; b += d * G)
                for (uint64_t o = 0; o < d; ++o) {
                    std::vector<Coord> members;
                    for (uint64_t j = 0; j < G; ++j) members.push_back(Coord{uint32_t(b + o + j * d), 0});
                    part("allreduce_ring", members, 0);
                }
        return out;
    }
    const bool ring = spec.base == "allreduce_ring";
    if (!ring && !is_reduce_1d(spec.base))
        throw std::invalid_argument("fabric pattern allreduce_2d: base '" + spec.base + "' is neither allreduce_ring nor a 1D reduce (for the naive allreduce)");
    const std::string kind = ring ? "allreduce_ring" : "allreduce_naive";
    for (uint32_t x = 0; x < cols; ++x) {
        std::vector<Coord> v;
        for (uint32_t y = 0; y < rows; ++y) v.push_back(Coord{x, y});
        part(kind, v, spec.root_y);
    }
    for (uint32_t y = 0; y < rows; ++y) {
        std::vector<Coord> v;
        for (uint32_t x = 0; x < cols; ++x) v.push_back(Coord{x, y});
        part(kind, v, spec.root_x);
    }
    return out;
}

/// A pattern's layout through its schedule: pattern_schedule, then lower() (or, for a pattern
/// made of several, each of pattern_parts lowered after the other). `single_tree`: reduce_2d as
/// one tree without Shape::tree_store (a row leaf relays its column into the row).
inline Built build_from_schedule(const PatternSpec& spec, uint32_t t_r = 2, bool single_tree = false) {
    if (has_parts(spec.name)) {
        const bool two_d = spec.M != 0;
        const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
        Built out{two_d ? Layout(cols, rows) : Layout(spec.P, 1), Expect{}};
        out.expect.kind = Expect::allreduce;
        for (uint32_t y = 0; y < (two_d ? rows : 1); ++y)
            for (uint32_t x = 0; x < (two_d ? cols : spec.P); ++x) out.expect.pes.push_back(Coord{x, y});
        out.expect.root = two_d ? Coord{spec.root_x, spec.root_y} : Coord{spec.root, 0};
        for (const PatternSchedule& ps : pattern_parts(spec, t_r)) lower_into(out.layout, ps.shape(), ps.place, spec.B, spec.op);
        return out;
    }
    const PatternSchedule ps = pattern_schedule(spec, t_r, single_tree);
    return Built{lower(ps.shape(), ps.place, spec.B, spec.op, ps.width, ps.height), ps.expect};
}

/// The patterns whose layout build() takes from their schedule (pattern_schedule + lower, or
/// pattern_parts): all of them.
inline bool built_from_schedule(const std::string& nm) { return has_schedule(nm) || has_parts(nm); }

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
        e.kind = Expect::broadcast;
        L.send(line[spec.root], bcast_line(L, line, spec.root, B), 0, B);
    } else if (nm == "allreduce_naive") {
        e.kind = Expect::allreduce;
        allreduce_on_line(L, line, spec.root, nm, spec.base, spec, t_r);
    } else if (nm == "allreduce_ring") {
        e.kind = Expect::allreduce;
        allreduce_ring_line(L, line, spec);
    } else if (nm == "butterfly") {
        // Thesis 7.3: log_G(P) rounds; in round i (stride d = G^(i-1)) the PEs b + o + j d
        // (j < G) of every block of G^i PEs allreduce their whole vectors with the ring pattern.
        e.kind = Expect::allreduce;
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
        e.kind = Expect::allreduce;
        const bool ring = spec.base == "allreduce_ring";
        if (!ring && !is_reduce_1d(spec.base))
            throw std::invalid_argument("fabric pattern allreduce_2d: base '" + spec.base + "' is neither allreduce_ring nor a 1D reduce (for the naive allreduce)");
        const std::string kind = ring ? "allreduce_ring" : "allreduce_naive";
        for (uint32_t x = 0; x < cols; ++x) allreduce_on_line(L, column(x), spec.root_y, kind, spec.base, spec, t_r);
        for (uint32_t y = 0; y < rows; ++y) allreduce_on_line(L, rowv(y), spec.root_x, kind, spec.base, spec, t_r);
    } else if (nm == "bcast_2d") {
        // One multicast tree (thesis 4.2): along the root's row; every router of that row also
        // sends down and up its column.
        e.kind = Expect::broadcast;
        const Coord root{spec.root_x, spec.root_y};
        const uint32_t s = grid_multicast(L, root, rows, cols);
        L.send(root, s, 0, B);
        for (const Coord& c : e.pes)
            if (c != root) L.recv(c, s, 0, B, Op::copy);
    }
    return out;
}

/// Pattern `spec.name`'s layout, through its schedule(s) (build_from_schedule).
inline Built build(const PatternSpec& spec, uint32_t t_r = 2) {
    validate_spec(spec);
    return build_from_schedule(spec, t_r);
}

}  // namespace kccl::fabric::host

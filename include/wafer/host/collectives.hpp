// kccl/wafer/host/collectives.hpp — the reduce, allreduce and broadcast patterns of the Cerebras
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
//     placement; `build_from_schedule` lowers it (wafer/host/lower.hpp). build() takes every one
//     of them that way (built_from_schedule; reduce_2d with Shape::tree_store so every column
//     finishes before the row, as in the thesis); butterfly and allreduce_2d are several ring (or
//     naive) allreduce schedules run one after the other (pattern_parts, lower_into). build()
//     takes every pattern through schedules. The layouts as written by hand, the reference the
//     schedules are tested against, are on the test side (tests/wafer/wafer_by_hand.hpp).
//   * Errors (kccl::Error) name the bad parameter and what is allowed.
//   * Host-only; C++17.
#pragma once

#include <common/host/error.hpp>
#include <wafer/host/layout.hpp>
#include <wafer/host/lower.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kccl::wafer::host {

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
    coll::DataType type = coll::DataType::f32;
    coll::RedOp op = coll::RedOp::sum;
};

/// What a correct run leaves behind.
struct Expect {
    coll::Op kind = coll::Op::reduce;  ///< reduce, all_reduce or broadcast
    std::vector<Coord> pes;  ///< every participating PE (its input is its buffer at offset 0)
    Coord root;              ///< reduce: holds the result; broadcast: the source
};

namespace detail {

inline uint32_t ceil_sqrt(uint32_t p) {
    uint32_t s = uint32_t(std::sqrt(double(p)));
    while (s * s < p) ++s;
    while (s > 1 && (s - 1) * (s - 1) >= p) --s;
    return s;
}

}  // namespace detail

struct Built {
    Layout layout;
    Expect expect;
};

/// The ring order of the thesis's ring reduce (6.2): even PEs eastwards, then odd PEs back west,
/// so that neighbours in the order are at most 2 apart and the order closes into a cycle.
inline std::vector<uint32_t> ring_sequence(uint32_t P) {
    std::vector<uint32_t> v;
    for (uint32_t i = 0; i < P; i += 2) v.push_back(i);
    for (uint32_t i = (P % 2 == 0 ? P - 1 : P - 2); i < P; i -= 2) v.push_back(i);
    return v;
}

inline bool is_end_reduce(const std::string& nm) {
    return nm == "scalar" || nm == "chain" || nm == "tree" || nm == "two_phase" || nm == "optimal";
}
inline bool is_reduce_1d(const std::string& nm) { return is_end_reduce(nm) || nm == "left_right" || nm == "ring" || nm == "jump"; }

/// Refuses a spec build() cannot build (unknown name, P or M missing or both, B = 0, root outside).
inline void validate_spec(const PatternSpec& spec) {
    const bool two_d = spec.M != 0;
    const std::string& nm = spec.name;
    static const char* const kBuilt =
        "built: scalar, chain, tree, two_phase, optimal, left_right, ring, jump, reduce_2d, bcast_1d, bcast_2d, allreduce_naive, allreduce_ring, butterfly, "
        "allreduce_2d";
    const bool known = is_reduce_1d(nm) || nm == "reduce_2d" || nm == "bcast_1d" || nm == "bcast_2d" || nm == "allreduce_naive" ||
                       nm == "allreduce_ring" || nm == "allreduce_2d" || nm == "butterfly";
    if (!known) throw kccl::Error(kccl::Errc::plan, "fabric pattern '" + nm + "' is unknown; " + kBuilt);
    if (two_d == (spec.P != 0)) throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": give either P (a 1 x P row) or M (an M x N grid)");
    if (spec.B == 0) throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": B (elements per PE) must be >= 1");
    const bool wants_2d = nm == "reduce_2d" || nm == "bcast_2d" || nm == "allreduce_2d";
    if (wants_2d != two_d)
        throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + (wants_2d ? " runs on an M x N grid: give M (and N), not P" : " runs on a 1 x P row: give P, not M"));
    const uint32_t rows = spec.M, cols = spec.N ? spec.N : spec.M;
    if (!two_d && spec.P < 2) throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": P must be >= 2");
    if (two_d && rows * cols < 2) throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": the grid needs at least 2 PEs");
    if (!two_d && spec.root >= spec.P)
        throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": root " + std::to_string(spec.root) + " is not a PE of the row (0.." + std::to_string(spec.P - 1) + ")");
    if (two_d && (spec.root_x >= cols || spec.root_y >= rows))
        throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + ": root (" + std::to_string(spec.root_x) + "," + std::to_string(spec.root_y) + ") is outside the " +
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
        throw kccl::Error(kccl::Errc::plan, "fabric pattern: base '" + name + "' is not a reduce-to-an-end pattern; allowed: scalar, chain, tree, two_phase, optimal");
    return par;
}

/// A reduce on a line of n PEs as a tree: parent[rank] and the line index of each rank.
struct LineTree {
    std::vector<uint32_t> parent;
    std::vector<uint32_t> pos;
};

/// Any 1D reduce `nm` (over `sub` for left_right / jump) on a line of n PEs to line index `root`,
/// as the hand-built reference (tests/wafer/wafer_by_hand.hpp) builds it; an end pattern with the root inside runs as left_right over it
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
    if ((is_end_reduce(nm) && (end || !inside_ok)) || (nm == "left_right" && end)) {
        // An end pattern to an end; left_right with the root at an end has one side, the whole
        // line: its base.
        if (!end)
            throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + " reduces to an end of the row (root 0 or " + std::to_string(n - 1) + ", got " + std::to_string(root) +
                                        "); for another root use left_right, ring or jump with base " + nm);
        t.parent = base_parents(nm == "left_right" ? sub : nm, n, spec, t_r);
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
        throw kccl::Error(kccl::Errc::plan, "fabric pattern: '" + nm + "' is not a 1D reduce; allowed: scalar, chain, tree, two_phase, optimal, left_right, ring, jump");
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
    /// Points the Shape at the arrays, with an index of each tree's children (rebuilt here on every
    /// call), so that generating every rank's steps stays linear in the ranks.
    coll::Shape shape() const {
        coll::Shape s = base;
        s.tree = tree.empty() ? nullptr : tree.data();
        s.bcast_tree = bcast.empty() ? nullptr : bcast.data();
        s.tree_store = store.empty() ? nullptr : store.data();
        const auto index = [](const std::vector<uint32_t>& par, std::vector<uint32_t>& out) -> const uint32_t* {
            if (par.empty()) return nullptr;
            out.resize(2 * par.size() + 1);  // rebuilt on every call: the parents may have changed
            if (!coll::tree_children_index(par.data(), uint32_t(par.size()), out.data()))
                return nullptr;  // a parent outside the ranks: validate() names it
            return out.data();
        };
        s.tree_children = index(tree, tree_kids_);
        s.bcast_tree_children = index(bcast, bcast_kids_);
        return s;
    }
    mutable std::vector<uint32_t> tree_kids_, bcast_kids_;  ///< the children indexes shape() builds
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
        throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm +
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
        ps.expect.kind = coll::Op::broadcast;
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
        ps.expect.kind = coll::Op::all_reduce;
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
        if (!is_reduce_1d(spec.base)) throw kccl::Error(kccl::Errc::plan, "fabric pattern reduce_2d: base '" + spec.base + "' is not a 1D reduce");
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
        ps.expect.kind = coll::Op::all_reduce;
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
    if (!has_parts(nm)) throw kccl::Error(kccl::Errc::plan, "fabric pattern " + nm + " is not made of several schedules; those that are: butterfly, allreduce_2d");
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
        if (G < 2) throw kccl::Error(kccl::Errc::plan, "fabric pattern butterfly: G must be >= 2 (got " + std::to_string(G) + ")");
        uint64_t pw = 1;
        while (pw < P) pw *= G;
        if (pw != P) throw kccl::Error(kccl::Errc::plan, "fabric pattern butterfly: P = " + std::to_string(P) + " is not a power of G = " + std::to_string(G));
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
        throw kccl::Error(kccl::Errc::plan, "fabric pattern allreduce_2d: base '" + spec.base + "' is neither allreduce_ring nor a 1D reduce (for the naive allreduce)");
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
        out.expect.kind = coll::Op::all_reduce;
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

/// Pattern `spec.name`'s layout, through its schedule(s) (build_from_schedule).
inline Built build(const PatternSpec& spec, uint32_t t_r = 2) {
    validate_spec(spec);
    return build_from_schedule(spec, t_r);
}

}  // namespace kccl::wafer::host

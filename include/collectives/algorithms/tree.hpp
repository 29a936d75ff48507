// kccl/collectives/algorithms/tree.hpp — tree broadcast / reduce (binomial, or any parent array).
//
// Trees are multi-hop: a tree edge joins two ranks that need not be topology neighbours (on a
// wafer the wavelets pass through routers; on chips the transport must route). Every step is per
// chunk, so the tree is pipelined chunk by chunk.
// Reduction order: a node combines its own input with its children's partials one child at a
// time, closest child first (binomial: child v+1, then v+2, v+4, ...; parent array: ascending
// rank, which is "closest first" for the Cerebras thesis's pre-order trees). The value is computed once, at
// the root.
#pragma once

#include <collectives/algorithms/arms.hpp>

namespace kccl::coll {

namespace detail {

/// Tree over the shape's ranks rooted at sh.root: binomial (tree == nullptr), or a parent array.
struct TreeView {
    const Shape* sh;
    const uint32_t* tree = nullptr;  ///< parent[r], or nullptr: the binomial tree
    const uint32_t* kids = nullptr;  ///< tree_children_index of `tree`, or nullptr: scan `tree`
    constexpr uint32_t rel(uint32_t m) const { return (m + sh->ranks - sh->root) % sh->ranks; }
    constexpr uint32_t abs(uint32_t v) const { return (v + sh->root) % sh->ranks; }
    constexpr uint32_t parent(uint32_t m) const {
        if (tree) return tree[m];
        const uint32_t v = rel(m);
        return abs(v & (v - 1));
    }
    constexpr bool is_root(uint32_t m) const { return m == sh->root; }
    /// Calls f(child) for every child of m; closest first, or farthest (largest subtree) first.
    template <class F>
    void children(uint32_t m, bool far_first, F&& f) const {
        const uint32_t p = sh->ranks;
        if (tree && kids) {
            const uint32_t b = kids[m], e = kids[m + 1];
            const uint32_t* list = kids + p + 1;
            for (uint32_t i = b; i < e; ++i) f(list[far_first ? e - 1 - (i - b) : i]);
            return;
        }
        if (tree) {
            for (uint32_t i = 0; i < p; ++i) {
                const uint32_t c = far_first ? p - 1 - i : i;
                if (c != m && tree[c] == m) f(c);
            }
            return;
        }
        const uint32_t v = rel(m);
        const uint32_t low = v == 0 ? 0x80000000u : (v & (0u - v));
        uint32_t bits[32];
        uint32_t n = 0;
        for (uint32_t b = 1; b < low && v + b < p && b != 0; b <<= 1) bits[n++] = b;
        for (uint32_t i = 0; i < n; ++i) f(abs(v + bits[far_first ? n - 1 - i : i]));
    }
    uint32_t child_count(uint32_t m) const {
        uint32_t k = 0;
        children(m, false, [&k](uint32_t) { ++k; });
        return k;
    }
};

/// A parent array over the shape's ranks rooted at sh.root: nullptr or a sentence.
constexpr const char* validate_parents(const Shape& sh, const uint32_t* tree) {
    if (tree[sh.root] != sh.root) return "The parent array must make the root its own parent (tree[root] == root).";
    for (uint32_t r = 0; r < sh.ranks; ++r) {
        uint32_t x = r, hops = 0;
        while (x != sh.root) {
            if (tree[x] >= sh.ranks) return "Every parent in the tree must be a rank (< ranks).";
            x = tree[x];
            if (++hops > sh.ranks) return "The parent array has a cycle: every rank must reach the root.";
        }
    }
    return nullptr;
}

constexpr const char* validate_tree(const Shape& sh, bool binomial) {
    if (const char* e = validate_common(sh)) return e;
    if (sh.bcast_tree != nullptr && (sh.op != Op::all_reduce || binomial))
        return "Shape::bcast_tree (a second parent array) is for all_reduce with Method::tree only; leave it nullptr.";
    if (sh.tree_store != nullptr && (sh.op != Op::reduce || binomial))
        return "Shape::tree_store (ranks that store before sending) is for reduce with Method::tree only; leave it nullptr.";
    if (binomial) return nullptr;
    if (sh.tree == nullptr) return "Method::tree needs Shape::tree, a parent array of `ranks` entries.";
    if (const char* e = validate_parents(sh, sh.tree)) return e;
    if (sh.bcast_tree != nullptr) return validate_parents(sh, sh.bcast_tree);
    return nullptr;
}

/// The trees of a shape: Method::tree's parent arrays (the broadcast's defaults to the reduce's),
/// else binomial.
constexpr TreeView reduce_tree(const Shape& sh) {
    return sh.method == Method::tree ? TreeView{&sh, sh.tree, sh.tree_children} : TreeView{&sh, nullptr, nullptr};
}
constexpr TreeView bcast_tree(const Shape& sh) {
    if (sh.method != Method::tree) return {&sh, nullptr, nullptr};
    return sh.bcast_tree ? TreeView{&sh, sh.bcast_tree, sh.bcast_tree_children} : TreeView{&sh, sh.tree, sh.tree_children};
}

/// Tree reduce of chunks [0, n) from `src` into out[] at the root (scratch at inner nodes). An
/// inner rank relays its last child's partial on (recv_reduce_send), or with `store` combines it
/// into scratch too and then sends that.
template <class E>
void tree_reduce(E& e, const TreeView& T, uint32_t m, ChunkRef src, uint32_t n, bool store = false) {
    const uint32_t k = T.child_count(m);
    const bool root = T.is_root(m);
    const uint32_t par = root ? kNoPeer : T.parent(m);
    for (uint32_t j = 0; j < n; ++j) {
        const ChunkRef mine{src.buf, src.chunk + j};
        if (k == 0) {
            if (root) e(mk::copy(mine, mk::out(j)));
            else e(mk::send(par, mine));
            continue;
        }
        ChunkRef acc = mine;
        uint32_t i = 0;
        T.children(m, false, [&](uint32_t c) {
            const bool last = ++i == k;
            if (!last || root || store) {
                const ChunkRef d = (root && last) ? mk::out(j) : mk::scr(j);  // out written once
                e(mk::recv_reduce_copy(c, acc, d));
                acc = d;
            } else {
                e(mk::recv_reduce_send(c, par, acc));
            }
        });
        if (store && !root) e(mk::send(par, acc));
    }
}

/// Tree broadcast of chunks [0, n) down T (which must be the shape's broadcast tree, bcast_tree():
/// the multicasts name "my children in it"): the root multicasts `root_src` (after copying it to
/// out[] if copy_root) to its children, every other rank receives into out[] and multicasts it on
/// to its children. One message per chunk and node; an executor on a link without multicast
/// sends it to each child in turn, largest subtree first (algorithms.hpp, lower_casts).
template <class E>
void tree_broadcast(E& e, const TreeView& T, uint32_t m, ChunkRef root_src, uint32_t n, bool copy_root) {
    const bool leaf = T.child_count(m) == 0;
    for (uint32_t j = 0; j < n; ++j) {
        if (T.is_root(m)) {
            const ChunkRef s{root_src.buf, root_src.chunk + j};
            if (copy_root) e(mk::copy(s, mk::out(j)));
            if (!leaf) e(mk::send_children(s));
        } else if (leaf) {
            e(mk::recv(T.parent(m), mk::out(j)));
        } else {
            e(mk::recv_copy_send_children(T.parent(m), mk::out(j)));
        }
    }
}

}  // namespace detail

/// broadcast down a binomial tree (Method::binomial_tree) or a parent array (Method::tree).
struct TreeBroadcast : AlgorithmBase<TreeBroadcast> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::broadcast) return "TreeBroadcast computes Op::broadcast only.";
        return detail::validate_tree(sh, sh.method != Method::tree);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        detail::tree_broadcast(e, detail::bcast_tree(sh), rank, mk::in(0), sh.chunks, true);
    }
};

/// reduce up a binomial tree (Method::binomial_tree) or a parent array (Method::tree): the Cerebras thesis's
/// chain, binary/binomial tree, two-phase and pre-order reduces are parent arrays (schedule.hpp).
struct TreeReduce : AlgorithmBase<TreeReduce> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::reduce) return "TreeReduce computes Op::reduce only.";
        return detail::validate_tree(sh, sh.method != Method::tree);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        const bool store = sh.method == Method::tree && sh.tree_store != nullptr && sh.tree_store[rank] != 0;
        detail::tree_reduce(e, detail::reduce_tree(sh), rank, mk::in(0), sh.chunks, store);
    }
};

namespace detail {
/// Size of v's subtree in the binomial tree over relative ranks 0..p-1: [v, v + size).
constexpr uint32_t binomial_subtree(uint32_t v, uint32_t p) {
    const uint32_t low = v == 0 ? p : (v & (0u - v));
    return v + low < p ? low : p - v;
}
}  // namespace detail

/// gather up a binomial tree (Method::binomial_tree): every rank sends its own fragment to its
/// parent, then relays (through scratch) its subtree's fragments in ascending relative rank,
/// child by child, as they arrive; the root stores them. ceil(lg p) message latencies on the
/// critical path instead of p-1 (latency-optimal for small fragments); multi-hop.
struct TreeGather : AlgorithmBase<TreeGather> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::gather) return "TreeGather computes Op::gather only.";
        return detail::validate_tree(sh, true);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        const detail::TreeView T{&sh, nullptr, nullptr};
        const uint32_t p = sh.ranks, s = sh.chunks, v = T.rel(rank);
        const bool root = v == 0;
        if (root)
            for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(j), mk::out(rank * s + j)));
        else
            for (uint32_t j = 0; j < s; ++j) e(mk::send(T.parent(rank), mk::in(j)));
        T.children(rank, false, [&](uint32_t c) {
            const uint32_t cv = T.rel(c), n = detail::binomial_subtree(cv, p);
            for (uint32_t u = cv; u < cv + n; ++u)
                for (uint32_t j = 0; j < s; ++j) {
                    if (root) e(mk::recv(c, mk::out(T.abs(u) * s + j)));
                    else e(mk::recv_copy_send(c, T.parent(rank), mk::scr(j)));
                }
        });
    }
};

/// scatter down a binomial tree (Method::binomial_tree): the root sends each child its subtree's
/// fragments in ascending relative rank (largest subtree first); a rank keeps the first (its own)
/// and relays the others (through scratch) to the child whose subtree holds them.
struct TreeScatter : AlgorithmBase<TreeScatter> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::scatter) return "TreeScatter computes Op::scatter only.";
        return detail::validate_tree(sh, true);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        const detail::TreeView T{&sh, nullptr, nullptr};
        const uint32_t p = sh.ranks, s = sh.chunks, v = T.rel(rank);
        if (v == 0) {
            for (uint32_t j = 0; j < s; ++j) e(mk::copy(mk::in(rank * s + j), mk::out(j)));
            T.children(rank, true, [&](uint32_t c) {
                const uint32_t cv = T.rel(c), n = detail::binomial_subtree(cv, p);
                for (uint32_t u = cv; u < cv + n; ++u)
                    for (uint32_t j = 0; j < s; ++j) e(mk::send(c, mk::in(T.abs(u) * s + j)));
            });
            return;
        }
        const uint32_t par = T.parent(rank);
        for (uint32_t j = 0; j < s; ++j) e(mk::recv(par, mk::out(j)));
        T.children(rank, false, [&](uint32_t c) {  // ascending relative rank = closest child first
            const uint32_t cv = T.rel(c), n = detail::binomial_subtree(cv, p);
            for (uint32_t u = cv; u < cv + n; ++u)
                for (uint32_t j = 0; j < s; ++j) e(mk::recv_copy_send(par, c, mk::scr(j)));
        });
    }
};

/// all_reduce as a tree reduce to root + a tree broadcast of the result from root:
/// reduce_broadcast_tree uses the binomial tree both ways; Method::tree reduces up Shape::tree
/// and broadcasts down Shape::bcast_tree (nullptr: Shape::tree again), so the two may differ
/// (e.g. the Cerebras WSE reduce/allreduce thesis's two-phase reduce and a multicast broadcast).
struct ReduceBroadcastTree : AlgorithmBase<ReduceBroadcastTree> {
    static constexpr bool multi_hop = true;
    static const char* validate(const Shape& sh) {
        if (sh.op != Op::all_reduce) return "ReduceBroadcastTree computes Op::all_reduce only.";
        return detail::validate_tree(sh, sh.method != Method::tree);
    }
    static uint32_t lanes(const Shape&) { return 1; }
    template <class E>
    static void generate(const Shape& sh, uint32_t rank, uint32_t, E& e) {
        const uint32_t n = tensor_chunks(sh);
        detail::tree_reduce(e, detail::reduce_tree(sh), rank, mk::in(0), n);
        detail::tree_broadcast(e, detail::bcast_tree(sh), rank, mk::out(0), n, false);
    }
};

}  // namespace kccl::coll

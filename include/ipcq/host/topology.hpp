// kccl/ipcq/host/topology.hpp — host side: who is whose neighbour in which direction.
//
// HOST-ONLY (std::vector, std::string, exceptions). Headers under include/*/host/ are not device
// code: scripts/shim_gate.sh skips them and scripts/check_headers.sh compiles them with
// exceptions enabled (see docs/hardware-shim.md).
//
// WHAT IT IS
//   A Topology<Dirs> maps every (rank, direction) to at most one Link {peer rank, the peer's
//   direction that points back, roles tx/rx}. One link joins two endpoints; `connect` sets both
//   ends at once. Builtins:
//     ring_1d(n)            E -> rank+1, W -> rank-1 (both directions send and receive)
//     ring_1d_unidir(n)     E -> rank+1 send-only; W <- rank-1 receive-only
//     mesh_2d(rows, cols)   N/S/E/W with torus wrap, rank = row * cols + col
//     mesh_2d(world, rows, cols), mesh_2d_square(world): checked shapes
//     tree_binary(n)        parent / left / right (heap numbering: children of r are 2r+1, 2r+2)
//     custom(neighbours)    the caller's map of peer ranks per direction (or modify a builtin
//                           with connect / disconnect), checked by validate()
//   validate() enforces invariant I3 (every direction's peer points back to it, with matching
//   roles), ranks in range and no self links. Every error is a TopologyError whose message names
//   the rank, the direction, what was found and what is allowed.
#pragma once

#include "../directions.hpp"
#include "../layout.hpp"

#include <common/host/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kccl::ipcq::host {

struct TopologyError : ErrorOf<Errc::topology> {
    using ErrorOf::ErrorOf;
};

/// Roles of an endpoint: it sends (tx), receives (rx), or both.
enum Roles : uint32_t { tx = layout::kTx, rx = layout::kRx, both = layout::kTx | layout::kRx };

struct Link {
    int32_t peer = -1;      ///< peer rank, -1 = direction not installed
    uint32_t peer_dir = 0;  ///< the peer's direction whose link points back here
    uint32_t roles = 0;     ///< tx | rx
    bool installed() const { return peer >= 0; }
};

/// Largest world a topology may have (a 1024 x 1024 PE mesh); beyond it sizes overflow 32-bit
/// arithmetic or memory long before a run could start.
inline constexpr uint32_t max_world = 1u << 20;

inline uint32_t checked_world(uint32_t world, const std::string& name) {
    if (world == 0) throw TopologyError("ipcq topology '" + name + "': world size must be at least 1");
    if (world > max_world)
        throw TopologyError("ipcq topology '" + name + "': world size " + std::to_string(world) + "; at most " +
                            std::to_string(max_world) + " ranks are allowed");
    return world;
}

template <class Dirs>
struct Topology {
    std::string name = "custom";
    uint32_t world = 0;
    std::vector<std::array<Link, Dirs::count>> links;

    Topology() = default;
    explicit Topology(uint32_t world_size, std::string topo_name = "custom")
        : name(std::move(topo_name)), world(checked_world(world_size, name)), links(world_size) {}

    /// Links (rank, dir) <-> (peer, peer_dir). `roles` are rank's roles; the peer gets the mirror
    /// (rank tx <-> peer rx). Replaces whatever either endpoint had.
    Topology& connect(uint32_t rank, uint32_t dir, uint32_t peer, uint32_t peer_dir, uint32_t roles = both) {
        check_endpoint(rank, dir, "connect");
        check_endpoint(peer, peer_dir, "connect (peer)");
        if (roles == 0 || (roles & ~uint32_t(both)))
            throw TopologyError("ipcq topology '" + name + "': connect rank " + std::to_string(rank) + " " +
                                Dirs::name(dir) + ": roles must be tx, rx or both");
        uint32_t mirror = ((roles & tx) ? uint32_t(rx) : 0u) | ((roles & rx) ? uint32_t(tx) : 0u);
        links[rank][dir] = Link{int32_t(peer), peer_dir, roles};
        links[peer][peer_dir] = Link{int32_t(rank), dir, mirror};
        return *this;
    }
    /// Removes the link of (rank, dir) at both ends.
    Topology& disconnect(uint32_t rank, uint32_t dir) {
        check_endpoint(rank, dir, "disconnect");
        Link l = links[rank][dir];
        links[rank][dir] = Link{};
        if (l.installed() && uint32_t(l.peer) < world && l.peer_dir < Dirs::count) {
            Link& back = links[uint32_t(l.peer)][l.peer_dir];
            if (back.peer == int32_t(rank) && back.peer_dir == dir) back = Link{};
        }
        return *this;
    }
    const Link& at(uint32_t rank, uint32_t dir) const {
        check_endpoint(rank, dir, "at");
        return links[rank][dir];
    }
    std::string endpoint(uint32_t rank, uint32_t dir) const {
        return "rank " + std::to_string(rank) + " direction " + Dirs::name(dir);
    }

    /// I3 and structural checks; throws TopologyError naming the first problem.
    void validate() const {
        if (links.size() != world)
            throw TopologyError("ipcq topology '" + name + "': has " + std::to_string(links.size()) +
                                " neighbour rows for a world of " + std::to_string(world));
        for (uint32_t r = 0; r < world; ++r)
            for (uint32_t d = 0; d < Dirs::count; ++d) {
                const Link& l = links[r][d];
                if (!l.installed()) continue;
                const std::string me = "ipcq topology '" + name + "': " + endpoint(r, d);
                if (uint32_t(l.peer) >= world)
                    throw TopologyError(me + " names peer rank " + std::to_string(l.peer) + "; ranks are 0.." +
                                        std::to_string(world - 1));
                if (uint32_t(l.peer) == r)
                    throw TopologyError(me + " points to its own rank; a queue pair joins two different ranks");
                if (l.peer_dir >= Dirs::count)
                    throw TopologyError(me + " names peer direction " + std::to_string(l.peer_dir) +
                                        "; the direction set has " + std::to_string(Dirs::count));
                if (l.roles == 0 || (l.roles & ~uint32_t(both)))
                    throw TopologyError(me + " has no valid roles (tx, rx or both)");
                const Link& b = links[uint32_t(l.peer)][l.peer_dir];
                if (b.peer != int32_t(r) || b.peer_dir != d)
                    throw TopologyError(me + " points to " + endpoint(uint32_t(l.peer), l.peer_dir) + ", but that " +
                                        (b.installed() ? "points to " + endpoint(uint32_t(b.peer), b.peer_dir)
                                                       : std::string("is not installed")) +
                                        " (I3: every direction's peer must point back to it)");
                const bool ok = ((l.roles & tx) != 0) == ((b.roles & rx) != 0) && ((l.roles & rx) != 0) == ((b.roles & tx) != 0);
                if (!ok)
                    throw TopologyError(me + " and its peer " + endpoint(uint32_t(l.peer), l.peer_dir) +
                                        " disagree on roles (one end's tx must be the other's rx)");
            }
    }

private:
    void check_endpoint(uint32_t rank, uint32_t dir, const char* op) const {
        if (rank >= world)
            throw TopologyError("ipcq topology '" + name + "': " + op + ": rank " + std::to_string(rank) +
                                " is out of range (world size " + std::to_string(world) + ")");
        if (dir >= Dirs::count)
            throw TopologyError("ipcq topology '" + name + "': " + op + ": direction " + std::to_string(dir) +
                                " does not exist (the direction set has " + std::to_string(Dirs::count) + ")");
    }
};

/// E -> rank + 1, W -> rank - 1 (mod n). n >= 2.
inline Topology<Nsew> ring_1d(uint32_t n) {
    if (n < 2) throw TopologyError("ipcq ring_1d: needs at least 2 ranks, got " + std::to_string(n));
    Topology<Nsew> t(n, "ring_1d");
    for (uint32_t r = 0; r < n; ++r) t.connect(r, Nsew::E, (r + 1) % n, Nsew::W);
    return t;
}

/// Data flows east only: E sends to rank + 1, W receives from rank - 1. n >= 2.
inline Topology<Nsew> ring_1d_unidir(uint32_t n) {
    if (n < 2) throw TopologyError("ipcq ring_1d_unidir: needs at least 2 ranks, got " + std::to_string(n));
    Topology<Nsew> t(n, "ring_1d_unidir");
    for (uint32_t r = 0; r < n; ++r) t.connect(r, Nsew::E, (r + 1) % n, Nsew::W, tx);
    return t;
}

/// rows x cols torus; rank = row * cols + col; N = row - 1, S = row + 1, E = col + 1, W = col - 1.
inline Topology<Nsew> mesh_2d(uint32_t rows, uint32_t cols) {
    if (rows < 2 || cols < 2)
        throw TopologyError("ipcq mesh_2d: rows and cols must both be >= 2 (got " + std::to_string(rows) + " x " +
                            std::to_string(cols) + "); use ring_1d for a single row");
    if (uint64_t(rows) * cols > max_world)
        throw TopologyError("ipcq mesh_2d: " + std::to_string(rows) + " x " + std::to_string(cols) + " ranks; at most " +
                            std::to_string(max_world) + " ranks are allowed");
    Topology<Nsew> t(rows * cols, "mesh_2d");
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) {
            t.connect(r * cols + c, Nsew::E, r * cols + (c + 1) % cols, Nsew::W);
            t.connect(r * cols + c, Nsew::S, ((r + 1) % rows) * cols + c, Nsew::N);
        }
    return t;
}

/// A rows x cols mesh for `world` ranks: rows * cols must equal world (a mesh is rectangular).
inline Topology<Nsew> mesh_2d(uint32_t world, uint32_t rows, uint32_t cols) {
    if (uint64_t(rows) * cols != world)
        throw TopologyError("ipcq mesh_2d: " + std::to_string(world) + " ranks do not form a " + std::to_string(rows) +
                            " x " + std::to_string(cols) + " mesh (non-rectangular; allowed: rows * cols == world size)");
    return mesh_2d(rows, cols);
}

/// A square mesh for `world` ranks.
inline Topology<Nsew> mesh_2d_square(uint32_t world) {
    if (world > max_world)
        throw TopologyError("ipcq mesh_2d_square: " + std::to_string(world) + " ranks; at most " +
                            std::to_string(max_world) + " ranks are allowed");
    uint32_t s = 0;
    while (uint64_t(s + 1) * (s + 1) <= world) ++s;
    if (s * s != world)
        throw TopologyError("ipcq mesh_2d_square: " + std::to_string(world) +
                            " ranks are not a square number (non-rectangular mesh); give rows and cols with "
                            "rows * cols == world, e.g. mesh_2d(world, rows, cols)");
    return mesh_2d(s, s);
}

/// Binary tree in heap order: rank r's children are 2r+1 (left) and 2r+2 (right). n >= 2.
inline Topology<Tree> tree_binary(uint32_t n) {
    if (n < 2) throw TopologyError("ipcq tree_binary: needs at least 2 ranks, got " + std::to_string(n));
    Topology<Tree> t(n, "tree_binary");
    for (uint32_t r = 1; r < n; ++r) {
        const uint32_t p = (r - 1) / 2;
        t.connect(p, r == 2 * p + 1 ? Tree::left : Tree::right, r, Tree::parent);
    }
    return t;
}

/// From the caller's neighbour map: `peers[r][d]` = peer rank of rank r in direction d, or -1.
/// The peer's direction is Dirs::reverse(d) when the set has one; otherwise the unique direction
/// of the peer that names r (ambiguous or missing -> error: build with connect() instead).
template <class Dirs>
Topology<Dirs> custom(const std::vector<std::array<int32_t, Dirs::count>>& peers, std::string name = "custom") {
    Topology<Dirs> t(uint32_t(peers.size()), std::move(name));
    for (uint32_t r = 0; r < t.world; ++r)
        for (uint32_t d = 0; d < Dirs::count; ++d) {
            const int32_t p = peers[r][d];
            if (p < 0) continue;
            if (uint32_t(p) >= t.world)
                throw TopologyError("ipcq topology '" + t.name + "': " + t.endpoint(r, d) + " names peer rank " +
                                    std::to_string(p) + "; ranks are 0.." + std::to_string(t.world - 1));
            uint32_t pd = 0;
            if constexpr (Dirs::has_reverse) {
                pd = Dirs::reverse(d);
            } else {
                uint32_t found = 0;
                for (uint32_t e = 0; e < Dirs::count; ++e)
                    if (peers[uint32_t(p)][e] == int32_t(r)) pd = e, ++found;
                if (found != 1)
                    throw TopologyError("ipcq topology '" + t.name + "': " + t.endpoint(r, d) + " names rank " +
                                        std::to_string(p) + ", which names rank " + std::to_string(r) + " in " +
                                        std::to_string(found) +
                                        " directions (need exactly one to pair the link; use connect() to name it)");
            }
            t.links[r][d] = Link{p, pd, both};
        }
    t.validate();
    return t;
}

}  // namespace kccl::ipcq::host

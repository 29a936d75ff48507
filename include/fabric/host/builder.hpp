// kccl/fabric/host/builder.hpp — host side of the chip fabric: routes, layouts and kernel
// arguments for every router and worker, with named errors.
//
// HOST-ONLY (std::vector, std::string, exceptions). No emulation types: a small writer (the
// emulation: emulation/fabric/fabric.hpp; hardware: SetRuntimeArgs and semaphore writes) carries
// the plan to the cores.
//
//   kccl::fabric::host::FabricSpec s;
//   s.kind = FabricKind::ring_1d;            // line_1d, ring_1d (bubble flow control), mesh_2d
//   s.chips = {0, 1, 2, 3, 7, 6, 5, 4};      // position -> chip (1D: along the line / ring; 2D: row-major)
//   s.links = {...};                         // for each (position, direction): the Ethernet core there
//   s.workers = {...};                       // the worker core of each position
//   auto plan = build_fabric(s);             // FabricError names what was wrong and what is allowed
//   plan.router_args(i), plan.worker_args(rank), plan.init_words()
//
// ROUTES (deterministic: one per (source, destination), so a route's packets stay in order)
//   line_1d   towards the destination, |b - a| hops
//   ring_1d   the shorter way round (ties: E), at most n / 2 hops
//   mesh_2d   dimension order: along the row (E / W) first, then the column (N / S); one route
//             command per hop plus the deliver command, at most header_bytes - 52 commands (after the 4-byte destination)
// NAMED ERRORS: a route beyond the mesh (a destination or a hop with no link), a header too small
//   for the hops, a channel without credits (0 slots, or a ring receiver of < 2 slots: the bubble
//   rule needs 2), a ring without its deadlock rule (bubble flow control off), L1 that does not fit.
#pragma once

#include "../header.hpp"
#include "../router.hpp"
#include "../worker.hpp"

#include <common/coord.hpp>
#include <common/host/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kccl::fabric::host {

struct FabricError : ErrorOf<Errc::config> {
    using ErrorOf::ErrorOf;
};

enum class FabricKind : uint32_t { line_1d = 0, ring_1d = 1, mesh_2d = 2 };
inline const char* kind_name(FabricKind k) {
    return k == FabricKind::line_1d ? "line_1d" : k == FabricKind::ring_1d ? "ring_1d" : "mesh_2d";
}

using Core = CoreCoord;

/// The Ethernet core of position `pos` facing `dir`, and the core at the other end of its link.
struct LinkSite {
    uint32_t pos = 0, dir = 0;
    Core eth, peer_eth;
};

struct FabricSpec {
    FabricKind kind = FabricKind::line_1d;
    std::vector<uint32_t> chips;     ///< position -> chip id
    uint32_t cols = 0;               ///< mesh_2d: positions per row
    std::vector<LinkSite> links;     ///< the links the fabric uses (at most one per (position, direction))
    std::vector<Core> workers;       ///< one worker per position (rank = position)
    uint32_t header_bytes = header_base_bytes;  ///< 48 for 1D; 2D: 64 .. 128
    uint32_t message_bytes = 1024;   ///< largest collective message (the packet payload is 16 more)
    uint32_t peer_slots = 4;         ///< message slots per (source, destination) pair
    uint32_t rx_slots = 16;          ///< router receiver channel slots (tt-metal: 16)
    uint32_t tx_slots = 8;           ///< router sender channel slots (tt-metal: 8)
    bool bubble_flow_control = true; ///< required on rings
    /// The first value of every counter of the fabric (workers' sent / credit / arrival / done,
    /// routers' channel fill / taken / released, link sent / freed / acked / processed, forwarded /
    /// given back). 0 unless a test starts just below 2^32 to run its traffic across the wrap
    /// (router.hpp, WRAP); any value is allowed.
    uint32_t initial_counter = 0;
    /// NoC coordinates of every chip: the Tensix cores (the only cores a NoC multicast reaches,
    /// contract M3) and the extent of the chip's grid (x < noc_cols, y < noc_rows).
    hal::NocRect tensix{0, 0, 7, 7};
    uint32_t noc_cols = 10, noc_rows = 12;
    uint32_t router_base = 0x1000, router_l1_end = 256 * 1024, reserved_addr = 0x800;
    uint32_t worker_base = 0x8000, worker_l1_end = 1464 * 1024;
};

struct RouterPlan {
    Core core;
    uint32_t pos = 0, dir = 0;
    std::vector<uint32_t> args;
};

struct Route {
    uint32_t first_dir = no_router;
    Routing routing = Routing::unicast_1d;
    uint32_t route = 0;
    /// 2D: the route bytes: the destination word (route_dest, 4 bytes), then every command
    /// (cmds[4] is the first exit, taken at the source)
    std::vector<uint8_t> cmds;
    std::vector<std::pair<uint32_t, uint32_t>> links;  ///< (position, direction) of every hop
};

/// Appends the 2D destination word of chip `chip` (this fabric's mesh) to a route's bytes.
inline void push_route_dest(Route& r, uint32_t chip) {
    const uint32_t w = route_dest(chip, fabric_mesh_id);
    for (uint32_t i = 0; i < route_dest_bytes; ++i) r.cmds.push_back(uint8_t(w >> (8 * i)));
}

struct FabricPlan {
    FabricSpec spec;
    RouterLayout router;
    WorkerLayout worker;
    std::vector<RouterPlan> routers;
    std::vector<std::vector<uint32_t>> worker_arg_blocks;
    uint32_t ranks() const { return uint32_t(spec.chips.size()); }
    const std::vector<uint32_t>& worker_args(uint32_t rank) const { return worker_arg_blocks.at(rank); }
    /// The router of (position, direction), or nullptr.
    const RouterPlan* router_at(uint32_t pos, uint32_t dir) const {
        for (const auto& r : routers)
            if (r.pos == pos && r.dir == dir) return &r;
        return nullptr;
    }
    /// (core, L1 address, value): every word a peer may write before its owner starts (P2).
    struct InitWord {
        Core core;
        uint32_t addr, value;
    };
    std::vector<InitWord> init_words() const {
        std::vector<InitWord> v;
        for (const auto& r : routers) {
            const uint32_t c0 = spec.initial_counter;
            for (uint32_t w = 0; w < status_words; ++w) v.push_back({r.core, router.status() + 4 * w, 0});
            for (uint32_t c = 0; c < max_sender_channels; ++c) v.push_back({r.core, router.fill_sem(c), c0});
            for (uint32_t d = 0; d < num_dirs; ++d) v.push_back({r.core, router.fwd_credit_sem(d), c0});
            v.push_back({r.core, router.route_table(), fabric_mesh_id});  // the routing table the router reads
            v.push_back({r.core, router.route_table() + 4, spec.chips[r.pos]});
        }
        for (const Core& w : spec.workers) {
            for (uint32_t i = 0; i < status_words; ++i) v.push_back({w, worker.status() + 4 * i, 0});
            const uint32_t c0 = spec.initial_counter;
            for (uint32_t d = 0; d < num_dirs; ++d) v.push_back({w, worker.router_credit(d), c0});
            v.push_back({w, worker.done(), c0});
            for (uint32_t q = 0; q < ranks(); ++q) {
                v.push_back({w, worker.arrival(q), c0});
                v.push_back({w, worker.credit(q), c0});
            }
        }
        return v;
    }
};

inline uint32_t dir_step_ok(const FabricSpec& s, uint32_t pos, uint32_t dir) {
    for (const auto& l : s.links)
        if (l.pos == pos && l.dir == dir) return 1;
    return 0;
}

/// The position one hop from `pos` in `dir`, or throws (a route beyond the mesh).
inline uint32_t neighbour(const FabricSpec& s, uint32_t pos, uint32_t dir) {
    const uint32_t n = uint32_t(s.chips.size());
    auto beyond = [&](const std::string& why) {
        return FabricError("chip fabric: a route leaves the " + std::string(kind_name(s.kind)) + " at position " +
                           std::to_string(pos) + " (chip " + std::to_string(s.chips[pos]) + ") going " + dir_name(dir) +
                           ": " + why + " (route beyond the mesh)");
    };
    if (!dir_step_ok(s, pos, dir)) throw beyond("no link there");
    if (s.kind == FabricKind::mesh_2d) {
        const uint32_t r = pos / s.cols, c = pos % s.cols, rows = n / s.cols;
        if (dir == uint32_t(Dir::E) && c + 1 < s.cols) return pos + 1;
        if (dir == uint32_t(Dir::W) && c > 0) return pos - 1;
        if (dir == uint32_t(Dir::S) && r + 1 < rows) return pos + s.cols;
        if (dir == uint32_t(Dir::N) && r > 0) return pos - s.cols;
        throw beyond("the mesh ends there");
    }
    if (dir == uint32_t(Dir::E)) {
        if (pos + 1 < n) return pos + 1;
        if (s.kind == FabricKind::ring_1d) return 0;
    } else if (dir == uint32_t(Dir::W)) {
        if (pos > 0) return pos - 1;
        if (s.kind == FabricKind::ring_1d) return n - 1;
    }
    throw beyond("the line ends there");
}

/// The unicast route from position a to position b (a != b).
inline Route unicast_route(const FabricSpec& s, uint32_t a, uint32_t b) {
    const uint32_t n = uint32_t(s.chips.size());
    if (a >= n || b >= n)
        throw FabricError("chip fabric: a route from position " + std::to_string(a) + " to " + std::to_string(b) +
                          " names a position outside the fabric of " + std::to_string(n) +
                          " chips (route beyond the mesh)");
    if (a == b) throw FabricError("chip fabric: a route from position " + std::to_string(a) + " to itself");
    Route r;
    std::vector<uint32_t> dirs;
    if (s.kind == FabricKind::mesh_2d) {
        const uint32_t ca = a % s.cols, cb = b % s.cols, ra = a / s.cols, rb = b / s.cols;
        for (uint32_t c = ca; c < cb; ++c) dirs.push_back(uint32_t(Dir::E));
        for (uint32_t c = ca; c > cb; --c) dirs.push_back(uint32_t(Dir::W));
        for (uint32_t q = ra; q < rb; ++q) dirs.push_back(uint32_t(Dir::S));
        for (uint32_t q = ra; q > rb; --q) dirs.push_back(uint32_t(Dir::N));
    } else if (s.kind == FabricKind::line_1d) {
        dirs.assign(b > a ? b - a : a - b, b > a ? uint32_t(Dir::E) : uint32_t(Dir::W));
    } else {
        const uint32_t f = (b + n - a) % n;
        if (f <= n / 2) dirs.assign(f, uint32_t(Dir::E));
        else dirs.assign(n - f, uint32_t(Dir::W));
    }
    uint32_t p = a;
    for (uint32_t d : dirs) {
        r.links.push_back({p, d});
        p = neighbour(s, p, d);
    }
    r.first_dir = dirs.front();
    const uint32_t hops = uint32_t(dirs.size());
    if (s.kind == FabricKind::mesh_2d) {
        const uint32_t cap = s.header_bytes - header_base_bytes - route_dest_bytes;
        if (hops + 1 > cap)
            throw FabricError("chip fabric: the route from chip " + std::to_string(s.chips[a]) + " to chip " +
                              std::to_string(s.chips[b]) + " needs " + std::to_string(hops + 1) +
                              " route commands (one per hop and the deliver), but a " + std::to_string(s.header_bytes) +
                              "-byte header holds " + std::to_string(cap) +
                              " (header too small for the hops; allowed: header_bytes up to " +
                              std::to_string(header_max_bytes) + ", 52 + one byte per command)");
        r.routing = Routing::path_2d;
        push_route_dest(r, s.chips[b]);
        for (uint32_t i = 0; i < hops; ++i) r.cmds.push_back(route_forward(dirs[i]));
        r.cmds.push_back(route_deliver());
        r.route = (route_dest_bytes + 1u) | (uint32_t(r.cmds.size()) << 16);
    } else {
        if (hops > 0xFFFFu) throw FabricError("chip fabric: a 1D route of more than 65535 hops (header too small for the hops)");
        r.routing = Routing::unicast_1d;
        r.route = hops;
    }
    return r;
}

/// A 1D multicast from position a: `start` hops to the first destination, then `range` chips, in `dir`.
inline Route multicast_route_1d(const FabricSpec& s, uint32_t a, uint32_t dir, uint32_t start, uint32_t range) {
    if (s.kind == FabricKind::mesh_2d) throw FabricError("chip fabric: a 1D multicast route on a mesh_2d fabric (use a write-and-forward path)");
    if (start == 0 || range == 0) throw FabricError("chip fabric: a 1D multicast needs start >= 1 and range >= 1");
    Route r;
    uint32_t p = a;
    for (uint32_t i = 0; i + 1 < start + range; ++i) {
        r.links.push_back({p, dir});
        p = neighbour(s, p, dir);
    }
    r.first_dir = dir;
    r.routing = Routing::multicast_1d;
    r.route = start | (range << 16);
    return r;
}

/// A 2D write-and-forward path from position a along `dirs` (one per hop), delivering on every
/// chip after the first `skip` hops.
inline Route path_route_2d(const FabricSpec& s, uint32_t a, const std::vector<uint32_t>& dirs, uint32_t skip = 0) {
    if (dirs.empty()) throw FabricError("chip fabric: an empty 2D path");
    Route r;
    uint32_t p = a;
    for (uint32_t d : dirs) {
        r.links.push_back({p, d});
        p = neighbour(s, p, d);
    }
    const uint32_t cap = s.header_bytes - header_base_bytes - route_dest_bytes;
    if (dirs.size() + 1 > cap)
        throw FabricError("chip fabric: a 2D path of " + std::to_string(dirs.size()) + " hops needs " +
                          std::to_string(dirs.size() + 1) + " route commands; a " + std::to_string(s.header_bytes) +
                          "-byte header holds " + std::to_string(cap) + " (header too small for the hops)");
    r.first_dir = dirs[0];
    r.routing = Routing::path_2d;
    push_route_dest(r, s.chips[p]);  // the path's last chip
    r.cmds.push_back(route_forward(dirs[0]));
    for (size_t i = 1; i < dirs.size(); ++i)
        r.cmds.push_back(i >= skip ? route_deliver_and_forward(dirs[i]) : route_forward(dirs[i]));
    r.cmds.push_back(route_deliver());
    r.route = (route_dest_bytes + 1u) | (uint32_t(r.cmds.size()) << 16);
    return r;
}

inline FabricPlan build_fabric(const FabricSpec& s) {
    const std::string pfx = "chip fabric (" + std::string(kind_name(s.kind)) + "): ";
    const uint32_t n = uint32_t(s.chips.size());
    if (n < 2) throw FabricError(pfx + "needs at least 2 chips, got " + std::to_string(n));
    if (n > max_link_ranks)
        throw FabricError(pfx + std::to_string(n) + " chips; at most " + std::to_string(max_link_ranks) +
                          " (fabric::max_link_ranks)");
    if (s.workers.size() != n)
        throw FabricError(pfx + "one worker per position is needed (" + std::to_string(n) + " positions, " +
                          std::to_string(s.workers.size()) + " workers); several link workers per chip are not supported: " +
                          "a position's routers serve one link worker, the only producer of their worker channel");
    if (s.kind == FabricKind::mesh_2d && (s.cols == 0 || n % s.cols))
        throw FabricError(pfx + "cols must divide the chip count (" + std::to_string(n) + " chips, cols " + std::to_string(s.cols) + ")");
    if (s.kind == FabricKind::ring_1d && !s.bubble_flow_control)
        throw FabricError(pfx + "a ring without its deadlock rule: bubble_flow_control is off; a ring of sender and "
                                "receiver channels deadlocks when injections fill its last free slot (allowed: "
                                "bubble_flow_control = true, or a line_1d fabric)");
    if (s.tx_slots == 0 || s.tx_slots > RouterConfig::max_tx_slots)
        throw FabricError(pfx + "a sender channel without credits: tx_slots = " + std::to_string(s.tx_slots) +
                          " (allowed: 1 .. " + std::to_string(RouterConfig::max_tx_slots) + ")");
    const uint32_t min_rx = s.kind == FabricKind::ring_1d ? 2 : 1;
    if (s.rx_slots < std::max(min_rx, 2u) || s.rx_slots > RouterConfig::max_rx_slots)
        throw FabricError(pfx + "a receiver channel without credits: rx_slots = " + std::to_string(s.rx_slots) +
                          " (allowed: 2 .. " + std::to_string(RouterConfig::max_rx_slots) +
                          "; bubble flow control injects only with 2 free slots)");
    if (s.peer_slots == 0)
        throw FabricError(pfx + "a worker channel without credits: peer_slots = 0 (allowed: >= 1)");
    if (s.header_bytes % 16 || s.header_bytes < header_base_bytes || s.header_bytes > header_max_bytes ||
        (s.kind == FabricKind::mesh_2d && s.header_bytes == header_base_bytes))
        throw FabricError(pfx + "header_bytes = " + std::to_string(s.header_bytes) + " (allowed: a multiple of 16; 48 for 1D, " +
                          "64 .. 128 for 2D, which carries one route command per hop after the 48-byte base; header too small for the hops)");
    for (size_t i = 0; i < s.links.size(); ++i)
        for (size_t j = i + 1; j < s.links.size(); ++j)
            if (s.links[i].pos == s.links[j].pos && s.links[i].dir == s.links[j].dir)
                throw FabricError(pfx + "two links at position " + std::to_string(s.links[i].pos) + " facing " + dir_name(s.links[i].dir));

    FabricPlan plan;
    plan.spec = s;
    plan.router = RouterLayout{s.router_base, s.header_bytes, 16 + ((s.message_bytes + 15u) & ~15u), s.rx_slots, s.tx_slots};
    if (s.kind != FabricKind::mesh_2d) plan.router.sender_positions = 2;  // 1D: local + one pass-through channel
    plan.worker = WorkerLayout{s.worker_base, n, s.peer_slots, s.message_bytes, s.header_bytes};
    if (s.reserved_addr % 16 || s.reserved_addr + 96 > s.router_base)
        throw FabricError(pfx + "the Ethernet reserved area must be 16-byte aligned and end before router_base");
    if (plan.router.end() > s.router_l1_end)
        throw FabricError(pfx + "router L1: the channels need " + std::to_string(plan.router.end()) + " bytes up to the end, the Ethernet core has " +
                          std::to_string(s.router_l1_end) + " (allowed: fewer slots or a smaller message_bytes)");
    if (plan.worker.end() > s.worker_l1_end)
        throw FabricError(pfx + "worker L1: the fabric link needs up to " + std::to_string(plan.worker.end()) + ", the worker has " +
                          std::to_string(s.worker_l1_end));

    // Routes and the last-packet count of every link direction.
    std::vector<std::vector<Route>> routes(n, std::vector<Route>(n));
    std::vector<uint32_t> out_last(n * num_dirs, 0), in_last(n * num_dirs, 0);
    for (uint32_t a = 0; a < n; ++a)
        for (uint32_t b = 0; b < n; ++b) {
            if (a == b) continue;
            routes[a][b] = unicast_route(s, a, b);
            for (auto [p, d] : routes[a][b].links) {
                ++out_last[p * num_dirs + d];
                ++in_last[neighbour(s, p, d) * num_dirs + opposite(d)];
            }
        }
    auto router_core = [&](uint32_t p, uint32_t d) -> const LinkSite* {
        for (const auto& l : s.links)
            if (l.pos == p && l.dir == d) return &l;
        return nullptr;
    };
    for (const auto& l : s.links) {
        const uint32_t q = neighbour(s, l.pos, l.dir);
        const LinkSite* back = router_core(q, opposite(l.dir));
        if (!back || !(back->eth == l.peer_eth))
            throw FabricError(pfx + "the link of position " + std::to_string(l.pos) + " facing " + dir_name(l.dir) +
                              " does not end at the router of position " + std::to_string(q) + " facing " + dir_name(opposite(l.dir)));
        RouterPlan r;
        r.core = l.eth;
        r.pos = l.pos;
        r.dir = l.dir;
        std::vector<uint32_t>& a = r.args;
        a.assign(rargs::count, 0);
        a[rargs::magic] = router_args_magic;
        a[rargs::chip] = s.chips[l.pos];
        a[rargs::dir] = l.dir;
        a[rargs::layout_base] = plan.router.base;
        a[rargs::header_bytes] = s.header_bytes;
        a[rargs::max_payload] = plan.router.max_payload;
        a[rargs::rx_slots] = s.rx_slots;
        a[rargs::tx_slots] = s.tx_slots;
        a[rargs::master] = l.pos < q ? 1 : 0;  // one side of every link (a 2-chip ring: each link once)
        a[rargs::reserved] = s.reserved_addr;
        a[rargs::bubble] = s.kind == FabricKind::ring_1d && s.bubble_flow_control ? 1 : 0;
        a[rargs::in_last] = in_last[l.pos * num_dirs + l.dir];
        a[rargs::out_last] = out_last[l.pos * num_dirs + l.dir];
        uint32_t mask = 1;
        for (uint32_t d = 0; d < num_dirs; ++d) {
            const LinkSite* o = router_core(l.pos, d);
            a[rargs::router_xy + d] = o ? xy(o->eth.x, o->eth.y) : no_router;
            if (o && d != l.dir) mask |= 1u << (1 + d);
        }
        a[rargs::channels] = mask | (s.kind != FabricKind::mesh_2d ? channels_packed_1d : 0u);
        a[rargs::worker_xy] = xy(s.workers[l.pos].x, s.workers[l.pos].y);
        a[rargs::worker_credit] = plan.worker.router_credit(l.dir);
        a[rargs::peer_chip] = s.chips[q];
        a[rargs::initial_counter] = s.initial_counter;
        plan.routers.push_back(std::move(r));
    }
    const uint32_t cmd_words = (s.header_bytes - header_base_bytes + 3) / 4;
    const uint32_t stride = wargs::p_cmds + cmd_words;
    for (uint32_t a = 0; a < n; ++a) {
        std::vector<uint32_t> v(wargs::first_peer + n * stride, 0);
        v[wargs::magic] = worker_args_magic;
        v[wargs::rank] = a;
        v[wargs::ranks] = n;
        v[wargs::chip] = s.chips[a];
        v[wargs::header_bytes] = s.header_bytes;
        v[wargs::max_message] = s.message_bytes;
        v[wargs::slots] = s.peer_slots;
        v[wargs::worker_base] = plan.worker.base;
        v[wargs::router_base] = plan.router.base;
        v[wargs::router_rx_slots] = s.rx_slots;
        v[wargs::router_tx_slots] = s.tx_slots;
        for (uint32_t d = 0; d < num_dirs; ++d) {
            const LinkSite* o = router_core(a, d);
            v[wargs::router_xy + d] = o ? xy(o->eth.x, o->eth.y) : no_router;
        }
        v[wargs::router_max_payload] = plan.router.max_payload;
        v[wargs::peer_stride] = stride;
        v[wargs::initial_counter] = s.initial_counter;
        v[wargs::tensix_lo] = xy(s.tensix.x0, s.tensix.y0);
        v[wargs::tensix_hi] = xy(s.tensix.x1, s.tensix.y1);
        for (uint32_t b = 0; b < n; ++b) {
            const uint32_t base = wargs::first_peer + b * stride;
            v[base + wargs::p_xy] = xy(s.workers[b].x, s.workers[b].y);
            if (a == b) {
                v[base + wargs::p_dir] = no_router;
                continue;
            }
            const Route& r = routes[a][b];
            v[base + wargs::p_dir] = r.first_dir;
            v[base + wargs::p_routing] = uint32_t(r.routing);
            v[base + wargs::p_route] = r.route;
            for (size_t i = 0; i < r.cmds.size(); ++i) v[base + wargs::p_cmds + i / 4] |= uint32_t(r.cmds[i]) << (8 * (i % 4));
        }
        plan.worker_arg_blocks.push_back(std::move(v));
    }
    return plan;
}

/// Checks a NoC multicast rectangle for the chip of `rank` (FabricLink::multicast_write checks the
/// same on the device); throws a FabricError naming what is wrong: an empty or inverted rectangle,
/// one outside the chip, one that holds non-Tensix cores.
inline void check_mcast_rect(const FabricPlan& p, uint32_t rank, hal::NocRect r) {
    const FabricSpec& s = p.spec;
    const std::string at = "chip fabric: NoC multicast rectangle (" + std::to_string(r.x0) + "," + std::to_string(r.y0) + ")..(" +
                           std::to_string(r.x1) + "," + std::to_string(r.y1) + ") on rank " + std::to_string(rank);
    if (rank >= p.ranks()) throw FabricError(at + ": no such rank (ranks: " + std::to_string(p.ranks()) + ")");
    const std::string tx = "(" + std::to_string(s.tensix.x0) + "," + std::to_string(s.tensix.y0) + ")..(" +
                           std::to_string(s.tensix.x1) + "," + std::to_string(s.tensix.y1) + ")";
    if (r.cores() == 0) throw FabricError(at + ": empty or inverted (allowed: x0 <= x1 and y0 <= y1)");
    if (r.x1 >= s.noc_cols || r.y1 >= s.noc_rows)
        throw FabricError(at + ": rectangle outside the chip (its NoC grid is x < " + std::to_string(s.noc_cols) + ", y < " +
                          std::to_string(s.noc_rows) + ")");
    if (!s.tensix.contains(r.x0, r.y0) || !s.tensix.contains(r.x1, r.y1))
        throw FabricError(at + ": holds non-Tensix cores (NoC multicast reaches only Tensix cores, " + tx + ")");
}

/// What a router's status block says (words read from its L1 by the caller), in a sentence.
inline std::string describe_router(const FabricPlan& p, const RouterPlan& r, const uint32_t* status, uint32_t fill0,
                                   uint32_t credit_inbox) {
    std::string s = "fabric router chip " + std::to_string(r.core.chip) + " (" + std::to_string(r.core.x) + "," +
                    std::to_string(r.core.y) + ") facing " + dir_name(r.dir) + " (link to chip " +
                    std::to_string(r.args[rargs::peer_chip]) + "): ";
    if (status[st::magic] != status_magic) return s + "has not started (its status block is still the host's)";
    s += phase_name(status[st::phase]);
    const uint32_t c0 = r.args[rargs::initial_counter];  // counters are shown from the start of the run
    s += "; received " + std::to_string(status[st::rx_processed] - c0) + " packets (" + std::to_string(status[st::rx_last]) +
         " of " + std::to_string(r.args[rargs::in_last]) + " last packets), sent " + std::to_string(status[st::tx_sent] - c0) +
         " (" + std::to_string(status[st::tx_last]) + " of " + std::to_string(r.args[rargs::out_last]) +
         " last), the peer freed " + std::to_string(credit_inbox - c0) + "; local worker filled sender channel 0 with " +
         std::to_string(fill0 - c0) + " packets";
    const uint32_t k = status[st::wait_kind];
    if (k == 1)
        s += "; WAITS for link credits: sender channel " + std::to_string(status[st::wait_channel]) + " has a packet, the peer's receiver has " +
             std::to_string(status[st::wait_a]) + " free slots of " + std::to_string(p.spec.rx_slots) + ", it needs " +
             std::to_string(status[st::wait_b]) + (status[st::wait_b] == 2 ? " (bubble flow control)" : "");
    else if (k == 2)
        s += "; WAITS for the router facing " + std::string(dir_name(status[st::wait_channel])) +
             " to give back a slot of its pass-through channel (" + std::to_string(status[st::wait_a] - c0) + " forwarded, " +
             std::to_string(status[st::wait_b]) + " slots)";
    else if (k == 4)
        s += "; WAITS for the peer to free packets: every slot of sender channel " + std::to_string(status[st::wait_channel]) +
             " holds a packet sent but not freed (freed " + std::to_string(status[st::wait_a] - c0) + " of " +
             std::to_string(status[st::wait_b] - c0) + " sent; a link credit never returned?)";
    else if (k == 3)
        s += "; WAITS for the peer to free the packets it was sent (freed " + std::to_string(status[st::wait_a] - c0) + " of " +
             std::to_string(status[st::wait_b] - c0) + "; a link credit never returned?)";
    return s;
}

/// What a worker's status block says, in a sentence.
inline std::string describe_worker(const FabricPlan& p, uint32_t rank, const uint32_t* status,
                                   const std::vector<std::string>& router_states) {
    const Core& w = p.spec.workers[rank];
    std::string s = "fabric worker rank " + std::to_string(rank) + " chip " + std::to_string(w.chip) + ": ";
    if (status[wstatus::magic] != worker_status_magic) return s + "has not started its fabric link";
    const uint32_t a = status[wstatus::a], c = status[wstatus::c];
    const uint32_t b = status[wstatus::b] - p.spec.initial_counter;  // a counter: shown from the start of the run
    for (size_t i = 0; i < p.routers.size() && i < router_states.size(); ++i)  // a dead router of this chip
        if (p.routers[i].pos == rank && router_states[i].find("has not started") != std::string::npos)
            s += "[" + router_states[i] + "] ";
    switch (status[wstatus::kind]) {
        case wstatus::router_slot: {
            const RouterPlan* r = p.router_at(rank, a);
            s += "WAITS for a free slot in sender channel 0 of its router facing " + std::string(dir_name(a)) + " (" +
                 std::to_string(b) + " packets written, " + std::to_string(c) + " slots)";
            if (r)
                for (size_t i = 0; i < p.routers.size(); ++i)
                    if (&p.routers[i] == r && i < router_states.size()) s += "; " + router_states[i];
            return s;
        }
        case wstatus::peer_credit:
            return s + "WAITS for a credit from rank " + std::to_string(a) + " (chip " + std::to_string(p.spec.chips[a]) + "): " +
                   std::to_string(b) + " messages sent into its " + std::to_string(c) +
                   " slots for us and not all released (a credit never returned?)";
        case wstatus::arrival:
            return s + "WAITS for message " + std::to_string(b) + " from rank " + std::to_string(a) + " (chip " +
                   std::to_string(p.spec.chips[a]) + ")";
        case wstatus::last_packets:
            return s + "WAITS for the last packets of all " + std::to_string(a) + " peers (quiesce)";
        case wstatus::router_close:
            return s + "WAITS for its router facing " + std::string(dir_name(a)) + " to give back every slot (" +
                   std::to_string(b) + " written)";
        case wstatus::finished: return s + "finished";
        default: return s + "running";
    }
}

}  // namespace kccl::fabric::host

// kccl/wafer/host/grid.hpp — the host's grid builder for the routed PE fabric: a profile (the
// machine's limits), per-PE per-color router configurations with switch positions, helpers for
// the shapes collectives need (paths, row / column multicast), and validation with named errors.
//
// Contract
//   * A Grid is W x H PEs, (x, y) with x to the EAST and y to the SOUTH, (0, 0) the north-west
//     corner. Every PE has a router with five directions: NORTH, EAST, SOUTH, WEST and RAMP (its
//     own processor).
//   * For each (PE, color) the router holds 1..profile.positions switch positions; each position
//     has an rx set (the directions wavelets are accepted from) and a tx set (the directions they
//     are forwarded to: several = multicast, RAMP = delivered to the PE). Position 0 is current
//     at the start; `advance` on the color moves to the next (wrapping in ring mode, else staying
//     at the last). A (PE, color) without configuration neither accepts nor forwards.
//   * A route handle (wafer::Route) is the color; device code gets it from its kernel args.
//   * Errors (kccl::Error, message starting "fabric grid: " and naming the PE, the
//     color and the limit) are thrown where the mistake is made when it can be seen there
//     (coordinates outside the grid, a color beyond the profile's, too many positions, a tx that
//     leaves the grid, two rx directions on one color in one position without allow_merge), and
//     by validate() for whole-grid properties (a route that loops, PE memory exceeded).
//   * Host-only (allocates, throws); C++17.
#pragma once

#include <common/coord.hpp>
#include <common/direction.hpp>
#include <common/host/error.hpp>
#include <wafer/wafer.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kccl::wafer::host {

/// A router's five directions, in the order the router visits them (clockwise from north, then its
/// own PE): multicast copies leave in this order, and the emulation's cycles depend on it.
inline constexpr uint32_t dir_count = 5;
inline constexpr Dir router_dirs[dir_count] = {Dir::N, Dir::E, Dir::S, Dir::W, Dir::ramp};

/// NORTH, SOUTH, EAST, WEST, RAMP (the names of the Cerebras SDK's routes).
inline const char* dir_word(Dir d) {
    constexpr const char* words[dir_count] = {"NORTH", "SOUTH", "EAST", "WEST", "RAMP"};
    return d < dir_count ? words[d] : "?";
}

/// A set of router directions.
struct DirSet {
    uint8_t bits = 0;
    DirSet() = default;
    DirSet(Dir d) : bits(uint8_t(1u << uint32_t(d))) {}  // NOLINT: a direction is a one-element set
    DirSet(std::initializer_list<Dir> ds) {
        for (Dir d : ds) bits = uint8_t(bits | (1u << uint32_t(d)));
    }
    bool has(Dir d) const { return (bits >> uint32_t(d)) & 1u; }
    bool empty() const { return bits == 0; }
    uint32_t size() const { return uint32_t(__builtin_popcount(bits)); }
    DirSet operator|(DirSet o) const {
        DirSet r;
        r.bits = uint8_t(bits | o.bits);
        return r;
    }
    bool operator==(DirSet o) const { return bits == o.bits; }
    std::string str() const {
        std::string s = "{";
        for (Dir d : router_dirs)
            if (has(d)) s += std::string(s.size() > 1 ? ", " : "") + dir_word(d);
        return s + "}";
    }
};

/// What a machine allows. Figures: the Cerebras WSE reduce/allreduce thesis (chapter 2 and its
/// performance model, chapter 3).
struct Profile {
    const char* name = "WSE-2";
    uint32_t colors = 24;             ///< routable colors (0 .. colors-1)
    uint32_t positions = 4;           ///< switch positions per router per color
    bool ring_mode = true;            ///< routers support ring mode (Grid::set_ring)
    uint32_t pe_mem_bytes = 48 * 1024;  ///< local memory per PE
    uint32_t t_r = 2;                 ///< router <-> processor (ramp) latency, cycles
    uint32_t hop_cycles = 1;          ///< router to neighbouring router
    uint32_t switch_colors = ~0u;     ///< bit c set: color c may have more than one switch position
    /// Wavelets a router's input queue holds per color (back-pressure beyond it: the sender
    /// blocks). Neither the thesis nor the Cerebras SDK documentation gives a figure; 4 is a
    /// chosen default ("a few wavelets"). The emulation's adversarial mode uses 1.
    uint32_t router_queue_wavelets = 4;
};

/// The WSE-2 as the thesis describes it: 24 routable colors, 4 switch positions per color with
/// ring mode, 48 KiB per PE, T_R = 2 (the value the thesis fits to the simulator).
inline Profile wse2() { return Profile{}; }
/// The WSE-3: the WSE-2's figures, except that (Cerebras SDK documentation, CSL builtins,
/// "current_switch_pos") only colors 0-9, 12, 13, 16, 17, 20 and 21 support switch positions.
/// Neither the thesis nor the SDK documentation gives other differences for these figures.
inline Profile wse3() {
    Profile p;
    p.name = "WSE-3";
    p.switch_colors = 0x3FFu | 1u << 12 | 1u << 13 | 1u << 16 | 1u << 17 | 1u << 20 | 1u << 21;
    return p;
}
inline bool can_switch(const Profile& p, uint32_t color) { return color < 32 && ((p.switch_colors >> color) & 1u); }

using kccl::Coord;  // a PE: (x, y) on the wafer
inline std::string to_string(Coord c) { return "(" + std::to_string(c.x) + "," + std::to_string(c.y) + ")"; }

/// The PE one link away in direction d (north of row 0 wraps to a huge y: outside); RAMP: c itself.
inline Coord neighbour(Coord c, Dir d) {
    switch (d) {
        case Dir::N: return Coord{c.x, c.y - 1};
        case Dir::S: return Coord{c.x, c.y + 1};
        case Dir::E: return Coord{c.x + 1, c.y};
        case Dir::W: return Coord{c.x - 1, c.y};
        default: return c;
    }
}
/// The first hop of an X-then-Y route from `from` to `to` (from != to).
inline Dir toward(Coord from, Coord to) { return from.x < to.x ? Dir::E : from.x > to.x ? Dir::W : from.y < to.y ? Dir::S : Dir::N; }

struct Position {
    DirSet rx, tx;
};
/// One router's configuration of one color.
struct ColorConfig {
    Position pos[8];
    uint8_t count = 0;
    bool ring = false;  ///< advance from the last position wraps to position 0 (else it stays)
};

class Grid {
public:
    Grid(Profile p, uint32_t w, uint32_t h) : p_(p), w_(w), h_(h) {
        if (w == 0 || h == 0) throw kccl::Error(kccl::Errc::config, "fabric grid: a grid needs at least 1 x 1 PEs (got " + std::to_string(w) + " x " + std::to_string(h) + ")");
        if (p.positions == 0 || p.positions > 8)
            throw kccl::Error(kccl::Errc::config, "fabric grid: profile " + std::string(p.name) + " has " + std::to_string(p.positions) + " switch positions; 1..8 are supported");
        merge_.assign(p.colors, 0);
    }
    const Profile& profile() const { return p_; }
    uint32_t width() const { return w_; }
    uint32_t height() const { return h_; }
    bool contains(Coord c) const { return c.x < w_ && c.y < h_; }

    /// Appends a switch position (rx -> tx) to `pe`'s router for `color`; returns its index.
    uint32_t add_position(Coord pe, uint32_t color, DirSet rx, DirSet tx) {
        validated_ = false;
        check_pe(pe, "add_position");
        check_color(color, pe);
        if (rx.size() > 1 && !merge_[color])
            throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + " color " + std::to_string(color) + ": two inputs " + rx.str() +
                                        " on one color in one position; allowed is one input per position, or several on a color declared with allow_merge "
                                        "(whose streams the pattern guarantees never to overlap in time)");
        for (uint32_t k = 0; k < 4; ++k)
            if (const Dir d = router_dirs[k]; tx.has(d) && !contains(neighbour(pe, d)))
                throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + " color " + std::to_string(color) + ": tx " + dir_word(d) +
                                            " leaves the " + std::to_string(w_) + " x " + std::to_string(h_) + " grid");
        ColorConfig& cc = cfg_[key(pe, color)];
        if (cc.count >= p_.positions)
            throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + " color " + std::to_string(color) + ": a " + std::to_string(p_.positions + 1) +
                                        "th switch position; " + p_.name + " allows " + std::to_string(p_.positions) + " per color");
        if (cc.count == 1 && !can_switch(p_, color))
            throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + " color " + std::to_string(color) + ": a second switch position, but " + p_.name +
                                        " supports switch positions only on some colors (" + switch_color_list() + ")");
        cc.pos[cc.count] = Position{rx, tx};
        return cc.count++;
    }
    /// Ring mode for `pe`'s router on `color`: an advance at the last position wraps to position 0
    /// (without it, the last position stays).
    void set_ring(Coord pe, uint32_t color) {
        validated_ = false;
        check_pe(pe, "set_ring");
        check_color(color, pe);
        if (!p_.ring_mode) throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + " color " + std::to_string(color) + ": " + p_.name + " has no ring mode");
        cfg_[key(pe, color)].ring = true;
    }
    /// Lets `color` have several rx directions in one position (a pattern that time-multiplexes
    /// sources on it, as the thesis's scalar reduce does). Overlap is still an error at run time.
    void allow_merge(uint32_t color) {
        validated_ = false;
        check_color(color, Coord{});
        merge_[color] = 1;
    }
    /// Declares `bytes` of `pe`'s local memory in use (checked by validate()).
    void use_memory(Coord pe, uint32_t bytes) {
        validated_ = false;
        check_pe(pe, "use_memory");
        mem_[pe.y * size_t(w_) + pe.x] += bytes;
    }
    uint32_t memory(Coord pe) const {
        auto it = mem_.find(pe.y * size_t(w_) + pe.x);
        return it == mem_.end() ? 0 : it->second;
    }

    // ---- shapes -------------------------------------------------------------------------------
    /// A straight unicast path from `from` to `to` (same row or column, from != to): the source's
    /// router takes RAMP, the ones between pass it on, the destination's delivers it to RAMP.
    void path(uint32_t color, Coord from, Coord to) { line(color, from, to, false); }
    /// A multicast along a row or column from `from` to `to`: every PE after `from` up to `to`
    /// gets a copy (tx = {onward, RAMP}); `to`'s router only delivers.
    void line_multicast(uint32_t color, Coord from, Coord to) { line(color, from, to, true); }

    // ---- queries ------------------------------------------------------------------------------
    const ColorConfig* config(Coord pe, uint32_t color) const {
        auto it = cfg_.find(key(pe, color));
        return it == cfg_.end() ? nullptr : &it->second;
    }
    Coord neighbour(Coord c, Dir d) const { return host::neighbour(c, d); }

    /// Whole-grid checks: PE memory within the profile, and no route that loops (with every
    /// router at position k, or its last if it has fewer, for each k).
    void validate() const {
        if (validated_) return;  // unchanged since the last validate() that passed
        for (const auto& kv : mem_)
            if (kv.second > p_.pe_mem_bytes)
                throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(Coord{uint32_t(kv.first % w_), uint32_t(kv.first / w_)}) + " uses " +
                                            std::to_string(kv.second) + " bytes of memory; " + p_.name + " has " + std::to_string(p_.pe_mem_bytes) + " per PE");
        // With every router at its last position from k = max count - 1 on, further k repeat it.
        uint32_t most = 1;
        for (const auto& kv : cfg_) most = std::max<uint32_t>(most, kv.second.count);
        for (uint32_t k = 0; k < most && k < p_.positions; ++k) check_loops(k);
        validated_ = true;
    }

    std::string switch_color_list() const {
        std::string s;
        for (uint32_t c = 0; c < p_.colors; ++c)
            if (can_switch(p_, c)) s += (s.empty() ? "" : ", ") + std::to_string(c);
        return s;
    }

private:
    uint64_t key(Coord c, uint32_t color) const { return (uint64_t(c.y) * w_ + c.x) * p_.colors + color; }
    void check_pe(Coord c, const char* what) const {
        if (!contains(c))
            throw kccl::Error(kccl::Errc::config, std::string("fabric grid: ") + what + ": PE " + to_string(c) + " is outside the " + std::to_string(w_) + " x " +
                                        std::to_string(h_) + " grid (x < " + std::to_string(w_) + ", y < " + std::to_string(h_) + ")");
    }
    void check_color(uint32_t color, Coord pe) const {
        if (color >= p_.colors)
            throw kccl::Error(kccl::Errc::config, "fabric grid: PE " + to_string(pe) + ": color " + std::to_string(color) + " is not routable; " + p_.name + " has " +
                                        std::to_string(p_.colors) + " routable colors (0.." + std::to_string(p_.colors - 1) + "): too many colors");
    }
    void line(uint32_t color, Coord from, Coord to, bool multicast) {
        check_pe(from, multicast ? "line_multicast" : "path");
        check_pe(to, multicast ? "line_multicast" : "path");
        if (from == to || (from.x != to.x && from.y != to.y))
            throw kccl::Error(kccl::Errc::config, "fabric grid: a path or line multicast goes along one row or column between two different PEs (got " + to_string(from) +
                                        " -> " + to_string(to) + ")");
        const Dir d = toward(from, to);
        add_position(from, color, Dir::ramp, d);
        for (Coord c = neighbour(from, d); c != to; c = neighbour(c, d)) add_position(c, color, opposite(d), multicast ? DirSet{d, Dir::ramp} : DirSet(d));
        add_position(to, color, opposite(d), Dir::ramp);
    }
    void check_loops(uint32_t k) const {
        // Each (PE, color) at position min(k, count-1) is a node; an edge leads to the neighbour a
        // tx direction reaches, if that neighbour's position accepts from there. Iterative DFS.
        std::vector<uint8_t> state(size_t(w_) * h_ * p_.colors, 0);  // 1 on the stack, 2 done (dense: one byte per (PE, color))
        std::vector<std::pair<uint64_t, uint32_t>> stack;
        for (const auto& kv : cfg_) {
            if (state[kv.first]) continue;
            stack.assign(1, {kv.first, 0});
            state[kv.first] = 1;
            while (!stack.empty()) {
                auto& [node, dir] = stack.back();
                const Coord c{uint32_t(node / p_.colors % w_), uint32_t(node / p_.colors / w_)};
                const uint32_t color = uint32_t(node % p_.colors);
                const ColorConfig& cc = cfg_.at(node);
                const Position pos = cc.pos[k < cc.count ? k : cc.count - 1];
                bool pushed = false;
                while (!pushed && dir < 4) {
                    const Dir d = router_dirs[dir++];
                    if (!pos.tx.has(d)) continue;
                    const Coord n = neighbour(c, d);
                    const uint64_t nk = key(n, color);
                    auto it = cfg_.find(nk);
                    if (it == cfg_.end()) continue;
                    const Position& np = it->second.pos[k < it->second.count ? k : it->second.count - 1];
                    if (!np.rx.has(opposite(d))) continue;
                    uint8_t& s = state[nk];
                    if (s == 1)
                        throw kccl::Error(kccl::Errc::config, "fabric grid: the route on color " + std::to_string(color) + " loops: " + to_string(c) + " forwards " +
                                                    dir_word(d) + " back into " + to_string(n) + ", which forwards to it again (switch position " +
                                                    std::to_string(k) + "); a route must be a path or a tree");
                    if (s == 0) {
                        s = 1;
                        stack.push_back({nk, 0});
                        pushed = true;
                    }
                }
                if (!pushed) {
                    state[stack.back().first] = 2;
                    stack.pop_back();
                }
            }
        }
    }

    Profile p_;
    uint32_t w_, h_;
    std::unordered_map<uint64_t, ColorConfig> cfg_;
    mutable bool validated_ = false;  ///< validate() passed and nothing changed since
    std::unordered_map<size_t, uint32_t> mem_;
    std::vector<uint8_t> merge_;
};

}  // namespace kccl::wafer::host

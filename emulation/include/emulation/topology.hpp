// kccl/emulation/topology.hpp — what an emulated cluster is made of: chips, cores, links.
//
// A ClusterSpec is plain data: the chip shape (worker grid, Ethernet cores, L1 sizes, optional
// DRAM) and the list of links, each joining one Ethernet core of one chip to one Ethernet core
// of another. Canned specs for Tenstorrent's systems (N300, T3000, Galaxy) and for rings, lines and
// meshes; `custom(n)` plus `connect(a, b)` for anything else.
//
// NoC coordinates on every chip (the emulation's choice; device code never hard-codes them):
//   worker cores   (x, y) for x < grid_w, y < grid_h
//   Ethernet core i (i, grid_h)            i < eth_cores (Wormhole has 16)
//   DRAM endpoint  (0, grid_h + 1)        present when dram_bytes > 0; NoC target only
#pragma once

#include <common/coord.hpp>
#include <common/host/error.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace kccl::emu {

/// Raised for every invalid configuration and every contract violation the emulation detects.
/// The message names the chip/core, the operation and the allowed bound.
struct EmulationError : ErrorOf<Errc::emulation> {
    using ErrorOf::ErrorOf;
};

enum class CoreKind : uint8_t { worker, ethernet, dram };

inline const char* to_string(CoreKind k) {
    switch (k) {
        case CoreKind::worker: return "worker";
        case CoreKind::ethernet: return "eth";
        case CoreKind::dram: return "dram";
    }
    return "?";
}

using kccl::CoreCoord;  // a core of the cluster: chip index plus NoC coordinates on that chip

inline std::string to_string(const CoreCoord& c) {
    return "chip " + std::to_string(c.chip) + " (" + std::to_string(c.x) + "," +
           std::to_string(c.y) + ")";
}

/// Largest cluster and grid the emulation addresses: a NoC address carries the chip id in 8 bits
/// and x, y in 10 bits each (see Hal::noc_addr), so chips are 0..255 and NoC coordinates 0..1023
/// on every chip.
inline constexpr uint32_t max_chips = 256;
inline constexpr uint32_t max_noc_coord = 1023;

struct ChipSpec {
    uint32_t grid_w = 8;                 ///< worker columns
    uint32_t grid_h = 8;                 ///< worker rows
    uint32_t eth_cores = 16;             ///< Ethernet cores per chip (Wormhole: 16)
    uint32_t worker_l1_bytes = 1464 * 1024;  ///< Tensix L1 (Wormhole: 1464 KiB)
    uint32_t eth_l1_bytes = 256 * 1024;      ///< ERISC L1 (Wormhole: 256 KiB)
    uint32_t dram_bytes = 0;             ///< per-chip DRAM endpoint; 0 = none
};

/// One Ethernet link: eth core `eth_a` of chip `chip_a` <-> eth core `eth_b` of chip `chip_b`.
struct LinkSpec {
    uint32_t chip_a, eth_a, chip_b, eth_b;
};

struct ClusterSpec {
    std::string name = "custom";
    uint32_t num_chips = 1;
    ChipSpec chip{};
    std::vector<LinkSpec> links;
    uint32_t mesh_rows = 0, mesh_cols = 0;  ///< set by mesh-shaped specs (chip = row * cols + col)

    /// Adds `count` links between chips a and b, on the lowest free Ethernet cores of each.
    ClusterSpec& connect(uint32_t a, uint32_t b, uint32_t count = 1) {
        if (a >= num_chips || b >= num_chips)
            throw EmulationError("ClusterSpec::connect(" + std::to_string(a) + ", " +
                                 std::to_string(b) + "): chip index out of range (cluster has " +
                                 std::to_string(num_chips) + " chips)");
        if (a == b)
            throw EmulationError("ClusterSpec::connect: chip " + std::to_string(a) +
                                 " cannot be linked to itself (links join two different chips)");
        for (uint32_t i = 0; i < count; ++i) links.push_back({a, next_free_eth(a), b, next_free_eth(b)});
        return *this;
    }
    /// Adds one link on explicit Ethernet cores.
    ClusterSpec& connect_eth(uint32_t a, uint32_t eth_a, uint32_t b, uint32_t eth_b) {
        links.push_back({a, eth_a, b, eth_b});
        return *this;
    }

private:
    uint32_t next_free_eth(uint32_t chip) const {
        for (uint32_t e = 0; e < this->chip.eth_cores; ++e) {
            bool used = false;
            for (const auto& l : links)
                used = used || (l.chip_a == chip && l.eth_a == e) || (l.chip_b == chip && l.eth_b == e);
            if (!used) return e;
        }
        throw EmulationError("ClusterSpec::connect: chip " + std::to_string(chip) +
                             " has no free Ethernet core (all " +
                             std::to_string(this->chip.eth_cores) + " are linked)");
    }
};

namespace topology {

/// A single chip, no links.
inline ClusterSpec single_chip(ChipSpec chip = {}) {
    ClusterSpec s;
    s.name = "single";
    s.num_chips = 1;
    s.chip = chip;
    return s;
}

/// `n` chips and no links; add them with connect().
inline ClusterSpec custom(uint32_t n, ChipSpec chip = {}) {
    if (n == 0) throw EmulationError("topology::custom: a cluster needs at least 1 chip");
    if (n > max_chips)
        throw EmulationError("topology: " + std::to_string(n) + " chips requested; at most " +
                             std::to_string(max_chips) + " are allowed (chip ids are 8 bits in a NoC address)");
    ClusterSpec s;
    s.name = "custom";
    s.num_chips = n;
    s.chip = chip;
    return s;
}

/// Chips 0..n-1 in a line: i <-> i+1.
inline ClusterSpec line(uint32_t n, uint32_t links_per_pair = 1, ChipSpec chip = {}) {
    if (n < 2) throw EmulationError("topology::line: needs at least 2 chips, got " + std::to_string(n));
    ClusterSpec s = custom(n, chip);
    s.name = "line" + std::to_string(n);
    for (uint32_t i = 0; i + 1 < n; ++i) s.connect(i, i + 1, links_per_pair);
    return s;
}

/// Chips 0..n-1 in a ring: i <-> (i+1) mod n. The links of chip i are ordered so that its
/// links to the next chip come first (eth 0..links_per_pair-1 for chips > 0).
inline ClusterSpec ring(uint32_t n, uint32_t links_per_pair = 1, ChipSpec chip = {}) {
    if (n < 2) throw EmulationError("topology::ring: needs at least 2 chips, got " + std::to_string(n));
    ClusterSpec s = custom(n, chip);
    s.name = "ring" + std::to_string(n);
    for (uint32_t i = 0; i < n; ++i) s.connect(i, (i + 1) % n, links_per_pair);
    return s;
}

/// rows x cols mesh (chip = r * cols + c), neighbours in rows and columns; `wrap` makes a torus.
inline ClusterSpec mesh(uint32_t rows, uint32_t cols, uint32_t links_per_pair = 1, bool wrap = false,
                        ChipSpec chip = {}) {
    if (rows == 0 || cols == 0 || uint64_t(rows) * cols < 2)
        throw EmulationError("topology::mesh: needs rows, cols >= 1 and at least 2 chips");
    if (uint64_t(rows) * cols > max_chips)
        throw EmulationError("topology::mesh: " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " chips requested; at most " + std::to_string(max_chips) + " chips are allowed");
    ClusterSpec s = custom(rows * cols, chip);
    s.name = "mesh" + std::to_string(rows) + "x" + std::to_string(cols);
    s.mesh_rows = rows;
    s.mesh_cols = cols;
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) {
            uint32_t me = r * cols + c;
            if (c + 1 < cols) s.connect(me, me + 1, links_per_pair);
            else if (wrap && cols > 2) s.connect(me, r * cols, links_per_pair);
            if (r + 1 < rows) s.connect(me, me + cols, links_per_pair);
            else if (wrap && rows > 2) s.connect(me, c, links_per_pair);
        }
    return s;
}

/// N300: one board, 2 chips joined by 2 links (tt-metal BasicEthernetGuide, "N300": 200 Gb/s each way between L and R).
inline ClusterSpec n300(ChipSpec chip = {}) {
    ClusterSpec s = line(2, 2, chip);
    s.name = "N300";
    return s;
}

/// T3000: 8 chips as a 2x4 mesh (four N300s), 2 links between neighbouring chips.
inline ClusterSpec t3000(ChipSpec chip = {}) {
    ClusterSpec s = mesh(2, 4, 2, false, chip);
    s.name = "T3000";
    return s;
}

/// Galaxy: 32 chips as a 4x8 mesh; 4 links between neighbours, so interior chips use all 16.
inline ClusterSpec galaxy(ChipSpec chip = {}) {
    ClusterSpec s = mesh(4, 8, 4, false, chip);
    s.name = "Galaxy";
    return s;
}

}  // namespace topology
}  // namespace kccl::emu

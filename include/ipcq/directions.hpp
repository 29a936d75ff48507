// kccl/ipcq/directions.hpp — the direction sets an IPCQ core can own queue pairs in.
//
// WHAT IT IS
//   A direction set is a type naming the logical ports of a core. It is the `Dirs` template parameter of kccl::ipcq::Queues
//   and of the host builders. Requirements on a direction set D:
//     static constexpr uint32_t count;                    number of directions (<= kMaxDirs)
//     static constexpr const char* name(uint32_t d);      short printable name, "?" if d >= count
//     static constexpr bool has_reverse;                  every direction has a fixed reverse
//     static constexpr uint32_t reverse(uint32_t d);      (only if has_reverse) the direction on
//                                                         the peer that points back (N<->S ...)
//   Direction values are plain uint32_t indices 0..count-1 so that kernels can loop over them.
//
// Who uses it: device code (C++17, freestanding) and host builders.
#pragma once

#include <common/direction.hpp>
#include <hal/config.hpp>

#include <stdint.h>

namespace kccl::ipcq {

/// Largest direction count a set may have (bounds the per-core queue block).
inline constexpr uint32_t kMaxDirs = 8;

/// 2D mesh / ring ports: north, south, east, west (kccl::Dir's numbers). ring_1d uses E and W only.
struct Nsew {
    static constexpr uint32_t N = Dir::N, S = Dir::S, E = Dir::E, W = Dir::W;
    static constexpr uint32_t count = 4;
    static constexpr bool has_reverse = true;
    static constexpr uint32_t reverse(uint32_t d) { return opposite(d); }
    static constexpr const char* name(uint32_t d) { return dir_name(d); }
};

/// 3D mesh ports: Nsew plus up and down.
struct Nsewud : Nsew {
    static constexpr uint32_t U = Dir::U, D = Dir::D;
    static constexpr uint32_t count = 6;
    static constexpr const char* name(uint32_t d) { return d == U ? "U" : d == D ? "D" : dir_name(d); }
};

/// Binary-tree ports. The reverse of `parent` is `left` or `right` depending on the child, so
/// there is no fixed reverse: topologies over this set name each link's peer direction.
struct Tree {
    enum : uint32_t { parent = 0, left = 1, right = 2 };
    static constexpr uint32_t count = 3;
    static constexpr bool has_reverse = false;
    static constexpr uint32_t reverse(uint32_t) { return 0; }
    static constexpr const char* name(uint32_t d) {
        return d == parent ? "parent" : d == left ? "left" : d == right ? "right" : "?";
    }
};

template <class Dirs>
constexpr bool check_direction_set() {
    static_assert(Dirs::count >= 1 && Dirs::count <= kMaxDirs,
                  "An IPCQ direction set must have between 1 and kccl::ipcq::kMaxDirs (8) directions.");
    return true;
}

}  // namespace kccl::ipcq

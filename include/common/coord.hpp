// kccl/common/coord.hpp — where a core is, on every machine. C++17, freestanding.
//   Coord      (x, y) on one chip: a core's NoC coordinates, or a wafer PE (x east, y south).
//   CoreCoord  a core of a cluster: its chip and its (x, y) there; ordered by chip, x, y.
#pragma once

#include <stdint.h>

namespace kccl {

struct Coord {
    uint32_t x = 0, y = 0;
    friend constexpr bool operator==(const Coord& a, const Coord& b) { return a.x == b.x && a.y == b.y; }
    friend constexpr bool operator!=(const Coord& a, const Coord& b) { return !(a == b); }
};

struct CoreCoord {
    uint32_t chip = 0, x = 0, y = 0;
    friend constexpr bool operator==(const CoreCoord& a, const CoreCoord& b) { return a.chip == b.chip && a.x == b.x && a.y == b.y; }
    friend constexpr bool operator!=(const CoreCoord& a, const CoreCoord& b) { return !(a == b); }
    friend constexpr bool operator<(const CoreCoord& a, const CoreCoord& b) {
        return a.chip != b.chip ? a.chip < b.chip : a.x != b.x ? a.x < b.x : a.y < b.y;
    }
};

}  // namespace kccl

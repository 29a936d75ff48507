// kccl/common/direction.hpp — the one direction numbering of every machine: IPCQ queue pairs, the
// collectives' links, tt-metal's chip fabric routers and the wafer's PE routers.
//
//   N 0, S 1, E 2, W 3   x grows to the east, y to the south. E is the next core or chip of a line or
//                        ring (the next column of a mesh), S the next row.
//   U 4, D 5             a 3D mesh's up and down (IPCQ's Nsewud).
//   ramp 4               a wafer router's port to its own PE. The wafer's timing model keeps the two
//                        halves apart: on_ramp 4 (PE to router), off_ramp 5 (router to PE).
//   Opposite directions differ in bit 0: opposite(d) = d ^ 1 (N-S, E-W, U-D, on_ramp-off_ramp).
//   The wafer's `ramp` has no opposite (a wavelet on the ramp does not cross a link).
//
// Dir is an unscoped enum in its own namespace: `Dir::E` names a direction and converts to its
// number, so kernels index arrays and loop over directions with plain uint32_t.
//
// C++17, freestanding.
#pragma once

#include <stdint.h>

namespace kccl {
namespace direction {
enum Dir : uint8_t { N = 0, S = 1, E = 2, W = 3, U = 4, D = 5, ramp = 4, on_ramp = 4, off_ramp = 5 };
}  // namespace direction
using direction::Dir;

/// The four directions of a 2D mesh (N, S, E, W).
inline constexpr uint32_t num_dirs = 4;
constexpr uint32_t opposite(uint32_t d) { return d ^ 1u; }
constexpr Dir opposite(Dir d) { return Dir(d ^ 1u); }
/// "N", "S", "E", "W"; "?" for any other number.
constexpr const char* dir_name(uint32_t d) { return d == Dir::N ? "N" : d == Dir::S ? "S" : d == Dir::E ? "E" : d == Dir::W ? "W" : "?"; }

}  // namespace kccl

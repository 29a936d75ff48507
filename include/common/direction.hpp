// kccl/common/direction.hpp — the one direction numbering of every machine (IPCQ, the collectives'
// links, tt-metal's chip fabric, the wafer's PE routers). C++17, freestanding.
//
//   N 0, S 1, E 2, W 3   x grows to the east, y to the south; E is the next core or chip of a line
//                        or ring (the next column of a mesh), S the next row.
//   U 4, D 5             a 3D mesh's up and down (IPCQ's Nsewud).
//   ramp 4               a wafer router's port to its own PE; the wafer's timing model keeps its
//                        two halves apart: on_ramp 4 (PE to router), off_ramp 5 (router to PE).
//   opposite(d) = d ^ 1 (N-S, E-W, U-D); the wafer's ramp has none (it crosses no link).
// Dir is an unscoped enum in a namespace of its own: Dir::E converts to its number, so kernels
// index arrays and loop over directions with plain uint32_t.
#pragma once

#include <stdint.h>

namespace kccl {
namespace direction {
enum Dir : uint8_t { N = 0, S = 1, E = 2, W = 3, U = 4, D = 5, ramp = 4, on_ramp = 4, off_ramp = 5 };
}  // namespace direction
using direction::Dir;

inline constexpr uint32_t num_dirs = 4;  ///< a 2D mesh's N, S, E, W
constexpr uint32_t opposite(uint32_t d) { return d ^ 1u; }
constexpr Dir opposite(Dir d) { return Dir(d ^ 1u); }
/// "N", "S", "E", "W"; "?" for any other number.
constexpr const char* dir_name(uint32_t d) { return d == Dir::N ? "N" : d == Dir::S ? "S" : d == Dir::E ? "E" : d == Dir::W ? "W" : "?"; }

}  // namespace kccl

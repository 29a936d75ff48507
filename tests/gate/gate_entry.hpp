// tests/gate/gate_entry.hpp — calls an example kernel header's optional gate entry point.
//
// scripts/shim_gate.sh wraps every examples/*/*_kernels.hpp into a generated tt-metal kernel
// source: hal/tt_metal.hpp, then the kernels header, then this file, then
// `void kernel_main() { kccl::hal::TtMetal hal; kccl_gate::run_entry(hal); }` — and compiles it
// for the core kinds tests/gate/examples.kinds names. The convention (see docs/hardware-shim.md):
// a kernels header MAY define, in the global namespace,
//
//     template <class H> void kccl_gate_instantiate(H& hal);
//
// which instantiates the header's kernels against `hal`. If it does, it is called here; if it
// does not, the header is only compiled. The script defines KCCL_GATE_EXPECT_ENTRY to 1 when the
// header mentions `kccl_gate_instantiate`, so a misspelt or mis-scoped entry is an error rather
// than silently skipped.
#pragma once

#include <type_traits>
#include <utility>

#ifndef KCCL_GATE_EXPECT_ENTRY
#define KCCL_GATE_EXPECT_ENTRY 0
#endif

namespace kccl_gate {

template <class...>
using void_t = void;

// The call is dependent, so the name is looked up when has_entry<H> is instantiated: it finds a
// global kccl_gate_instantiate declared by the kernels header above, and fails (false) if none.
template <class H, class = void>
struct has_entry : std::false_type {};
template <class H>
struct has_entry<H, void_t<decltype(kccl_gate_instantiate(std::declval<H&>()))>> : std::true_type {};

template <class H>
void run_entry(H& hal) {
    static_assert(has_entry<H>::value || !KCCL_GATE_EXPECT_ENTRY,
                  "this kernels header mentions kccl_gate_instantiate but does not declare "
                  "`template <class H> void kccl_gate_instantiate(H& hal)` in the global namespace");
    if constexpr (has_entry<H>::value) {
        kccl_gate_instantiate(hal);
    } else {
        (void)hal;
    }
}

}  // namespace kccl_gate

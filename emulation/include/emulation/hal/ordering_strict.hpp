// kccl/emulation/hal/ordering_strict.hpp — the `strict` ordering profile: only what tt-metal's NoC
// documentation guarantees (OrderingProfile::strict; docs/contract.md, "Ordering profiles").
//
// tt-metal's NoC documentation does not promise that a write and a later atomic (a semaphore
// increment) or inline write from one core to the same destination core land in issue order: its
// own race audit found a multicast data write followed by a multicast semaphore set, with no
// flush between them, giving intermittent data mismatches on Blackhole (fixed there by calling
// noc_async_writes_flushed() between the two). So under this profile:
//   * write -> write, increment/inline write -> anything: same destination, issue order (as N1);
//   * write -> a later increment or inline write to the same destination: ordered only if the
//     issuing core called noc_writes_flushed() or noc_write_barrier() between them (the flush
//     count of the two operations differs); otherwise the adversary may land the increment
//     before any byte of the write;
//   * different destinations: unordered (N6), as in every profile.
// The other half of the profile (N7, a store to L1 followed by a NoC write sourced from it) is
// not an ordering between in-flight operations: delivery_adversarial.hpp models it.
#pragma once

#include "ordering.hpp"

namespace kccl::emu::detail {

/// Strict N1: a write is ordered before a later increment or inline write to the same core only
/// across a flush (noc_writes_flushed / noc_write_barrier).
struct StrictOrdering {
    static constexpr const char* name = "strict";
    static bool ordered(const PendingNoc& earlier, const PendingNoc& later) {
        if (earlier.dst != later.dst) return false;
        if (earlier.kind == NocOp::write && later.kind != NocOp::write) return earlier.flushes != later.flushes;
        return true;
    }
};

}  // namespace kccl::emu::detail

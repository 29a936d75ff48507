// kccl/emulation/hal/ordering.hpp — what one core has in flight, and in which order it may land.
//
// The adversarial delivery policy (delivery_adversarial.hpp) keeps every NoC write, inline write
// and semaphore increment a core has issued but not yet landed, in issue order, and lands them in
// any order the ORDERING PROFILE allows. A profile is one struct with
//
//     static constexpr const char* name;
//     /// True if `later` (issued after `earlier` by the same core) may not start landing before
//     /// `earlier` has landed completely.
//     static bool ordered(const PendingNoc& earlier, const PendingNoc& later);
//
// A delivery step picks one in-flight operation at random and, while an earlier one is ordered
// before it, moves to the earliest such; that one lands (a write possibly in part). So whatever
// the profile leaves unordered, the adversary lands in either order.
//
// The profile here is the contract's rule N1 as stated in docs/contract.md: operations from one
// core to the same destination core land in issue order; to different destinations in any order
// (N6). A new profile is one new struct (and a new file beside this one).
#pragma once

#include "../cluster.hpp"

#include <cstdint>
#include <vector>

namespace kccl::emu::detail {

enum class NocOp : uint8_t { write, inline32, inc };

/// One NoC operation in flight (adversarial mode).
struct PendingNoc {
    NocOp kind;
    CoreState* dst;
    uint32_t dst_off;
    uint32_t bytes;   // write: length; inline32 / inc: 4
    uint32_t src;     // write: source L1 address
    uint32_t value;   // inline32: the value; inc: the increment
    uint32_t landed = 0;            // write: bit k set = piece k has landed
    std::vector<uint8_t> snapshot;  // write: source bytes, set by noc_writes_flushed
    bool mcast = false;             // one destination of a multicast (multicast_ordering.hpp)
    uint32_t epoch = 0;             // the issuing core's flush/barrier count at issue (M1)
};

/// One NoC read in flight (adversarial mode): reads land in issue order at noc_read_barrier()
/// (N4) or at random delivery steps.
struct PendingRead {
    CoreState* src;
    uint32_t src_off;
    uint32_t dst;
    uint32_t bytes;
};

/// One Ethernet send in flight (adversarial mode): `done` bytes of it have been delivered, word
/// by word in address order (E3); sends on one tx queue in issue order (E1).
struct PendingEth {
    uint32_t src, dst, bytes, done;
    CoreState* peer;
};

/// N1 as the contract states it: same destination core, issue order; otherwise unordered.
struct PerDestinationOrdering {
    static constexpr const char* name = "per-destination";
    static bool ordered(const PendingNoc& earlier, const PendingNoc& later) { return earlier.dst == later.dst; }
};

/// The profile the adversary uses.
using NocOrdering = PerDestinationOrdering;

/// The operation a delivery step lands when it picked `pick`: the earliest operation that must
/// land before it (repeatedly), or `pick` itself. `ops` is in issue order.
template <class Ordering>
size_t next_to_land(const std::vector<PendingNoc>& ops, size_t pick) {
    for (;;) {
        size_t k = 0;
        while (k < pick && !Ordering::ordered(ops[k], ops[pick])) ++k;
        if (k == pick) return pick;
        pick = k;
    }
}

}  // namespace kccl::emu::detail

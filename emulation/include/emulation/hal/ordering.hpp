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
// The profile here (`observed`, the default) is the contract's rule N1 as stated in
// docs/contract.md: operations from one core to the same destination core land in issue order; to
// different destinations in any order (N6). ordering_strict.hpp has the `strict` profile (only
// what tt-metal documents). A run picks one with RunOptions::ordering (OrderingProfile; the
// environment variable KCCL_EMU_ORDERING; the replay string's "ordering=" key). A new profile is
// one new struct (and a new file beside this one) and one more OrderingProfile value.
#pragma once

#include "../cluster.hpp"

#include <cstdint>
#include <vector>

namespace kccl::emu {

/// Which NoC ordering rules a run models (docs/contract.md, "Ordering profiles").
///   observed  N1 as tt-metal's kernels use it: a write, inline write or increment from one core
///             to the same destination core lands in issue order (the default).
///   strict    only what tt-metal's NoC documentation promises: a write followed by an increment
///             or inline write to the same core is ordered only if noc_writes_flushed() or
///             noc_write_barrier() was called between them; a store to L1 followed by a NoC
///             write sourced from it needs l1_store_fence() between them (N7).
///   from_env  RunOptions default: KCCL_EMU_ORDERING=observed|strict, else observed.
enum class OrderingProfile : uint8_t { from_env, observed, strict };

inline const char* to_string(OrderingProfile p) {
    switch (p) {
        case OrderingProfile::from_env: return "from_env";
        case OrderingProfile::observed: return "observed";
        case OrderingProfile::strict: return "strict";
    }
    return "?";
}

}  // namespace kccl::emu

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
    std::vector<uint8_t> snapshot;  // write: source bytes, set by noc_writes_flushed (strict: or
                                    // at issue, with the pre-store values of unfenced stores, N7)
    bool mcast = false;             // one destination of a multicast (multicast_ordering.hpp)
    uint32_t flushes = 0;           // the issuing core's noc_writes_flushed/barrier count at issue (M1)
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

/// The profile `observed` uses.
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

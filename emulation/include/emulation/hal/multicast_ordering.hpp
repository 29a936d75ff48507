// kccl/emulation/hal/multicast_ordering.hpp — the multicast rule M1 wrapped around an ordering profile.
//
// Contract M1: a NoC multicast is ordered with another NoC operation of the same core only at a
// destination both reach, and only if a noc_writes_flushed() or noc_write_barrier() was called
// between them — in every ordering profile. The adversary lands operations through
// MulticastAware<Profile>: for a pair that involves a multicast it applies M1 (PendingNoc::mcast,
// PendingNoc::epoch = the issuing core's flush count at issue); for any other pair the profile.
#pragma once

#include "ordering.hpp"

namespace kccl::emu::detail {

/// M1 on top of any ordering profile: a multicast operation is ordered with another operation of
/// the same core only at the same destination and across a flush or barrier (different epochs).
template <class Ordering>
struct MulticastAware {
    static constexpr const char* name = Ordering::name;
    static bool ordered(const PendingNoc& earlier, const PendingNoc& later) {
        if (earlier.mcast || later.mcast) return earlier.dst == later.dst && earlier.epoch != later.epoch;
        return Ordering::ordered(earlier, later);
    }
};


}  // namespace kccl::emu::detail

// kccl/common/window.hpp — the credit window every producer/consumer ring of kccl keeps (EDM
// channels, IPCQ queues, the fabric's router channels, its worker connections and mux), written
// once, wrap-safe by construction.
//
// The counters are free-running uint32 values that wrap at 2^32: `sent` slots issued so far,
// `freed` slots given back so far (the consumer's credit), `slots` in the ring. As long as
// 0 <= sent - freed <= slots (never more in flight than the ring holds), the unsigned difference
// sent - freed is the number in flight across the wrap, so the window is never compared with `<`
// on the counters themselves (that breaks at the wrap). Two counters that are not a window's
// ends but stay within 2^31 of each other (a semaphore and the count a waiter wants) compare with
// reached(), the signed difference.
//
// Arithmetic only: callers read the counters with their own memory orders and pass the values in.
// C++17, freestanding, constexpr.
#pragma once

#include <stdint.h>

namespace kccl {

struct CreditWindow {
    uint32_t slots;  ///< slots in the ring (at least 1)

    /// Slots issued and not yet given back.
    static constexpr uint32_t in_flight(uint32_t sent, uint32_t freed) { return sent - freed; }
    /// Slot number `sent` (the next one to issue) is free.
    constexpr bool has_space(uint32_t sent, uint32_t freed) const { return sent - freed < slots; }
    /// Every slot is in flight: the next one must wait for a credit.
    constexpr bool full(uint32_t sent, uint32_t freed) const { return sent - freed >= slots; }
    /// The `freed` count at which slot number `sent` is free (for a wait-min on the credit counter).
    constexpr uint32_t wait_target(uint32_t sent) const { return sent - slots + 1; }
};

/// Wrap-safe `counter >= target` for two counters less than 2^31 apart.
constexpr bool reached(uint32_t counter, uint32_t target) { return int32_t(counter - target) >= 0; }

}  // namespace kccl

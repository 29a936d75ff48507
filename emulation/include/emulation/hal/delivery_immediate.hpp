// kccl/emulation/hal/delivery_immediate.hpp — the immediate delivery policy of kccl::emu::Hal.
//
// Normal mode (no adversary, no timing model): every operation takes effect before it returns,
// which is one legal schedule of the contract.
//   * data (noc_write, noc_read, eth_send payload) moves with plain memcpy;
//   * semaphores are 32-bit atomics: sem_inc = fetch_add(release), sem_set = store(release),
//     sem_wait / sem_read = load(acquire);
//   * the LAST 16-byte word of every eth_send is stored as one 16-byte atomic (release), after
//     the payload — so a receiver that polls its sync word (acquire) sees the payload, and a
//     correct protocol is data-race free under ThreadSanitizer while an incorrect one is not.
//     (Polling an earlier word of a packet in flight is legal on hardware — E3 — and exact in
//     adversarial mode, but in normal mode it races with the payload copy: poll the last word.)
//   * every write into another core's memory bumps that core's eventcount (see wait.hpp), or on
//     the fiber engine its epoch, readying it if its wait can now succeed.
// The plain fiber engine (FIFO, no adversary, no timing) takes the inline fast paths in hal.hpp,
// which do the same as these functions without the engine dispatch.
#pragma once

#include "../hal.hpp"

namespace kccl::emu {

/// A write landed in `d`'s memory: wake its core (thread engine: eventcount; fiber engine:
/// ready it if its wait can now succeed).
inline void Hal::notify(detail::CoreState* d) {
    if (sched_) {
        d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        sched_->on_write(d);
    } else {
        d->events.notify();
    }
}

/// The fiber engine's notify (sched_ set): bump the epoch idle() compares, and ready the
/// destination only if it is parked and its wait can now succeed (Scheduler::on_write).
[[gnu::always_inline]] inline void Hal::notify_fiber(detail::CoreState* d) {
    d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sched_->on_write(d);
}

inline void Hal::immediate_write(detail::CoreState* d, uint32_t off, uint32_t src_l1, uint32_t bytes) {
    std::memcpy(d->mem + off, mem_ + src_l1, bytes);
    notify(d);
}

inline void Hal::immediate_read(detail::CoreState* s, uint32_t off, uint32_t dst_l1, uint32_t bytes) {
    std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
}

inline void Hal::immediate_inline32(detail::CoreState* d, uint32_t off, uint32_t value) {
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).store(value, std::memory_order_release);
    notify(d);
}

inline void Hal::immediate_inc(detail::CoreState* d, uint32_t off, uint32_t n) {
    // A read-modify-write even on the fiber engine (one host thread): a plain load and
    // release store would end the release sequence of the other cores' increments, so
    // a waiter acquiring the sum would not synchronise with them (TSan reported it).
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).fetch_add(n, std::memory_order_release);
    notify(d);
}

inline void Hal::immediate_eth_send(uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer) {
    if (bytes > 16) std::memcpy(peer->mem + dst_l1, mem_ + src_l1, bytes - 16);
    detail::store_word16_release(peer->mem + dst_l1 + bytes - 16, mem_ + src_l1 + bytes - 16);
    notify(peer);
}

}  // namespace kccl::emu

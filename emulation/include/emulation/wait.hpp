// kccl/emulation/wait.hpp — waits that survive oversubscription.
//
// What it is: the one place where the emulation blocks a core's thread. An emulated cluster runs
// dozens of threads on a 2-core machine; a bare spin starves the thread that would make progress
// (measured here: two spinning threads sharing one core ~0.13 M handoffs/s), and an unconditional
// futex wake on every write costs ~50x. So a waiter spins briefly, then yields, then announces
// itself and sleeps on a futex; a writer wakes only when a sleeper has announced itself.
//
// The eventcount protocol (Dekker-style, all seq_cst on the two words that matter):
//   writer:  <publish the change (release)>; epoch.fetch_add(1); if (sleepers.load()) wake(epoch)
//   waiter:  sleepers.fetch_add(1); e = epoch.load(); if (!ready()) futex_wait(epoch, e);
//            sleepers.fetch_sub(1)
// Either the writer sees the sleeper and wakes it, or the waiter's re-check sees the change, or
// the futex sees epoch != e and returns at once: no lost wake-up.
//
// Host-only (C++20, Linux futex). A future virtual-clock or deterministic scheduler replaces the
// bodies here, not the device code.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace kccl::emu {

/// How long a waiter spins and yields before it sleeps. Counts, not time: see
/// docs/emulation.md for the measurement behind the defaults.
struct WaitPolicy {
    /// Busy polls (with a CPU pause) before yielding. 2 threads on 2 cores hand off in
    /// ~100-200 ns, so a short spin catches the common ping-pong without a syscall.
    uint32_t spin_polls = 128;
    /// sched_yield calls before sleeping. With more runnable threads than cores, yielding lets
    /// the producer run; sleeping too early costs a futex wake (~2-5 us) per handoff.
    uint32_t yield_polls = 32;
    /// When a run has more kernel threads than the machine has hardware threads, spinning
    /// and yielding mostly steal the CPU from the thread that would make progress. Measured
    /// here (2 vCPUs, 8-chip EDM ring, 24 threads): per hop 74-77 us with 128/32, 31-32 us with
    /// 0/4; sleeping at once (0/0) is worse again (a futex wake costs more than a yield). With
    /// `adapt_to_oversubscription` the launcher uses these counts for such runs.
    bool adapt_to_oversubscription = true;
    uint32_t oversubscribed_spin_polls = 0;
    uint32_t oversubscribed_yield_polls = 4;
    /// Longest single futex sleep. Sleeps are woken by writers; the bound only limits how late a
    /// waiter notices an abort or a change nobody announced (e.g. a poll of remote memory).
    std::chrono::microseconds max_sleep{2000};
};

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected,
                       std::chrono::microseconds timeout) noexcept {
#if defined(__linux__)
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
    ts.tv_nsec = static_cast<long>((timeout.count() % 1000000) * 1000);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &ts,
            nullptr, 0);
#else
    if (word.load(std::memory_order_acquire) == expected) std::this_thread::sleep_for(timeout / 8);
#endif
}

inline void futex_wake_all(std::atomic<uint32_t>& word) noexcept {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
            nullptr, 0);
#else
    (void)word;
#endif
}

/// A per-core eventcount: bumped whenever another agent (core, link) writes into this core's
/// memory; slept on by the core when it has nothing to do.
struct EventCount {
    alignas(64) std::atomic<uint32_t> epoch{0};
    std::atomic<uint32_t> sleepers{0};

    /// Called by a writer after it has published its change.
    void notify() noexcept {
        epoch.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(epoch);
    }
    /// Unconditional wake (abort, watchdog).
    void wake_all() noexcept {
        epoch.fetch_add(1, std::memory_order_seq_cst);
        futex_wake_all(epoch);
    }
    uint32_t current() const noexcept { return epoch.load(std::memory_order_seq_cst); }

    /// Sleeps until the epoch moves away from `seen` (or the timeout), unless `ready()` already
    /// holds after announcing. Returns ready()'s last value.
    template <class Ready>
    bool sleep_unless(uint32_t seen, Ready&& ready, std::chrono::microseconds timeout) noexcept {
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        bool ok = ready();
        if (!ok && epoch.load(std::memory_order_seq_cst) == seen) futex_wait(epoch, seen, timeout);
        sleepers.fetch_sub(1, std::memory_order_seq_cst);
        return ok;
    }
};

}  // namespace kccl::emu

// kccl/emulation/hal/waiting.hpp — how kccl::emu::Hal blocks: sem_wait / sem_wait_min
// (block_until) and the W1 back-off (idle), on the thread engine (spin, yield, sleep on the
// core's eventcount) and on the fiber engine (park until a write can satisfy the wait). With
// operations in flight (adversary) a core never sleeps: it holds them back for a while, then
// delivers them step by step (delivery_adversarial.hpp).
#pragma once

#include "../hal.hpp"

namespace kccl::emu {

/// W1: called by poll loops that found nothing to do. Spins (the caller re-polls between
/// calls); at the end of the spin phase, if something was written into this core's memory
/// since the last look, starts spinning again; otherwise yields, then sleeps until
/// something is written (or max_sleep).
inline void Hal::idle() {
    if (sched_) return idle_fiber();
    if (adv_ && has_pending()) {
        if (idle_streak_ == 0) start_hold();
        ++idle_streak_;
        if (!holding() && (idle_streak_ >= run_->wait.spin_polls || coin(kWaitDeliverPercent))) {
            deliver_one();
            std::this_thread::yield();
        } else {
            check_abort();
            cpu_relax();
        }
        return;
    }
    check_abort();
    const WaitPolicy& p = run_->wait;
    ++idle_streak_;
    if (idle_streak_ <= p.spin_polls) {
        // Spin without reading the eventcount: every read pulls its line away from the
        // writers, whose next notify() then waits for it (one extra line transfer per write).
        cpu_relax();
        return;
    }
    // End of a spin phase: if anything was written into this core's memory since the last
    // look, the loop is making progress: spin again rather than yield.
    const uint32_t e = me_->events.current();
    if (e != seen_epoch_) {
        seen_epoch_ = e;
        idle_streak_ = 0;
        return;
    }
    if (idle_streak_ <= p.spin_polls + p.yield_polls) {
        std::this_thread::yield();
        return;
    }
    me_->wait_kind.store(detail::WaitKind::idle, std::memory_order_relaxed);
    me_->events.sleep_unless(e, [&] { return run_->aborted.load(std::memory_order_relaxed); },
                             p.max_sleep);
    me_->wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
    check_abort();
}

template <class Ready>
inline void Hal::block_until(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready ready) {
    if (sched_) return block_until_fiber(kind, addr, value, ready);
    if (ready()) {
        // A loop of waits that are always satisfied must still notice an abort (the
        // watchdog sees no progress from it), or the run could not be stopped.
        check_abort();
        if (adv_) step();
        return;
    }
    me_->wait_addr.store(addr, std::memory_order_relaxed);
    me_->wait_value.store(value, std::memory_order_relaxed);
    me_->wait_kind.store(kind, std::memory_order_relaxed);
    const WaitPolicy& p = run_->wait;
    if (adv_) start_hold();
    for (uint32_t i = 0;; ++i) {
        // Adversary: hold in-flight operations back for a while (start_hold), then deliver
        // them step by step, yielding in between; never sleep with anything in flight.
        if (adv_ && has_pending() && !holding() && (i >= p.spin_polls || coin(kWaitDeliverPercent))) {
            deliver_one();
            std::this_thread::yield();
        } else if (adv_ && has_pending() && holding()) {
            check_abort();
            if (i % 16 == 0) std::this_thread::yield();
            else cpu_relax();
        } else if (i < p.spin_polls) {
            cpu_relax();
        } else if (i < p.spin_polls + p.yield_polls) {
            check_abort();
            std::this_thread::yield();
        } else {
            check_abort();
            const uint32_t e = me_->events.current();
            if (me_->events.sleep_unless(e, [&] { return ready() || run_->aborted.load(std::memory_order_relaxed); },
                                         p.max_sleep) &&
                ready())
                break;
        }
        if (ready()) break;
    }
    me_->wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
    me_->bump_progress();
}

// A blocked core parks; a write into its memory readies it only if its wait can now succeed
// (Scheduler::on_write). With operations in flight (adversary) it never parks: it yields,
// holding them back for a seeded number of rounds, then delivers them step by step.
template <class Ready>
inline void Hal::block_until_fiber(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready& ready) {
    polls_since_op_ = 0;
    if (timed_) {
        sched_->charge(Op::sem_wait_check, 4);
        sched_->sync();
    }
    if (ready()) {
        check_abort();
        if (adv_) step();
        else sched_->point();
        return;
    }
    me_->wait_addr.store(addr, std::memory_order_relaxed);
    me_->wait_value.store(value, std::memory_order_relaxed);
    me_->wait_kind.store(kind, std::memory_order_relaxed);
    if (adv_) start_hold();
    const vtime_t t0 = trace_ ? sched_->now() : 0;
    for (;;) {
        check_abort();
        if (adv_ && has_pending()) {
            if (holding()) --hold_left_;
            else deliver_one();
            sched_->yield();
        } else {
            sched_->park();
        }
        if (ready()) break;
    }
    me_->wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
    me_->bump_progress();
    if (trace_) {
        const std::string args = "{\"addr\":\"" + detail::hex(addr) + "\",\"value\":" + std::to_string(value) + "}";
        const vtime_t t1 = sched_->now();
        detail::IgnoreScope ig;
        trace_->slice(track_, kind == detail::WaitKind::sem_eq ? "sem_wait" : "sem_wait_min", t0, t1, args);
    }
    check_abort();
}

inline void Hal::idle_fiber() {
    polls_since_op_ = 0;
    check_abort();
    if (timed_) {
        sched_->charge(Op::idle_poll, 0);
        sched_->sync();
    }
    if (adv_ && has_pending()) {
        if (idle_streak_ == 0) start_hold();
        ++idle_streak_;
        if (holding()) --hold_left_;
        else if (coin(50)) deliver_one();
        sched_->yield();
        return;
    }
    idle_streak_ = 0;
    // Something was written here since the last look: the loop is making progress.
    const uint32_t e = me_->fiber_epoch.load(std::memory_order_relaxed);
    if (e != seen_epoch_) {
        seen_epoch_ = e;
        sched_->yield();
        return;
    }
    me_->wait_kind.store(detail::WaitKind::idle, std::memory_order_relaxed);
    const vtime_t t0 = trace_ ? sched_->now() : 0;
    if (timed_ && txq_until_ > sched_->now()) sched_->park_until(txq_until_);  // a busy tx queue frees then
    else sched_->park();
    txq_until_ = 0;
    if (trace_) {
        const vtime_t t1 = sched_->now();
        detail::IgnoreScope ig;
        trace_->slice(track_, "idle", t0, t1);
    }
    me_->wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
    seen_epoch_ = me_->fiber_epoch.load(std::memory_order_relaxed);
    check_abort();
}

}  // namespace kccl::emu

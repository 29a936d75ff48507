// kccl/emulation/hal.hpp — kccl::emu::Hal, the emulation backend of the device contract.
//
// One Hal per running core, created by the Launcher and passed to the kernel as `H&`. It models
// include/hal/contract.hpp exactly.
//
// The contract's operations are mapped here (the public members, each with an inline fast path
// for the plain fiber engine); the rest of the class lives in files of its own:
//   hal/delivery_immediate.hpp    normal mode: every operation takes effect before it returns
//   hal/delivery_adversarial.hpp  adversarial mode: deliveries delayed, split and reordered as
//                                 far as the contract allows (RunOptions::adversary)
//   hal/delivery_timed.hpp        timed mode: deliveries land at the timing model's arrival times
//   hal/ordering.hpp              what a core has in flight, and the ordering profile that says
//                                 in which order it may land
//   hal/checks.hpp                bad input: addresses, alignment, links, runtime args
//   hal/waiting.hpp               sem_wait / idle on the thread and fiber engines
//
// Bad input (address out of range, unaligned or link-less eth_send, a NoC address of another
// chip or of no core, runtime-arg index out of range) throws EmulationError naming the core, the
// operation and the bound. The launcher turns it into a failed run.
#pragma once

#include "cluster.hpp"
#include "platform.hpp"
#include "engine/scheduler.hpp"
#include "timing.hpp"
#include "trace.hpp"
#include "hal/ordering.hpp"
#include "hal/ordering_strict.hpp"
#include "race.hpp"

#include <hal/contract.hpp>


#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <chrono>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace kccl::emu {

/// Thrown inside a core's thread when the run was aborted (another core failed, or the watchdog
/// fired). Kernels need not catch it; the launcher does.
struct RunAborted : std::exception {
    const char* what() const noexcept override { return "kccl emulation run aborted"; }
};

struct AdversaryOptions {
    bool enabled = false;
    uint64_t seed = 1;
    /// Chance, per backend call, that the calling core performs one pending delivery step.
    uint32_t deliver_percent = 30;
    /// Largest number of Ethernet words delivered in one step.
    uint32_t max_words_per_step = 4;
    /// Chance, per backend call, that the calling core is delayed before the operation (a short
    /// spin or a yield): widens the windows in which an unpromised ordering shows.
    uint32_t delay_percent = 5;
    /// Chance, per blocking wait (or idle streak) that begins with operations still in flight,
    /// that those operations are held back for a random time up to `max_hold` before the core
    /// delivers them — long enough for other cores to run and observe the in-between state.
    uint32_t hold_percent = 25;
    std::chrono::microseconds max_hold{200};
};

namespace detail {

/// Shared state of one Launcher::run, read by every core's Hal.
struct RunContext {
    std::atomic<bool> aborted{false};
    WaitPolicy wait{};
    AdversaryOptions adversary{};
    /// The fiber engine's scheduler (nullptr on the thread engine).
    Scheduler* sched = nullptr;
    /// Where the engine records waits, sends and deliveries (nullptr: no trace).
    Trace* trace = nullptr;
    /// The data-race detector of this run (nullptr: off).
    RaceDetector* race = nullptr;
    /// The ordering profile of this run (resolved: observed or strict).
    OrderingProfile ordering = OrderingProfile::observed;
};

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// Stores one 16-byte Ethernet word as a single atomic release store.
inline void store_word16_release(uint8_t* dst, const uint8_t* src) noexcept {
#if KCCL_EMU_TSAN
    // ThreadSanitizer keys release/acquire by exact address: a 4-byte acquire load of a field
    // at dst+4/8/12 would not synchronise with a 16-byte store at dst. Publish this thread's
    // history at each field address first, so a reader that sees the new value of any field
    // also sees everything written before this store (the semantics the hardware gives).
    for (int f = 1; f < 4; ++f) __tsan_release(dst + 4 * f);
#endif
#if !KCCL_EMU_TSAN && (defined(__x86_64__) || defined(__i386__))
    // On x86 CPUs with AVX, an aligned 16-byte SSE store is single-copy atomic (Intel SDM 8.1.1,
    // AMD APM 7.3.2), and x86 stores are release stores. libatomic's __atomic_store_16 is a
    // lock cmpxchg16b loop between two full fences on CPUs it does not whitelist (AMD here).
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx) {
        std::atomic_signal_fence(std::memory_order_release);
        _mm_store_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
        return;
    }
#endif
    __extension__ typedef unsigned __int128 word16;
    word16 v;
    std::memcpy(&v, src, 16);
    __atomic_store_n(reinterpret_cast<word16*>(dst), v, __ATOMIC_RELEASE);
}

inline std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace detail

class Hal {
public:
    using noc_addr_t = hal::noc_addr_t;
    /// Where a contract operation was called from (for the race detector's reports).
    using Loc = detail::RaceDetector::Loc;

    Hal(detail::RunContext& run, detail::CoreState& me, const Cluster& cluster,
        std::span<const uint32_t> args)
        : run_(&run), me_(&me), mem_(me.mem), mem_size_(me.mem_size), cluster_(&cluster), args_(args), adv_(run.adversary.enabled), sched_(run.sched) {
        if (adv_) rng_ = detail::splitmix64(run.adversary.seed ^ (uint64_t(me.coord.chip) << 40) ^
                                           (uint64_t(me.coord.x) << 20) ^ me.coord.y);
        seen_epoch_ = sched_ ? me.fiber_epoch.load(std::memory_order_relaxed) : me.events.current();
        timed_ = sched_ && sched_->timed();
        if (timed_) model_ = sched_->model();
        race_ = run.race;
        strict_ = run.ordering == OrderingProfile::strict;
        plain_ = sched_ && !adv_ && !timed_ && !race_ && sched_->fifo();
        // Nothing in flight and no checker watching on either untimed engine: the flushes and
        // barriers have nothing to wait for (the thread engine's step() does nothing then).
        quiet_ = plain_ || (!sched_ && !adv_ && !race_);
        // l1_store_fence's fast path: one compare that is false for every in-range fence when no
        // checker needs the fence (the race detector, the strict adversary's store hazard N7).
        fence_limit_ = (race_ || (adv_ && strict_)) ? 0 : mem_size_;
        trace_ = sched_ ? run.trace : nullptr;
        if (trace_) {
            detail::IgnoreScope ig;  // the trace is engine bookkeeping shared by every fiber
            track_ = trace_->track(me.coord, me.name());
        }
    }
    Hal(const Hal&) = delete;
    Hal& operator=(const Hal&) = delete;

    // ---- identity -------------------------------------------------------------------------
    uint32_t core_x() const { return me_->coord.x; }
    uint32_t core_y() const { return me_->coord.y; }
    /// Emulation extension (not in the contract): which chip this core is on.
    uint32_t chip_id() const { return me_->coord.chip; }
    CoreCoord coord() const { return me_->coord; }

    // ---- addresses --------------------------------------------------------------------------
    // Encoding (opaque to device code): bits 0-31 L1 address, 32-41 y, 42-51 x (10 bits each),
    // 52-59 chip (8 bits), bit 63 set. Adding a byte offset to a NoC address moves within the same
    // core, as on hardware. (The hardware shim has its own encoding: include/hal/tt_metal.hpp.)
    noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t l1) const {
        if (x > kCoordMax || y > kCoordMax || me_->coord.chip > kChipMax) [[unlikely]]
            noc_addr_error(x, y);
        return encode(me_->coord.chip, x, y, l1);
    }
    /// Largest x or y a NoC address can carry (10 bits each).
    static constexpr uint32_t kCoordMax = 0x3ff;
    /// Largest chip id a NoC address can carry (8 bits).
    static constexpr uint32_t kChipMax = 0xff;
    static constexpr unsigned kYShift = 32, kXShift = 42, kChipShift = 52;
    static noc_addr_t encode(uint32_t chip, uint32_t x, uint32_t y, uint32_t l1) {
        return (uint64_t(1) << 63) | (uint64_t(chip & kChipMax) << kChipShift) |
               (uint64_t(x & kCoordMax) << kXShift) | (uint64_t(y & kCoordMax) << kYShift) | l1;
    }
    static uint32_t addr_chip(noc_addr_t a) { return uint32_t(a >> kChipShift) & kChipMax; }
    static uint32_t addr_x(noc_addr_t a) { return uint32_t(a >> kXShift) & kCoordMax; }
    static uint32_t addr_y(noc_addr_t a) { return uint32_t(a >> kYShift) & kCoordMax; }
    uint8_t* l1_ptr(uint32_t l1, uint32_t bytes) {
        check_local(l1, bytes, "l1_ptr");
        if (timed_) sched_->charge(Op::l1_access, bytes);
        if (adv_ && strict_) [[unlikely]] remember_pre_store(l1, bytes);
        return mem_ + l1;
    }

    // ---- NoC -------------------------------------------------------------------------------
    [[gnu::always_inline]] void noc_write(uint32_t src_l1, noc_addr_t dst, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            check_local(src_l1, bytes, "noc_write (source)");
            auto [d, off] = resolve(dst, bytes, "noc_write");
            std::memcpy(d->mem + off, mem_ + src_l1, bytes);
            notify_fiber(d);
            me_->bump_progress();
            return;
        }
        noc_write_slow(src_l1, dst, bytes, {file_, line_});
    }
    [[gnu::noinline]] void noc_write_slow(uint32_t src_l1, noc_addr_t dst, uint32_t bytes, Loc loc) {
        step();
        check_local(src_l1, bytes, "noc_write (source)");
        auto [d, off] = resolve(dst, bytes, "noc_write");
        if (race_) race_->noc_write(me_, src_l1, d, off, bytes, loc);
        if (timed_) {
            timed_write(Op::noc_write, d, off, bytes, mem_ + src_l1, NocOp::write, 0);
        } else if (adv_) {
            enqueue({NocOp::write, d, off, bytes, src_l1, 0, 0, {}});
        } else {
            immediate_write(d, off, src_l1, bytes);
        }
        me_->bump_progress();
    }
    [[gnu::always_inline]] void noc_read(noc_addr_t src, uint32_t dst_l1, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            check_local(dst_l1, bytes, "noc_read (destination)");
            auto [s, off] = resolve(src, bytes, "noc_read");
            std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
            me_->bump_progress();
            return;
        }
        noc_read_slow(src, dst_l1, bytes, {file_, line_});
    }
    [[gnu::noinline]] void noc_read_slow(noc_addr_t src, uint32_t dst_l1, uint32_t bytes, Loc loc) {
        step();
        check_local(dst_l1, bytes, "noc_read (destination)");
        auto [s, off] = resolve(src, bytes, "noc_read");
        if (race_) race_->noc_read(me_, s, off, dst_l1, bytes, loc);
        if (timed_) timed_read(s, off, dst_l1, bytes);
        else if (adv_) reads_.push_back({s, off, dst_l1, bytes});
        else immediate_read(s, off, dst_l1, bytes);
        me_->bump_progress();
    }
    [[gnu::always_inline]] void noc_write_barrier() {
        if (quiet_) [[likely]] {  // nothing is ever in flight
            polls_since_op_ = 0;
            return;
        }
        noc_write_barrier_slow();
    }
    [[gnu::noinline]] void noc_write_barrier_slow() {
        step();
        if (timed_) {
            sched_->charge(Op::noc_barrier, 0);
            sched_->advance_to(write_done_);
            sched_->sync();
        }
        // N2: everything lands before the barrier returns, destinations interleaved at random
        // and writes in pieces (other cores may observe any in-between state meanwhile).
        while (!noc_.empty()) deliver_noc_step();
        ++flushes_;
        if (race_) race_->write_barrier(me_);
    }
    [[gnu::always_inline]] void noc_read_barrier() {
        if (quiet_) [[likely]] {  // nothing is ever in flight
            polls_since_op_ = 0;
            return;
        }
        noc_read_barrier_slow();
    }
    [[gnu::noinline]] void noc_read_barrier_slow() {
        step();
        if (timed_) {
            sched_->charge(Op::noc_barrier, 0);
            sched_->advance_to(read_done_);
        }
        while (!reads_.empty()) land_read();
        if (race_) race_->read_barrier(me_);
    }
    [[gnu::always_inline]] void noc_writes_flushed() {
        if (quiet_) [[likely]] {  // nothing is ever in flight
            polls_since_op_ = 0;
            return;
        }
        noc_writes_flushed_slow();
    }
    [[gnu::noinline]] void noc_writes_flushed_slow() {
        step();
        snapshot_sources();
        ++flushes_;
        if (race_) race_->writes_flushed(me_);
    }
    [[gnu::always_inline]] void noc_inline_write32(noc_addr_t dst, uint32_t value, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            auto [d, off] = resolve(dst, 4, "noc_inline_write32");
            check_word_aligned(off, "noc_inline_write32");
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).store(value, std::memory_order_release);
            notify_fiber(d);
            me_->signals.record(d, off, off + 4, detail::SignalOp::inline_write);
            me_->bump_progress();
            return;
        }
        noc_inline_write32_slow(dst, value, {file_, line_});
    }
    [[gnu::noinline]] void noc_inline_write32_slow(noc_addr_t dst, uint32_t value, Loc loc) {
        step();
        auto [d, off] = resolve(dst, 4, "noc_inline_write32");
        check_word_aligned(off, "noc_inline_write32");
        if (race_) race_->noc_word(me_, d, off, /*inc=*/false, loc);
        me_->signals.record(d, off, off + 4, detail::SignalOp::inline_write);
        if (timed_) {
            timed_write(Op::noc_inline_write, d, off, 4, nullptr, NocOp::inline32, value);
        } else if (adv_) {
            enqueue({NocOp::inline32, d, off, 4, 0, value, 0, {}});
        } else {
            immediate_inline32(d, off, value);
        }
        me_->bump_progress();
    }

    // ---- semaphores ----------------------------------------------------------------------------
    [[gnu::always_inline]] void sem_inc(noc_addr_t dst, uint32_t n, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            auto [d, off] = resolve(dst, 4, "sem_inc");
            check_word_aligned(off, "sem_inc");
            // A read-modify-write (see below).
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).fetch_add(n, std::memory_order_release);
            notify_fiber(d);
            me_->signals.record(d, off, off + 4, detail::SignalOp::sem_inc);
            me_->bump_progress();
            return;
        }
        sem_inc_slow(dst, n, {file_, line_});
    }
    [[gnu::noinline]] void sem_inc_slow(noc_addr_t dst, uint32_t n, Loc loc) {
        step();
        auto [d, off] = resolve(dst, 4, "sem_inc");
        check_word_aligned(off, "sem_inc");
        if (race_) race_->noc_word(me_, d, off, /*inc=*/true, loc);
        me_->signals.record(d, off, off + 4, detail::SignalOp::sem_inc);
        if (timed_) {
            timed_write(Op::sem_inc, d, off, 4, nullptr, NocOp::inc, n);
        } else if (adv_) {
            enqueue({NocOp::inc, d, off, 4, 0, n, 0, {}});
        } else {
            immediate_inc(d, off, n);
        }
        me_->bump_progress();
    }
    [[gnu::always_inline]] void sem_set(uint32_t local_l1, uint32_t value, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            // The running core is never parked: nothing to ready (the slow path's on_write(me_)
            // only counts the write; the progress counter below shows it to the idle sweep).
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            word(local_l1, "sem_set").store(value, std::memory_order_release);
            me_->bump_progress();
            return;
        }
        sem_set_slow(local_l1, value, {file_, line_});
    }
    [[gnu::noinline]] void sem_set_slow(uint32_t local_l1, uint32_t value, Loc loc) {
        step();
        if (timed_) sched_->charge(Op::sem_set, 4);
        word(local_l1, "sem_set").store(value, std::memory_order_release);
        if (race_) race_->sem_set(me_, local_l1, loc);
        if (sched_) sched_->on_write(me_);
        me_->bump_progress();
    }
    [[gnu::always_inline]] uint32_t sem_read(uint32_t local_l1, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (plain_) [[likely]] {
            me_->last_poll_addr.store(local_l1, std::memory_order_relaxed);
            // The operations that bump this core's progress counter (writes, sem_set, noc_read)
            // do not reset polls_since_op_ themselves (one store less on every operation): the
            // first poll after one sees the counter moved. Same count as a reset at the operation.
            // The run's total (CoreState::progress_word): within one fiber's run between
            // switches only this core's own operations move it, and every switch of the plain
            // path (idle, a wait, poll_yield) resets polls_since_op_ anyway.
            const uint64_t p = me_->progress_word->load(std::memory_order_relaxed);
            if (p != poll_progress_) [[unlikely]] {
                poll_progress_ = p;
                polls_since_op_ = 0;
            }
            if (++polls_since_op_ >= kPollsPerYield) [[unlikely]]
                poll_yield();
            return word(local_l1, "sem_read").load(std::memory_order_acquire);
        }
        return sem_read_slow(local_l1, {file_, line_});
    }
    /// Fiber engine: a poll loop without idle() (outside W1) must still let the others run.
    [[gnu::noinline]] void poll_yield() {
        polls_since_op_ = 0;
        check_abort();
        sched_->yield();
    }
    [[gnu::noinline]] uint32_t sem_read_slow(uint32_t local_l1, Loc loc) {
        me_->last_poll_addr.store(local_l1, std::memory_order_relaxed);
        if (timed_) {
            sched_->charge(Op::sem_wait_check, 4);
            sched_->sync();
        }
        // Fiber engine: a poll loop without idle() (outside W1) must still let the others run.
        if (sched_ && ++polls_since_op_ >= kPollsPerYield) {
            polls_since_op_ = 0;
            check_abort();
            sched_->yield();
        }
        const uint32_t v = word(local_l1, "sem_read").load(std::memory_order_acquire);
        if (race_) race_->acquire(me_, local_l1, /*satisfied=*/false, loc);
        return v;
    }
    [[gnu::always_inline]] void sem_wait(uint32_t local_l1, uint32_t value, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        auto w = word(local_l1, "sem_wait");
        if (plain_ && w.load(std::memory_order_acquire) == value) [[likely]] {
            polls_since_op_ = 0;  // as block_until_fiber when ready at once (FIFO: no switch)
            check_abort();
            return;
        }
        sem_wait_slow(local_l1, value, {file_, line_});
    }
    [[gnu::noinline]] void sem_wait_slow(uint32_t local_l1, uint32_t value, Loc loc) {
        auto w = word(local_l1, "sem_wait");
        block_until(detail::WaitKind::sem_eq, local_l1, value,
                    [&] { return w.load(std::memory_order_acquire) == value; });
        if (race_) race_->acquire(me_, local_l1, /*satisfied=*/true, loc);
    }
    [[gnu::always_inline]] void sem_wait_min(uint32_t local_l1, uint32_t value, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        auto w = word(local_l1, "sem_wait_min");
        if (plain_ && w.load(std::memory_order_acquire) >= value) [[likely]] {
            polls_since_op_ = 0;
            check_abort();
            return;
        }
        sem_wait_min_slow(local_l1, value, {file_, line_});
    }
    [[gnu::noinline]] void sem_wait_min_slow(uint32_t local_l1, uint32_t value, Loc loc) {
        auto w = word(local_l1, "sem_wait_min");
        block_until(detail::WaitKind::sem_min, local_l1, value,
                    [&] { return w.load(std::memory_order_acquire) >= value; });
        if (race_) race_->acquire(me_, local_l1, /*satisfied=*/true, loc);
    }

    // ---- multicast (contract MULTICAST, M1-M3; hal/multicast.hpp) -------------------------------
    void noc_write_mcast(uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1, uint32_t bytes, uint32_t num_dests,
                         bool loopback, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE());
    void sem_set_mcast(uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1, uint32_t num_dests, bool loopback,
                       const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE());
    void sem_inc_mcast(hal::NocRect rect, uint32_t dst_l1, uint32_t n, uint32_t num_dests,
                       const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE());

    // ---- Ethernet ------------------------------------------------------------------------------
    void eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        step();
        detail::CoreState* peer = check_eth_send(queue, src_l1, dst_l1, bytes);
        if (race_) race_->eth_send(me_, queue, src_l1, peer, dst_l1, bytes, {file_, line_});
        me_->signals.record(peer, dst_l1, dst_l1 + bytes, detail::SignalOp::eth_send);
        if (timed_) {
            timed_eth_send(queue, src_l1, dst_l1, bytes, peer);
        } else if (adv_) {
            adversarial_eth_send(queue, src_l1, dst_l1, bytes, peer);
        } else {
            immediate_eth_send(src_l1, dst_l1, bytes, peer);
        }
        me_->bump_progress();
    }
    bool eth_txq_busy(uint32_t queue) {
        check_queue(queue, "eth_txq_busy");
        if (timed_) return timed_txq_busy(queue);
        if (!adv_) return false;
        step();
        return !eth_[queue].empty() && coin(50);
    }
    void context_switch() {
        step();
        ++context_switches_;
        if (timed_) sched_->charge(Op::context_switch, 0);
        if (sched_) {
            check_abort();
            sched_->yield();
        } else {
            std::this_thread::yield();
        }
    }

    // ---- runtime args / back-off --------------------------------------------------------------
    uint32_t arg(uint32_t index) const {
        if (index >= args_.size())
            fail("arg", "runtime argument index " + std::to_string(index) + " is out of range; this core was given " +
                            std::to_string(args_.size()) + " argument(s) (valid indices 0.." +
                            (args_.empty() ? std::string("none") : std::to_string(args_.size() - 1)) + ")");
        return args_[index];
    }

    /// W1: called by poll loops that found nothing to do (hal/waiting.hpp).
    void idle();

    // ---- race-detector annotations (include/hal/contract.hpp: hal::note_read / note_write) -----
    /// This core reads (uses) [l1, l1 + bytes) of its L1 through an l1_ptr pointer: checked
    /// against the last write of those bytes when the race detector is on; nothing otherwise.
    void note_read(uint32_t l1, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        check_local(l1, bytes, "note_read");
        if (race_) race_->local_read(me_, l1, bytes, RaceOp::local_load, {file_, line_}, /*use=*/true);
    }
    /// This core stores to [l1, l1 + bytes) of its L1 through an l1_ptr pointer.
    void note_write(uint32_t l1, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        check_local(l1, bytes, "note_write");
        if (race_) race_->local_write(me_, l1, bytes, RaceOp::local_store, {file_, line_});
        if (adv_ && strict_) note_store(l1, bytes);
    }
    /// N7 (include/hal/contract.hpp: hal::l1_store_fence): this core's stores to [l1, l1 + bytes)
    /// have reached L1 before any later NoC operation reads them. Under the strict profile the
    /// adversary may otherwise send their pre-store values; the race detector reports the read.
    /// Without the race detector and the strict adversary the fence has nothing to do but check
    /// its range: one compare against fence_limit_ (0 when a checker needs every fence).
    [[gnu::always_inline]] void l1_store_fence(uint32_t l1, uint32_t bytes, const char* file_ = __builtin_FILE(), uint32_t line_ = __builtin_LINE()) {
        if (uint64_t(l1) + bytes > fence_limit_) [[unlikely]]
            l1_store_fence_slow(l1, bytes);
        (void)file_, (void)line_;
    }
    [[gnu::noinline]] void l1_store_fence_slow(uint32_t l1, uint32_t bytes) {
        check_local(l1, bytes, "l1_store_fence");
        if (race_) race_->store_fence(me_, l1, bytes);
        if (adv_ && strict_) fence_stores(l1, bytes);
    }

    // ---- the compute engine (include/hal/contract.hpp: hal::compute_reduce) ------------------
    /// The compute engine's view of [l1, l1 + bytes): what its unpackers read and its packer
    /// writes. Bounds-checked; NOT charged as RISC-V loads and stores (compute_charge is the cost).
    uint8_t* compute_l1(uint32_t l1, uint32_t bytes) {
        check_local(l1, bytes, "compute_reduce");
        if (adv_ && strict_) [[unlikely]] remember_pre_store(l1, bytes);
        return mem_ + l1;
    }
    /// Charges this core the compute engine's time for an element-wise combine of `elems`
    /// elements (the timing model's Op::compute_eltwise; nothing on the untimed engines).
    void compute_charge(uint32_t elems) {
        if (timed_) sched_->charge(Op::compute_eltwise, elems);
    }

    /// hal::note_work: charges the named instruction work on the timed engine (nothing elsewhere).
    void note_work(kccl::hal::Work w) {
        if (!timed_) return;
        switch (w) {
            case kccl::hal::Work::route_2d_hop: sched_->charge(Op::route_2d_hop, 1); return;
        }
    }

    // ---- emulation extensions (not part of the contract) ---------------------------------------
    /// Number of context_switch() calls so far (tests check idle-count policies with it).
    uint64_t context_switches() const { return context_switches_; }
    /// Delivers everything this core still has in flight (called by the launcher at kernel end).
    /// Adversary: step by step, letting the other cores run between steps (after an optional
    /// hold, as a blocked core does): what a kernel leaves in flight lands while the others run,
    /// in any order the ordering profile allows, so a reader can observe a flag to one core
    /// before the data written to another (N1 / N6), whether or not the writer still runs.
    void drain() {
        if (!adv_) {
            while (has_pending()) deliver_one();
            return;
        }
        if (has_pending()) start_hold();
        while (has_pending()) {
            check_abort();
            uint32_t yields = 1;
            if (holding()) {
                if (sched_) --hold_left_;
            } else {
                deliver_one();
                if (!has_pending()) break;
                yields += pick(kDrainYields);  // a core the step readied likely runs before the next
            }
            for (; yields; --yields) {
                if (sched_) sched_->yield();
                else std::this_thread::yield();
            }
        }
    }
    /// True while this core has NoC or Ethernet operations in flight (adversarial mode).
    bool in_flight() const { return has_pending(); }
    /// Performs one delivery step of this core's in-flight operations (the launcher calls it
    /// while the core waits for its chip's next program: a tx queue keeps draining on hardware).
    void deliver_step() { deliver_one(); }
    /// The runtime args of the next program on this core (the launcher keeps one Hal per core for
    /// a whole launch, so operations still in flight cross into the next program, as on hardware).
    void set_args(std::span<const uint32_t> args) { args_ = args; }

private:
    static constexpr size_t kAdvQueueDepth = 4;
    /// Fiber engine: sem_read polls without another backend call before the core yields.
    static constexpr uint32_t kPollsPerYield = 256;
    /// Fiber engine: longest adversarial hold, in scheduling rounds.
    static constexpr int64_t kMaxHoldRounds = 256;
    /// Adversary: NoC operations (writes, inline writes, increments) one core may have in flight;
    /// one more first performs a delivery step. Bounds the queue scans.
    static constexpr size_t kAdvNocDepth = 64;
    /// Adversary: a NoC write lands in at most this many pieces (each a multiple of 4 bytes).
    static constexpr uint32_t kAdvMaxPieces = 8;
    /// Adversary: chance that a delivery step lands all remaining pieces of a write (in random
    /// order) rather than some of them. Every extra step costs a delivery opportunity: with 0 %
    /// the 10^6-message IPCQ stream took ~4x as long as with the previous adversary (which
    /// landed a write at once and increments immediately); with 75 % ~1.2-1.5x (alternating
    /// runs on a loaded 2-core host: 6.6-7.8 s before, 8.2-11.7 s after).
    static constexpr uint32_t kAdvWholeWritePercent = 75;
    /// Adversary, kernel end (drain): after a delivery step the core yields 1..kDrainYields times.
    static constexpr uint32_t kDrainYields = 4;
    /// Adversary: chance per spin iteration of a blocked core to deliver one of its own pending
    /// operations (low, so that other cores run while this core's writes are still in flight).
    static constexpr uint32_t kWaitDeliverPercent = 3;

    using NocOp = detail::NocOp;
    using PendingNoc = detail::PendingNoc;
    using PendingRead = detail::PendingRead;
    using PendingEth = detail::PendingEth;

    // Member functions defined in hal/*.hpp: those declared noinline are declared `inline` here and
    // defined without attributes there (GCC refuses an attribute list repeated with `inline`).

    // ---- checks (hal/checks.hpp) -----------------------------------------------------------------
    [[noreturn]] void fail(const char* op, const std::string& what) const;

    void check_abort() const {
        if (run_->aborted.load(std::memory_order_relaxed)) throw RunAborted{};
    }

    void check_local(uint32_t l1, uint32_t bytes, const char* op) const;
    [[noreturn, gnu::noinline, gnu::cold]] inline void local_range_error(uint32_t l1, uint32_t bytes, const char* op) const;
    void check_word_aligned(uint32_t off, const char* op) const;
    [[noreturn, gnu::noinline, gnu::cold]] inline void alignment_error(uint32_t off, const char* op) const;
    [[gnu::always_inline]] std::atomic_ref<uint32_t> word(uint32_t l1, const char* op);
    [[noreturn, gnu::noinline, gnu::cold]] inline void word_error(uint32_t l1, const char* op) const;

    struct Resolved {
        detail::CoreState* core;
        uint32_t off;
    };
    [[gnu::always_inline]] Resolved resolve(noc_addr_t a, uint32_t bytes, const char* op) const;
    [[gnu::always_inline]] Resolved resolve_cached(noc_addr_t a, uint32_t bytes, const char* op) const;
    [[gnu::noinline]] inline Resolved resolve_lookup(noc_addr_t a, uint32_t bytes, const char* op) const;
    static constexpr uint32_t kResolveSlots = 8;
    /// Cache slot of an address's upper half (bits 0-9: y, 10-19: x).
    static uint32_t resolve_slot(uint64_t key) { return (uint32_t(key >> 10) + 2 * uint32_t(key)) & (kResolveSlots - 1); }
    /// UINT64_MAX matches no address (a >> 32 < 2^32) until a core is found.
    mutable uint64_t resolved_key_[kResolveSlots] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
                                                     UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    mutable detail::CoreState* resolved_[kResolveSlots] = {};
    /// The core `resolve` found last and its key (UINT64_MAX: none yet).
    mutable uint64_t last_key_ = UINT64_MAX;
    mutable detail::CoreState* last_ = nullptr;
    [[noreturn, gnu::noinline, gnu::cold]] inline void noc_addr_error(uint32_t x, uint32_t y) const;
    [[noreturn, gnu::noinline, gnu::cold]] inline void resolve_error(noc_addr_t a, uint32_t bytes, const char* op) const;
    void check_queue(uint32_t q, const char* op) const;
    [[noreturn, gnu::noinline, gnu::cold]] inline void queue_error(uint32_t q, const char* op) const;
    detail::CoreState* check_eth_send(uint32_t q, uint32_t src, uint32_t dst, uint32_t bytes) const;
    [[noreturn, gnu::noinline, gnu::cold]] inline void eth_send_error(uint32_t q, uint32_t src, uint32_t dst,
                                                                uint32_t bytes) const;

    // ---- waiting (hal/waiting.hpp) -------------------------------------------------------------------
    template <class Ready>
    void block_until(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready ready);
    template <class Ready>
    void block_until_fiber(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready& ready);
    void idle_fiber();
    // ---- timed delivery (hal/delivery_timed.hpp) -----------------------------------------------------
    static void deliver_notify(detail::Scheduler* s, detail::CoreState* d);
    void timed_write(Op op, detail::CoreState* d, uint32_t off, uint32_t bytes, const uint8_t* src, NocOp kind,
                     uint32_t value);
    void timed_eth_send(uint32_t q, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer);
    void trace_flow(const char* what, vtime_t t0, vtime_t t1, detail::CoreState* d, vtime_t arr, uint32_t bytes);
    void timed_read(detail::CoreState* s, uint32_t off, uint32_t dst_l1, uint32_t bytes);
    bool timed_txq_busy(uint32_t queue);

    // ---- multicast (hal/multicast.hpp) ---------------------------------------------------------------
    void mcast_targets(const char* op, hal::NocRect rect, uint32_t dst_l1, uint32_t bytes, uint32_t num_dests,
                       bool loopback);
    void mcast(NocOp kind, const char* op, uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1, uint32_t bytes,
               uint32_t value, uint32_t num_dests, bool loopback, Loc loc);
    void timed_mcast(NocOp kind, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, uint32_t value);
    std::vector<detail::CoreState*> mcast_dsts_;  ///< the destinations of the multicast being issued
    /// noc_writes_flushed() + noc_write_barrier() calls so far (adversary: M1 orders across them).

    // ---- immediate delivery (hal/delivery_immediate.hpp) ---------------------------------------------
    void immediate_write(detail::CoreState* d, uint32_t off, uint32_t src_l1, uint32_t bytes);
    void immediate_read(detail::CoreState* s, uint32_t off, uint32_t dst_l1, uint32_t bytes);
    void immediate_inline32(detail::CoreState* d, uint32_t off, uint32_t value);
    void immediate_inc(detail::CoreState* d, uint32_t off, uint32_t n);
    void immediate_eth_send(uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer);

    [[gnu::always_inline]] void notify_fiber(detail::CoreState* d);
    void notify(detail::CoreState* d);

    // ---- adversarial delivery (hal/delivery_adversarial.hpp) ----------------------------------------
    bool coin(uint32_t percent);
    uint32_t pick(uint32_t n);
    void start_hold();
    bool holding() const;
    bool has_pending() const { return !noc_.empty() || !reads_.empty() || !eth_[0].empty() || !eth_[1].empty(); }

    /// Entry of every operation: in adversarial mode, maybe make one delivery step.
    [[gnu::always_inline]] void step() {
        if (!adv_) [[likely]] {  // the common case, inline
            if (sched_) {
                polls_since_op_ = 0;
                sched_->point();
            }
            return;
        }
        step_slow();
    }
    [[gnu::noinline]] inline void step_slow();
    void deliver_one();
    void enqueue(PendingNoc op);
    /// Number of pieces a write of `bytes` lands in, and piece k's byte range [begin, end).
    static uint32_t pieces(uint32_t bytes) { return std::clamp<uint32_t>(bytes / 4, 1, kAdvMaxPieces); }
    static void piece_range(uint32_t bytes, uint32_t k, uint32_t& begin, uint32_t& end);
    void deliver_noc_step();
    void land_read();
    void deliver_eth_step(uint32_t q);
    void adversarial_eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer);
    void snapshot_sources();
    // ---- N7, the store hazard (strict profile; hal/delivery_adversarial.hpp) ---------------------
    void remember_pre_store(uint32_t l1, uint32_t bytes);
    void note_store(uint32_t l1, uint32_t bytes);
    void fence_stores(uint32_t l1, uint32_t bytes);
    void stale_source(PendingNoc& op);
    bool stale_read(uint32_t src, uint32_t bytes, std::vector<uint8_t>& out);
    /// Strict adversary: small l1_ptr ranges are remembered as they were when the pointer was
    /// taken (the values a store not yet in L1 leaves visible to the NoC), at most this many.
    static constexpr uint32_t kPreStoreMaxBytes = 256;
    static constexpr size_t kPreStoreSlots = 8, kUnfencedMax = 32;
    struct StoreRange {
        uint32_t l1;
        std::vector<uint8_t> old;  ///< the bytes before the stores
    };
    std::deque<StoreRange> pre_store_;  ///< l1_ptr ranges as taken (most recent last)
    std::vector<StoreRange> unfenced_;  ///< stores declared by note_write, not yet fenced
    /// Chance that a NoC write whose source overlaps an unfenced store sends the pre-store bytes.
    static constexpr uint32_t kStaleSourcePercent = 50;

    detail::RunContext* run_;
    detail::CoreState* me_;
    uint8_t* mem_;       ///< me_->mem (immutable): one load less on every operation's checks
    uint32_t mem_size_;  ///< me_->mem_size
    uint32_t mem_words_ = mem_size_ / 4;  ///< whole 4-byte words in L1: word()'s bound
    const Cluster* cluster_;
    std::span<const uint32_t> args_;
    bool adv_;
    /// The run's ordering profile is strict (hal/ordering_strict.hpp).
    bool strict_ = false;
    /// noc_writes_flushed() and noc_write_barrier() calls so far (strict profile: a write is
    /// ordered before a later increment to the same core only across one).
    uint32_t flushes_ = 0;
    detail::Scheduler* sched_ = nullptr;
    /// The run's race detector (nullptr: off).
    detail::RaceDetector* race_ = nullptr;
    bool timed_ = false;
    /// Fiber engine, FIFO, no adversary, no timing model: every operation takes effect at once
    /// and none is a scheduling point, so each operation's inline fast path is exact.
    bool plain_ = false;
    /// No checker and nothing ever in flight (plain fiber engine, or the thread engine without
    /// adversary and race detector): noc_writes_flushed / noc_write_barrier / noc_read_barrier
    /// return at once.
    bool quiet_ = false;
    /// l1_store_fence takes its slow path when l1 + bytes exceeds this: mem_size_ without a
    /// checker (so only a range error does), 0 with the race detector or the strict adversary.
    uint64_t fence_limit_ = 0;
    TimingModel* model_ = nullptr;
    Trace* trace_ = nullptr;
    uint32_t track_ = 0;
    vtime_t read_done_ = 0, write_done_ = 0, txq_until_ = 0;
    uint32_t polls_since_op_ = 0;
    /// *me_->progress_word when sem_read last looked (plain fiber path): see sem_read.
    uint64_t poll_progress_ = 0;
    uint32_t hold_left_ = 0;
    uint32_t seen_epoch_ = 0;
    uint32_t idle_streak_ = 0;
    uint64_t context_switches_ = 0;
    uint64_t rng_ = 0x853c49e6748fea9bull;
    std::chrono::steady_clock::time_point hold_until_{};
    std::vector<PendingNoc> noc_;  // in issue order
    std::deque<PendingRead> reads_;
    std::deque<PendingEth> eth_[hal::eth_tx_queues];
};

static_assert(hal::is_backend_v<Hal>, "kccl::emu::Hal must model the device contract.");
static_assert(hal::has_multicast_v<Hal>, "kccl::emu::Hal must provide the contract's multicast operations.");

}  // namespace kccl::emu

#include "hal/checks.hpp"
#include "hal/delivery_adversarial.hpp"
#include "hal/delivery_immediate.hpp"
#include "hal/delivery_timed.hpp"
#include "hal/waiting.hpp"
#include "hal/multicast.hpp"


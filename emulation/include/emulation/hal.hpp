// kccl/emulation/hal.hpp — kccl::emu::Hal, the emulation backend of the device contract.
//
// One Hal per running core, created by the Launcher and passed to the kernel as `H&`. It models
// include/hal/contract.hpp exactly:
//
// Normal mode (the default): every operation takes effect before it returns, which is one legal
// schedule of the contract.
//   * data (noc_write, noc_read, eth_send payload) moves with plain memcpy;
//   * semaphores are 32-bit atomics: sem_inc = fetch_add(release), sem_set = store(release),
//     sem_wait / sem_read = load(acquire);
//   * the LAST 16-byte word of every eth_send is stored as one 16-byte atomic (release), after
//     the payload — so a receiver that polls its sync word (acquire) sees the payload, and a
//     correct protocol is data-race free under ThreadSanitizer while an incorrect one is not.
//     (Polling an earlier word of a packet in flight is legal on hardware — E3 — and exact in
//     adversarial mode, but in normal mode it races with the payload copy: poll the last word.)
//   * every write into another core's memory bumps that core's eventcount (see wait.hpp).
//
// Adversarial mode (RunOptions::adversary.enabled, seeded): deliveries are delayed and split as
// far as the contract allows, so a protocol that relies on an ordering the contract does not
// promise fails:
//   * NoC writes, inline writes and semaphore increments are queued, one FIFO per destination
//     core (N1: the next operation to a destination starts landing only after the previous one
//     has landed completely); across destinations they land in random order (N1, N6). They land
//     at `noc_write_barrier()` (N2), at random delivery steps of the issuing core, and when its
//     kernel returns. A write lands in up to 8 pieces (4-byte multiples) in random order,
//     possibly over several delivery steps, each piece reading its source when it lands: until a
//     write has landed, any subset of its bytes may be visible. `noc_writes_flushed()` snapshots
//     the sources but does not land the writes. At most kAdvNocDepth operations are in flight
//     per core; issuing one more first performs a delivery step (NoC backpressure).
//   * NoC reads are queued and land at `noc_read_barrier()` (N4) or at random moments.
//   * Ethernet sends are queued per tx queue and delivered 16-byte word by word in address order,
//     each word one 16-byte release store (E3), interleaving the two queues at random (E2),
//     reading the source at delivery time (E1);
//     `eth_txq_busy` reports busy at random while a queue holds commands.
//   * The issuing core's thread performs deliveries whenever it calls into the backend, and
//     drains them all before it sleeps and when its kernel returns, so nothing is ever lost.
//   The random choices come from a per-core xorshift seeded by (seed, core): a failing seed is
//   reported and can be replayed (thread interleaving itself is still up to the OS).
//
// Bad input (address out of range, unaligned or link-less eth_send, a NoC address of another
// chip or of no core, runtime-arg index out of range) throws EmulationError naming the core, the
// operation and the bound. The launcher turns it into a failed run.
#pragma once

#include "cluster.hpp"
#include "engine/scheduler.hpp"
#include "timing.hpp"
#include "trace.hpp"

#include <hal/contract.hpp>

#if defined(__SANITIZE_THREAD__)
#define KCCL_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KCCL_EMU_TSAN 1
#endif
#endif
#ifndef KCCL_EMU_TSAN
#define KCCL_EMU_TSAN 0
#endif
#if KCCL_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

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

    Hal(detail::RunContext& run, detail::CoreState& me, const Cluster& cluster,
        std::span<const uint32_t> args)
        : run_(&run), me_(&me), mem_(me.mem), mem_size_(me.mem_size), cluster_(&cluster), args_(args), adv_(run.adversary.enabled), sched_(run.sched) {
        if (adv_) rng_ = detail::splitmix64(run.adversary.seed ^ (uint64_t(me.coord.chip) << 40) ^
                                           (uint64_t(me.coord.x) << 20) ^ me.coord.y);
        seen_epoch_ = sched_ ? me.fiber_epoch.load(std::memory_order_relaxed) : me.events.current();
        timed_ = sched_ && sched_->timed();
        if (timed_) model_ = sched_->model();
        plain_ = sched_ && !adv_ && !timed_ && sched_->fifo();
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
        return mem_ + l1;
    }

    // ---- NoC -------------------------------------------------------------------------------
    [[gnu::always_inline]] void noc_write(uint32_t src_l1, noc_addr_t dst, uint32_t bytes) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            check_local(src_l1, bytes, "noc_write (source)");
            auto [d, off] = resolve(dst, bytes, "noc_write");
            std::memcpy(d->mem + off, mem_ + src_l1, bytes);
            notify_fiber(d);
            me_->bump_progress();
            return;
        }
        noc_write_slow(src_l1, dst, bytes);
    }
    [[gnu::noinline]] void noc_write_slow(uint32_t src_l1, noc_addr_t dst, uint32_t bytes) {
        step();
        check_local(src_l1, bytes, "noc_write (source)");
        auto [d, off] = resolve(dst, bytes, "noc_write");
        if (timed_) {
            timed_write(Op::noc_write, d, off, bytes, mem_ + src_l1, NocOp::write, 0);
        } else if (adv_) {
            enqueue({NocOp::write, d, off, bytes, src_l1, 0, 0, {}});
        } else {
            std::memcpy(d->mem + off, mem_ + src_l1, bytes);
            notify(d);
        }
        me_->bump_progress();
    }
    [[gnu::always_inline]] void noc_read(noc_addr_t src, uint32_t dst_l1, uint32_t bytes) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            check_local(dst_l1, bytes, "noc_read (destination)");
            auto [s, off] = resolve(src, bytes, "noc_read");
            std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
            me_->bump_progress();
            return;
        }
        noc_read_slow(src, dst_l1, bytes);
    }
    [[gnu::noinline]] void noc_read_slow(noc_addr_t src, uint32_t dst_l1, uint32_t bytes) {
        step();
        check_local(dst_l1, bytes, "noc_read (destination)");
        auto [s, off] = resolve(src, bytes, "noc_read");
        if (timed_) {
            // The data is taken now; the barrier waits for the modelled completion.
            sched_->charge(Op::noc_read, bytes);
            read_done_ = std::max(read_done_, model_->noc_read_done(me_->coord, s->coord, bytes, sched_->now()));
            std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
        } else if (adv_) reads_.push_back({s, off, dst_l1, bytes});
        else std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
        me_->bump_progress();
    }
    [[gnu::always_inline]] void noc_write_barrier() {
        if (plain_) [[likely]] {  // nothing is ever in flight
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
    }
    [[gnu::always_inline]] void noc_read_barrier() {
        if (plain_) [[likely]] {  // nothing is ever in flight
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
    }
    [[gnu::always_inline]] void noc_writes_flushed() {
        if (plain_) [[likely]] {  // nothing is ever in flight
            polls_since_op_ = 0;
            return;
        }
        noc_writes_flushed_slow();
    }
    [[gnu::noinline]] void noc_writes_flushed_slow() {
        step();
        for (auto& w : noc_)
            if (w.kind == NocOp::write && w.snapshot.empty())
                w.snapshot.assign(mem_ + w.src, mem_ + w.src + w.bytes);
    }
    [[gnu::always_inline]] void noc_inline_write32(noc_addr_t dst, uint32_t value) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            auto [d, off] = resolve(dst, 4, "noc_inline_write32");
            check_word_aligned(off, "noc_inline_write32");
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).store(value, std::memory_order_release);
            notify_fiber(d);
            me_->bump_progress();
            return;
        }
        noc_inline_write32_slow(dst, value);
    }
    [[gnu::noinline]] void noc_inline_write32_slow(noc_addr_t dst, uint32_t value) {
        step();
        auto [d, off] = resolve(dst, 4, "noc_inline_write32");
        check_word_aligned(off, "noc_inline_write32");
        if (timed_) {
            timed_write(Op::noc_inline_write, d, off, 4, nullptr, NocOp::inline32, value);
        } else if (adv_) {
            enqueue({NocOp::inline32, d, off, 4, 0, value, 0, {}});
        } else {
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off))
                .store(value, std::memory_order_release);
            notify(d);
        }
        me_->bump_progress();
    }

    // ---- semaphores ----------------------------------------------------------------------------
    [[gnu::always_inline]] void sem_inc(noc_addr_t dst, uint32_t n) {
        if (plain_) [[likely]] {
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            auto [d, off] = resolve(dst, 4, "sem_inc");
            check_word_aligned(off, "sem_inc");
            // A read-modify-write (see below).
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off)).fetch_add(n, std::memory_order_release);
            notify_fiber(d);
            me_->bump_progress();
            return;
        }
        sem_inc_slow(dst, n);
    }
    [[gnu::noinline]] void sem_inc_slow(noc_addr_t dst, uint32_t n) {
        step();
        auto [d, off] = resolve(dst, 4, "sem_inc");
        check_word_aligned(off, "sem_inc");
        if (timed_) {
            timed_write(Op::sem_inc, d, off, 4, nullptr, NocOp::inc, n);
        } else if (adv_) {
            enqueue({NocOp::inc, d, off, 4, 0, n, 0, {}});
        } else {
            // A read-modify-write even on the fiber engine (one host thread): a plain load and
            // release store would end the release sequence of the other cores' increments, so
            // a waiter acquiring the sum would not synchronise with them (TSan reported it).
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + off))
                .fetch_add(n, std::memory_order_release);
            notify(d);
        }
        me_->bump_progress();
    }
    [[gnu::always_inline]] void sem_set(uint32_t local_l1, uint32_t value) {
        if (plain_) [[likely]] {
            // The running core is never parked: nothing to ready (the slow path's on_write(me_)
            // only counts the write; the progress counter below shows it to the idle sweep).
            // polls_since_op_: reset by sem_read, which sees the progress counter move.
            word(local_l1, "sem_set").store(value, std::memory_order_release);
            me_->bump_progress();
            return;
        }
        sem_set_slow(local_l1, value);
    }
    [[gnu::noinline]] void sem_set_slow(uint32_t local_l1, uint32_t value) {
        step();
        if (timed_) sched_->charge(Op::sem_set, 4);
        word(local_l1, "sem_set").store(value, std::memory_order_release);
        if (sched_) sched_->on_write(me_);
        me_->bump_progress();
    }
    [[gnu::always_inline]] uint32_t sem_read(uint32_t local_l1) {
        if (plain_) [[likely]] {
            me_->last_poll_addr.store(local_l1, std::memory_order_relaxed);
            // The operations that bump this core's progress counter (writes, sem_set, noc_read)
            // do not reset polls_since_op_ themselves (one store less on every operation): the
            // first poll after one sees the counter moved. Same count as a reset at the operation.
            const uint64_t p = me_->progress.load(std::memory_order_relaxed);
            if (p != poll_progress_) [[unlikely]] {
                poll_progress_ = p;
                polls_since_op_ = 0;
            }
            if (++polls_since_op_ >= kPollsPerYield) [[unlikely]]
                poll_yield();
            return word(local_l1, "sem_read").load(std::memory_order_acquire);
        }
        return sem_read_slow(local_l1);
    }
    /// Fiber engine: a poll loop without idle() (outside W1) must still let the others run.
    [[gnu::noinline]] void poll_yield() {
        polls_since_op_ = 0;
        check_abort();
        sched_->yield();
    }
    [[gnu::noinline]] uint32_t sem_read_slow(uint32_t local_l1) {
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
        return word(local_l1, "sem_read").load(std::memory_order_acquire);
    }
    [[gnu::always_inline]] void sem_wait(uint32_t local_l1, uint32_t value) {
        auto w = word(local_l1, "sem_wait");
        if (plain_ && w.load(std::memory_order_acquire) == value) [[likely]] {
            polls_since_op_ = 0;  // as block_until_fiber when ready at once (FIFO: no switch)
            check_abort();
            return;
        }
        sem_wait_slow(local_l1, value);
    }
    [[gnu::noinline]] void sem_wait_slow(uint32_t local_l1, uint32_t value) {
        auto w = word(local_l1, "sem_wait");
        block_until(detail::WaitKind::sem_eq, local_l1, value,
                    [&] { return w.load(std::memory_order_acquire) == value; });
    }
    [[gnu::always_inline]] void sem_wait_min(uint32_t local_l1, uint32_t value) {
        auto w = word(local_l1, "sem_wait_min");
        if (plain_ && w.load(std::memory_order_acquire) >= value) [[likely]] {
            polls_since_op_ = 0;
            check_abort();
            return;
        }
        sem_wait_min_slow(local_l1, value);
    }
    [[gnu::noinline]] void sem_wait_min_slow(uint32_t local_l1, uint32_t value) {
        auto w = word(local_l1, "sem_wait_min");
        block_until(detail::WaitKind::sem_min, local_l1, value,
                    [&] { return w.load(std::memory_order_acquire) >= value; });
    }

    // ---- Ethernet ------------------------------------------------------------------------------
    void eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes) {
        step();
        detail::CoreState* peer = check_eth_send(queue, src_l1, dst_l1, bytes);
        if (timed_) {
            timed_eth_send(queue, src_l1, dst_l1, bytes, peer);
        } else if (adv_) {
            // A busy queue makes the sender wait (E2); here: deliver until it has room.
            while (eth_[queue].size() >= kAdvQueueDepth) deliver_eth_step(queue);
            eth_[queue].push_back({src_l1, dst_l1, bytes, 0, peer});
        } else {
            if (bytes > 16) std::memcpy(peer->mem + dst_l1, mem_ + src_l1, bytes - 16);
            detail::store_word16_release(peer->mem + dst_l1 + bytes - 16, mem_ + src_l1 + bytes - 16);
            notify(peer);
        }
        me_->bump_progress();
    }
    bool eth_txq_busy(uint32_t queue) {
        check_queue(queue, "eth_txq_busy");
        if (timed_) {
            sched_->charge(Op::eth_txq_check, 0);
            const vtime_t free_at = model_->eth_txq_free(me_->coord, queue);
            if (sched_->now() >= free_at) return false;
            txq_until_ = std::max(txq_until_, free_at);  // an idle() after this sleeps until then
            return true;
        }
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

    /// W1: called by poll loops that found nothing to do. Spins (the caller re-polls between
    /// calls); at the end of the spin phase, if something was written into this core's memory
    /// since the last look, starts spinning again; otherwise yields, then sleeps until
    /// something is written (or max_sleep).
    void idle() {
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

    // ---- emulation extensions (not part of the contract) ---------------------------------------
    /// Number of context_switch() calls so far (tests check idle-count policies with it).
    uint64_t context_switches() const { return context_switches_; }
    /// Delivers everything this core still has in flight (called by the launcher at kernel end).
    void drain() {
        while (has_pending()) deliver_one();
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
    /// Adversary: chance per spin iteration of a blocked core to deliver one of its own pending
    /// operations (low, so that other cores run while this core's writes are still in flight).
    static constexpr uint32_t kWaitDeliverPercent = 3;

    enum class NocOp : uint8_t { write, inline32, inc };
    /// One NoC operation in flight (adversarial mode).
    struct PendingNoc {
        NocOp kind;
        detail::CoreState* dst;
        uint32_t dst_off;
        uint32_t bytes;   // write: length; inline32 / inc: 4
        uint32_t src;     // write: source L1 address
        uint32_t value;   // inline32: the value; inc: the increment
        uint32_t landed = 0;            // write: bit k set = piece k has landed
        std::vector<uint8_t> snapshot;  // write: source bytes, set by noc_writes_flushed
    };
    struct PendingRead {
        detail::CoreState* src;
        uint32_t src_off;
        uint32_t dst;
        uint32_t bytes;
    };
    struct PendingEth {
        uint32_t src, dst, bytes, done;
        detail::CoreState* peer;
    };

    [[noreturn]] void fail(const char* op, const std::string& what) const {
        throw EmulationError(me_->name() + ": " + op + ": " + what);
    }

    void check_abort() const {
        if (run_->aborted.load(std::memory_order_relaxed)) throw RunAborted{};
    }

    // The checks are on every operation's path: the message is built out of line.
    void check_local(uint32_t l1, uint32_t bytes, const char* op) const {
        if (uint64_t(l1) + bytes > mem_size_) [[unlikely]]
            local_range_error(l1, bytes, op);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void local_range_error(uint32_t l1, uint32_t bytes, const char* op) const {
        fail(op, "L1 range [" + detail::hex(l1) + ", " + detail::hex(uint64_t(l1) + bytes) +
                     ") exceeds this core's L1 of " + std::to_string(mem_size_) +
                     " bytes (allowed: addr + bytes <= " + std::to_string(mem_size_) + ")");
    }
    void check_word_aligned(uint32_t off, const char* op) const {
        if (off % 4) [[unlikely]]
            alignment_error(off, op);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void alignment_error(uint32_t off, const char* op) const {
        fail(op, "semaphore address " + detail::hex(off) + " is not 4-byte aligned");
    }
    /// A semaphore word of this core's L1: in range and 4-byte aligned, tested with ONE compare
    /// (every semaphore operation's path): rotating l1 right by 2 gives the word index of an
    /// aligned address and a value >= 2^30 (> any word count) for a misaligned one.
    [[gnu::always_inline]] std::atomic_ref<uint32_t> word(uint32_t l1, const char* op) {
        if (((l1 >> 2) | (l1 << 30)) >= mem_words_) [[unlikely]]
            word_error(l1, op);
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(mem_ + l1));
    }
    [[noreturn, gnu::noinline, gnu::cold]] void word_error(uint32_t l1, const char* op) const {
        check_local(l1, 4, op);
        check_word_aligned(l1, op);
        fail(op, "semaphore address " + detail::hex(l1) + " was refused");
    }

    struct Resolved {
        detail::CoreState* core;
        uint32_t off;
    };
    [[gnu::always_inline]] Resolved resolve(noc_addr_t a, uint32_t bytes, const char* op) const {
        const uint32_t off = uint32_t(a);
        // A kernel addresses the same few cores over and over: the cores found are kept in a
        // small direct-mapped cache keyed by the address's upper half (tag, chip, x, y, all
        // checked when the core was found); slot (x + 2y) mod 8 keeps the four mesh neighbours
        // of a core apart.
        // First the core found last (a stream addresses one peer: payload, then its flag), then
        // the cache.
        const uint64_t key = a >> 32;
        if (key == last_key_ && uint64_t(off) + bytes <= last_->mem_size) [[likely]]
            return {last_, off};
        return resolve_cached(a, bytes, op);
    }
    [[gnu::always_inline]] Resolved resolve_cached(noc_addr_t a, uint32_t bytes, const char* op) const {
        const uint32_t off = uint32_t(a);
        const uint64_t key = a >> 32;
        const uint32_t i = resolve_slot(key);
        if (key == resolved_key_[i] && uint64_t(off) + bytes <= resolved_[i]->mem_size) [[likely]] {
            last_key_ = key;
            last_ = resolved_[i];
            return {resolved_[i], off};
        }
        return resolve_lookup(a, bytes, op);
    }
    [[gnu::noinline]] Resolved resolve_lookup(noc_addr_t a, uint32_t bytes, const char* op) const {
        const uint32_t off = uint32_t(a);
        const uint32_t chip = addr_chip(a);
        if ((a >> 63) && chip == me_->coord.chip) [[likely]] {
            detail::CoreState* d = cluster_->chip(chip).find(addr_x(a), addr_y(a));
            if (d && uint64_t(off) + bytes <= d->mem_size) [[likely]] {
                const uint32_t i = resolve_slot(a >> 32);
                resolved_key_[i] = a >> 32;
                resolved_[i] = d;
                last_key_ = a >> 32;
                last_ = d;
                return {d, off};
            }
        }
        resolve_error(a, bytes, op);
    }
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
    [[noreturn, gnu::noinline, gnu::cold]] void noc_addr_error(uint32_t x, uint32_t y) const {
        fail("noc_addr", "core (" + std::to_string(x) + "," + std::to_string(y) + ") on chip " +
                             std::to_string(me_->coord.chip) +
                             " does not fit the NoC address encoding: x and y are 10 bits, the chip id 8 bits "
                             "(allowed: x <= " + std::to_string(kCoordMax) + ", y <= " + std::to_string(kCoordMax) +
                             ", chip <= " + std::to_string(kChipMax) + ")");
    }
    /// Names what is wrong with a NoC address `resolve` refused.
    [[noreturn, gnu::noinline, gnu::cold]] void resolve_error(noc_addr_t a, uint32_t bytes, const char* op) const {
        if (!(a >> 63))
            fail(op, "NoC address " + detail::hex(a) + " was not made by noc_addr() (tag bit missing)");
        const uint32_t chip = addr_chip(a), x = addr_x(a), y = addr_y(a), off = uint32_t(a);
        if (chip != me_->coord.chip)
            fail(op, "NoC address names chip " + std::to_string(chip) + " core (" + std::to_string(x) +
                         "," + std::to_string(y) + ") but this core is on chip " +
                         std::to_string(me_->coord.chip) +
                         "; the NoC reaches only the same chip, other chips only over Ethernet links");
        const Chip& c = cluster_->chip(chip);
        detail::CoreState* d = c.find(x, y);
        if (!d)
            fail(op, "NoC address names core (" + std::to_string(x) + "," + std::to_string(y) +
                         ") which does not exist on chip " + std::to_string(chip) + "; " + c.describe_grid());
        if (uint64_t(off) + bytes > d->mem_size)
            fail(op, "range [" + detail::hex(off) + ", " + detail::hex(uint64_t(off) + bytes) + ") on " +
                         d->name() + " exceeds its memory of " + std::to_string(d->mem_size) +
                         " bytes (allowed: addr + bytes <= " + std::to_string(d->mem_size) + ")");
        fail(op, "NoC address " + detail::hex(a) + " was refused");
    }
    void check_queue(uint32_t q, const char* op) const {
        if (q >= hal::eth_tx_queues) [[unlikely]]
            queue_error(q, op);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void queue_error(uint32_t q, const char* op) const {
        fail(op, "tx queue " + std::to_string(q) + " does not exist (queues are 0 and 1)");
    }
    detail::CoreState* check_eth_send(uint32_t q, uint32_t src, uint32_t dst, uint32_t bytes) const {
        const detail::CoreState* peer = me_->link_peer;
        // One test on the path; the message is built out of line.
        if (q < hal::eth_tx_queues && me_->kind == CoreKind::ethernet && peer && bytes != 0 &&
            ((bytes | src | dst) % 16) == 0 && uint64_t(src) + bytes <= mem_size_ &&
            uint64_t(dst) + bytes <= peer->mem_size) [[likely]]
            return me_->link_peer;
        eth_send_error(q, src, dst, bytes);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void eth_send_error(uint32_t q, uint32_t src, uint32_t dst,
                                                                uint32_t bytes) const {
        check_queue(q, "eth_send");
        if (me_->kind != CoreKind::ethernet)
            fail("eth_send", "only Ethernet cores can send over Ethernet; this is a " +
                                 std::string(to_string(me_->kind)) + " core");
        if (!me_->link_peer)
            fail("eth_send", "this Ethernet core has no link (see Cluster::links_between for linked cores)");
        if (bytes == 0 || bytes % 16 || src % 16 || dst % 16)
            fail("eth_send", "src " + detail::hex(src) + ", dst " + detail::hex(dst) + " and bytes " +
                                 std::to_string(bytes) +
                                 " must all be multiples of 16 (one Ethernet word), bytes > 0");
        check_local(src, bytes, "eth_send (source)");
        if (uint64_t(dst) + bytes > me_->link_peer->mem_size)
            fail("eth_send", "destination range [" + detail::hex(dst) + ", " + detail::hex(uint64_t(dst) + bytes) +
                                 ") exceeds the L1 of " + me_->link_peer->name() + " (" +
                                 std::to_string(me_->link_peer->mem_size) + " bytes)");
        fail("eth_send", "refused");
    }

    // ---- waiting ---------------------------------------------------------------------------------
    template <class Ready>
    void block_until(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready ready) {
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

    // ---- waiting on the fiber engine ------------------------------------------------------------
    // A blocked core parks; a write into its memory readies it only if its wait can now succeed
    // (Scheduler::on_write). With operations in flight (adversary) it never parks: it yields,
    // holding them back for a seeded number of rounds, then delivers them step by step.
    template <class Ready>
    void block_until_fiber(detail::WaitKind kind, uint32_t addr, uint32_t value, Ready& ready) {
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
    void idle_fiber() {
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
    // ---- the timed engine: deliveries stamped with the model's arrival time --------------------
    static void deliver_notify(detail::Scheduler* s, detail::CoreState* d) {
        d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        s->on_write(d);
    }
    /// A NoC write (source bytes taken now), inline write or increment landing at the model's time.
    void timed_write(Op op, detail::CoreState* d, uint32_t off, uint32_t bytes, const uint8_t* src, NocOp kind,
                     uint32_t value) {
        const vtime_t t0 = sched_->now();
        sched_->charge(op, bytes);
        const vtime_t t1 = sched_->now();
        const vtime_t arr = model_->noc_arrival(me_->coord, d->coord, bytes, t1);
        write_done_ = std::max(write_done_, arr);
        detail::Scheduler* s = sched_;
        uint8_t* dst = d->mem + off;
        if (kind == NocOp::write) {
            sched_->at(arr, [s, d, dst, data = std::vector<uint8_t>(src, src + bytes)] {
                std::memcpy(dst, data.data(), data.size());
                deliver_notify(s, d);
            });
        } else {
            sched_->at(arr, [s, d, dst, kind, value] {
                std::atomic_ref<uint32_t> w(*reinterpret_cast<uint32_t*>(dst));
                if (kind == NocOp::inc) w.fetch_add(value, std::memory_order_release);
                else w.store(value, std::memory_order_release);
                deliver_notify(s, d);
            });
        }
        if (trace_) trace_flow(to_string(op), t0, t1, d, arr, bytes);
    }
    void timed_eth_send(uint32_t q, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer) {
        // A busy queue makes the sender wait (E2) until its last packet has left.
        const vtime_t t0 = sched_->now();
        sched_->advance_to(model_->eth_txq_free(me_->coord, q));
        sched_->charge(Op::eth_send, bytes);
        const vtime_t t1 = sched_->now();
        const vtime_t arr = model_->eth_arrival(me_->coord, q, bytes, t1);
        detail::Scheduler* s = sched_;
        uint8_t* dst = peer->mem + dst_l1;
        sched_->at(arr, [s, peer, dst, data = std::vector<uint8_t>(mem_ + src_l1, mem_ + src_l1 + bytes)] {
            const size_t n = data.size();
            if (n > 16) std::memcpy(dst, data.data(), n - 16);
            detail::store_word16_release(dst + n - 16, data.data() + n - 16);
            deliver_notify(s, peer);
        });
        if (trace_) trace_flow("eth_send", t0, t1, peer, arr, bytes);
    }
    void trace_flow(const char* what, vtime_t t0, vtime_t t1, detail::CoreState* d, vtime_t arr, uint32_t bytes) {
        detail::IgnoreScope ig;
        trace_->slice(track_, what, t0, t1, "{\"to\":\"" + d->name() + "\",\"bytes\":" + std::to_string(bytes) + "}");
        const uint64_t f = trace_->flow_begin(track_, t1);
        trace_->flow_end(f, trace_->track(d->coord, d->name()), arr);
    }

    /// A write landed in `d`'s memory: wake its core (thread engine: eventcount; fiber engine:
    /// ready it if its wait can now succeed).
    /// The fiber engine's notify (sched_ set): bump the epoch idle() compares, and ready the
    /// destination only if it is parked and its wait can now succeed (Scheduler::on_write).
    [[gnu::always_inline]] void notify_fiber(detail::CoreState* d) {
        d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        sched_->on_write(d);
    }
    void notify(detail::CoreState* d) {
        if (sched_) {
            d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            sched_->on_write(d);
        } else {
            d->events.notify();
        }
    }

    // ---- adversary -------------------------------------------------------------------------------
    bool coin(uint32_t percent) {
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        return (rng_ % 100) < percent;
    }
    uint32_t pick(uint32_t n) {
        coin(0);
        return uint32_t(rng_ % n);
    }
    void start_hold() {
        const AdversaryOptions& a = run_->adversary;
        if (sched_) {
            // Deterministic engine: hold for a seeded number of scheduling rounds, not host time.
            hold_left_ = 0;
            if (has_pending() && a.max_hold.count() > 0 && coin(a.hold_percent))
                hold_left_ = 1 + pick(uint32_t(std::min<int64_t>(a.max_hold.count(), kMaxHoldRounds)));
            return;
        }
        hold_until_ = {};
        if (has_pending() && a.max_hold.count() > 0 && coin(a.hold_percent))
            hold_until_ = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(1 + pick(uint32_t(a.max_hold.count())));
    }
    bool holding() const {
        if (sched_) return hold_left_ > 0;
        return hold_until_ != std::chrono::steady_clock::time_point{} &&
               std::chrono::steady_clock::now() < hold_until_;
    }
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
    [[gnu::noinline]] void step_slow() {
        if (sched_) {
            polls_since_op_ = 0;
            // Deliver first, then maybe switch: the others may react to what just landed before
            // this core's operation takes effect (the window a wrong ordering needs).
            if (has_pending() && coin(run_->adversary.deliver_percent)) deliver_one();
            sched_->point();
            // Deterministic engine: the delay is a yield (the others run meanwhile).
            if (coin(run_->adversary.delay_percent)) {
                check_abort();
                sched_->yield();
            }
            return;
        }
        if (!adv_) return;
        if (coin(run_->adversary.delay_percent)) {
            if (coin(50)) std::this_thread::yield();
            else for (uint32_t i = pick(2000); i; --i) cpu_relax();
        }
        if (has_pending() && coin(run_->adversary.deliver_percent)) deliver_one();
    }
    void deliver_one() {
        uint32_t kinds[3];
        uint32_t n = 0;
        if (!noc_.empty()) kinds[n++] = 0;
        if (!reads_.empty()) kinds[n++] = 1;
        if (!eth_[0].empty() || !eth_[1].empty()) kinds[n++] = 2;
        if (n == 0) return;
        switch (kinds[pick(n)]) {
            case 0: deliver_noc_step(); break;
            case 1: land_read(); break;
            default: {
                uint32_t q = eth_[0].empty() ? 1 : eth_[1].empty() ? 0 : pick(2);
                deliver_eth_step(q);
            }
        }
        me_->bump_progress();
    }
    void enqueue(PendingNoc op) {
        while (noc_.size() >= kAdvNocDepth) deliver_noc_step();
        noc_.push_back(std::move(op));
    }
    /// Number of pieces a write of `bytes` lands in, and piece k's byte range [begin, end).
    static uint32_t pieces(uint32_t bytes) { return std::clamp<uint32_t>(bytes / 4, 1, kAdvMaxPieces); }
    static void piece_range(uint32_t bytes, uint32_t k, uint32_t& begin, uint32_t& end) {
        const uint32_t n = pieces(bytes);
        const uint32_t per = ((bytes / n) + 3) & ~3u;  // a multiple of 4, n * per >= bytes
        begin = std::min(bytes, k * per);
        end = k + 1 == n ? bytes : std::min(bytes, (k + 1) * per);
    }
    /// One delivery step of the NoC: picks a destination at random (weighted by its in-flight
    /// operations) and lands (part of) the OLDEST operation to it — per-destination FIFO, N1.
    /// A write lands a random number of its remaining pieces, in random order; the operation
    /// leaves the queue once it has landed completely.
    void deliver_noc_step() {
        detail::CoreState* d = noc_[pick(uint32_t(noc_.size()))].dst;
        size_t i = 0;
        while (noc_[i].dst != d) ++i;
        PendingNoc& op = noc_[i];
        bool done = true;
        switch (op.kind) {
            case NocOp::inc:
                std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + op.dst_off))
                    .fetch_add(op.value, std::memory_order_release);
                break;
            case NocOp::inline32:
                std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + op.dst_off))
                    .store(op.value, std::memory_order_release);
                break;
            case NocOp::write: {
                const uint32_t n = pieces(op.bytes);
                uint32_t remaining[kAdvMaxPieces];
                uint32_t r = 0;
                for (uint32_t k = 0; k < n; ++k)
                    if (!(op.landed >> k & 1)) remaining[r++] = k;
                // Land the remaining pieces in random order: all of them (kAdvWholeWritePercent),
                // or a random 1..r-1 of them, the rest in later steps (other cores run between).
                const uint32_t now = r == 1 || coin(kAdvWholeWritePercent) ? r : 1 + pick(r - 1);
                for (uint32_t count = now; count; --count) {
                    const uint32_t j = pick(r);
                    const uint32_t k = remaining[j];
                    remaining[j] = remaining[--r];
                    uint32_t b, e;
                    piece_range(op.bytes, k, b, e);
                    const uint8_t* src = op.snapshot.empty() ? mem_ + op.src : op.snapshot.data();
                    if (e > b) std::memcpy(d->mem + op.dst_off + b, src + b, e - b);
                    op.landed |= 1u << k;
                }
                done = r == 0;
                break;
            }
        }
        notify(d);
        if (done) noc_.erase(noc_.begin() + std::ptrdiff_t(i));
    }
    void land_read() {
        PendingRead r = reads_.front();
        reads_.pop_front();
        std::memcpy(mem_ + r.dst, r.src->mem + r.src_off, r.bytes);
    }
    void deliver_eth_step(uint32_t q) {
        PendingEth& c = eth_[q].front();
        uint32_t words = 1 + pick(run_->adversary.max_words_per_step);
        for (; words && c.done < c.bytes; --words, c.done += 16) {
            uint8_t* d = c.peer->mem + c.dst + c.done;
            const uint8_t* s = mem_ + c.src + c.done;
            // Every word is one 16-byte release store, in address order: a receiver polling
            // ANY word of a packet in flight sees all words before it (E3), race-free.
            detail::store_word16_release(d, s);
        }
        notify(c.peer);
        if (c.done == c.bytes) eth_[q].pop_front();
    }

    detail::RunContext* run_;
    detail::CoreState* me_;
    uint8_t* mem_;       ///< me_->mem (immutable): one load less on every operation's checks
    uint32_t mem_size_;  ///< me_->mem_size
    uint32_t mem_words_ = mem_size_ / 4;  ///< whole 4-byte words in L1: word()'s bound
    const Cluster* cluster_;
    std::span<const uint32_t> args_;
    bool adv_;
    detail::Scheduler* sched_ = nullptr;
    bool timed_ = false;
    /// Fiber engine, FIFO, no adversary, no timing model: every operation takes effect at once
    /// and none is a scheduling point, so each operation's inline fast path is exact.
    bool plain_ = false;
    TimingModel* model_ = nullptr;
    Trace* trace_ = nullptr;
    uint32_t track_ = 0;
    vtime_t read_done_ = 0, write_done_ = 0, txq_until_ = 0;
    uint32_t polls_since_op_ = 0;
    /// me_->progress when sem_read last looked (plain fiber path): see sem_read.
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

}  // namespace kccl::emu

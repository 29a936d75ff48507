// kccl/emulation/engine/scheduler.hpp — the fiber engine's scheduler: every emulated core is a
// fiber on one host thread; a blocking contract operation parks the core, a write into a core's
// memory readies it only if its wait can now succeed, and a policy picks the next ready core.
//
// Policies (every choice from ScheduleOptions::seed):
//   fifo   — ready cores run in the order they became ready (fastest; no preemption), except
//            that a core readied by the running core's write takes the "run next" slot
//            (ScheduleOptions::handoff, on by default; see there);
//   random — at every contract operation, with preempt_percent chance, the running core yields;
//            the next core is drawn at random from the ready ones;
//   pct    — PCT (Burckhardt et al., ASPLOS 2010): random distinct priorities, the highest ready
//            core runs; at pct_depth-1 random steps of [1, pct_steps] the running core drops
//            below every initial priority; idle() and context_switch() are yields that drop the
//            yielder below every other core.
// The run hash mixes every scheduling decision (which core, and why the previous one stopped):
// the same (seed, policy, options) gives the same hash on any machine.
//
// Sanitizers: under TSan each fiber is a TSan fiber and every switch passes the no-sync flag, so
// a switch is not a happens-before edge (a race between two cores is still reported); the
// scheduler's own bookkeeping runs inside ignore regions. Under ASan every switch tells ASan the
// new stack.
//
// Host-only (C++20). One Scheduler per fiber run, used only by the thread that runs it.
#pragma once

#include "../cluster.hpp"
#include "../fiber/context.hpp"
#include "../timing.hpp"
#include "../platform.hpp"

#include <cstdint>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kccl::emu {

/// Which engine runs the emulated cores.
enum class Engine : uint8_t {
    fibers,   ///< default: one host thread, cooperative fibers, deterministic
    threads,  ///< one OS thread per core: real parallelism, the host's memory model
};
/// How the fiber engine picks the next core.
/// `automatic` (the default): fifo, or random seeded by the adversary's seed in adversarial mode;
/// `timed` is what a run with a TimingModel uses (the earliest event first), whatever is set.
enum class Policy : uint8_t { automatic, fifo, random, pct, timed };

inline const char* to_string(Policy p) {
    switch (p) {
        case Policy::fifo: return "fifo";
        case Policy::random: return "random";
        case Policy::automatic: return "automatic";
        case Policy::timed: return "timed";
        default: return "pct";
    }
}

struct ScheduleOptions {
    Policy policy = Policy::automatic;
    uint64_t seed = 1;
    /// PCT: number of priority levels d (d-1 change points).
    uint32_t pct_depth = 3;
    /// PCT: the change points are drawn from [1, pct_steps] (an estimate of a run's steps).
    uint64_t pct_steps = 20000;
    /// random: chance per contract operation that the running core yields.
    uint32_t preempt_percent = 10;
    /// fifo: a core that the running core's write readies runs next, ahead of the queue (the
    /// "run next" slot of Go's scheduler): when the writer parks, the reader of what it wrote
    /// runs while that data is in cache, and a core woken meanwhile only for bookkeeping (an
    /// acknowledgement) waits in the queue and often handles it together with its next real
    /// work. If the writer readies several, the last one runs next and the earlier ones join the
    /// queue. A yield, a start or a wake() joins the queue. After kHandoffChain picks in a row
    /// from the slot the queue's head runs, so no ready core waits forever behind a chain of
    /// handoffs. false: plain FIFO.
    bool handoff = true;
    /// timed: cores ready at the same clock run in the order they were added (the lowest index
    /// first, and a running core yields to a ready one of equal clock and lower index) instead
    /// of the order they were readied in. The routed-fabric emulation adds its PEs in row-major
    /// order, so that streams starting in one cycle claim shared links in that order.
    bool ties_by_index = false;
};

/// fifo with handoff: at most this many picks in a row from the "run next" slot.
inline constexpr uint32_t kHandoffChain = 64;

namespace detail {
/// The core whose kernel runs on this thread / fiber (for the device-check handler).
inline thread_local const CoreState* tl_core = nullptr;


class Scheduler {
public:
    enum class Why : uint8_t { start, park, yield, preempt, exit };

    Scheduler(const ScheduleOptions& o, size_t stack_size, TimingModel* model = nullptr, bool guard = true)
        : opt_(o), stack_size_(stack_size), rng_(o.seed * 0x9E3779B97F4A7C15ull + 0x51), model_(model), guard_(guard) {
        if (!rng_) rng_ = 1;
        if (opt_.policy == Policy::automatic) opt_.policy = Policy::fifo;
        if (model_) opt_.policy = Policy::timed;
        if (!model_ && opt_.policy == Policy::timed) opt_.policy = Policy::fifo;
    }
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;
    ~Scheduler() {
        for (auto& t : tasks_) {
            if (t->stack.base) fiber::StackPool::instance().put(t->stack);
#if KCCL_EMU_TSAN
            if (t->tsan) __tsan_destroy_fiber(t->tsan);
#endif
        }
    }

    /// Adds a core with the body it runs (the body must catch everything it throws).
    void add(CoreState* st, std::function<void()> body) {
        count_host_visits();
        auto t = std::make_unique<Task>();
        t->index = uint32_t(tasks_.size());
        t->st = st;
        t->name = st->name();
        t->body = std::move(body);
        t->stack = fiber::StackPool::instance().get(stack_size_, guard_);
        t->owner = this;
        // Unguarded (very large runs): lo == hi; an overflow is named when it faults below the
        // stack or is still live at the core's next switch (see switch_away), else not detected.
        t->guard.lo = t->stack.base;
        t->guard.hi = t->stack.lo();
        t->guard.name = t->name.c_str();
        t->guard.size = t->stack.usable();
        fiber::make_context(t->ctx, t->stack, &Scheduler::entry, t.get());
#if KCCL_EMU_TSAN
        t->tsan = __tsan_create_fiber(0);
#endif
        st->sched_task = t->index;
        tasks_.push_back(std::move(t));
    }

    /// Runs until every task has finished. `on_idle` is called when no task is ready; it returns
    /// true if it made some ready (sweep / abort), false for a deadlock (the caller then aborts
    /// through `on_idle` the next time: it must eventually make the tasks finish).
    template <class OnIdle>
    void run(OnIdle&& on_idle) {
        fiber::OverflowHandlerScope overflow_handler;
        // However run() ends (on_idle may throw), this thread no longer points the overflow
        // handler at a task's guard record: the tasks die with the Scheduler.
        struct ClearGuard {
            ~ClearGuard() { fiber::current_guard().store(nullptr, std::memory_order_relaxed); }
        } clear_guard;
        {
            IgnoreScope ig;
            ring_.assign(tasks_.size() + 1, 0);
            head_ = tail_ = 0;
            run_next_ = kNone;
            chain_ = 0;
            ready_flag_.assign(tasks_.size(), 0);
            init_priorities();
            for (auto& t : tasks_) make_ready_locked(t.get());
        }
#if KCCL_EMU_TSAN
        main_tsan_ = __tsan_get_current_fiber();
        for (auto& t : tasks_) __tsan_release(t.get());
#endif
        live_ = uint32_t(tasks_.size());
        for (;;) {
            Task* next;
            {
                IgnoreScope ig;
                if (live_ == 0) break;
                next = pick();
            }
            if (!next) {
                if (!on_idle()) continue;
                continue;
            }
            resume_from_main(next);
        }
#if KCCL_EMU_TSAN
        for (auto& t : tasks_) __tsan_acquire(t.get());
#endif
        for (auto& t : tasks_) {
            t->st->sched_task = UINT32_MAX;
            t->st->sched_parked = 0;
        }
    }

    // ---- called from the running fiber ---------------------------------------------------------
    /// Blocks the running core until `wake`/`wake_all` readies it.
    void park() { switch_away(Why::park, false); }
    /// Stays ready but lets the others run first (PCT: drops below every other core).
    void yield() {
        {
            IgnoreScope ig;
            if (opt_.policy == Policy::pct) current_->prio = --low_prio_;
        }
        switch_away(Why::yield, true);
    }
    /// FIFO: no contract operation is a scheduling point (point() does nothing).
    bool fifo() const { return opt_.policy == Policy::fifo; }
    /// A scheduling point at every contract operation (random / PCT may switch here).
    void point() {
        if (opt_.policy == Policy::fifo) return;
        slow_point();
    }
    uint64_t steps() const {
        IgnoreScope ig;
        return steps_;
    }

    // ---- virtual time (timed policy; without a model every cost is 0) ------------------------------
    bool timed() const { return model_ != nullptr; }
    TimingModel* model() const { return model_; }
    /// The running core's clock (untimed: the scheduling step count, for traces).
    vtime_t now() const {
        IgnoreScope ig;
        if (!model_) return steps_;
        return current_ ? current_->clock : last_event_t_;
    }
    /// Charges the running core the model's issue cost of `op`.
    void charge(Op op, uint32_t bytes) {
        IgnoreScope ig;
        current_->clock += model_->issue_cost(current_->st->coord, op, bytes);
    }
    /// Moves the running core's clock to at least `t`.
    void advance_to(vtime_t t) {
        IgnoreScope ig;
        if (current_->clock < t) current_->clock = t;
    }
    /// Runs `fn` (a delivery) when the simulation reaches `t` (ties: in scheduling order).
    void at(vtime_t t, std::function<void()> fn) {
        IgnoreScope ig;
        push_event(Event{t, ev_seq_++, UINT32_MAX, std::move(fn)});
    }
    /// Timed: before the running core observes memory, every event up to its clock has happened
    /// and no core is behind it (else it yields and resumes when it is the earliest).
    void sync() {
        if (!model_) return;
        bool behind;
        {
            IgnoreScope ig;
            const vtime_t c = current_->clock;
            behind = (!events_.empty() && events_.front().t <= c) || earlier_ready(c);
        }
        if (behind) switch_away(Why::preempt, true);
    }
    /// Parks the running core until a write readies it or the simulation reaches `t`.
    void park_until(vtime_t t) {
        {
            IgnoreScope ig;
            push_event(Event{t, ev_seq_++, current_->index, {}});
        }
        park();
    }
    /// The latest delivery time so far (timed).
    vtime_t last_event_time() const {
        IgnoreScope ig;
        return last_event_t_;
    }
    vtime_t clock_of(const CoreState* st) const {
        IgnoreScope ig;
        return st->sched_task == UINT32_MAX ? 0 : tasks_[st->sched_task]->clock;
    }

    // ---- called by writers (from any fiber) -----------------------------------------------------
    /// `st`'s memory was written: ready its core if its wait can now succeed.
    /// Inline: a write into a core that is not parked (the common case) costs a counter and
    /// one flag test; only a parked core's wait is evaluated (out of line).
    [[gnu::always_inline]] void on_write(CoreState* st) {
        IgnoreScope ig;
        ++writes_;
        if (!st->sched_parked) [[likely]]
            return;
        on_write_parked(st);
    }
    /// Readies `st`'s core if it is parked, whatever it waits for.
    void wake(CoreState* st) {
        IgnoreScope ig;
        const uint32_t i = st->sched_task;
        if (i == UINT32_MAX) return;
        Task* t = tasks_[i].get();
        if (t->state == State::parked) make_ready_locked(t);
    }
    /// Readies a parked core at its own clock (timed), not the waker's: for a wait that costs
    /// the woken core no time (the fabric's back-pressure, which only orders its next step).
    void wake_keep_clock(CoreState* st) {
        IgnoreScope ig;
        const uint32_t i = st->sched_task;
        if (i == UINT32_MAX) return;
        Task* t = tasks_[i].get();
        if (t->state == State::parked) make_ready_locked(t, false, true);
    }
    void wake_all() {
        IgnoreScope ig;
        for (auto& t : tasks_)
            if (t->state == State::parked) make_ready_locked(t.get());
    }
    /// Readies every core parked in idle() (the deadlock check's last chance: a loop polling
    /// another core's memory with noc_read is not woken by writes), in core order. Returns how
    /// many. Costs the number of cores that parked in idle() since the last call, not the number
    /// of cores (the list of them is kept as they park).
    uint32_t wake_idle() {
        IgnoreScope ig;
        std::sort(idle_list_.begin(), idle_list_.end());
        count_host_visits(idle_list_.size() + 1);
        uint32_t n = 0;
        for (uint32_t i : idle_list_) {
            Task* t = tasks_[i].get();
            t->in_idle_list = false;
            if (t->state == State::parked && t->st->wait_kind.load(std::memory_order_relaxed) == WaitKind::idle) {
                make_ready_locked(t);
                ++n;
            }
        }
        idle_list_.clear();
        return n;
    }
    uint64_t writes() const {
        IgnoreScope ig;
        return writes_;
    }
    uint64_t hash() const {
        IgnoreScope ig;
        return hash_;
    }
    uint64_t switches() const {
        IgnoreScope ig;
        return switches_;
    }

private:
    enum class State : uint8_t { ready, running, parked, done };
    struct Task {
        fiber::Context ctx;
        fiber::Stack stack;
        CoreState* st = nullptr;
        std::string name;
        std::function<void()> body;
        Scheduler* owner = nullptr;
        uint32_t index = 0;
        State state = State::parked;
        bool in_idle_list = false;  ///< in idle_list_ (parked in idle() since the last wake_idle)
        int64_t prio = 0;
        vtime_t clock = 0;  ///< timed: this core's modelled time
        fiber::GuardInfo guard;  ///< what the overflow handler reports (lo = nullptr: unguarded)
#if KCCL_EMU_TSAN
        void* tsan = nullptr;
#endif
#if KCCL_EMU_ASAN
        void* fake_stack = nullptr;
#endif
    };

    [[gnu::noinline]] void on_write_parked(CoreState* st) {
        IgnoreScope ig;
        const uint32_t i = st->sched_task;
        if (i == UINT32_MAX) return;
        Task* t = tasks_[i].get();
        if (t->state != State::parked || !can_proceed(*st)) return;
        make_ready_locked(t, true);
    }

    static bool can_proceed(const CoreState& st) {
        const uint32_t a = st.wait_addr.load(std::memory_order_relaxed);
        const uint32_t v = st.wait_value.load(std::memory_order_relaxed);
        auto cur = [&] {
            return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(st.mem + a)).load(std::memory_order_relaxed);
        };
        switch (st.wait_kind.load(std::memory_order_relaxed)) {
            case WaitKind::sem_eq: return cur() == v;
            case WaitKind::sem_min: return cur() >= v;
            case WaitKind::next_program: return false;
            default: return true;
        }
    }

    void push_ring(uint32_t index) {
        ring_[tail_] = index;
        tail_ = tail_ + 1 == ring_.size() ? 0 : tail_ + 1;
    }

    uint64_t rand() {
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        return rng_;
    }
    void mix(uint64_t v) { hash_ = (hash_ ^ v) * 0x100000001b3ull; }

    void init_priorities() {
        const uint32_t n = uint32_t(tasks_.size());
        if (opt_.policy != Policy::pct) return;
        const uint32_t d = std::max<uint32_t>(1, opt_.pct_depth);
        std::vector<uint32_t> perm(n);
        for (uint32_t i = 0; i < n; ++i) perm[i] = i;
        for (uint32_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rand() % i]);
        for (uint32_t i = 0; i < n; ++i) tasks_[i]->prio = int64_t(d) + perm[i];
        change_points_.clear();
        for (uint32_t i = 1; i < d; ++i) change_points_.push_back(1 + rand() % std::max<uint64_t>(1, opt_.pct_steps));
        std::sort(change_points_.begin(), change_points_.end());
        next_change_ = 0;
        low_prio_ = 0;
    }

    /// `by_write`: readied by the running core's write (fifo: may take the run-next slot).
    void make_ready_locked(Task* t, bool by_write = false, bool keep_clock = false) {
        t->state = State::ready;
        t->st->sched_parked = 0;
        if (ready_flag_[t->index]) return;
        ready_flag_[t->index] = 1;
        if (by_write && opt_.policy == Policy::fifo && opt_.handoff && current_) {
            if (run_next_ != kNone) push_ring(run_next_);  // the earlier one joins the queue
            run_next_ = t->index;
            return;
        }
        if (opt_.policy == Policy::timed) {
            // Woken by a delivery: it resumes at the arrival (a wait returns at max(now, arrival)).
            const vtime_t at = in_event_ ? event_now_ : current_ ? current_->clock : 0;
            if (t->clock < at && !keep_clock) t->clock = at;
            rheap_.push_back(Ready{t->clock, opt_.ties_by_index ? uint64_t(t->index) : ready_seq_++, t->index});
            std::push_heap(rheap_.begin(), rheap_.end(), later);
        } else if (opt_.policy == Policy::fifo) {
            push_ring(t->index);
        } else if (opt_.policy == Policy::pct) {
            // A ready core's priority does not change until it runs again: a max-heap holds them.
            pct_heap_.push_back(PrioIndex{t->prio, t->index});
            std::push_heap(pct_heap_.begin(), pct_heap_.end());
        } else {
            ready_.push_back(t->index);
        }
    }
    Task* pick() {
        uint32_t i;
        if (opt_.policy == Policy::timed) {
            // The earliest first: a delivery at t runs before a core whose clock is >= t.
            for (;;) {
                const bool ev = !events_.empty(), task = !rheap_.empty();
                if (!ev && !task) return nullptr;
                if (ev && (!task || events_.front().t <= rheap_.front().clock)) {
                    run_event();
                    continue;
                }
                std::pop_heap(rheap_.begin(), rheap_.end(), later);
                i = rheap_.back().index;
                rheap_.pop_back();
                break;
            }
        } else if (opt_.policy == Policy::fifo) {
            if (run_next_ != kNone && chain_ < kHandoffChain) {
                i = run_next_;
                run_next_ = kNone;
                ++chain_;
            } else {
                chain_ = 0;
                if (run_next_ != kNone) {  // the chain is long enough: the queue's head first
                    push_ring(run_next_);
                    run_next_ = kNone;
                }
                if (head_ == tail_) return nullptr;
                i = ring_[head_];
                head_ = head_ + 1 == ring_.size() ? 0 : head_ + 1;
            }
        } else if (opt_.policy == Policy::pct) {
            // The highest priority first (priorities are distinct: the pick is unique).
            if (pct_heap_.empty()) return nullptr;
            std::pop_heap(pct_heap_.begin(), pct_heap_.end());
            i = pct_heap_.back().index;
            pct_heap_.pop_back();
        } else {
            if (ready_.empty()) return nullptr;
            const size_t at = size_t(rand() % ready_.size());
            i = ready_[at];
            ready_[at] = ready_.back();
            ready_.pop_back();
        }
        ready_flag_[i] = 0;
        mix(uint64_t(i) << 3 | uint64_t(last_why_));
        ++switches_;
        return tasks_[i].get();
    }
    struct Event {
        vtime_t t;
        uint64_t seq;
        uint32_t task;  ///< a timer wake of this task, or UINT32_MAX: run fn
        std::function<void()> fn;
    };
    struct Ready {
        vtime_t clock;
        uint64_t seq;
        uint32_t index;
    };
    static bool later(const Ready& a, const Ready& b) { return a.clock != b.clock ? a.clock > b.clock : a.seq > b.seq; }
    /// timed: a ready core runs before the current one (at clock c).
    bool earlier_ready(vtime_t c) const {
        if (rheap_.empty()) return false;
        const Ready& f = rheap_.front();
        return f.clock < c || (opt_.ties_by_index && f.clock == c && f.index < current_->index);
    }
    static bool later_ev(const Event& a, const Event& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
    void push_event(Event e) {
        events_.push_back(std::move(e));
        std::push_heap(events_.begin(), events_.end(), later_ev);
    }
    void run_event() {
        std::pop_heap(events_.begin(), events_.end(), later_ev);
        Event e = std::move(events_.back());
        events_.pop_back();
        in_event_ = true;
        event_now_ = e.t;
        if (e.t > last_event_t_) last_event_t_ = e.t;
        mix(e.t ^ (e.seq << 1));
        if (e.task != UINT32_MAX) {
            if (tasks_[e.task]->state == State::parked) make_ready_locked(tasks_[e.task].get());
        } else {
            e.fn();
        }
        in_event_ = false;
    }

    bool higher_ready() const { return !pct_heap_.empty() && pct_heap_.front().prio > current_->prio; }

    void slow_point() {
        bool sw = false;
        {
            IgnoreScope ig;
            ++steps_;
            if (opt_.policy == Policy::timed) {
                const vtime_t c = current_->clock;
                sw = (!events_.empty() && events_.front().t <= c) || earlier_ready(c);
            } else if (opt_.policy == Policy::random) {
                sw = !ready_.empty() && rand() % 100 < opt_.preempt_percent;
            } else {
                while (next_change_ < change_points_.size() && steps_ >= change_points_[next_change_]) {
                    current_->prio = int64_t(change_points_.size() - next_change_);  // d-1 .. 1: below every initial
                    ++next_change_;
                }
                sw = higher_ready();
            }
        }
        if (sw) switch_away(Why::preempt, true);
    }

    /// The one switch site of a fiber: picks the next ready core (or the main context).
    void switch_away(Why why, bool stay_ready) {
        Task* me = current_;
        Task* next;
#if !KCCL_EMU_ASAN
        // A frame that ran off the stack without faulting (an unguarded stack: into a
        // neighbouring one) is named here, while it is still live. One compare per switch.
        if (reinterpret_cast<const uint8_t*>(__builtin_frame_address(0)) < me->stack.lo()) [[unlikely]]
            fiber::detail::overflow_exit(&me->guard);
#endif
        {
            IgnoreScope ig;
            ++steps_;
            last_why_ = why;
            if (stay_ready) {
                make_ready_locked(me);
            } else {
                me->state = State::parked;
                me->st->sched_parked = 1;
                if (!me->in_idle_list && me->st->wait_kind.load(std::memory_order_relaxed) == WaitKind::idle) {
                    me->in_idle_list = true;
                    idle_list_.push_back(me->index);
                }
            }
            next = pick();
            if (next == me) {
                me->state = State::running;
                me->st->sched_parked = 0;
                return;
            }
        }
        fiber::Context& to = next ? next->ctx : main_ctx_;
        transfer(me, next, to, false);
        // Resumed.
        after_resume(me);
    }
    void after_resume(Task* me) {
#if KCCL_EMU_ASAN
        __sanitizer_finish_switch_fiber(me->fake_stack, nullptr, nullptr);
        from_main_ = false;
#endif
        IgnoreScope ig;
        current_ = me;
        me->state = State::running;
        tl_core = me->st;
        set_guard(me);
    }
    static void set_guard(Task* t) {
        // The record was filled in add(), on this thread; the handler runs on this thread too.
        std::atomic_signal_fence(std::memory_order_release);
        fiber::current_guard().store(&t->guard, std::memory_order_relaxed);
    }
    /// Switches from `me` (nullptr = main) to `next` (nullptr = main), whose context is `to`.
    void transfer(Task* me, Task* next, fiber::Context& to, bool dying) {
        fiber::Context* from;
#if KCCL_EMU_TSAN
        void* tsan_to;
#endif
#if KCCL_EMU_ASAN
        void** fake;
        const void* bottom;
        size_t size;
#endif
        {
            IgnoreScope ig;
            from = me ? &me->ctx : &main_ctx_;
#if KCCL_EMU_TSAN
            tsan_to = next ? next->tsan : main_tsan_;
#endif
#if KCCL_EMU_ASAN
            fake = dying ? nullptr : (me ? &me->fake_stack : &main_fake_);
            bottom = next ? static_cast<const void*>(next->stack.lo()) : main_bottom_;
            size = next ? next->stack.usable() : main_size_;
#endif
        }
        (void)next;
        (void)dying;
#if KCCL_EMU_TSAN
        __tsan_switch_to_fiber(tsan_to, __tsan_switch_to_fiber_no_sync);
#endif
#if KCCL_EMU_ASAN
        __sanitizer_start_switch_fiber(fake, bottom, size);
#endif
        fiber::switch_context(*from, to);
    }
    void resume_from_main(Task* next) {
        {
            IgnoreScope ig;
            current_ = next;
        }
#if KCCL_EMU_ASAN
        from_main_ = true;
#endif
        transfer(nullptr, next, next->ctx, false);
#if KCCL_EMU_ASAN
        __sanitizer_finish_switch_fiber(main_fake_, nullptr, nullptr);
#endif
        IgnoreScope ig;
        current_ = nullptr;
        tl_core = nullptr;
    }

    static void entry(void* arg) {
        Task* t = static_cast<Task*>(arg);
        Scheduler* s = t->owner;
#if KCCL_EMU_ASAN
        {
            // The stack this fiber was started from: the host thread's, if it came from main.
            const void* bottom = nullptr;
            size_t size = 0;
            __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
            if (s->from_main_ && !s->main_bottom_) {
                s->main_bottom_ = bottom;
                s->main_size_ = size;
            }
            s->from_main_ = false;
        }
#endif
#if KCCL_EMU_TSAN
        __tsan_acquire(t);
#endif
        {
            IgnoreScope ig;
            s->current_ = t;
            t->state = State::running;
            tl_core = t->st;
            set_guard(t);
        }
        try {
            t->body();
        } catch (...) {
        }
        s->finish(t);
    }
    [[noreturn]] void finish(Task* me) {
#if KCCL_EMU_TSAN
        __tsan_release(me);
#endif
        Task* next;
        {
            IgnoreScope ig;
            me->state = State::done;
            --live_;
            last_why_ = Why::exit;
            next = pick();
        }
        transfer(me, next, next ? next->ctx : main_ctx_, true);
        __builtin_trap();
    }

    ScheduleOptions opt_;
    size_t stack_size_;
    uint64_t rng_;
    std::vector<std::unique_ptr<Task>> tasks_;
    static constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> ring_;  // fifo ready ring (capacity tasks + 1)
    size_t head_ = 0, tail_ = 0;
    uint32_t run_next_ = kNone;   // fifo with handoff: the core that runs next (not in ring_)
    uint32_t chain_ = 0;          // picks in a row from run_next_
    std::vector<uint32_t> ready_;  // random ready set
    struct PrioIndex {
        int64_t prio;
        uint32_t index;
        friend bool operator<(const PrioIndex& a, const PrioIndex& b) { return a.prio < b.prio; }
    };
    std::vector<PrioIndex> pct_heap_;  // pct ready set: a max-heap on priority
    std::vector<uint8_t> ready_flag_;
    std::vector<uint32_t> idle_list_;  // tasks that parked in idle() since the last wake_idle
    Task* current_ = nullptr;
    fiber::Context main_ctx_;
    uint32_t live_ = 0;
    uint64_t steps_ = 0;
    uint64_t writes_ = 0;
    uint64_t hash_ = 0xcbf29ce484222325ull;
    uint64_t switches_ = 0;
    Why last_why_ = Why::start;
    TimingModel* model_ = nullptr;
    bool guard_ = true;
    std::vector<Event> events_;  // timed: deliveries and timer wakes (min-heap on (t, seq))
    std::vector<Ready> rheap_;   // timed: ready cores (min-heap on (clock, seq))
    uint64_t ev_seq_ = 0, ready_seq_ = 0;
    bool in_event_ = false;
    vtime_t event_now_ = 0, last_event_t_ = 0;
    std::vector<uint64_t> change_points_;
    size_t next_change_ = 0;
    int64_t low_prio_ = 0;
#if KCCL_EMU_TSAN
    void* main_tsan_ = nullptr;
#endif
#if KCCL_EMU_ASAN
    void* main_fake_ = nullptr;
    bool from_main_ = false;
    const void* main_bottom_ = nullptr;
    size_t main_size_ = 0;
#endif
};

}  // namespace detail
}  // namespace kccl::emu

// kccl/emulation/launcher/engine.hpp — a Plan run (detail::Run) on the fiber or the thread engine;
// programs enter chip by chip (see launcher.hpp). Host-only (C++20); part of launcher.hpp.
#pragma once

#include "report.hpp"
#include "../race.hpp"

namespace kccl::emu::detail {

/// The emulation's handler for failed device checks: fails the calling core with the message.
inline void emulation_assert_handler(const char* expr, const char* msg, const char* file, int line) {
    std::string s = std::string("device check failed: ") + (msg ? msg : "") + " [" + (expr ? expr : "?") + " at " +
                    (file ? file : "?") + ":" + std::to_string(line) + "]";
    if (tl_core) s = tl_core->name() + ": " + s;
    throw EmulationError(s);
}

/// Installs emulation_assert_handler while at least one run is in progress.
class AssertHandlerScope {
public:
    AssertHandlerScope() { count(+1); }
    ~AssertHandlerScope() { count(-1); }
    AssertHandlerScope(const AssertHandlerScope&) = delete;
    AssertHandlerScope& operator=(const AssertHandlerScope&) = delete;

private:
    static void count(int delta) {
        static std::mutex mu;
        static int active = 0;
        static assert_handler_t previous = nullptr;
        std::lock_guard<std::mutex> g(mu);
        if (delta > 0 && active++ == 0) previous = kccl::set_assert_handler(&emulation_assert_handler);
        if (delta < 0 && --active == 0) kccl::set_assert_handler(previous);
    }
};

/// One run of a plan: Launcher::run makes it, calls execute() once and returns `report`.
class Run {
public:
    Run(Cluster& cluster, const std::vector<Program>& programs, Plan& plan)
        : cluster_(cluster), programs_(programs), plan_(plan), opt_(plan.opt), fib_(opt_.engine == Engine::fibers),
          P_(uint32_t(programs.size())), n_(uint32_t(plan.cores.size())), chips_(cluster.num_chips()), states_(n_),
          chip_program_(chips_), remaining_(size_t(chips_) * P_), chip_cores_(chips_), chip_init_(size_t(chips_) * P_),
          skew_(chips_, std::chrono::microseconds{0}), go_{fib_ ? 1u : 0u}, running_(n_) {
        ctx_.wait = opt_.wait;
        ctx_.adversary = opt_.adversary;
        ctx_.ordering = opt_.ordering;
        report.engine = opt_.engine;
        if (fib_) report.replay = replay_string(opt_);
        report.cores.resize(plan.kernels);
        // Adversarial runs keep the full spin phase: the adversary times its deliveries by it.
        if (!fib_ && ctx_.wait.adapt_to_oversubscription && !opt_.adversary.enabled &&
            n_ > std::max(1u, std::thread::hardware_concurrency())) {
            ctx_.wait.spin_polls = ctx_.wait.oversubscribed_spin_polls;
            ctx_.wait.yield_polls = ctx_.wait.oversubscribed_yield_polls;
        }
        for (uint32_t i = 0; i < n_; ++i) {
            for (const Slot& s : plan.work[i]) {
                report.cores[s.result].core = plan.cores[i];
                report.cores[s.result].program = s.program;
            }
            CoreState* s = states_[i] = &cluster_.state(plan.cores[i], "Launcher::run");
            s->wait_kind.store(WaitKind::not_started, std::memory_order_relaxed);
            if (fib_) s->progress_word = &progress_total_;
            s->signals.clear();
            chip_cores_[plan.cores[i].chip].push_back(i);
        }
        if (opt_.race == RunOptions::RaceCheck::on) {
            std::vector<CoreState*> all;
            for (const auto& c : cluster_.cores()) all.push_back(c.get());
            race_ = std::make_unique<RaceDetector>(std::move(all), !fib_, ctx_.ordering == OrderingProfile::strict);
            ctx_.race = race_.get();
        }
        dirty_l1();
        // Fiber engine: the scheduler exists before any program is entered (enter() wakes cores).
        if (fib_) {
            if (opt_.timing) opt_.timing->reset(cluster_);
            const bool guard = opt_.stack_guard == RunOptions::StackGuard::on ||
                               (opt_.stack_guard == RunOptions::StackGuard::automatic && n_ <= RunOptions::kGuardedCoresMax);
            sched_ = std::make_unique<Scheduler>(opt_.schedule, opt_.stack_size ? opt_.stack_size : default_stack_size(),
                                                 opt_.timing, guard);
            ctx_.sched = sched_.get();
            ctx_.trace = opt_.trace;
            if (opt_.trace) opt_.trace->set_time_unit(opt_.timing ? opt_.timing->ticks_per_second() : 1e9);
            if (opt_.timing) {
                report.timed = true;
                report.model = opt_.timing->name();
                report.time_unit = opt_.timing->unit();
                report.ticks_per_second = opt_.timing->ticks_per_second();
            }
        }
        // Per chip: how many of its kernels each program still has, its cores (entering a program
        // looks at the chip's own cores, not at all of them), and per program its initial words.
        for (uint32_t p = 0; p < P_; ++p) {
            for (const auto& e : programs_[p].entries)
                remaining_[size_t(e.core.chip) * P_ + p].fetch_add(1, std::memory_order_relaxed);
            for (const InitWord& w : programs_[p].init) chip_init_[size_t(w.core.chip) * P_ + p].push_back(&w);
        }
        for (uint32_t c = 0; c < chips_; ++c) enter(c, 0);
        std::mt19937_64 rng(opt_.skew_seed);
        for (uint32_t c = 0; c < chips_; ++c) {
            if (c < opt_.start_skew.size()) skew_[c] = opt_.start_skew[c];
            if (opt_.random_skew_max.count() > 0)
                skew_[c] += std::chrono::microseconds(rng() % (uint64_t(opt_.random_skew_max.count()) + 1));
        }
    }

    /// Runs every core's kernels to the end (or the abort) and completes `report`.
    void execute() {
        if (fib_) run_fibers();
        else run_threads();
        if (race_) {
            report.races = race_->reports();
            report.races_dropped = race_->dropped();
        }
        report.wall_time = std::chrono::steady_clock::now() - wall0_;
    }

    RunReport report;

private:
    /// Fiber engine: idle sweeps in a row without any write or progress before a deadlock.
    static constexpr uint32_t kMaxFruitlessSweeps = 1000;

    /// Dirty L1 (RunOptions::dirty_l1): never-run cores start with garbage except what the host
    /// wrote; otherwise every core counts as run.
    void dirty_l1() {
        if (!resolved_dirty_l1(opt_)) {
            for (auto* s : states_) {
                s->pristine = false;
                s->host_written.clear();
            }
            return;
        }
        const uint64_t seed = opt_.dirty_seed ? opt_.dirty_seed : splitmix64(opt_.adversary.seed ^ 0xD1277ull);
        for (auto* s : states_)
            if (s->pristine) {
                if (race_) {
                    // Garbage: everything but what the host wrote.
                    auto kept = s->host_written;
                    std::sort(kept.begin(), kept.end());
                    uint32_t at = 0;
                    for (auto [b, e] : kept) {
                        if (b > at) race_->garbage(s, at, b);
                        at = std::max(at, e);
                    }
                    if (at < s->mem_size) race_->garbage(s, at, s->mem_size);
                }
                fill_garbage(*s, seed);
            }
    }

    /// Moves `chip` to the first program >= `p` that has kernels on it, applying the initial
    /// words of every program it enters (called by the last kernel of the previous one).
    void enter(uint32_t chip, uint32_t p) {
        for (; p < P_; ++p) {
            for (const InitWord* w : chip_init_[size_t(chip) * P_ + p]) {
                CoreState& ws = cluster_.state(w->core, "init_word");
                std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ws.mem + w->addr)).store(w->value, std::memory_order_release);
                if (ctx_.race) ctx_.race->host_write(&ws, w->addr, 4);
            }
            if (remaining_[size_t(chip) * P_ + p].load(std::memory_order_relaxed)) break;
        }
        chip_program_[chip].store(p, std::memory_order_release);
        if (ctx_.sched) {
            count_host_visits(chip_cores_[chip].size());
            for (uint32_t i : chip_cores_[chip])
                if (states_[i]->wait_kind.load(std::memory_order_relaxed) == WaitKind::next_program) ctx_.sched->wake(states_[i]);
        } else {
            futex_wake_all(chip_program_[chip]);
        }
    }

    /// Blocks until `chip_program` reaches `p`; meanwhile delivers what this core left in flight.
    void wait_for_program(CoreState& st, Hal& hal, std::atomic<uint32_t>& chip_program, uint32_t p) {
        uint32_t cur = chip_program.load(std::memory_order_acquire);
        if (cur >= p) return;
        st.wait_value.store(p, std::memory_order_relaxed);
        st.wait_kind.store(WaitKind::next_program, std::memory_order_relaxed);
        while ((cur = chip_program.load(std::memory_order_acquire)) < p) {
            if (ctx_.aborted.load(std::memory_order_relaxed)) throw RunAborted{};
            if (ctx_.sched) {
                // The chip's last kernel of the previous program wakes this core (enter()).
                if (hal.in_flight()) hal.deliver_step();
                if (hal.in_flight()) ctx_.sched->yield();
                else ctx_.sched->park();
            } else if (hal.in_flight()) {
                hal.deliver_step();
                std::this_thread::yield();
            } else {
                futex_wait(chip_program, cur, std::chrono::microseconds(2000));
            }
        }
        st.wait_kind.store(WaitKind::none, std::memory_order_relaxed);
        st.bump_progress();
    }

    /// Records a hang (the watchdog's, or the fiber engine's deadlock) and what every core waits for.
    void record_hang(bool deadlock = false) {
        std::lock_guard<std::mutex> g(report_mu_);
        report.watchdog_fired = true;
        if (deadlock) report.deadlock = true;
        report.watchdog_dump = dump_.dump();
    }

    std::chrono::milliseconds watchdog_tick() const {
        return std::clamp<std::chrono::milliseconds>(opt_.watchdog / 8, std::chrono::milliseconds(1),
                                                     std::chrono::milliseconds(50));
    }
    /// One watchdog sample of the cores' progress `sum` (progress anyway while cores are
    /// `starting`): `RunOptions::watchdog` without progress is a hang, recorded (returns true); an
    /// abort that kernels ignore for `RunOptions::stop_grace` ends the process (RunDump::unstoppable).
    bool watchdog_sample(uint64_t sum, bool starting = false) {
        const auto now = std::chrono::steady_clock::now();
        if (ctx_.aborted.load(std::memory_order_relaxed)) {
            if (aborted_at_ == std::chrono::steady_clock::time_point{}) aborted_at_ = now;
            if (now - aborted_at_ < opt_.stop_grace) return false;
            std::lock_guard<std::mutex> g(report_mu_);
            dump_.unstoppable(report, opt_);
        }
        if (sum != last_sum_ || starting) {
            last_sum_ = sum;
            last_change_ = now;
            return false;
        }
        if (now - last_change_ < opt_.watchdog) return false;
        record_hang();
        return true;
    }

    void abort_all() {
        ctx_.aborted.store(true, std::memory_order_relaxed);
        if (ctx_.sched) ctx_.sched->wake_all();  // called on the engine's thread only
        else
            for (auto& s : cluster_.cores()) s->events.wake_all();
    }

    /// Core `i` (a fiber or a thread): its start skew, then its kernels program by program.
    void core_main(uint32_t i) {
        CoreState& st = *states_[i];
        if (!fib_) tl_core = &st;  // fiber engine: the scheduler sets it at every switch
        while (go_.load(std::memory_order_acquire) == 0) futex_wait(go_, 0, std::chrono::microseconds(100000));
        const uint32_t chip = plan_.cores[i].chip;
        if (skew_[chip].count() > 0 && go_.load(std::memory_order_relaxed) == 1) start_skew(skew_[chip]);
        st.wait_kind.store(WaitKind::none, std::memory_order_relaxed);
        st.bump_progress();
        started_.fetch_add(1, std::memory_order_relaxed);
        const std::vector<Slot>& work = plan_.work[i];
        Hal hal(ctx_, st, cluster_, programs_[work.front().program].entries[work.front().entry].args);
        for (size_t w = 0; w < work.size(); ++w) {
            const Slot& slot = work[w];
            const Entry& e = programs_[slot.program].entries[slot.entry];
            CoreResult& res = report.cores[slot.result];
            bool failed = false;
            try {
                if (go_.load(std::memory_order_relaxed) != 1) throw RunAborted{};
                wait_for_program(st, hal, chip_program_[chip], slot.program);
                if (fib_ && opt_.timing) sched_->advance_to(sched_->now() + opt_.timing->program_launch());
                running_[i].store(slot.program, std::memory_order_relaxed);
                hal.set_args(e.args);
                const auto t0 = std::chrono::steady_clock::now();
                const uint64_t cs0 = hal.context_switches();
                if (ctx_.aborted.load(std::memory_order_relaxed)) throw RunAborted{};
                if (fib_) res.modelled_start = sched_->now();
                if (ctx_.race) ctx_.race->entering(&st, slot.program);
                res.value = e.kernel(hal);
                if (ctx_.race) ctx_.race->finished(&st, slot.program);
                if (w + 1 == work.size()) hal.drain();
                if (fib_) res.modelled_end = sched_->now();
                res.elapsed = std::chrono::steady_clock::now() - t0;
                res.context_switches = hal.context_switches() - cs0;
                res.status = CoreStatus::ok;
                res.message.clear();
            } catch (const RunAborted&) {
                res.status = CoreStatus::aborted;
                res.message = "aborted";
                break;
            } catch (const std::exception& ex) {
                res.message = ex.what();
                failed = true;
            } catch (...) {
                res.message = "kernel threw a non-std exception";
                failed = true;
            }
            // Outside the catch block: on the fiber engine, waking others may switch later,
            // and no fiber may switch inside a catch block (the exception state is per thread).
            if (failed) {
                res.status = CoreStatus::failed;
                abort_all();
                break;
            }
            st.bump_progress();
            if (remaining_[size_t(chip) * P_ + slot.program].fetch_sub(1, std::memory_order_acq_rel) == 1)
                enter(chip, slot.program + 1);
        }
        st.wait_kind.store(WaitKind::finished, std::memory_order_relaxed);
        st.bump_progress();
        if (!fib_) tl_core = nullptr;
        if (finished_.fetch_add(1, std::memory_order_release) + 1 == n_ && !fib_) futex_wake_all(finished_);
    }

    /// A chip's start skew of `s` us: modelled time when timed; on the untimed fiber engine s
    /// scheduling rounds (the other cores run meanwhile; the order of starts, not host time);
    /// host time on the thread engine.
    void start_skew(std::chrono::microseconds s) {
        if (fib_ && opt_.timing) {
            sched_->advance_to(vtime_t(double(s.count()) * 1e-6 * opt_.timing->ticks_per_second()));
        } else if (fib_) {
            for (int64_t k = std::min<int64_t>(s.count(), 1000000); k > 0; --k) {
                if (ctx_.aborted.load(std::memory_order_relaxed)) break;
                sched_->yield();
            }
        } else {
            const auto until = std::chrono::steady_clock::now() + s;
            while (std::chrono::steady_clock::now() < until && !ctx_.aborted.load(std::memory_order_relaxed))
                std::this_thread::sleep_for(std::min<std::chrono::microseconds>(
                    std::chrono::microseconds(500),
                    std::chrono::duration_cast<std::chrono::microseconds>(until - std::chrono::steady_clock::now())));
        }
    }

    /// The fiber engine: every core a fiber on this thread; a watchdog thread only for kernels
    /// that compute without calling the backend (everything else is a deadlock, found at once).
    void run_fibers() {
        Scheduler& sched = *sched_;
        for (uint32_t i = 0; i < n_; ++i) sched.add(states_[i], [this, i] { core_main(i); });
        std::atomic<uint32_t> stop{0};
        uint64_t swept_writes = ~0ull, swept_progress = ~0ull;
        uint32_t fruitless = 0;
        std::thread watchdog([&] {
            while (stop.load(std::memory_order_acquire) == 0) {
                futex_wait(stop, 0, watchdog_tick());
                if (stop.load(std::memory_order_acquire)) break;
                // Only the flag: the scheduler (on its own thread) wakes the parked cores.
                if (watchdog_sample(progress_total_.load(std::memory_order_relaxed)))
                    ctx_.aborted.store(true, std::memory_order_relaxed);
            }
        });
        {
            struct StopWatchdog {  // however sched.run ends
                std::atomic<uint32_t>& stop;
                std::thread& watchdog;
                ~StopWatchdog() {
                    stop.store(1, std::memory_order_release);
                    futex_wake_all(stop);
                    watchdog.join();
                }
            } stop_watchdog{stop, watchdog};
            sched.run([&]() -> bool {
                if (ctx_.aborted.load(std::memory_order_relaxed)) {
                    sched.wake_all();
                    return true;
                }
                // Cores parked in idle() may poll another core's memory (noc_read) or count
                // idle() calls: wake them (an "idle sweep") while anything changes, and up to
                // kMaxFruitlessSweeps times in a row when nothing does, before calling it a deadlock.
                const uint64_t progress = progress_total_.load(std::memory_order_relaxed);
                count_host_visits();
                if (sched.writes() != swept_writes || progress != swept_progress) {
                    swept_writes = sched.writes();
                    swept_progress = progress;
                    fruitless = 0;
                }
                if (fruitless < kMaxFruitlessSweeps && sched.wake_idle()) {
                    ++fruitless;
                    return true;
                }
                record_hang(true);
                abort_all();
                return true;
            });
        }
        report.run_hash = sched.hash();
        if (opt_.timing) {
            report.makespan = sched.last_event_time();
            for (const auto& c : report.cores) report.makespan = std::max(report.makespan, c.modelled_end);
            opt_.timing->link_usage(report.links);
        }
        report.steps = sched.steps();
        report.switches = sched.switches();
    }

    /// The thread engine: a thread per core; this thread samples their progress counters and
    /// fires the watchdog after RunOptions::watchdog without change.
    void run_threads() {
        std::vector<std::thread> threads;
        threads.reserve(n_);
        for (uint32_t i = 0; i < n_; ++i) {
            try {
                threads.emplace_back([this, i] { core_main(i); });
            } catch (const std::system_error& ex) {
                // Out of threads: stop the ones already started (they have not run a kernel yet).
                abort_all();
                go_.store(2, std::memory_order_release);
                futex_wake_all(go_);
                for (auto& t : threads) t.join();
                throw EmulationError("Launcher::run: could not start thread " + std::to_string(i + 1) + " of " +
                                     std::to_string(n_) + " (" + ex.what() +
                                     "); the emulation runs one thread per core with a kernel: the machine's thread "
                                     "or memory limit allows fewer — use fewer cores per run");
            }
        }
        go_.store(1, std::memory_order_release);
        futex_wake_all(go_);
        for (uint32_t done; (done = finished_.load(std::memory_order_acquire)) < n_;) {
            // Sleep one tick, or until the last kernel returns (it wakes this futex).
            futex_wait(finished_, done, watchdog_tick());
            uint64_t sum = 0;
            for (auto* s : states_) sum += s->progress.load(std::memory_order_relaxed);
            if (watchdog_sample(sum, started_.load(std::memory_order_relaxed) < n_)) abort_all();
        }
        for (auto& t : threads) t.join();
    }

    const std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
    AssertHandlerScope handler_scope_;
    Cluster& cluster_;
    const std::vector<Program>& programs_;
    const Plan& plan_;
    RunOptions& opt_;
    const bool fib_;
    const uint32_t P_, n_, chips_;
    RunContext ctx_;
    std::vector<CoreState*> states_;
    /// Fiber engine: every core's progress counts into one word (the deadlock check and the
    /// watchdog read it instead of summing n counters). Unhooked however the run ends.
    std::atomic<uint64_t> progress_total_{0};
    struct ProgressHook {
        const std::vector<CoreState*>& states;
        ~ProgressHook() {
            for (auto* s : states) s->progress_word = &s->progress;
        }
    } progress_hook_{states_};
    std::unique_ptr<RaceDetector> race_;
    std::unique_ptr<Scheduler> sched_;
    std::vector<std::atomic<uint32_t>> chip_program_;  ///< per chip: the program it runs now
    std::vector<std::atomic<uint32_t>> remaining_;     ///< per (chip, program): kernels not yet returned
    std::vector<std::vector<uint32_t>> chip_cores_;
    std::vector<std::vector<const InitWord*>> chip_init_;
    std::vector<std::chrono::microseconds> skew_;  ///< per chip: its start skew
    std::atomic<uint32_t> go_, finished_{0}, started_{0};
    std::vector<std::atomic<uint32_t>> running_;  ///< per core: the program it is in (for the dump)
    RunDump dump_{programs_, states_, running_};
    std::mutex report_mu_;  ///< the fiber engine's watchdog thread and scheduler both may record a hang
    uint64_t last_sum_ = ~0ull;  ///< the watchdog's last sample
    std::chrono::steady_clock::time_point last_change_{}, aborted_at_{};
};

}  // namespace kccl::emu::detail

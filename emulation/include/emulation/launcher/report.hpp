// kccl/emulation/launcher/report.hpp — what a run reports: RunReport (per kernel, the hang, the
// races, the modelled times), the replay string (replay_string) and the dump of what every core
// waits for (detail::RunDump, for the watchdog and for a run that cannot be stopped). Host-only
// (C++20); part of launcher.hpp.
#pragma once

#include "plan.hpp"

namespace kccl::emu {

/// The setting that replays a fiber run: every option that changes what the run does, as
/// apply_replay's comma-separated key=value pairs, e.g. "policy=pct,seed=123,depth=3,steps=20000,
/// adversary=0,dirty=0". Always policy, seed, adversary, dirty, race and (last) ordering, resolved
/// (a run the race detector failed replays with it, whatever the adversary or KCCL_EMU_RACE say;
/// a RaceCheck left to `with_adversary` resolves as for a run of at most kRaceCoresMax cores
/// unless the launcher resolved it); the other keys when they apply and differ from their
/// defaults. apply_replay on default RunOptions reproduces the run (same RunReport::run_hash) from
/// this string alone. Not carried: a timing model with non-default options ("timing=<name>:custom";
/// apply_replay rejects it: pass the same model).
inline std::string replay_string(const RunOptions& o) {
    const Policy p = o.timing ? Policy::timed : resolved_policy(o);
    const uint64_t seed = o.schedule.policy == Policy::automatic && o.adversary.enabled ? o.adversary.seed : o.schedule.seed;
    auto n = [](uint64_t v) { return std::to_string(v); };
    std::string s = std::string("policy=") + to_string(p) + ",seed=" + n(seed);
    if (o.engine == Engine::threads) s += ",engine=threads";
    const ScheduleOptions ds{};
    if (p == Policy::pct) s += ",depth=" + n(o.schedule.pct_depth) + ",steps=" + n(o.schedule.pct_steps);
    if (p == Policy::random && o.schedule.preempt_percent != ds.preempt_percent) s += ",preempt=" + n(o.schedule.preempt_percent);
    if (p == Policy::fifo && !o.schedule.handoff) s += ",handoff=0";
    const AdversaryOptions& a = o.adversary;
    const AdversaryOptions da{};
    s += std::string(",adversary=") + (a.enabled ? "1" : "0");
    if (a.enabled) {
        if (a.seed != seed) s += ",adversary_seed=" + n(a.seed);
        if (a.deliver_percent != da.deliver_percent) s += ",deliver=" + n(a.deliver_percent);
        if (a.max_words_per_step != da.max_words_per_step) s += ",words=" + n(a.max_words_per_step);
        if (a.delay_percent != da.delay_percent) s += ",delay=" + n(a.delay_percent);
        if (a.hold_percent != da.hold_percent) s += ",hold=" + n(a.hold_percent);
        if (a.max_hold != da.max_hold) s += ",max_hold_us=" + n(uint64_t(a.max_hold.count()));
    }
    const bool dirty = resolved_dirty_l1(o);
    s += std::string(",dirty=") + (dirty ? "1" : "0");
    if (dirty && o.dirty_seed) s += ",dirty_seed=" + n(o.dirty_seed);
    const bool random_skew = o.random_skew_max.count() > 0;
    if (random_skew || std::any_of(o.start_skew.begin(), o.start_skew.end(), [](auto k) { return k.count() > 0; })) {
        std::string list;
        for (const auto& k : o.start_skew) list += (list.empty() ? "" : ":") + n(uint64_t(k.count()));
        if (!list.empty()) s += ",skew=" + list;
        if (random_skew) s += ",skew_max=" + n(uint64_t(o.random_skew_max.count()));
        if (random_skew && o.skew_seed != seed) s += ",skew_seed=" + n(o.skew_seed);
    }
    const WaitPolicy dw{};
    if (o.wait.spin_polls != dw.spin_polls) s += ",spin=" + n(o.wait.spin_polls);
    if (o.wait.yield_polls != dw.yield_polls) s += ",yield=" + n(o.wait.yield_polls);
    if (o.timing) s += std::string(",timing=") + o.timing->name() + (o.timing->default_options() ? "" : ":custom");
    s += std::string(",race=") + (race_detection_on(o, RunOptions::kRaceCoresMax) ? "1" : "0");
    s += std::string(",ordering=") + to_string(resolved_ordering(o));
    return s;
}

enum class CoreStatus { ok, failed, aborted };

struct CoreResult {
    CoreCoord core{};
    uint32_t program = 0;  ///< which program of the launch (0 unless next_program() was used)
    CoreStatus status = CoreStatus::aborted;
    std::string message = "not run (the run was aborted first)";  ///< the error, for failed cores
    uint64_t value = 0;   ///< what the kernel returned (0 for void kernels)
    /// Timed fiber engine: the core's modelled clock when the kernel started and returned.
    vtime_t modelled_start = 0, modelled_end = 0;
    std::chrono::nanoseconds elapsed{0};
    uint64_t context_switches = 0;
};

struct RunReport {
    std::vector<CoreResult> cores;  ///< one per kernel, program by program in the order added
    /// A hang was detected: by the wall-clock watchdog, or (fiber engine) at once as a deadlock.
    bool watchdog_fired = false;
    std::string watchdog_dump;  ///< what every core waited for when the hang was detected
    /// Fiber engine: no core could run and nothing was in flight (watchdog_fired is set too).
    bool deadlock = false;
    Engine engine = Engine::fibers;
    /// Fiber engine: hash of every scheduling decision (same seed, policy, options: same hash).
    uint64_t run_hash = 0;
    /// Fiber engine: scheduling steps (switches and scheduling points) and core switches.
    uint64_t steps = 0, switches = 0;
    /// Fiber engine: the KCCL_EMU_REPLAY value that replays this run.
    std::string replay;
    std::chrono::nanoseconds wall_time{0};
    /// Timed runs: the model, its tick, the makespan (the latest kernel end or delivery, in
    /// ticks) and every Ethernet tx queue's busy time. Per core: CoreResult::modelled_*.
    bool timed = false;
    std::string model, time_unit;
    double ticks_per_second = 0;
    vtime_t makespan = 0;
    std::vector<LinkBusy> links;
    /// Data races, garbage uses and in-flight source overwrites the race detector found (each
    /// fails the run); `races_dropped` more beyond the first RaceDetector::kMaxReports.
    std::vector<std::string> races;
    size_t races_dropped = 0;
    double makespan_seconds() const { return ticks_per_second > 0 ? double(makespan) / ticks_per_second : 0; }

    bool ok() const {
        return !watchdog_fired && races.empty() &&
               std::all_of(cores.begin(), cores.end(), [](const CoreResult& c) { return c.status == CoreStatus::ok; });
    }
    /// The result of the kernel on `c` in `program`. Constant time on average: an index of
    /// `cores` is built at the first call (and again whenever `cores` changed size since), so
    /// one report must not be queried from several threads at once.
    const CoreResult& at(CoreCoord c, uint32_t program = 0) const {
        if (index_size_ != cores.size()) {
            index_.clear();
            index_.reserve(cores.size());
            for (size_t i = 0; i < cores.size(); ++i) index_.emplace(result_key(cores[i].core, cores[i].program), i);
            index_size_ = cores.size();
            detail::count_host_visits(cores.size());
        }
        auto is = [&](const CoreResult& r) {
            detail::count_host_visits();
            return r.core == c && r.program == program;
        };
        for (auto [it, end] = index_.equal_range(result_key(c, program)); it != end; ++it)
            if (is(cores[it->second])) return cores[it->second];  // the index has only indices < cores.size()
        for (const auto& r : cores)  // `cores` was edited in place since the index was built
            if (is(r)) return r;
        throw EmulationError("RunReport::at: no kernel ran on " + to_string(c) + " in program " + std::to_string(program));
    }
    std::string first_error() const {
        for (const auto& c : cores)
            if (c.status == CoreStatus::failed) return c.message;
        return {};
    }
    std::string summary() const {
        std::string s;
        if (deadlock) s += "deadlock: no core can run and nothing is in flight (replay: KCCL_EMU_REPLAY=\"" + replay + "\")\n" + watchdog_dump;
        else if (watchdog_fired) s += "watchdog fired: no progress\n" + watchdog_dump;
        for (const auto& c : cores)
            if (c.status == CoreStatus::failed)
                s += "FAILED " + to_string(c.core) + (c.program ? " program " + std::to_string(c.program) : std::string()) +
                     ": " + c.message + "\n";
        for (const auto& r : races) s += r + "\n";
        if (races_dropped) s += "(" + std::to_string(races_dropped) + " more race reports dropped)\n";
        if (s.empty()) s = "ok (" + std::to_string(cores.size()) + " kernels)\n";
        else if (!deadlock && !replay.empty()) s += "replay: KCCL_EMU_REPLAY=\"" + replay + "\"\n";  // every failure, not only deadlocks
        return s;
    }

private:
    static uint64_t result_key(CoreCoord c, uint32_t program) {
        return detail::core_key(c) ^ (uint64_t(program) * 0x9E3779B97F4A7C15ull);
    }
    mutable std::unordered_multimap<uint64_t, size_t> index_;  ///< at()'s index of `cores`
    mutable size_t index_size_ = ~size_t(0);
};

namespace detail {

/// What the cores of a run wait for, read while kernels may still run: `running` is the program
/// each core of `states` is in.
struct RunDump {
    const std::vector<Program>& programs;
    const std::vector<CoreState*>& states;
    const std::vector<std::atomic<uint32_t>>& running;

    /// Some kernel ignored the abort for `stop_grace`: it never calls the backend, so its thread
    /// cannot be stopped (or joined). Print what is known and end the process.
    [[noreturn]] void unstoppable(const RunReport& report, const RunOptions& opt) const {
        std::string stuck;
        for (const auto* s : states)
            if (s->wait_kind.load(std::memory_order_relaxed) != WaitKind::finished) stuck += "  " + s->name() + "\n";
        std::string msg = "kccl emulation: the run was aborted (" +
                          std::string(report.watchdog_fired ? "watchdog: no progress for " + std::to_string(opt.watchdog.count()) + " ms"
                                                            : "a core failed") +
                          ") but these kernels did not stop within " + std::to_string(opt.stop_grace.count()) +
                          " ms: a kernel that never calls the backend (a poll loop without hal.idle(), a long "
                          "computation) cannot be stopped, so the process ends here with exit code 3.\n" + stuck;
        msg += report.watchdog_fired ? "what every core waited for when the watchdog fired:\n" + report.watchdog_dump
                                     : "what every core waits for now:\n" + dump();
        const std::string err = report.first_error();
        if (!err.empty()) msg += "first error: " + err + "\n";
        std::fputs(msg.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(3);
    }

    /// What every core waits for (the watchdog dump).
    std::string dump() const {
        // Diagnostics read the cores' live L1 words (what each waits on) while kernels may still
        // store to them, and on the fiber engine from the scheduler's context, which a fiber switch
        // does not order for ThreadSanitizer: an ignore region, as the scheduler's own bookkeeping.
        [[maybe_unused]] IgnoreScope ig;
        std::string out;
        count_host_visits(states.size());
        for (size_t i = 0; i < states.size(); ++i) {
            const CoreState& s = *states[i];
            auto cur = [&](uint32_t addr) -> std::string {
                if (uint64_t(addr) + 4 > s.mem_size) return "?";
                return std::to_string(std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(s.mem + addr)).load(std::memory_order_relaxed));
            };
            const uint32_t addr = s.wait_addr.load(std::memory_order_relaxed);
            const uint32_t val = s.wait_value.load(std::memory_order_relaxed);
            const uint32_t prog = running[i].load(std::memory_order_relaxed);
            const uint32_t poll = s.last_poll_addr.load(std::memory_order_relaxed);
            const WaitKind k = s.wait_kind.load(std::memory_order_relaxed);
            out += "  " + s.name() + (programs.size() > 1 ? " [program " + std::to_string(prog) + "]" : std::string()) + ": ";
            switch (k) {
                case WaitKind::sem_eq:
                case WaitKind::sem_min:
                    out += (k == WaitKind::sem_eq ? "sem_wait L1 " : "sem_wait_min L1 ") + hex(addr) +
                           (k == WaitKind::sem_eq ? " expected == " : " expected >= ") + std::to_string(val) +
                           ", current " + cur(addr);
                    break;
                case WaitKind::next_program:
                    out += "waiting for its chip to finish program " + std::to_string(val - 1) + " before starting program " +
                           std::to_string(val);
                    break;
                case WaitKind::finished:
                case WaitKind::not_started: out += state_word(s); break;
                default:
                    out += k == WaitKind::idle ? "idle in a poll loop" : "running (not blocked in the backend)";
                    if (poll != UINT32_MAX) out += "; last sem_read L1 " + hex(poll) + ", current " + cur(poll);
            }
            out += "\n";
            if (const Entry* e = entry(i); e && e->dump) out += "    " + e->dump() + "\n";
            if (k == WaitKind::sem_eq || k == WaitKind::sem_min) out += who_signals(i, addr);
            else if (k == WaitKind::idle && poll != UINT32_MAX) out += who_signals(i, poll);
        }
        return out;
    }

    /// The entry core `i` runs in its current program, or null.
    const Entry* entry(size_t i) const {
        const uint32_t prog = running[i].load(std::memory_order_relaxed);
        if (prog >= programs.size()) return nullptr;
        const auto it = programs[prog].index.find(core_key(states[i]->coord));
        return it == programs[prog].index.end() ? nullptr : &programs[prog].entries[it->second];
    }
    static const char* state_word(const CoreState& s) {
        switch (s.wait_kind.load(std::memory_order_relaxed)) {
            case WaitKind::finished: return "finished";
            case WaitKind::sem_eq:
            case WaitKind::sem_min: return "waiting";
            case WaitKind::idle: return "idle in a poll loop";
            case WaitKind::next_program: return "waiting for its next program";
            case WaitKind::not_started: return "not started";
            default: return "running";
        }
    }
    /// Dump lines for core `w` waiting on word `addr` of its L1: every core that signalled that
    /// word in this run (and its state now), the cores running the same kernel as a signaller that
    /// never signalled it, and whether anyone is left who could.
    std::string who_signals(size_t w, uint32_t addr) const {
        const CoreState* waiter = states[w];
        std::string by, never;
        bool anyone_left = false, partial = false;
        std::vector<const std::type_info*> kinds;
        std::vector<bool> signalled(states.size(), false);
        for (size_t j = 0; j < states.size(); ++j) {
            const SignalLog& log = states[j]->signals;
            if (log.full.load(std::memory_order_relaxed)) partial = true;
            const uint32_t m = log.size.load(std::memory_order_acquire);
            for (uint32_t q = 0; q < m; ++q) {
                const auto& e = log.entries[q];
                if (e.dst.load(std::memory_order_relaxed) != waiter) continue;
                if (addr < e.begin.load(std::memory_order_relaxed) || addr >= e.end.load(std::memory_order_relaxed)) continue;
                const uint32_t cnt = e.count.load(std::memory_order_relaxed);
                by += std::string(by.empty() ? "" : ", ") + states[j]->name() + " " + to_string(e.op.load(std::memory_order_relaxed)) +
                      " x" + std::to_string(cnt) + " (" + state_word(*states[j]) + ")";
                if (!signalled[j]) {
                    signalled[j] = true;
                    if (const Entry* e = entry(j)) kinds.push_back(&e->kernel.target_type());  // its kernel's type
                }
                if (states[j]->wait_kind.load(std::memory_order_relaxed) != WaitKind::finished) anyone_left = true;
            }
        }
        for (size_t j = 0; j < states.size(); ++j) {
            if (signalled[j] || j == w) continue;
            const Entry* e = entry(j);
            if (!e || std::none_of(kinds.begin(), kinds.end(), [&](auto* x) { return *x == e->kernel.target_type(); }))
                continue;
            never += std::string(never.empty() ? "" : ", ") + states[j]->name() + " (" + state_word(*states[j]) + ")";
            if (states[j]->wait_kind.load(std::memory_order_relaxed) != WaitKind::finished) anyone_left = true;
        }
        std::string out = "    L1 " + hex(addr) + " signalled by: " + (by.empty() ? std::string("no core in this run") : by) + "\n";
        if (!never.empty())
            out += "    never signalled it, though running the same kernel as a core that did: " + never + "\n";
        if (!anyone_left && !partial)
            out += !by.empty() ? "    nobody will signal it: every core that signalled it (or runs their kernel) has finished\n"
                       : "    nobody has signalled it: no core issued a sem_inc, inline write or Ethernet send to it in this run\n";
        return out;
    }
};

}  // namespace detail
}  // namespace kccl::emu

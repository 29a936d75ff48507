// kccl/emulation/launcher.hpp — run kernels on an emulated cluster, one thread per core.
//
//   kccl::emu::Cluster cluster(kccl::emu::topology::ring(8));
//   kccl::emu::Launcher launch(cluster);
//   launch.add(cluster.chip(0).worker(0, 0), [](auto& hal) { my_kernel(hal); }, {arg0, arg1});
//   kccl::emu::RunReport r = launch.run({.watchdog = std::chrono::seconds(2)});
//   REQUIRE(r.ok());  // r.summary() explains every failure; r.watchdog_dump what hung
//
// A kernel is any callable invocable with `kccl::emu::Hal&` (a generic lambda or a function
// template instance such as `&my_kernel<kccl::emu::Hal>`). It may return void or a value
// convertible to uint64_t, reported per core.
//
// Every run: all added cores start (after an optional per-chip start skew) and run concurrently.
// The run ends when every kernel has returned, or when one fails (EmulationError, a failed device
// check — KCCL_ASSERT / kccl::detail::assert_fail, reported with its message —, or any other
// exception: the others are aborted), or when the watchdog sees no core make progress for
// `watchdog` — then it records what every core waits for (address, expected value, current
// value, plus any dump hook's text) and aborts the run. A hung protocol fails; it never hangs.
// A kernel that spins without ever calling the backend cannot be stopped: if some kernel has not
// returned `RunOptions::stop_grace` after the abort, the launcher prints the dump to stderr and
// ends the process with exit code 3 (never a silent hang).
//
// Programs back to back: `next_program()` starts another program of the same launch. Each chip
// runs the programs in order, as tt-metal's dispatcher does: program p+1 starts on a chip once
// every kernel of program p on that chip has returned; chips do NOT wait for each other (programs
// start and finish at different times on different chips). Operations a core left in flight (a
// queued Ethernet send) keep going into the next program. `init_word()` sets a word before the
// program starts on that core's chip (tt-metal: a semaphore's initial value, CreateSemaphore).
//
// Dirty L1: with `RunOptions::dirty_l1` (on by default in adversarial mode) every core a run
// launches a kernel on starts, if it never ran before, with seeded garbage in its memory except
// what the host wrote (Cluster::write); a cluster that already ran keeps the last program's bytes.
//
// Progress means: a write into any memory, a semaphore operation, an Ethernet send or delivery,
// a completed wait, a kernel starting or returning. A kernel that computes for longer than the
// watchdog period without touching the backend is taken for hung; raise the period for it.
#pragma once

#include "cluster.hpp"
#include "hal.hpp"
#include "engine/scheduler.hpp"
#include "timing.hpp"
#include "trace.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <type_traits>
#include <vector>

namespace kccl::emu {

struct RunOptions {
    /// No progress by any core for this long fails the run with a dump (at least 1 ms).
    std::chrono::milliseconds watchdog{10000};
    /// Delayed, split, reordered-within-the-contract deliveries (see hal.hpp).
    AdversaryOptions adversary{};
    /// Start delay per chip (index = chip); missing entries mean 0.
    std::vector<std::chrono::microseconds> start_skew{};
    /// If > 0: additionally a random start delay in [0, random_skew_max] per chip, from skew_seed.
    std::chrono::microseconds random_skew_max{0};
    uint64_t skew_seed = 1;
    WaitPolicy wait{};
    /// Garbage in never-run cores' memory before the first program (hardware never zeroes L1).
    enum class DirtyL1 { with_adversary, on, off };
    DirtyL1 dirty_l1 = DirtyL1::with_adversary;
    /// Seed of the garbage; 0 = derived from adversary.seed.
    uint64_t dirty_seed = 0;
    /// After an abort (failure or watchdog), how long kernels get to notice it before the process
    /// is ended with the dump (a kernel that never calls the backend cannot be stopped).
    std::chrono::milliseconds stop_grace{5000};
    /// Most kernel threads one run may start (one per core that runs a kernel; thread engine).
    uint32_t max_threads = 4096;
    /// Which engine runs the cores: fibers (default; one host thread, deterministic) or threads.
    Engine engine = Engine::fibers;
    /// Fiber engine: the scheduling policy and its seed (see engine/scheduler.hpp).
    ScheduleOptions schedule{};
    /// Fiber engine: usable stack bytes per core (rounded up to pages; one guard page below).
    /// 0 = the default: 256 KiB, 1 MiB under ASan or TSan.
    size_t stack_size = 0;
    /// Fiber engine: a guard page below every stack (a stack overflow is then a named error).
    /// Each guarded stack costs two kernel mappings; `automatic` guards runs of up to
    /// kGuardedCoresMax cores (vm.max_map_count is 65530 by default) and not larger ones.
    enum class StackGuard { automatic, on, off };
    StackGuard stack_guard = StackGuard::automatic;
    static constexpr uint32_t kGuardedCoresMax = 16384;
    /// Honour the KCCL_EMU_REPLAY environment variable (see apply_replay).
    bool honour_replay_env = true;
    /// Fiber engine: a timing model makes the run timed (policy `timed`: the earliest event
    /// first; every operation charges its issue cost; deliveries land at the model's arrival
    /// time). The caller owns it; it is reset at the start of the run. nullptr: untimed.
    TimingModel* timing = nullptr;
    /// The model apply_replay made from a replay string's "timing=<name>" (timing points to it).
    std::shared_ptr<TimingModel> replay_timing{};
    /// Fiber engine: records a track per core, a slice per wait and per send, a flow from each
    /// send to its delivery (modelled time when timed; scheduling steps otherwise).
    Trace* trace = nullptr;
    /// Data-race detection (emulation/race.hpp, docs/race-detector.md); a report fails the run.
    /// `with_adversary`: on in adversarial runs of up to kRaceCoresMax cores (cluster cores). The
    /// environment variable KCCL_EMU_RACE=1 turns it on for every such run not set to `off`
    /// (tests that race on purpose set `off`), KCCL_EMU_RACE=0 off; `on` checks any run.
    enum class RaceCheck { with_adversary, on, off };
    RaceCheck race = RaceCheck::with_adversary;
    static constexpr uint32_t kRaceCoresMax = 1024;
    /// Which NoC ordering rules the adversary exploits and the race detector checks
    /// (docs/contract.md, "Ordering profiles"): `observed` (N1 as tt-metal's kernels rely on it),
    /// `strict` (only what tt-metal's NoC documentation promises: a write is ordered before a
    /// later increment or inline write to the same core only across noc_writes_flushed(); a store
    /// must be fenced before a NoC write reads it, N7). `from_env`: the environment variable
    /// KCCL_EMU_ORDERING=observed|strict, else observed.
    OrderingProfile ordering = OrderingProfile::from_env;
};

/// The ordering profile a run of `o` uses (RunOptions::ordering, KCCL_EMU_ORDERING). Throws
/// EmulationError on a value of KCCL_EMU_ORDERING that names no profile.
inline OrderingProfile resolved_ordering(const RunOptions& o) {
    if (o.ordering != OrderingProfile::from_env) return o.ordering;
    const char* e = std::getenv("KCCL_EMU_ORDERING");
    if (!e || !*e) return OrderingProfile::observed;
    const std::string v = e;
    if (v == "observed") return OrderingProfile::observed;
    if (v == "strict") return OrderingProfile::strict;
    throw EmulationError("KCCL_EMU_ORDERING='" + v + "' names no ordering profile (allowed: observed, strict)");
}

/// Whether a run of `o` with `cores` cores checks for data races (RunOptions::race, KCCL_EMU_RACE).
inline bool race_detection_on(const RunOptions& o, size_t cores) {
    if (o.race == RunOptions::RaceCheck::off) return false;
    if (o.race == RunOptions::RaceCheck::on) return true;
    if (cores > RunOptions::kRaceCoresMax) return false;  // only RaceCheck::on checks larger runs
    if (const char* e = std::getenv("KCCL_EMU_RACE"); e && *e) return std::string(e) != "0";
    return o.adversary.enabled;
}

/// Default fiber stack size.
inline size_t default_stack_size() {
#if KCCL_EMU_ASAN || KCCL_EMU_TSAN
    return size_t(1) << 20;
#else
    return size_t(256) << 10;
#endif
}

/// The policy a run of `o` uses (Policy::automatic resolved).
inline Policy resolved_policy(const RunOptions& o) {
    if (o.schedule.policy != Policy::automatic) return o.schedule.policy;
    return o.adversary.enabled ? Policy::random : Policy::fifo;
}

/// Whether a run of `o` starts never-run cores with garbage (RunOptions::dirty_l1 resolved).
inline bool resolved_dirty_l1(const RunOptions& o) {
    return o.dirty_l1 == RunOptions::DirtyL1::on ||
           (o.dirty_l1 == RunOptions::DirtyL1::with_adversary && o.adversary.enabled);
}

/// The setting that replays a fiber run: every option that changes what the run does, as
/// comma-separated key=value pairs, e.g. "policy=pct,seed=123,depth=3,steps=20000,adversary=0,dirty=0".
/// Always: policy, seed (the schedule's; also the adversary's and the start skew's unless they
/// differ), adversary (0/1), dirty (0/1: dirty L1 resolved). When they apply: depth and steps
/// (pct), preempt (random, when not 10), handoff=0 (fifo), engine=threads, the adversary's own
/// seed and knobs that differ from their defaults (adversary_seed, deliver, words, delay, hold,
/// max_hold_us), dirty_seed, the start skew (skew=us:us:... per chip, skew_max, skew_seed), the
/// wait policy's poll counts (spin, yield) when not the defaults, and the timing model (timing=
/// wormhole|wafer; policy is then "timed"), always the race detector (race=0|1, resolved: a run
/// the detector failed replays with it, whatever the adversary or KCCL_EMU_RACE say; a RaceCheck
/// left to `with_adversary` resolves as for a run of at most kRaceCoresMax cores unless the
/// launcher resolved it), and always last the ordering profile (ordering=observed|
/// strict, resolved). apply_replay on default RunOptions reproduces the
/// run (same RunReport::run_hash) from this string alone. Not carried: a timing model with
/// non-default options ("timing=<name>:custom"; apply_replay rejects it: pass the same model).
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
    bool skewed = o.random_skew_max.count() > 0;
    for (const auto& k : o.start_skew) skewed = skewed || k.count() > 0;
    if (skewed) {
        std::string list;
        for (const auto& k : o.start_skew) list += (list.empty() ? "" : ":") + n(uint64_t(k.count()));
        if (!list.empty()) s += ",skew=" + list;
        if (o.random_skew_max.count() > 0) s += ",skew_max=" + n(uint64_t(o.random_skew_max.count()));
        if (o.random_skew_max.count() > 0 && o.skew_seed != seed) s += ",skew_seed=" + n(o.skew_seed);
    }
    const WaitPolicy dw{};
    if (o.wait.spin_polls != dw.spin_polls) s += ",spin=" + n(o.wait.spin_polls);
    if (o.wait.yield_polls != dw.yield_polls) s += ",yield=" + n(o.wait.yield_polls);
    if (o.timing) s += std::string(",timing=") + o.timing->name() + (o.timing->default_options() ? "" : ":custom");
    s += std::string(",race=") + (race_detection_on(o, RunOptions::kRaceCoresMax) ? "1" : "0");
    s += std::string(",ordering=") + to_string(resolved_ordering(o));
    return s;
}

/// Applies a replay setting (replay_string's keys) to `o`: seed sets the schedule's seed and the
/// adversary's and the random start skew's (adversary_seed / skew_seed then override theirs);
/// adversary=0|1 turns the adversary off / on, dirty=0|1 dirty L1, race=0|1 the race detector
/// (RaceCheck::off / on); timing=wormhole|wafer makes
/// the run timed with that model at its default options (kept in o.replay_timing). Keys not in
/// the string keep their values in `o`: applied to default RunOptions, the string alone
/// reproduces the run. Throws EmulationError naming a bad key or value.
inline void apply_replay(RunOptions& o, const std::string& spec) {
    size_t at = 0;
    while (at < spec.size()) {
        size_t end = spec.find(',', at);
        if (end == std::string::npos) end = spec.size();
        const std::string kv = spec.substr(at, end - at);
        at = end + 1;
        if (kv.empty()) continue;
        const size_t eq = kv.find('=');
        const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? std::string() : kv.substr(eq + 1);
        auto parse = [&kv](const std::string& text) -> uint64_t {
            char* e = nullptr;
            const unsigned long long x = std::strtoull(text.c_str(), &e, 10);
            if (text.empty() || *e || text[0] == '-')
                throw EmulationError("KCCL_EMU_REPLAY: '" + kv + "': the value must be a decimal number");
            return x;
        };
        auto num = [&]() -> uint64_t { return parse(v); };
        auto num32 = [&]() -> uint32_t {
            const uint64_t x = num();
            if (x > 0xFFFFFFFFull) throw EmulationError("KCCL_EMU_REPLAY: '" + kv + "': the value must fit 32 bits");
            return uint32_t(x);
        };
        auto flag = [&]() -> bool {
            if (v != "0" && v != "1") throw EmulationError("KCCL_EMU_REPLAY: '" + kv + "': " + k + " must be 0 or 1");
            return v == "1";
        };
        if (k == "policy") {
            if (v == "fifo") o.schedule.policy = Policy::fifo;
            else if (v == "random") o.schedule.policy = Policy::random;
            else if (v == "pct") o.schedule.policy = Policy::pct;
            else if (v == "timed") o.schedule.policy = Policy::timed;  // a timed run is deterministic already
            else throw EmulationError("KCCL_EMU_REPLAY: policy '" + v + "' is unknown (allowed: fifo, random, pct, timed)");
        } else if (k == "seed") {
            const uint64_t x = num();
            o.schedule.seed = x;
            o.adversary.seed = x;
            o.skew_seed = x;
        } else if (k == "depth") {
            o.schedule.pct_depth = num32();
        } else if (k == "steps") {
            o.schedule.pct_steps = num();
        } else if (k == "preempt") {
            o.schedule.preempt_percent = num32();
        } else if (k == "handoff") {
            o.schedule.handoff = flag();
        } else if (k == "engine") {
            if (v == "fibers") o.engine = Engine::fibers;
            else if (v == "threads") o.engine = Engine::threads;
            else throw EmulationError("KCCL_EMU_REPLAY: engine '" + v + "' is unknown (allowed: fibers, threads)");
        } else if (k == "adversary") {
            o.adversary.enabled = flag();
        } else if (k == "adversary_seed") {
            o.adversary.seed = num();
        } else if (k == "deliver") {
            o.adversary.deliver_percent = num32();
        } else if (k == "words") {
            o.adversary.max_words_per_step = num32();
        } else if (k == "delay") {
            o.adversary.delay_percent = num32();
        } else if (k == "hold") {
            o.adversary.hold_percent = num32();
        } else if (k == "max_hold_us") {
            o.adversary.max_hold = std::chrono::microseconds(num());
        } else if (k == "dirty") {
            o.dirty_l1 = flag() ? RunOptions::DirtyL1::on : RunOptions::DirtyL1::off;
        } else if (k == "dirty_seed") {
            o.dirty_seed = num();
        } else if (k == "skew") {
            o.start_skew.clear();
            size_t b = 0;
            while (b <= v.size()) {
                size_t e = v.find(':', b);
                if (e == std::string::npos) e = v.size();
                o.start_skew.push_back(std::chrono::microseconds(parse(v.substr(b, e - b))));
                b = e + 1;
            }
        } else if (k == "skew_max") {
            o.random_skew_max = std::chrono::microseconds(num());
        } else if (k == "skew_seed") {
            o.skew_seed = num();
        } else if (k == "spin") {
            o.wait.spin_polls = num32();
        } else if (k == "yield") {
            o.wait.yield_polls = num32();
        } else if (k == "timing") {
            if (v == "wormhole") o.replay_timing = std::make_shared<WormholeModel>();
            else if (v == "wafer") o.replay_timing = std::make_shared<WaferModel>();
            else if (v.size() > 7 && v.compare(v.size() - 7, 7, ":custom") == 0)
                throw EmulationError("KCCL_EMU_REPLAY: '" + kv + "': the run used the " + v.substr(0, v.size() - 7) +
                                     " model with options other than its defaults, which the replay string does not "
                                     "carry; pass the same model in RunOptions::timing and drop this key");
            else throw EmulationError("KCCL_EMU_REPLAY: timing model '" + v + "' is unknown (allowed: wormhole, wafer)");
            o.timing = o.replay_timing.get();
            o.schedule.policy = Policy::timed;
        } else if (k == "race") {
            o.race = flag() ? RunOptions::RaceCheck::on : RunOptions::RaceCheck::off;
        } else if (k == "ordering") {
            if (v == "observed") o.ordering = OrderingProfile::observed;
            else if (v == "strict") o.ordering = OrderingProfile::strict;
            else throw EmulationError("KCCL_EMU_REPLAY: ordering profile '" + v + "' is unknown (allowed: observed, strict)");
        } else {
            throw EmulationError("KCCL_EMU_REPLAY: key '" + k +
                                 "' is unknown (allowed: policy, seed, depth, steps, preempt, handoff, engine, adversary, "
                                 "adversary_seed, deliver, words, delay, hold, max_hold_us, dirty, dirty_seed, skew, "
                                 "skew_max, skew_seed, spin, yield, timing, race, ordering)");
        }
    }
}

/// The KCCL_EMU_REPLAY environment variable, or empty.
inline std::string replay_env() {
    const char* e = std::getenv("KCCL_EMU_REPLAY");
    return e ? std::string(e) : std::string();
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
    /// The makespan in seconds.
    double makespan_seconds() const { return ticks_per_second > 0 ? double(makespan) / ticks_per_second : 0; }

    bool ok() const {
        if (watchdog_fired || !races.empty()) return false;
        for (const auto& c : cores)
            if (c.status != CoreStatus::ok) return false;
        return true;
    }
    /// The result of the kernel on `c` in `program`. Constant time on average: an index of
    /// `cores` is built at the first call (and again whenever `cores` changed size since), so
    /// one report must not be queried from several threads at once.
    const CoreResult& at(CoreCoord c, uint32_t program = 0) const {
        const uint64_t k = result_key(c, program);
        if (index_size_ != cores.size()) {
            index_.clear();
            index_.reserve(cores.size());
            for (size_t i = 0; i < cores.size(); ++i) index_.emplace(result_key(cores[i].core, cores[i].program), i);
            index_size_ = cores.size();
            detail::count_host_visits(cores.size());
        }
        auto [lo, hi] = index_.equal_range(k);
        for (auto it = lo; it != hi; ++it) {
            detail::count_host_visits();
            if (it->second < cores.size() && cores[it->second].core == c && cores[it->second].program == program)
                return cores[it->second];
        }
        for (const auto& r : cores) {  // `cores` was edited in place since the index was built
            detail::count_host_visits();
            if (r.core == c && r.program == program) return r;
        }
        throw EmulationError("RunReport::at: no kernel ran on " + to_string(c) + " in program " + std::to_string(program));
    }
    /// The first error message, or empty.
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
        uint64_t h = (uint64_t(c.chip) << 40) ^ (uint64_t(c.x) << 20) ^ c.y;
        return h ^ (uint64_t(program) * 0x9E3779B97F4A7C15ull);
    }
    mutable std::unordered_multimap<uint64_t, size_t> index_;  ///< at()'s index of `cores`
    mutable size_t index_size_ = ~size_t(0);
};

namespace detail {

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
    AssertHandlerScope() {
        std::lock_guard<std::mutex> g(mu());
        if (active()++ == 0) previous() = kccl::set_assert_handler(&emulation_assert_handler);
    }
    ~AssertHandlerScope() {
        std::lock_guard<std::mutex> g(mu());
        if (--active() == 0) kccl::set_assert_handler(previous());
    }
    AssertHandlerScope(const AssertHandlerScope&) = delete;
    AssertHandlerScope& operator=(const AssertHandlerScope&) = delete;

private:
    static std::mutex& mu() {
        static std::mutex m;
        return m;
    }
    static int& active() {
        static int n = 0;
        return n;
    }
    static assert_handler_t& previous() {
        static assert_handler_t h = nullptr;
        return h;
    }
};
}  // namespace detail

class Launcher {
public:
    using Kernel = std::function<uint64_t(Hal&)>;

    explicit Launcher(Cluster& cluster) : cluster_(&cluster) {}

    /// Runs `kernel` on core `c` with runtime args `args` in the current program.
    template <class K>
    Launcher& add(CoreCoord c, K kernel, std::vector<uint32_t> args = {}) {
        static_assert(std::is_invocable_v<K&, Hal&>,
                      "A kernel must be callable with kccl::emu::Hal& (e.g. [](auto& hal) {...}).");
        detail::CoreState& s = cluster_->state(c, "Launcher::add");
        if (s.kind == CoreKind::dram)
            throw EmulationError("Launcher::add: " + s.name() + " is a DRAM endpoint; kernels run on worker or Ethernet cores");
        // An index, not a scan of the entries: adding the kernels of a large mesh stays linear.
        Program& prog = programs_.back();
        detail::count_host_visits();
        if (!prog.index.emplace(core_key(c), uint32_t(prog.entries.size())).second)
            throw EmulationError("Launcher::add: " + s.name() + " already has a kernel in this program (one per core)");
        Kernel k = [kernel = std::move(kernel)](Hal& h) mutable -> uint64_t {
            using R = std::invoke_result_t<K&, Hal&>;
            if constexpr (std::is_void_v<R>) {
                kernel(h);
                return 0;
            } else {
                return static_cast<uint64_t>(kernel(h));
            }
        };
        prog.entries.push_back({c, std::move(k), std::move(args), {}});
        return *this;
    }

    /// Extra text for the watchdog dump of core `c` in the current program (e.g. a queue's
    /// pointers). Called from the watchdog thread while the core may be running: read only what
    /// is safe to read racily.
    Launcher& on_dump(CoreCoord c, std::function<std::string()> hook) {
        Program& prog = programs_.back();
        detail::count_host_visits();
        if (auto it = prog.index.find(core_key(c)); it != prog.index.end()) {
            prog.entries[it->second].dump = std::move(hook);
            return *this;
        }
        throw EmulationError("Launcher::on_dump: add a kernel to " + to_string(c) + " first");
    }

    /// Sets the 32-bit word at `addr` of core `c` to `value` before the current program starts on
    /// c's chip — what tt-metal's dispatcher does for a semaphore's initial value. On dirty L1 a
    /// semaphore that no kernel initialises must be set here.
    Launcher& init_word(CoreCoord c, uint32_t addr, uint32_t value) {
        const detail::CoreState& s = cluster_->state(c, "Launcher::init_word");
        if (addr % 4 || uint64_t(addr) + 4 > s.mem_size)
            throw EmulationError("Launcher::init_word: address " + detail::hex(addr) + " on " + s.name() +
                                 " must be 4-byte aligned and inside its memory of " + std::to_string(s.mem_size) +
                                 " bytes");
        programs_.back().init.push_back({c, addr, value});
        return *this;
    }

    /// Starts the next program of this launch (see the header comment).
    Launcher& next_program() {
        if (programs_.back().entries.empty())
            throw EmulationError("Launcher::next_program: program " + std::to_string(programs_.size() - 1) +
                                 " has no kernel; add at least one before starting the next");
        programs_.emplace_back();
        return *this;
    }
    uint32_t num_programs() const { return uint32_t(programs_.size()); }

    /// Forgets every added kernel, initial word and program.
    void clear() { programs_.assign(1, Program{}); }

    RunReport run(const RunOptions& options = {}) {
        RunOptions opt = options;
        if (opt.honour_replay_env) {
            const std::string env = replay_env();
            if (!env.empty()) apply_replay(opt, env);
        }
        if (opt.watchdog.count() < 1)
            throw EmulationError("Launcher::run: watchdog of " + std::to_string(opt.watchdog.count()) +
                                 " ms; it must be at least 1 ms (it is how long no core may make progress)");
        const uint32_t P = uint32_t(programs_.size());
        if (P > 1 && programs_.back().entries.empty())
            throw EmulationError("Launcher::run: program " + std::to_string(P - 1) +
                                 " has no kernel (remove the last next_program() call)");
        const bool fib = opt.engine == Engine::fibers;
        if (!fib && (opt.timing || opt.trace))
            throw EmulationError(std::string("Launcher::run: RunOptions::") + (opt.timing ? "timing" : "trace") +
                                 " needs the fiber engine (RunOptions::engine = Engine::fibers); the thread engine has no "
                                 "virtual clock");
        if (opt.timing && opt.adversary.enabled)
            throw EmulationError("Launcher::run: a timed run (RunOptions::timing) cannot be adversarial: the timing model "
                                 "decides when every delivery lands (turn RunOptions::adversary.enabled off)");
        if (opt.schedule.policy == Policy::automatic) {
            // Adversarial mode explores interleavings too: random, from the adversary's seed.
            if (opt.adversary.enabled) {
                opt.schedule.policy = Policy::random;
                opt.schedule.seed = opt.adversary.seed;
            } else {
                opt.schedule.policy = Policy::fifo;
            }
        }
        const auto wall0 = std::chrono::steady_clock::now();
        detail::AssertHandlerScope handler_scope;
        detail::RunContext ctx;
        ctx.wait = opt.wait;
        ctx.adversary = opt.adversary;
        opt.ordering = resolved_ordering(opt);
        ctx.ordering = opt.ordering;
        // Resolved once (RaceCheck, KCCL_EMU_RACE, the cluster's size): the replay string says it.
        opt.race = race_detection_on(opt, cluster_->cores().size()) ? RunOptions::RaceCheck::on : RunOptions::RaceCheck::off;

        // One thread (or fiber) per core that runs a kernel in any program; its kernels, program by program.
        struct Slot {
            uint32_t program, entry, result;
        };
        std::vector<CoreCoord> cores;
        std::vector<std::vector<Slot>> work;
        RunReport report;
        report.engine = opt.engine;
        if (fib) report.replay = replay_string(opt);
        size_t n_entries = 0;
        for (const auto& prog : programs_) n_entries += prog.entries.size();
        report.cores.reserve(n_entries);
        // Kernels grouped by core through a map (a linear search per kernel was quadratic).
        std::unordered_map<uint64_t, uint32_t> task_of;
        task_of.reserve(P == 1 ? n_entries : programs_[0].entries.size());
        for (uint32_t p = 0; p < P; ++p)
            for (uint32_t e = 0; e < programs_[p].entries.size(); ++e) {
                const CoreCoord c = programs_[p].entries[e].core;
                detail::count_host_visits();
                const uint32_t t = task_of.emplace(core_key(c), uint32_t(cores.size())).first->second;
                if (t == cores.size()) {
                    cores.push_back(c);
                    work.emplace_back();
                }
                work[t].push_back({p, e, uint32_t(report.cores.size())});
                report.cores.push_back({});
                report.cores.back().core = c;
                report.cores.back().program = p;
            }
        const uint32_t n = uint32_t(cores.size());
        if (!fib && n > opt.max_threads)
            throw EmulationError("Launcher::run: " + std::to_string(n) + " cores run kernels but RunOptions::max_threads is " +
                                 std::to_string(opt.max_threads) + " (one thread per core; raise it or use fewer cores)");
        // Adversarial runs keep the full spin phase: the adversary times its deliveries by it.
        if (!fib && ctx.wait.adapt_to_oversubscription && !opt.adversary.enabled &&
            n > std::max(1u, std::thread::hardware_concurrency())) {
            ctx.wait.spin_polls = ctx.wait.oversubscribed_spin_polls;
            ctx.wait.yield_polls = ctx.wait.oversubscribed_yield_polls;
        }
        std::vector<detail::CoreState*> states(n);
        for (uint32_t i = 0; i < n; ++i) {
            states[i] = &cluster_->state(cores[i], "Launcher::run");
            states[i]->wait_kind.store(detail::WaitKind::not_started, std::memory_order_relaxed);
        }
        // Fiber engine: every core's progress counts into one word (the deadlock check and the
        // watchdog read it instead of summing n counters). Unhooked however run() ends.
        std::atomic<uint64_t> progress_total{0};
        struct ProgressHook {
            const std::vector<detail::CoreState*>& states;
            ~ProgressHook() {
                for (auto* s : states) s->progress_word = &s->progress;
            }
        } progress_hook{states};
        if (fib)
            for (auto* s : states) s->progress_word = &progress_total;
        const bool dirty = opt.dirty_l1 == RunOptions::DirtyL1::on ||
                           (opt.dirty_l1 == RunOptions::DirtyL1::with_adversary && opt.adversary.enabled);
        for (auto* s : states) s->signals.clear();
        std::unique_ptr<detail::RaceDetector> race;
        if (race_detection_on(opt, cluster_->cores().size())) {
            std::vector<detail::CoreState*> all;
            for (const auto& c : cluster_->cores()) all.push_back(c.get());
            race = std::make_unique<detail::RaceDetector>(std::move(all), !fib, ctx.ordering == OrderingProfile::strict);
            ctx.race = race.get();
        }
        if (dirty) {
            const uint64_t seed = opt.dirty_seed ? opt.dirty_seed : detail::splitmix64(opt.adversary.seed ^ 0xD1277ull);
            for (auto* s : states)
                if (s->pristine) {
                    if (race) {
                        // Garbage: everything but what the host wrote.
                        auto kept = s->host_written;
                        std::sort(kept.begin(), kept.end());
                        uint32_t at = 0;
                        for (auto [b, e] : kept) {
                            if (b > at) race->garbage(s, at, b);
                            at = std::max(at, e);
                        }
                        if (at < s->mem_size) race->garbage(s, at, s->mem_size);
                    }
                    detail::fill_garbage(*s, seed);
                }
        } else {
            for (auto* s : states) {
                s->pristine = false;
                s->host_written.clear();
            }
        }

        // Fiber engine: the scheduler exists before any program is entered (enter() wakes cores).
        std::unique_ptr<detail::Scheduler> sched;
        if (fib) {
            if (opt.timing) opt.timing->reset(*cluster_);
            const bool guard = opt.stack_guard == RunOptions::StackGuard::on ||
                               (opt.stack_guard == RunOptions::StackGuard::automatic && n <= RunOptions::kGuardedCoresMax);
            sched = std::make_unique<detail::Scheduler>(opt.schedule, opt.stack_size ? opt.stack_size : default_stack_size(),
                                                        opt.timing, guard);
            ctx.sched = sched.get();
            ctx.trace = opt.trace;
            if (opt.trace) opt.trace->set_time_unit(opt.timing ? opt.timing->ticks_per_second() : 1e9);
            if (opt.timing) {
                report.timed = true;
                report.model = opt.timing->name();
                report.time_unit = opt.timing->unit();
                report.ticks_per_second = opt.timing->ticks_per_second();
                report.replay = replay_string(opt);
            }
        }

        // Per chip: the program it runs now, and how many of its kernels each program still has.
        const uint32_t chips = cluster_->num_chips();
        std::vector<std::atomic<uint32_t>> chip_program(chips);
        std::vector<std::atomic<uint32_t>> remaining(size_t(chips) * P);
        for (uint32_t p = 0; p < P; ++p)
            for (const auto& e : programs_[p].entries) remaining[size_t(e.core.chip) * P + p].fetch_add(1, std::memory_order_relaxed);
        // Per chip: its cores (entering a program looks at the chip's own cores, not at all of them),
        // and per (chip, program) its initial words.
        std::vector<std::vector<uint32_t>> chip_cores(chips);
        for (uint32_t i = 0; i < n; ++i) chip_cores[cores[i].chip].push_back(i);
        std::vector<std::vector<const InitWord*>> chip_init(size_t(chips) * P);
        for (uint32_t p = 0; p < P; ++p)
            for (const InitWord& w : programs_[p].init) chip_init[size_t(w.core.chip) * P + p].push_back(&w);
        // Moves `chip` to the first program >= `p` that has kernels on it, applying the initial
        // words of every program it enters (called by the last kernel of the previous one).
        auto enter = [&](uint32_t chip, uint32_t p) {
            for (;; ++p) {
                if (p == P) break;
                for (const InitWord* w : chip_init[size_t(chip) * P + p]) {
                    detail::CoreState& ws = cluster_->state(w->core, "init_word");
                    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ws.mem + w->addr)).store(w->value, std::memory_order_release);
                    if (ctx.race) ctx.race->host_write(&ws, w->addr, 4);
                }
                if (remaining[size_t(chip) * P + p].load(std::memory_order_relaxed)) break;
            }
            chip_program[chip].store(p, std::memory_order_release);
            if (ctx.sched) {
                detail::count_host_visits(chip_cores[chip].size());
                for (uint32_t i : chip_cores[chip])
                    if (states[i]->wait_kind.load(std::memory_order_relaxed) == detail::WaitKind::next_program)
                        ctx.sched->wake(states[i]);
            } else {
                futex_wake_all(chip_program[chip]);
            }
        };
        for (uint32_t c = 0; c < chips; ++c) enter(c, 0);

        std::vector<std::chrono::microseconds> skew(chips, std::chrono::microseconds{0});
        std::mt19937_64 rng(opt.skew_seed);
        for (uint32_t c = 0; c < skew.size(); ++c) {
            if (c < opt.start_skew.size()) skew[c] = opt.start_skew[c];
            if (opt.random_skew_max.count() > 0)
                skew[c] += std::chrono::microseconds(rng() % (uint64_t(opt.random_skew_max.count()) + 1));
        }

        std::atomic<uint32_t> go{fib ? 1u : 0u};
        std::atomic<uint32_t> finished{0};
        std::atomic<uint32_t> started{0};
        std::vector<std::atomic<uint32_t>> running(n);  // program index each thread is in (for the dump)
        auto thread_main = [&](uint32_t i) {
            detail::CoreState& st = *states[i];
            if (!fib) detail::tl_core = &st;  // fiber engine: the scheduler sets it at every switch
            while (go.load(std::memory_order_acquire) == 0) futex_wait(go, 0, std::chrono::microseconds(100000));
            const uint32_t chip = cores[i].chip;
            if (skew[chip].count() > 0 && go.load(std::memory_order_relaxed) == 1) {
                if (fib && opt.timing) {
                    // Timed: the chip starts s us of modelled time later.
                    sched->advance_to(vtime_t(double(skew[chip].count()) * 1e-6 * opt.timing->ticks_per_second()));
                } else if (fib) {
                    // Deterministic engine: a start skew of s us is s scheduling rounds (the
                    // other cores run meanwhile); the order of starts, not host time.
                    for (int64_t k = std::min<int64_t>(skew[chip].count(), 1000000); k > 0; --k) {
                        if (ctx.aborted.load(std::memory_order_relaxed)) break;
                        sched->yield();
                    }
                } else {
                    const auto until = std::chrono::steady_clock::now() + skew[chip];
                    while (std::chrono::steady_clock::now() < until && !ctx.aborted.load(std::memory_order_relaxed))
                        std::this_thread::sleep_for(std::min<std::chrono::microseconds>(
                            std::chrono::microseconds(500),
                            std::chrono::duration_cast<std::chrono::microseconds>(until - std::chrono::steady_clock::now())));
                }
            }
            st.wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
            st.bump_progress();
            started.fetch_add(1, std::memory_order_relaxed);
            const Slot& first = work[i].front();
            Hal hal(ctx, st, *cluster_, programs_[first.program].entries[first.entry].args);
            for (size_t w = 0; w < work[i].size(); ++w) {
                const Slot& slot = work[i][w];
                Entry& e = programs_[slot.program].entries[slot.entry];
                CoreResult& res = report.cores[slot.result];
                bool failed = false;
                try {
                    if (go.load(std::memory_order_relaxed) != 1) throw RunAborted{};
                    wait_for_program(ctx, st, hal, chip_program[chip], slot.program);
                    if (fib && opt.timing) sched->advance_to(sched->now() + opt.timing->program_launch());
                    running[i].store(slot.program, std::memory_order_relaxed);
                    hal.set_args(e.args);
                    const auto t0 = std::chrono::steady_clock::now();
                    const uint64_t cs0 = hal.context_switches();
                    if (ctx.aborted.load(std::memory_order_relaxed)) throw RunAborted{};
                    if (fib) res.modelled_start = sched->now();
                    if (ctx.race) ctx.race->entering(&st, slot.program);
                    res.value = e.kernel(hal);
                    if (ctx.race) ctx.race->finished(&st, slot.program);
                    if (w + 1 == work[i].size()) hal.drain();
                    if (fib) res.modelled_end = sched->now();
                    res.elapsed = std::chrono::steady_clock::now() - t0;
                    res.context_switches = hal.context_switches() - cs0;
                    res.status = CoreStatus::ok;
                    res.message.clear();
                } catch (const RunAborted&) {
                    res.status = CoreStatus::aborted;
                    res.message = "aborted";
                    break;
                } catch (const std::exception& ex) {
                    res.status = CoreStatus::failed;
                    res.message = ex.what();
                    failed = true;
                } catch (...) {
                    res.status = CoreStatus::failed;
                    res.message = "kernel threw a non-std exception";
                    failed = true;
                }
                // Outside the catch block: on the fiber engine, waking others may switch later,
                // and no fiber may switch inside a catch block (the exception state is per thread).
                if (failed) {
                    abort_all(ctx);
                    break;
                }
                st.bump_progress();
                if (remaining[size_t(chip) * P + slot.program].fetch_sub(1, std::memory_order_acq_rel) == 1)
                    enter(chip, slot.program + 1);
            }
            st.wait_kind.store(detail::WaitKind::finished, std::memory_order_relaxed);
            st.bump_progress();
            if (!fib) detail::tl_core = nullptr;
            if (finished.fetch_add(1, std::memory_order_release) + 1 == n && !fib) futex_wake_all(finished);
        };

        if (fib) {
            run_fibers(opt, ctx, *sched, report, states, running, n, progress_total, thread_main);
            if (race) {
                report.races = race->reports();
                report.races_dropped = race->dropped();
            }
            report.wall_time = std::chrono::steady_clock::now() - wall0;
            return report;
        }

        std::vector<std::thread> threads;
        threads.reserve(n);
        for (uint32_t i = 0; i < n; ++i) {
            try {
                threads.emplace_back(thread_main, i);
            } catch (const std::system_error& ex) {
                // Out of threads: stop the ones already started (they have not run a kernel yet).
                abort_all(ctx);
                go.store(2, std::memory_order_release);
                futex_wake_all(go);
                for (auto& t : threads) t.join();
                throw EmulationError("Launcher::run: could not start thread " + std::to_string(i + 1) + " of " +
                                     std::to_string(n) + " (" + ex.what() +
                                     "); the emulation runs one thread per core with a kernel: the machine's thread "
                                     "or memory limit allows fewer — use fewer cores per run");
            }
        }
        go.store(1, std::memory_order_release);
        futex_wake_all(go);

        // Watchdog: sample the cores' progress counters; fire after `watchdog` without change.
        const auto tick = std::clamp<std::chrono::milliseconds>(opt.watchdog / 8, std::chrono::milliseconds(1),
                                                                std::chrono::milliseconds(50));
        uint64_t last_sum = ~0ull;
        auto last_change = std::chrono::steady_clock::now();
        std::optional<std::chrono::steady_clock::time_point> aborted_at;
        for (uint32_t done; (done = finished.load(std::memory_order_acquire)) < n;) {
            // Sleep one tick, or until the last kernel returns (it wakes this futex).
            futex_wait(finished, done, tick);
            const auto now = std::chrono::steady_clock::now();
            if (ctx.aborted.load(std::memory_order_relaxed)) {
                if (!aborted_at) aborted_at = now;
                if (now - *aborted_at >= opt.stop_grace) unstoppable(report, states, running, opt);
                continue;
            }
            uint64_t sum = 0;
            for (auto* s : states) sum += s->progress.load(std::memory_order_relaxed);
            const bool waiting_for_start = started.load(std::memory_order_relaxed) < n;
            if (sum != last_sum || waiting_for_start) {
                last_sum = sum;
                last_change = now;
            } else if (now - last_change >= opt.watchdog) {
                report.watchdog_fired = true;
                report.watchdog_dump = dump(states, running);
                abort_all(ctx);
            }
        }
        for (auto& t : threads) t.join();
        if (race) {
            report.races = race->reports();
            report.races_dropped = race->dropped();
        }
        report.wall_time = std::chrono::steady_clock::now() - wall0;
        return report;
    }

private:
    /// Fiber engine: idle sweeps in a row without any write or progress before a deadlock.
    static constexpr uint32_t kMaxFruitlessSweeps = 1000;
    /// The fiber engine: every core a fiber on this thread; a watchdog thread only for kernels
    /// that compute without calling the backend (everything else is a deadlock, found at once).
    template <class Body>
    void run_fibers(const RunOptions& opt, detail::RunContext& ctx, detail::Scheduler& sched, RunReport& report,
                    const std::vector<detail::CoreState*>& states, std::vector<std::atomic<uint32_t>>& running, uint32_t n,
                    const std::atomic<uint64_t>& progress_total, Body& body) {
        for (uint32_t i = 0; i < n; ++i) sched.add(states[i], [&body, i] { body(i); });
        std::mutex report_mu;  // the watchdog thread and the scheduler both may record a hang
        std::atomic<uint32_t> stop{0};
        std::thread watchdog([&] {
            const auto tick = std::clamp<std::chrono::milliseconds>(opt.watchdog / 8, std::chrono::milliseconds(1),
                                                                    std::chrono::milliseconds(50));
            uint64_t last_sum = ~0ull;
            auto last_change = std::chrono::steady_clock::now();
            std::optional<std::chrono::steady_clock::time_point> aborted_at;
            while (stop.load(std::memory_order_acquire) == 0) {
                futex_wait(stop, 0, tick);
                if (stop.load(std::memory_order_acquire)) break;
                const auto now = std::chrono::steady_clock::now();
                if (ctx.aborted.load(std::memory_order_relaxed)) {
                    if (!aborted_at) aborted_at = now;
                    if (now - *aborted_at >= opt.stop_grace) {
                        std::lock_guard<std::mutex> g(report_mu);
                        unstoppable(report, states, running, opt);
                    }
                    continue;
                }
                const uint64_t sum = progress_total.load(std::memory_order_relaxed);
                if (sum != last_sum) {
                    last_sum = sum;
                    last_change = now;
                } else if (now - last_change >= opt.watchdog) {
                    std::lock_guard<std::mutex> g(report_mu);
                    report.watchdog_fired = true;
                    report.watchdog_dump = dump(states, running);
                    // Only the flag: the scheduler (on its own thread) wakes the parked cores.
                    ctx.aborted.store(true, std::memory_order_relaxed);
                }
            }
        });
        uint64_t swept_writes = ~0ull, swept_progress = ~0ull;
        uint32_t fruitless = 0;
        try {
            sched.run([&]() -> bool {
                if (ctx.aborted.load(std::memory_order_relaxed)) {
                    sched.wake_all();
                    return true;
                }
                // Cores parked in idle() may poll another core's memory (noc_read) or count
                // idle() calls: wake them (an "idle sweep") while anything changes, and up to
                // kMaxFruitlessSweeps times in a row when nothing does, before calling it a deadlock.
                const uint64_t progress = progress_total.load(std::memory_order_relaxed);
                detail::count_host_visits();
                if (sched.writes() != swept_writes || progress != swept_progress) {
                    swept_writes = sched.writes();
                    swept_progress = progress;
                    fruitless = 0;
                }
                if (fruitless < kMaxFruitlessSweeps && sched.wake_idle()) {
                    ++fruitless;
                    return true;
                }
                {
                    std::lock_guard<std::mutex> g(report_mu);
                    report.watchdog_fired = true;
                    report.deadlock = true;
                    report.watchdog_dump = dump(states, running);
                }
                abort_all(ctx);
                return true;
            });
        } catch (...) {
            stop.store(1, std::memory_order_release);
            futex_wake_all(stop);
            watchdog.join();
            throw;
        }
        stop.store(1, std::memory_order_release);
        futex_wake_all(stop);
        watchdog.join();
        report.run_hash = sched.hash();
        if (opt.timing) {
            report.makespan = sched.last_event_time();
            for (const auto& c : report.cores) report.makespan = std::max(report.makespan, c.modelled_end);
            opt.timing->link_usage(report.links);
        }
        report.steps = sched.steps();
        report.switches = sched.switches();
    }
    struct Entry {
        CoreCoord core;
        Kernel kernel;
        std::vector<uint32_t> args;
        std::function<std::string()> dump;
    };
    struct InitWord {
        CoreCoord core;
        uint32_t addr, value;
    };
    struct Program {
        std::vector<Entry> entries;
        std::vector<InitWord> init;
        std::unordered_map<uint64_t, uint32_t> index;  ///< core_key of every entry -> its entry
    };
    /// (chip, x, y) of a core the cluster has (x, y < 2^20, chip < 2^24) as one key.
    static uint64_t core_key(CoreCoord c) { return (uint64_t(c.chip) << 40) | (uint64_t(c.x) << 20) | c.y; }

    /// Blocks until `chip_program` reaches `p`; meanwhile delivers what this core left in flight.
    static void wait_for_program(detail::RunContext& ctx, detail::CoreState& st, Hal& hal,
                                 std::atomic<uint32_t>& chip_program, uint32_t p) {
        uint32_t cur = chip_program.load(std::memory_order_acquire);
        if (cur >= p) return;
        st.wait_value.store(p, std::memory_order_relaxed);
        st.wait_kind.store(detail::WaitKind::next_program, std::memory_order_relaxed);
        while ((cur = chip_program.load(std::memory_order_acquire)) < p) {
            if (ctx.aborted.load(std::memory_order_relaxed)) throw RunAborted{};
            if (ctx.sched) {
                // The chip's last kernel of the previous program wakes this core (enter()).
                if (hal.in_flight()) hal.deliver_step();
                if (hal.in_flight()) ctx.sched->yield();
                else ctx.sched->park();
            } else if (hal.in_flight()) {
                hal.deliver_step();
                std::this_thread::yield();
            } else {
                futex_wait(chip_program, cur, std::chrono::microseconds(2000));
            }
        }
        st.wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
        st.bump_progress();
    }

    void abort_all(detail::RunContext& ctx) {
        ctx.aborted.store(true, std::memory_order_relaxed);
        if (ctx.sched) ctx.sched->wake_all();  // called on the engine's thread only
        else
            for (auto& s : cluster_->cores()) s->events.wake_all();
    }

    /// Some kernel ignored the abort for `stop_grace`: it never calls the backend, so its thread
    /// cannot be stopped (or joined). Print what is known and end the process.
    [[noreturn]] void unstoppable(RunReport& report, const std::vector<detail::CoreState*>& states,
                                  const std::vector<std::atomic<uint32_t>>& running, const RunOptions& opt) const {
        std::string stuck;
        for (const auto* s : states)
            if (s->wait_kind.load(std::memory_order_relaxed) != detail::WaitKind::finished) stuck += "  " + s->name() + "\n";
        std::string msg = "kccl emulation: the run was aborted (" +
                          std::string(report.watchdog_fired ? "watchdog: no progress for " + std::to_string(opt.watchdog.count()) + " ms"
                                                            : "a core failed") +
                          ") but these kernels did not stop within " + std::to_string(opt.stop_grace.count()) +
                          " ms: a kernel that never calls the backend (a poll loop without hal.idle(), a long "
                          "computation) cannot be stopped, so the process ends here with exit code 3.\n" + stuck;
        msg += report.watchdog_fired ? "what every core waited for when the watchdog fired:\n" + report.watchdog_dump
                                     : "what every core waits for now:\n" + dump(states, running);
        const std::string err = report.first_error();
        if (!err.empty()) msg += "first error: " + err + "\n";
        std::fputs(msg.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(3);
    }

    std::string dump(const std::vector<detail::CoreState*>& states, const std::vector<std::atomic<uint32_t>>& running) const {
        // Diagnostics read the cores' live L1 words (what each waits on) while kernels may still
        // store to them, and on the fiber engine from the scheduler's context, which a fiber switch
        // does not order for ThreadSanitizer: an ignore region, as the scheduler's own bookkeeping.
        [[maybe_unused]] detail::IgnoreScope ig;
        std::string out;
        detail::count_host_visits(states.size());
        for (size_t i = 0; i < states.size(); ++i) {
            const detail::CoreState& s = *states[i];
            auto cur = [&](uint32_t addr) -> std::string {
                if (uint64_t(addr) + 4 > s.mem_size) return "?";
                uint32_t v = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(s.mem + addr))
                                 .load(std::memory_order_relaxed);
                return std::to_string(v);
            };
            const uint32_t addr = s.wait_addr.load(std::memory_order_relaxed);
            const uint32_t val = s.wait_value.load(std::memory_order_relaxed);
            const uint32_t prog = running[i].load(std::memory_order_relaxed);
            out += "  " + s.name() + (programs_.size() > 1 ? " [program " + std::to_string(prog) + "]" : std::string()) + ": ";
            switch (s.wait_kind.load(std::memory_order_relaxed)) {
                case detail::WaitKind::sem_eq:
                    out += "sem_wait L1 " + detail::hex(addr) + " expected == " + std::to_string(val) +
                           ", current " + cur(addr);
                    break;
                case detail::WaitKind::sem_min:
                    out += "sem_wait_min L1 " + detail::hex(addr) + " expected >= " + std::to_string(val) +
                           ", current " + cur(addr);
                    break;
                case detail::WaitKind::idle: {
                    const uint32_t p = s.last_poll_addr.load(std::memory_order_relaxed);
                    out += "idle in a poll loop";
                    if (p != UINT32_MAX) out += "; last sem_read L1 " + detail::hex(p) + ", current " + cur(p);
                    break;
                }
                case detail::WaitKind::next_program:
                    out += "waiting for its chip to finish program " + std::to_string(val - 1) + " before starting program " +
                           std::to_string(val);
                    break;
                case detail::WaitKind::finished: out += "finished"; break;
                case detail::WaitKind::not_started: out += "not started"; break;
                default: {
                    const uint32_t p = s.last_poll_addr.load(std::memory_order_relaxed);
                    out += "running (not blocked in the backend)";
                    if (p != UINT32_MAX) out += "; last sem_read L1 " + detail::hex(p) + ", current " + cur(p);
                }
            }
            out += "\n";
            if (prog < programs_.size())
                if (auto it = programs_[prog].index.find(core_key(s.coord)); it != programs_[prog].index.end())
                    if (const Entry& e = programs_[prog].entries[it->second]; e.dump) out += "    " + e.dump() + "\n";
            const detail::WaitKind k = s.wait_kind.load(std::memory_order_relaxed);
            if (k == detail::WaitKind::sem_eq || k == detail::WaitKind::sem_min) out += who_signals(states, running, i, addr);
            else if (k == detail::WaitKind::idle && s.last_poll_addr.load(std::memory_order_relaxed) != UINT32_MAX)
                out += who_signals(states, running, i, s.last_poll_addr.load(std::memory_order_relaxed));
        }
        return out;
    }

    /// The kernel core `i` of `states` runs in its current program (its callable's type), or null.
    const std::type_info* kernel_type(const std::vector<detail::CoreState*>& states,
                                      const std::vector<std::atomic<uint32_t>>& running, size_t i) const {
        const uint32_t prog = running[i].load(std::memory_order_relaxed);
        if (prog >= programs_.size()) return nullptr;
        const auto it = programs_[prog].index.find(core_key(states[i]->coord));
        return it == programs_[prog].index.end() ? nullptr : &programs_[prog].entries[it->second].kernel.target_type();
    }
    static const char* state_word(const detail::CoreState& s) {
        switch (s.wait_kind.load(std::memory_order_relaxed)) {
            case detail::WaitKind::finished: return "finished";
            case detail::WaitKind::sem_eq:
            case detail::WaitKind::sem_min: return "waiting";
            case detail::WaitKind::idle: return "idle in a poll loop";
            case detail::WaitKind::next_program: return "waiting for its next program";
            case detail::WaitKind::not_started: return "not started";
            default: return "running";
        }
    }
    /// Dump lines for core `w` waiting on word `addr` of its L1: every core that signalled that
    /// word in this run (and its state now), the cores running the same kernel as a signaller that
    /// never signalled it, and whether anyone is left who could.
    std::string who_signals(const std::vector<detail::CoreState*>& states, const std::vector<std::atomic<uint32_t>>& running,
                            size_t w, uint32_t addr) const {
        const detail::CoreState* waiter = states[w];
        std::string by, never;
        bool anyone_left = false, any = false, partial = false;
        std::vector<const std::type_info*> kinds;
        std::vector<bool> signalled(states.size(), false);
        for (size_t j = 0; j < states.size(); ++j) {
            const detail::SignalLog& log = states[j]->signals;
            if (log.full.load(std::memory_order_relaxed)) partial = true;
            const uint32_t m = log.size.load(std::memory_order_acquire);
            for (uint32_t q = 0; q < m; ++q) {
                const auto& e = log.entries[q];
                if (e.dst.load(std::memory_order_relaxed) != waiter) continue;
                if (addr < e.begin.load(std::memory_order_relaxed) || addr >= e.end.load(std::memory_order_relaxed)) continue;
                const uint32_t cnt = e.count.load(std::memory_order_relaxed);
                by += std::string(any ? ", " : "") + states[j]->name() + " " + detail::to_string(e.op.load(std::memory_order_relaxed)) +
                      " x" + std::to_string(cnt) + " (" + state_word(*states[j]) + ")";
                any = true;
                if (!signalled[j]) {
                    signalled[j] = true;
                    if (const auto* t = kernel_type(states, running, j)) kinds.push_back(t);
                }
                if (states[j]->wait_kind.load(std::memory_order_relaxed) != detail::WaitKind::finished) anyone_left = true;
            }
        }
        for (size_t j = 0; j < states.size(); ++j) {
            if (signalled[j] || j == w) continue;
            const auto* t = kernel_type(states, running, j);
            if (!t || std::find_if(kinds.begin(), kinds.end(), [&](const std::type_info* x) { return *x == *t; }) == kinds.end())
                continue;
            never += std::string(never.empty() ? "" : ", ") + states[j]->name() + " (" + state_word(*states[j]) + ")";
            if (states[j]->wait_kind.load(std::memory_order_relaxed) != detail::WaitKind::finished) anyone_left = true;
        }
        std::string out = "    L1 " + detail::hex(addr) + " signalled by: " + (any ? by : std::string("no core in this run")) + "\n";
        if (!never.empty())
            out += "    never signalled it, though running the same kernel as a core that did: " + never + "\n";
        if (!anyone_left && !partial)
            out += any ? "    nobody will signal it: every core that signalled it (or runs their kernel) has finished\n"
                       : "    nobody has signalled it: no core issued a sem_inc, inline write or Ethernet send to it in this run\n";
        return out;
    }

    Cluster* cluster_;
    std::vector<Program> programs_ = std::vector<Program>(1);
};

/// What explore() found.
struct ExploreResult {
    bool ok = true;             ///< every seed passed
    uint32_t runs = 0;          ///< seeds run
    uint64_t failing_seed = 0;  ///< the first failing seed (when !ok)
    std::string replay;         ///< its KCCL_EMU_REPLAY value (when !ok)
    std::string message;        ///< what failed (the report's summary, or "the scenario returned false")
};

/// Runs `scenario` for seeds first_seed .. first_seed + n_seeds - 1 on the fiber engine, each with
/// `base` and that seed as the schedule's, the adversary's and the start skew's seed, and stops at
/// the first failure: it prints (stderr) the KCCL_EMU_REPLAY value that replays it. A scenario is
/// callable with `const RunOptions&` (pass them to Launcher::run) and returns a RunReport (failed
/// = !ok()) or a bool (failed = false). With KCCL_EMU_REPLAY set, only that setting runs.
template <class Scenario>
ExploreResult explore(uint32_t n_seeds, RunOptions base, Scenario&& scenario, uint64_t first_seed = 1) {
    base.engine = Engine::fibers;
    base.honour_replay_env = false;
    ExploreResult res;
    const std::string env = replay_env();
    auto one = [&](RunOptions o) -> bool {
        ++res.runs;
        auto r = scenario(static_cast<const RunOptions&>(o));
        bool passed;
        std::string msg;
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, RunReport>) {
            passed = r.ok();
            if (!passed) msg = r.summary();
        } else {
            passed = static_cast<bool>(r);
            if (!passed) msg = "the scenario returned false\n";
        }
        if (passed) return true;
        res.ok = false;
        res.failing_seed = o.schedule.seed;
        res.replay = replay_string(o);
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, RunReport>)
            if (!r.replay.empty()) res.replay = r.replay;  // as the launcher resolved it (race detector)
        res.message = msg;
        std::fprintf(stderr, "kccl emulation: explore: seed %llu failed (run %u). Replay it with:\n  KCCL_EMU_REPLAY=\"%s\"\n%s",
                     static_cast<unsigned long long>(o.schedule.seed), res.runs, res.replay.c_str(), msg.c_str());
        return false;
    };
    if (!env.empty()) {
        RunOptions o = base;
        if (o.schedule.policy == Policy::automatic) o.schedule.policy = resolved_policy(o);
        apply_replay(o, env);
        one(o);
        return res;
    }
    for (uint64_t seed = first_seed; seed < first_seed + n_seeds; ++seed) {
        RunOptions o = base;
        if (o.schedule.policy == Policy::automatic) o.schedule.policy = resolved_policy(o);
        o.schedule.seed = seed;
        o.adversary.seed = seed;
        o.skew_seed = seed;
        if (!one(o)) break;
    }
    return res;
}

}  // namespace kccl::emu

// kccl/emulation/launcher/plan.hpp — what a run does, settled before it starts: the options
// (RunOptions; what the run resolves once: policy, ordering profile, race detector, dirty L1),
// KCCL_EMU_REPLAY (apply_replay), and the kernels grouped by core (detail::Plan). Host-only
// (C++20); part of launcher.hpp, and the standard headers of all its parts.
#pragma once

#include "../cluster.hpp"
#include "../hal.hpp"
#include "../engine/scheduler.hpp"
#include "../timing.hpp"
#include "../trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
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
    /// (docs/contract.md, "Ordering profiles"): `observed` (as tt-metal's kernels rely on them) or
    /// `strict` (only what tt-metal's NoC documentation promises). `from_env`: the environment
    /// variable KCCL_EMU_ORDERING=observed|strict, else observed.
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

/// Applies a replay setting (replay_string's keys) to `o`: seed sets the schedule's seed and the
/// adversary's and the random start skew's (adversary_seed / skew_seed then override theirs);
/// adversary=0|1 turns the adversary off / on, dirty=0|1 dirty L1, race=0|1 the race detector
/// (RaceCheck::off / on); timing=wormhole|wafer makes the run timed with that model at its
/// default options (kept in o.replay_timing). Keys not in the string keep their values in `o`:
/// applied to default RunOptions, the string alone reproduces the run. Throws EmulationError
/// naming a bad key or value.
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
        // A key naming one of `names`: that value, else "<what> '<v>' is unknown (allowed: <names>)".
        auto choose = [&](auto& field, const char* what,
                          std::initializer_list<std::pair<const char*, std::decay_t<decltype(field)>>> names) {
            std::string allowed;
            for (const auto& [name, value] : names) {
                if (v == name) return void(field = value);
                allowed += (allowed.empty() ? "" : ", ") + std::string(name);
            }
            throw EmulationError("KCCL_EMU_REPLAY: " + std::string(what) + " '" + v + "' is unknown (allowed: " + allowed + ")");
        };
        // The keys that set one number.
        const std::pair<const char*, uint32_t*> n32[] = {
            {"depth", &o.schedule.pct_depth}, {"preempt", &o.schedule.preempt_percent},
            {"deliver", &o.adversary.deliver_percent}, {"words", &o.adversary.max_words_per_step},
            {"delay", &o.adversary.delay_percent}, {"hold", &o.adversary.hold_percent},
            {"spin", &o.wait.spin_polls}, {"yield", &o.wait.yield_polls}};
        const std::pair<const char*, uint64_t*> n64[] = {
            {"steps", &o.schedule.pct_steps}, {"adversary_seed", &o.adversary.seed},
            {"dirty_seed", &o.dirty_seed}, {"skew_seed", &o.skew_seed}};
        auto set = [&k](const auto& table, auto read) {
            for (const auto& [name, field] : table)
                if (k == name) {
                    *field = read();
                    return true;
                }
            return false;
        };
        if (set(n32, num32) || set(n64, num)) continue;
        if (k == "policy") {
            choose(o.schedule.policy, "policy",
                   {{"fifo", Policy::fifo}, {"random", Policy::random}, {"pct", Policy::pct}, {"timed", Policy::timed}});  // a timed run is deterministic already
        } else if (k == "seed") {
            o.schedule.seed = o.adversary.seed = o.skew_seed = num();
        } else if (k == "handoff") {
            o.schedule.handoff = flag();
        } else if (k == "engine") {
            choose(o.engine, "engine", {{"fibers", Engine::fibers}, {"threads", Engine::threads}});
        } else if (k == "adversary") {
            o.adversary.enabled = flag();
        } else if (k == "max_hold_us") {
            o.adversary.max_hold = std::chrono::microseconds(num());
        } else if (k == "dirty") {
            o.dirty_l1 = flag() ? RunOptions::DirtyL1::on : RunOptions::DirtyL1::off;
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
            choose(o.ordering, "ordering profile", {{"observed", OrderingProfile::observed}, {"strict", OrderingProfile::strict}});
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

namespace detail {

using Kernel = std::function<uint64_t(Hal&)>;
/// A kernel added to a core of a program (Launcher::add), with its dump hook (Launcher::on_dump).
struct Entry {
    CoreCoord core;
    Kernel kernel;
    std::vector<uint32_t> args;
    std::function<std::string()> dump;
};
/// A word set before a program starts on the core's chip (Launcher::init_word).
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
inline uint64_t core_key(CoreCoord c) { return (uint64_t(c.chip) << 40) | (uint64_t(c.x) << 20) | c.y; }

/// One kernel of a run: its program, its entry there, its index in RunReport::cores.
struct Slot {
    uint32_t program, entry, result;
};

/// A run, checked and resolved: one thread (or fiber) per core that runs a kernel in any
/// program, and that core's kernels, program by program.
struct Plan {
    RunOptions opt;                       ///< KCCL_EMU_REPLAY applied; policy, ordering, race resolved
    std::vector<CoreCoord> cores;         ///< the cores that run a kernel, in the order first added
    std::vector<std::vector<Slot>> work;  ///< per core of `cores`: its kernels
    size_t kernels = 0;                   ///< every program's kernels (RunReport::cores)
};

/// Checks `options` (KCCL_EMU_REPLAY applied when honoured) and `programs`, resolves what a run
/// decides once and groups the kernels by core. Throws EmulationError naming what is wrong.
inline Plan make_plan(const Cluster& cluster, const std::vector<Program>& programs, const RunOptions& options) {
    Plan plan;
    RunOptions& opt = plan.opt = options;
    if (opt.honour_replay_env) apply_replay(opt, replay_env());  // nothing when unset
    if (opt.watchdog.count() < 1)
        throw EmulationError("Launcher::run: watchdog of " + std::to_string(opt.watchdog.count()) +
                             " ms; it must be at least 1 ms (it is how long no core may make progress)");
    const uint32_t P = uint32_t(programs.size());
    if (P > 1 && programs.back().entries.empty())
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
        if (opt.adversary.enabled) opt.schedule.seed = opt.adversary.seed;
        opt.schedule.policy = resolved_policy(opt);
    }
    opt.ordering = resolved_ordering(opt);
    // Resolved once (RaceCheck, KCCL_EMU_RACE, the cluster's size): the replay string says it.
    opt.race = race_detection_on(opt, cluster.cores().size()) ? RunOptions::RaceCheck::on : RunOptions::RaceCheck::off;

    size_t n_entries = 0;
    for (const auto& prog : programs) n_entries += prog.entries.size();
    // Kernels grouped by core through a map (a linear search per kernel was quadratic).
    std::unordered_map<uint64_t, uint32_t> task_of;
    task_of.reserve(P == 1 ? n_entries : programs[0].entries.size());
    for (uint32_t p = 0; p < P; ++p)
        for (uint32_t e = 0; e < programs[p].entries.size(); ++e) {
            const CoreCoord c = programs[p].entries[e].core;
            count_host_visits();
            const uint32_t t = task_of.emplace(core_key(c), uint32_t(plan.cores.size())).first->second;
            if (t == plan.cores.size()) {
                plan.cores.push_back(c);
                plan.work.emplace_back();
            }
            plan.work[t].push_back({p, e, uint32_t(plan.kernels++)});
        }
    if (!fib && plan.cores.size() > opt.max_threads)
        throw EmulationError("Launcher::run: " + std::to_string(plan.cores.size()) + " cores run kernels but RunOptions::max_threads is " +
                             std::to_string(opt.max_threads) + " (one thread per core; raise it or use fewer cores)");
    return plan;
}

}  // namespace detail
}  // namespace kccl::emu

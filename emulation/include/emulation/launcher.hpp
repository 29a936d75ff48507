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
// A kernel still running `RunOptions::stop_grace` after the abort (one that never calls the
// backend cannot be stopped) ends the process with the dump and exit code 3.
//
// Programs back to back: `next_program()` starts another program of the same launch. Each chip
// runs the programs in order, as tt-metal's dispatcher does: program p+1 starts on a chip once
// every kernel of program p on that chip has returned; chips do NOT wait for each other (programs
// start and finish at different times on different chips). Operations a core left in flight (a
// queued Ethernet send) keep going into the next program. `init_word()` sets a word before the
// program starts on that core's chip (tt-metal: a semaphore's initial value, CreateSemaphore).
//
// Dirty L1 (`RunOptions::dirty_l1`, on by default in adversarial mode): a core that never ran
// starts with seeded garbage except what the host wrote (Cluster::write); a core that ran keeps
// the last program's bytes.
//
// Progress means: a write into any memory, a semaphore operation, an Ethernet send or delivery,
// a completed wait, a kernel starting or returning. A kernel that computes for longer than the
// watchdog period without touching the backend is taken for hung; raise the period for it.
//
// The pieces: launcher/plan.hpp (options, KCCL_EMU_REPLAY, the run's plan), launcher/engine.hpp
// (the engines), launcher/report.hpp (RunReport, replay_string, the watchdog dump).
#pragma once

#include "launcher/engine.hpp"

namespace kccl::emu {

class Launcher {
public:
    using Kernel = detail::Kernel;

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
        detail::Program& prog = programs_.back();
        detail::count_host_visits();
        if (!prog.index.emplace(detail::core_key(c), uint32_t(prog.entries.size())).second)
            throw EmulationError("Launcher::add: " + s.name() + " already has a kernel in this program (one per core)");
        Kernel k = [kernel = std::move(kernel)](Hal& h) mutable -> uint64_t {
            if constexpr (std::is_void_v<std::invoke_result_t<K&, Hal&>>) return kernel(h), 0;
            else return static_cast<uint64_t>(kernel(h));
        };
        prog.entries.push_back({c, std::move(k), std::move(args), {}});
        return *this;
    }

    /// Extra text for the watchdog dump of core `c` in the current program (e.g. a queue's
    /// pointers). Called from the watchdog thread while the core may be running: read only what
    /// is safe to read racily.
    Launcher& on_dump(CoreCoord c, std::function<std::string()> hook) {
        detail::Program& prog = programs_.back();
        detail::count_host_visits();
        if (auto it = prog.index.find(detail::core_key(c)); it != prog.index.end()) {
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

    /// Forgets every added kernel, initial word and program.
    void clear() { programs_.assign(1, detail::Program{}); }

    RunReport run(const RunOptions& options = {}) {
        detail::Plan plan = detail::make_plan(*cluster_, programs_, options);
        detail::Run run(*cluster_, programs_, plan);
        run.execute();
        return std::move(run.report);
    }

private:
    Cluster* cluster_;
    std::vector<detail::Program> programs_ = std::vector<detail::Program>(1);
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
    base.schedule.policy = resolved_policy(base);
    ExploreResult res;
    const std::string env = replay_env();
    auto one = [&](RunOptions o) -> bool {
        ++res.runs;
        auto r = scenario(static_cast<const RunOptions&>(o));
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, RunReport>) {
            if (r.ok()) return true;
            res.message = r.summary();
            res.replay = r.replay;  // as the launcher resolved it (race detector)
        } else {
            if (static_cast<bool>(r)) return true;
            res.message = "the scenario returned false\n";
        }
        res.ok = false;
        res.failing_seed = o.schedule.seed;
        if (res.replay.empty()) res.replay = replay_string(o);
        std::fprintf(stderr, "kccl emulation: explore: seed %llu failed (run %u). Replay it with:\n  KCCL_EMU_REPLAY=\"%s\"\n%s",
                     static_cast<unsigned long long>(o.schedule.seed), res.runs, res.replay.c_str(), res.message.c_str());
        return false;
    };
    if (!env.empty()) {
        apply_replay(base, env);
        one(base);
        return res;
    }
    for (uint64_t seed = first_seed; seed < first_seed + n_seeds; ++seed) {
        RunOptions o = base;
        o.schedule.seed = o.adversary.seed = o.skew_seed = seed;
        if (!one(o)) break;
    }
    return res;
}

}  // namespace kccl::emu

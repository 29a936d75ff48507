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
// The run ends when every kernel has returned, or when one fails (EmulationError or any other
// exception: the others are aborted), or when the watchdog sees no core make progress for
// `watchdog` — then it records what every core waits for (address, expected value, current
// value, plus any dump hook's text) and aborts the run. A hung protocol fails; it never hangs.
//
// Progress means: a write into any memory, a semaphore operation, an Ethernet send or delivery,
// a completed wait, a kernel starting or returning. A kernel that computes for longer than the
// watchdog period without touching the backend is taken for hung; raise the period for it.
#pragma once

#include "cluster.hpp"
#include "hal.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace kccl::emu {

struct RunOptions {
    /// No progress by any core for this long fails the run with a dump.
    std::chrono::milliseconds watchdog{10000};
    /// Delayed, split, reordered-within-the-contract deliveries (see hal.hpp).
    AdversaryOptions adversary{};
    /// Start delay per chip (index = chip); missing entries mean 0.
    std::vector<std::chrono::microseconds> start_skew{};
    /// If > 0: additionally a random start delay in [0, random_skew_max] per chip, from skew_seed.
    std::chrono::microseconds random_skew_max{0};
    uint64_t skew_seed = 1;
    WaitPolicy wait{};
};

enum class CoreStatus { ok, failed, aborted };

struct CoreResult {
    CoreCoord core{};
    CoreStatus status = CoreStatus::ok;
    std::string message;  ///< the error, for failed cores
    uint64_t value = 0;   ///< what the kernel returned (0 for void kernels)
    std::chrono::nanoseconds elapsed{0};
    uint64_t context_switches = 0;
};

struct RunReport {
    std::vector<CoreResult> cores;
    bool watchdog_fired = false;
    std::string watchdog_dump;  ///< what every core waited for when the watchdog fired

    bool ok() const {
        if (watchdog_fired) return false;
        for (const auto& c : cores)
            if (c.status != CoreStatus::ok) return false;
        return true;
    }
    const CoreResult& at(CoreCoord c) const {
        for (const auto& r : cores)
            if (r.core == c) return r;
        throw EmulationError("RunReport::at: no kernel ran on " + to_string(c));
    }
    /// The first error message, or empty.
    std::string first_error() const {
        for (const auto& c : cores)
            if (c.status == CoreStatus::failed) return c.message;
        return {};
    }
    std::string summary() const {
        std::string s;
        if (watchdog_fired) s += "watchdog fired: no progress\n" + watchdog_dump;
        for (const auto& c : cores)
            if (c.status == CoreStatus::failed) s += "FAILED " + to_string(c.core) + ": " + c.message + "\n";
        if (s.empty()) s = "ok (" + std::to_string(cores.size()) + " cores)\n";
        return s;
    }
};

class Launcher {
public:
    using Kernel = std::function<uint64_t(Hal&)>;

    explicit Launcher(Cluster& cluster) : cluster_(&cluster) {}

    /// Runs `kernel` on core `c` with runtime args `args` at the next run().
    template <class K>
    Launcher& add(CoreCoord c, K kernel, std::vector<uint32_t> args = {}) {
        static_assert(std::is_invocable_v<K&, Hal&>,
                      "A kernel must be callable with kccl::emu::Hal& (e.g. [](auto& hal) {...}).");
        detail::CoreState& s = cluster_->state(c, "Launcher::add");
        if (s.kind == CoreKind::dram)
            throw EmulationError("Launcher::add: " + s.name() + " is a DRAM endpoint; kernels run on worker or Ethernet cores");
        for (const auto& e : entries_)
            if (e.core == c)
                throw EmulationError("Launcher::add: " + s.name() + " already has a kernel in this launch (one per core)");
        Kernel k = [kernel = std::move(kernel)](Hal& h) mutable -> uint64_t {
            using R = std::invoke_result_t<K&, Hal&>;
            if constexpr (std::is_void_v<R>) {
                kernel(h);
                return 0;
            } else {
                return static_cast<uint64_t>(kernel(h));
            }
        };
        entries_.push_back({c, std::move(k), std::move(args), {}});
        return *this;
    }

    /// Extra text for the watchdog dump of core `c` (e.g. a queue's pointers). Called from the
    /// watchdog thread while the core may be running: read only what is safe to read racily.
    Launcher& on_dump(CoreCoord c, std::function<std::string()> hook) {
        for (auto& e : entries_)
            if (e.core == c) {
                e.dump = std::move(hook);
                return *this;
            }
        throw EmulationError("Launcher::on_dump: add a kernel to " + to_string(c) + " first");
    }

    /// Forgets every added kernel.
    void clear() { entries_.clear(); }

    RunReport run(const RunOptions& opt = {}) {
        detail::RunContext ctx;
        ctx.wait = opt.wait;
        ctx.adversary = opt.adversary;

        const uint32_t n = uint32_t(entries_.size());
        // Adversarial runs keep the full spin phase: the adversary times its deliveries by it.
        if (ctx.wait.adapt_to_oversubscription && !opt.adversary.enabled &&
            n > std::max(1u, std::thread::hardware_concurrency())) {
            ctx.wait.spin_polls = ctx.wait.oversubscribed_spin_polls;
            ctx.wait.yield_polls = ctx.wait.oversubscribed_yield_polls;
        }
        RunReport report;
        report.cores.resize(n);
        std::vector<detail::CoreState*> states(n);
        for (uint32_t i = 0; i < n; ++i) {
            states[i] = &cluster_->state(entries_[i].core, "Launcher::run");
            states[i]->wait_kind.store(detail::WaitKind::not_started, std::memory_order_relaxed);
            report.cores[i].core = entries_[i].core;
        }
        std::vector<std::chrono::microseconds> skew(cluster_->num_chips(), std::chrono::microseconds{0});
        std::mt19937_64 rng(opt.skew_seed);
        for (uint32_t c = 0; c < skew.size(); ++c) {
            if (c < opt.start_skew.size()) skew[c] = opt.start_skew[c];
            if (opt.random_skew_max.count() > 0)
                skew[c] += std::chrono::microseconds(rng() % (uint64_t(opt.random_skew_max.count()) + 1));
        }

        std::atomic<uint32_t> finished{0};
        std::atomic<uint32_t> started{0};
        std::vector<std::thread> threads;
        threads.reserve(n);
        for (uint32_t i = 0; i < n; ++i) {
            threads.emplace_back([&, i] {
                Entry& e = entries_[i];
                detail::CoreState& st = *states[i];
                CoreResult& res = report.cores[i];
                const auto begin = std::chrono::steady_clock::now();
                if (skew[e.core.chip].count() > 0) {
                    const auto until = begin + skew[e.core.chip];
                    while (std::chrono::steady_clock::now() < until && !ctx.aborted.load(std::memory_order_relaxed))
                        std::this_thread::sleep_for(std::min<std::chrono::microseconds>(
                            std::chrono::microseconds(500),
                            std::chrono::duration_cast<std::chrono::microseconds>(until - std::chrono::steady_clock::now())));
                }
                st.wait_kind.store(detail::WaitKind::none, std::memory_order_relaxed);
                st.bump_progress();
                started.fetch_add(1, std::memory_order_relaxed);
                const auto t0 = std::chrono::steady_clock::now();
                Hal hal(ctx, st, *cluster_, e.args);
                try {
                    if (ctx.aborted.load(std::memory_order_relaxed)) throw RunAborted{};
                    res.value = e.kernel(hal);
                    hal.drain();
                } catch (const RunAborted&) {
                    res.status = CoreStatus::aborted;
                    res.message = "aborted";
                } catch (const std::exception& ex) {
                    res.status = CoreStatus::failed;
                    res.message = ex.what();
                    abort_all(ctx);
                } catch (...) {
                    res.status = CoreStatus::failed;
                    res.message = "kernel threw a non-std exception";
                    abort_all(ctx);
                }
                res.elapsed = std::chrono::steady_clock::now() - t0;
                res.context_switches = hal.context_switches();
                st.wait_kind.store(detail::WaitKind::finished, std::memory_order_relaxed);
                st.bump_progress();
                if (finished.fetch_add(1, std::memory_order_release) + 1 == n) futex_wake_all(finished);
            });
        }

        // Watchdog: sample the cores' progress counters; fire after `watchdog` without change.
        const auto tick = std::clamp<std::chrono::milliseconds>(opt.watchdog / 8, std::chrono::milliseconds(1),
                                                                std::chrono::milliseconds(50));
        uint64_t last_sum = ~0ull;
        auto last_change = std::chrono::steady_clock::now();
        for (uint32_t done; (done = finished.load(std::memory_order_acquire)) < n;) {
            // Sleep one tick, or until the last kernel returns (it wakes this futex).
            futex_wait(finished, done, tick);
            uint64_t sum = 0;
            for (auto* s : states) sum += s->progress.load(std::memory_order_relaxed);
            const auto now = std::chrono::steady_clock::now();
            const bool waiting_for_start = started.load(std::memory_order_relaxed) < n;
            if (sum != last_sum || waiting_for_start || ctx.aborted.load(std::memory_order_relaxed)) {
                last_sum = sum;
                last_change = now;
            } else if (now - last_change >= opt.watchdog) {
                report.watchdog_fired = true;
                report.watchdog_dump = dump(states);
                abort_all(ctx);
                break;
            }
        }
        for (auto& t : threads) t.join();
        return report;
    }

private:
    struct Entry {
        CoreCoord core;
        Kernel kernel;
        std::vector<uint32_t> args;
        std::function<std::string()> dump;
    };

    void abort_all(detail::RunContext& ctx) {
        ctx.aborted.store(true, std::memory_order_relaxed);
        for (auto& s : cluster_->cores()) s->events.wake_all();
    }

    std::string dump(const std::vector<detail::CoreState*>& states) const {
        std::string out;
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
            out += "  " + s.name() + ": ";
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
                case detail::WaitKind::finished: out += "finished"; break;
                case detail::WaitKind::not_started: out += "not started"; break;
                default: {
                    const uint32_t p = s.last_poll_addr.load(std::memory_order_relaxed);
                    out += "running (not blocked in the backend)";
                    if (p != UINT32_MAX) out += "; last sem_read L1 " + detail::hex(p) + ", current " + cur(p);
                }
            }
            out += "\n";
            if (entries_[i].dump) out += "    " + entries_[i].dump() + "\n";
        }
        return out;
    }

    Cluster* cluster_;
    std::vector<Entry> entries_;
};

}  // namespace kccl::emu

// The fiber engine: parking and waking, instant deadlock detection, determinism (run hash),
// PCT exploration with a replay setting, start skew, stack overflow as a named error, and
// (under ThreadSanitizer) a planted race between two emulated cores that TSan must report.
#include "emulation/child_process.hpp"
#include "emulation/util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kccl::test;
namespace topo = kccl::emu::topology;
using kccl::emu::CoreStatus;
using kccl::emu::Engine;
using kccl::emu::Policy;

namespace {

/// Two workers bounce a counter `rounds` times through each other's semaphore.
template <class K0, class K1>
RunReport two(Cluster& c, K0 k0, K1 k1, const RunOptions& o) {
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), k0);
    L.add(c.chip(0).worker(1, 0), k1);
    return L.run(o);
}

RunReport ping_pong(Cluster& c, uint32_t rounds, const RunOptions& o) {
    constexpr uint32_t kSem = 0x100;
    return two(
        c,
        [=](auto& h) -> uint64_t {
            const auto peer = h.noc_addr(1, 0, kSem);
            for (uint32_t i = 1; i <= rounds; ++i) {
                h.sem_inc(peer, 1);
                h.sem_wait(kSem, i);
            }
            return h.sem_read(kSem);
        },
        [=](auto& h) -> uint64_t {
            const auto peer = h.noc_addr(0, 0, kSem);
            for (uint32_t i = 1; i <= rounds; ++i) {
                h.sem_wait(kSem, i);
                h.sem_inc(peer, 1);
            }
            return h.sem_read(kSem);
        },
        o);
}

/// Four workers each add to a counter on worker (0,0) in turns decided by the schedule; the
/// order in which the increments land is recorded in (0,0)'s L1 by (0,0) itself.
constexpr uint32_t kCount = 0x100, kLog = 0x200, kN = 3, kEach = 20;
RunReport contended(Cluster& c, const RunOptions& o) {
    c.clear_memory();
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [](auto& h) -> uint64_t {
        uint32_t seen = 0, at = 0;
        uint64_t order = 0;
        while (seen < kN * kEach) {
            const uint32_t v = h.sem_read(kCount);
            if (v == seen) {
                h.idle();
                continue;
            }
            seen = v;
            put(h, kLog + 4 * (at++ % 64), v);
            order = order * 31 + v;
        }
        return order;
    });
    for (uint32_t k = 1; k <= kN; ++k)
        L.add(c.chip(0).worker(k, 0), [](auto& h) {
            for (uint32_t i = 0; i < kEach; ++i) {
                h.sem_inc(h.noc_addr(0, 0, kCount), 1);
                h.context_switch();
            }
        });
    return L.run(o);
}

RunOptions with(Policy p, uint64_t seed) {
    RunOptions o = normal();
    o.schedule.policy = p;
    o.schedule.seed = seed;
    o.schedule.pct_steps = 200;
    o.honour_replay_env = false;
    return o;
}

/// Core A publishes a flag, then the data (the wrong order); core B waits for the flag and
/// returns the data it sees. Correct only if B never runs between A's two writes.
constexpr uint32_t kFlag = 0x100, kData = 0x110, kValue = 0xC0FFEE;
RunReport flag_before_data(Cluster& c, const RunOptions& o) {
    c.clear_memory();
    return two(
        c,
        [](auto& h) {
            h.noc_inline_write32(h.noc_addr(1, 0, kFlag), 1);
            h.noc_inline_write32(h.noc_addr(1, 0, kData), kValue);
        },
        [](auto& h) -> uint64_t {
            h.sem_wait(kFlag, 1);
            return h.sem_read(kData);
        },
        o);
}

template <class H>
uint32_t deep(H& h, uint32_t n) {
    volatile uint8_t frame[4096];
    frame[0] = uint8_t(n);
    if (n == 0) return h.sem_read(0x100) + frame[0];
    return deep(h, n - 1) + frame[0];
}

#if !KCCL_EMU_ASAN  // (its only caller below is left out under ASan)
void overflow_run() {
    Cluster c(topo::single_chip(small_chip()));
    Launcher L(c);
    L.add(c.chip(0).worker(2, 1), [](auto& h) { return deep(h, 1000); });  // ~4 MiB of frames
    RunOptions o = normal();
    o.stack_size = 64 * 1024;
    (void)L.run(o);
    std::_Exit(0);  // not reached
}
#endif

namespace handoff_test {
constexpr uint32_t kSem = 0x100, kStop = 0x200, kQuit = 0x300, kCap = 100000;
}

}  // namespace

TEST_CASE("fiber engine: cores park and wake; both engines give the same results", "[emulation][engine]") {
    Cluster c(topo::single_chip(small_chip()));
    for (Engine e : {Engine::fibers, Engine::threads}) {
        c.clear_memory();
        RunOptions o = normal();
        o.engine = e;
        auto r = ping_pong(c, 500, o);
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(c.chip(0).worker(0, 0)).value == 500);
        REQUIRE(r.at(c.chip(0).worker(1, 0)).value == 500);
        REQUIRE(r.engine == e);
        if (e == Engine::fibers) {
            // Each round trip parks each core once at least.
            REQUIRE(r.switches >= 1000);
            REQUIRE(r.replay == "policy=fifo,seed=1,adversary=0,dirty=0,race=0,ordering=observed");
        }
    }
}

TEST_CASE("fiber engine: a deadlock fails at once with the dump of who waits for what", "[emulation][engine][deadlock]") {
    Cluster c(topo::single_chip(small_chip()));
    c.clear_memory();
    c.write32(c.chip(0).worker(0, 0), 0x104, 3);
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [](auto& h) { h.sem_wait(0x104, 5); });
    L.add(c.chip(0).worker(1, 0), [](auto& h) { h.sem_wait_min(0x200, 2); });
    L.add(c.chip(0).worker(2, 0), [](auto& h) {
        while (h.sem_read(0x300) == 0) h.idle();
    });
    L.add(c.chip(0).worker(3, 0), [](auto& h) { h.sem_inc(h.noc_addr(1, 0, 0x200), 1); });  // one of two
    const auto t0 = std::chrono::steady_clock::now();
    auto r = L.run(normal(std::chrono::milliseconds(20000)));
    const auto took = std::chrono::steady_clock::now() - t0;
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.deadlock);
    REQUIRE(r.watchdog_fired);
    INFO(r.summary());
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (0,0): sem_wait L1 0x104 expected == 5, current 3"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (1,0): sem_wait_min L1 0x200 expected >= 2, current 1"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (2,0): idle in a poll loop; last sem_read L1 0x300, current 0"));
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip 0 worker (3,0): finished"));
    REQUIRE_THAT(r.summary(), Catch::Contains("deadlock: no core can run and nothing is in flight"));
    REQUIRE(r.at(c.chip(0).worker(0, 0)).status == CoreStatus::aborted);
    REQUIRE(r.at(c.chip(0).worker(3, 0)).status == CoreStatus::ok);
    // Not the 20 s watchdog: found when the last core parked.
    REQUIRE(took < std::chrono::seconds(2));
}

TEST_CASE("fiber engine: the same seed gives the same run hash, another seed another", "[emulation][engine][determinism]") {
    Cluster c(topo::single_chip(small_chip()));
    for (Policy p : {Policy::random, Policy::pct}) {
        INFO("policy " << kccl::emu::to_string(p));
        auto a = contended(c, with(p, 7));
        auto b = contended(c, with(p, 7));
        KCCL_REQUIRE_OK(a);
        KCCL_REQUIRE_OK(b);
        REQUIRE(a.run_hash == b.run_hash);
        REQUIRE(a.steps == b.steps);
        REQUIRE(a.at(c.chip(0).worker(0, 0)).value == b.at(c.chip(0).worker(0, 0)).value);
        // Some other seed schedules differently (the hash is a 64-bit mix of every decision).
        bool differs = false;
        for (uint64_t s = 8; s < 16 && !differs; ++s) {
            auto d = contended(c, with(p, s));
            KCCL_REQUIRE_OK(d);
            differs = d.run_hash != a.run_hash;
        }
        REQUIRE(differs);
    }
    // FIFO is deterministic too (there is nothing to draw).
    auto f1 = contended(c, with(Policy::fifo, 1)), f2 = contended(c, with(Policy::fifo, 99));
    REQUIRE(f1.run_hash == f2.run_hash);
    // Adversarial runs: the adversary's seed decides everything, including the schedule.
    auto adv = [&](uint64_t seed) {
        RunOptions o = adversarial(seed);
        o.honour_replay_env = false;
        return contended(c, o);
    };
    auto x = adv(3), y = adv(3);
    KCCL_REQUIRE_OK(x);
    REQUIRE(x.run_hash == y.run_hash);
    REQUIRE(x.replay == "policy=random,seed=3,adversary=1,dirty=1,race=1,ordering=observed");
}

TEST_CASE("fiber engine, fifo: the core a write readies runs next, earlier ones queue in order", "[emulation][engine][handoff]") {
    // W yields once (so A, B and C park first), then readies A, B and C in that order and ends.
    // With the handoff, C (readied last) runs next and A, B follow in the queue's order; with
    // handoff = false the order is the queue's: A, B, C.
    using namespace handoff_test;
    Cluster c(topo::single_chip(small_chip()));
    for (bool handoff : {true, false}) {
        INFO("handoff " << handoff);
        c.clear_memory();
        // Each of A, B, C returns its place in the order (an atomic: under TSan a fiber switch
        // is no synchronisation, so a plain shared vector would be a reported race).
        std::atomic<uint32_t> place{0};
        Launcher L(c);
        L.add(c.chip(0).worker(0, 0), [](auto& h) {
            h.context_switch();
            for (uint32_t x = 1; x <= 3; ++x) h.sem_inc(h.noc_addr(x, 0, kSem), 1);
        });
        for (uint32_t x = 1; x <= 3; ++x)
            L.add(c.chip(0).worker(x, 0), [&place](auto& h) -> uint64_t {
                h.sem_wait(kSem, 1);
                return place.fetch_add(1, std::memory_order_relaxed);
            });
        RunOptions o = with(Policy::fifo, 1);
        o.schedule.handoff = handoff;
        auto r = L.run(o);
        KCCL_REQUIRE_OK(r);
        std::vector<uint64_t> order(3);  // order[k]: the core that ran k-th
        for (uint32_t x = 1; x <= 3; ++x) order.at(r.at(c.chip(0).worker(x, 0)).value) = x;
        REQUIRE(order == (handoff ? std::vector<uint64_t>{3, 1, 2} : std::vector<uint64_t>{1, 2, 3}));
        REQUIRE(r.replay == (handoff ? "policy=fifo,seed=1,adversary=0,dirty=0,race=0,ordering=observed" : "policy=fifo,seed=1,handoff=0,adversary=0,dirty=0,race=0,ordering=observed"));
    }
}

TEST_CASE("fiber engine, fifo: a chain of handoffs lets the queue's head run within kHandoffChain picks", "[emulation][engine][handoff]") {
    // P and Q bounce a semaphore: every bounce readies the other by a write, so each takes the
    // run-next slot in turn. Z, ready from the start, writes P's stop flag. P stops at the first
    // round that sees it (or after kCap rounds: a chain without a bound never lets Z run).
    using namespace handoff_test;
    Cluster c(topo::single_chip(small_chip()));
    for (bool handoff : {true, false}) {
        INFO("handoff " << handoff);
        c.clear_memory();
        Launcher L(c);
        L.add(c.chip(0).worker(0, 0), [](auto& h) -> uint64_t {  // P
            const auto q = h.noc_addr(1, 0, 0);
            for (uint32_t i = 1;; ++i) {
                if (h.sem_read(kStop) != 0 || i > kCap) {
                    h.noc_inline_write32(q + kQuit, 1);  // lands before the sem_inc (same core)
                    h.sem_inc(q + kSem, 1);
                    return i;
                }
                h.sem_inc(q + kSem, 1);
                h.sem_wait(kSem, i);
            }
        });
        L.add(c.chip(0).worker(1, 0), [](auto& h) {  // Q
            for (uint32_t i = 1;; ++i) {
                h.sem_wait(kSem, i);
                if (h.sem_read(kQuit) != 0) return;
                h.sem_inc(h.noc_addr(0, 0, kSem), 1);
            }
        });
        L.add(c.chip(0).worker(2, 0), [](auto& h) { h.noc_inline_write32(h.noc_addr(0, 0, kStop), 1); });  // Z
        RunOptions o = with(Policy::fifo, 1);
        o.schedule.handoff = handoff;
        auto r = L.run(o);
        KCCL_REQUIRE_OK(r);
        const uint64_t rounds = r.at(c.chip(0).worker(0, 0)).value;
        if (handoff) {
            // The chain alternates P and Q: P runs kHandoffChain / 2 times before Z's turn.
            REQUIRE(rounds > 2);
            REQUIRE(rounds <= kccl::emu::kHandoffChain / 2 + 2);
        } else {
            REQUIRE(rounds == 2);  // plain FIFO: Z runs right after Q's first turn
        }
    }
}

TEST_CASE("fiber engine: the handoff is fifo's only; its replay key round-trips and is checked", "[emulation][engine][handoff]") {
    Cluster c(topo::single_chip(small_chip()));
    // random and pct never use the slot: the same seed gives the same schedule either way.
    for (Policy p : {Policy::random, Policy::pct}) {
        INFO("policy " << kccl::emu::to_string(p));
        RunOptions on = with(p, 5), off = with(p, 5);
        off.schedule.handoff = false;
        auto a = contended(c, on), b = contended(c, off);
        KCCL_REQUIRE_OK(a);
        KCCL_REQUIRE_OK(b);
        REQUIRE(a.run_hash == b.run_hash);
        REQUIRE(a.replay == b.replay);  // no handoff key outside fifo
    }
    // fifo: the replay string names handoff=0 and gives it back; the key's values are checked.
    RunOptions off = with(Policy::fifo, 1);
    off.schedule.handoff = false;
    c.clear_memory();  // ping_pong counts from 0
    auto f_off = ping_pong(c, 50, off);
    KCCL_REQUIRE_OK(f_off);
    REQUIRE(f_off.replay == "policy=fifo,seed=1,handoff=0,adversary=0,dirty=0,race=0,ordering=observed");
    RunOptions back = normal();
    kccl::emu::apply_replay(back, f_off.replay);
    REQUIRE_FALSE(back.schedule.handoff);
    kccl::emu::apply_replay(back, "handoff=1");
    REQUIRE(back.schedule.handoff);
    RunOptions bad = normal();
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "handoff=yes"), Catch::Contains("'handoff=yes': handoff must be 0 or 1"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "speed=1"), Catch::Contains("(allowed: policy, seed, depth, steps, preempt, handoff, engine, adversary,"));
}

TEST_CASE("PCT finds an ordering bug, prints the replay setting, and the setting replays it", "[emulation][engine][pct]") {
    Cluster c(topo::single_chip(small_chip()));
    auto ok_run = [&](const RunOptions& o) {
        auto r = flag_before_data(c, o);
        return r.ok() && r.at(c.chip(0).worker(1, 0)).value == kValue;
    };
    // FIFO never shows the bug (A runs to its end before B is resumed).
    REQUIRE(ok_run(with(Policy::fifo, 1)));
    RunOptions base = with(Policy::pct, 1);
    base.schedule.pct_depth = 2;
    base.schedule.pct_steps = 8;
    auto res = kccl::emu::explore(1000, base, ok_run);
    REQUIRE_FALSE(res.ok);
    REQUIRE(res.runs <= 1000);
    REQUIRE_THAT(res.replay, Catch::StartsWith("policy=pct,seed=" + std::to_string(res.failing_seed) + ",depth=2"));
    // The printed setting replays the failure: B read the stale data word (0, the cleared memory).
    RunOptions again = with(Policy::fifo, 1);
    again.schedule.pct_steps = 8;
    kccl::emu::apply_replay(again, res.replay);
    auto r1 = flag_before_data(c, again), r2 = flag_before_data(c, again);
    REQUIRE(r1.at(c.chip(0).worker(1, 0)).value == 0);
    REQUIRE(r1.run_hash == r2.run_hash);
    // ... and so does the environment variable, which Launcher::run honours.
    ::setenv("KCCL_EMU_REPLAY", res.replay.c_str(), 1);
    RunOptions env = normal();
    env.schedule.pct_steps = 8;
    auto r3 = flag_before_data(c, env);
    ::unsetenv("KCCL_EMU_REPLAY");
    REQUIRE(r3.at(c.chip(0).worker(1, 0)).value == 0);
    REQUIRE(r3.run_hash == r1.run_hash);
    // Bad settings are named.
    RunOptions bad;
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "policy=lifo"), Catch::Contains("policy 'lifo' is unknown (allowed: fifo, random, pct, timed)"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "seed=x"), Catch::Contains("must be a decimal number"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "speed=1"), Catch::Contains("key 'speed' is unknown"));
}

TEST_CASE("fiber engine: start skew orders the chips' starts", "[emulation][engine]") {
    Cluster c(topo::n300(small_chip()));
    std::vector<uint32_t> order(4, 9);
    std::atomic<uint32_t> at{0};
    Launcher L(c);
    for (uint32_t chip = 0; chip < 2; ++chip)
        for (uint32_t x = 0; x < 2; ++x)
            L.add(c.chip(chip).worker(x, 0), [&order, &at, chip](auto& h) {
                order[at.fetch_add(1, std::memory_order_relaxed)] = chip;
                h.context_switch();
            });
    RunOptions o = normal();
    o.start_skew = {std::chrono::microseconds(200), std::chrono::microseconds(0)};
    KCCL_REQUIRE_OK(L.run(o));
    REQUIRE(order == std::vector<uint32_t>{1, 1, 0, 0});
}

#if !KCCL_EMU_ASAN
TEST_CASE("fiber engine: a stack overflow is a named error of its core, not a segfault", "[emulation][engine][errors]") {
    auto [status, err] = in_child(&overflow_run);
    INFO(err);
    REQUIRE(status == 3);
    REQUIRE_THAT(err, Catch::Contains("stack overflow in the kernel on chip 0 worker (2,1)") &&
                          Catch::Contains("its fiber stack has 65536 bytes") && Catch::Contains("RunOptions::stack_size"));
}
#endif

TEST_CASE("fiber engine: a kernel of a thousand cores runs on one thread", "[emulation][engine]") {
    // 128 chips of 4x2 workers: on each chip a token passes around its 8 workers 4 times.
    kccl::emu::ChipSpec chip = small_chip();
    chip.worker_l1_bytes = 4096;
    Cluster c(topo::custom(128, chip));
    constexpr uint32_t kSem = 0x100, kLaps = 4;
    std::vector<CoreCoord> ring;
    for (uint32_t k = 0; k < 128; ++k)
        for (uint32_t y = 0; y < 2; ++y)
            for (uint32_t x = 0; x < 4; ++x) ring.push_back(c.chip(k).worker(x, y));
    Launcher L(c);
    for (uint32_t i = 0; i < ring.size(); ++i) {
        const uint32_t k = i % 8, next = (k + 1) % 8;
        L.add(ring[i], [k, next](auto& h) -> uint64_t {
            const auto to = h.noc_addr(next % 4, next / 4, kSem);
            for (uint32_t lap = 1; lap <= kLaps; ++lap) {
                if (k == 0) h.sem_inc(to, 1);
                h.sem_wait(kSem, lap);
                if (k != 0) h.sem_inc(to, 1);
            }
            return h.sem_read(kSem);
        });
    }
    for (const auto& core : ring) L.init_word(core, kSem, 0);
    auto r = L.run(normal());
    KCCL_REQUIRE_OK(r);
    for (const auto& core : ring) REQUIRE(r.at(core).value == kLaps);
}

// ---- the timed engine ----------------------------------------------------------------------------
namespace {
/// n round trips of a 16-byte flit over one link; returns the report.
RunReport timed_ping(Cluster& c, uint32_t n, kccl::emu::TimingModel* model, kccl::emu::Trace* trace) {
    auto [e0, e1] = c.links_between(0, 1)[0];
    c.clear_memory();
    Launcher L(c);
    for (uint32_t side = 0; side < 2; ++side)
        L.add(side ? e1 : e0, [side, n](auto& h) {
            for (uint32_t i = 1; i <= n; ++i) {
                if (side) h.sem_wait_min(0x140, i);
                std::memcpy(h.l1_ptr(0x100, 4), &i, 4);
                h.eth_send(0, 0x100, 0x140, 16);
                if (!side) h.sem_wait_min(0x140, i);
            }
        });
    RunOptions o = normal();
    o.timing = model;
    o.trace = trace;
    return L.run(o);
}
}  // namespace

TEST_CASE("timed engine: modelled time from the model, not the host; deterministic; traced", "[emulation][engine][timing]") {
    Cluster c(topo::n300(small_chip()));
    auto model = kccl::emu::wormhole_model();
    constexpr uint32_t kN = 20;
    kccl::emu::Trace t1, t2;
    auto a = timed_ping(c, kN, model.get(), &t1);
    auto b = timed_ping(c, kN, model.get(), &t2);
    KCCL_REQUIRE_OK(a);
    REQUIRE(a.timed);
    REQUIRE(a.time_unit == "ps");
    REQUIRE(a.makespan == b.makespan);
    REQUIRE(a.run_hash == b.run_hash);
    REQUIRE(t1.hash() == t2.hash());
    // Each one-way trip: the send's issue, a 66-byte frame at 12.5 GB/s (5.28 ns) and the link
    // latency (the model's figures), plus a few cycles of polling and L1 access.
    const kccl::emu::WormholeOptions wo{};
    const double issue_ns = wo.cost_eth_send * 1e9 / wo.clock_hz, latency_ns = double(wo.eth_link_latency_ps) / 1000.0;
    const double one_way_ns = double(a.makespan) / 1000.0 / (2 * kN);
    INFO("one way " << one_way_ns << " ns; issue " << issue_ns << " ns, latency " << latency_ns << " ns");
    REQUIRE(one_way_ns >= issue_ns + 5.28 + latency_ns);
    REQUIRE(one_way_ns <= issue_ns + 5.28 + latency_ns + 30);
    // Each side's queue 0 sent kN flits: kN x 5.28 ns busy (66 B on the wire each).
    REQUIRE(a.links.size() == 2);
    for (const auto& l : a.links) {
        REQUIRE(l.packets == kN);
        REQUIRE(l.bytes == 16 * kN);
        REQUIRE(l.busy == kN * 5280);
    }
    // The responder's kernel ends after the initiator's last send has arrived.
    auto [e0, e1] = c.links_between(0, 1)[0];
    REQUIRE(a.at(e1).modelled_end > a.at(e0).modelled_start);
    REQUIRE(a.at(e0).modelled_end == a.makespan);
    // The trace: a flow per send, a wait slice on each side.
    const std::string js = t1.json();
    REQUIRE_THAT(js, Catch::Contains("eth_send") && Catch::Contains("sem_wait_min") && Catch::Contains("\"ph\":\"s\""));
    // Timing needs the fiber engine and no adversary: named errors.
    RunOptions th = normal();
    th.engine = Engine::threads;
    th.timing = model.get();
    Launcher L(c);
    L.add(e0, [](auto&) {});
    REQUIRE_THROWS_WITH(L.run(th), Catch::Contains("RunOptions::timing needs the fiber engine"));
    RunOptions adv = adversarial(1);
    adv.timing = model.get();
    REQUIRE_THROWS_WITH(L.run(adv), Catch::Contains("cannot be adversarial"));
}

// ---- ThreadSanitizer: a race between two emulated cores is still a race ------------------------
// The hidden case plants the race; the visible one (built only under TSan) runs it in a child
// process and expects TSan's report, and that the scheduler itself is not reported. The hidden
// case is also tagged [mutation]: a spec made only of exclusions (the presets' "~[long]...")
// selects hidden tests in Catch2 v2, and the tsan preset excludes [mutation].
TEST_CASE("planted race between two emulated cores", "[.][planted_race][mutation]") {
    Cluster c(topo::single_chip(small_chip()));
    c.clear_memory();
    Launcher L(c);
    // Core B starts first and yields; core A writes 64 bytes into B's L1 with a plain NoC write;
    // B reads them without waiting for any signal: nothing orders the two.
    L.add(c.chip(0).worker(1, 0), [](auto& h) -> uint64_t {
        h.context_switch();
        return get<uint64_t>(h, 0x800);
    });
    // The size is a runtime argument: GCC expands a memcpy of constant size inline, and its
    // TSan does not see those moves (the thread engine has the same blind spot).
    L.add(c.chip(0).worker(0, 0), [](auto& h) {
        put(h, 0x400, uint64_t(42));
        h.noc_write(0x400, h.noc_addr(1, 0, 0x800), h.arg(0));
    }, {64});
    (void)L.run(normal());
}

#if KCCL_EMU_TSAN
TEST_CASE("TSan reports a planted race between two emulated cores on the fiber engine", "[emulation][engine][tsan]") {
    std::string out;
    char self[4096] = {};
    REQUIRE(::readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    // Every report, not only the first: the planted race must be the only one.
    const std::string cmd = "TSAN_OPTIONS=halt_on_error=0 '" + std::string(self) + "' '[planted_race]' 2>&1";
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        ::pclose(p);
    }
    INFO(out);
    REQUIRE_THAT(out, Catch::Contains("WARNING: ThreadSanitizer: data race"));
    // The race is B's read against A's NoC write; the engine's bookkeeping reports nothing.
    // (The SUMMARY line's symbolisation varies; the stacks name both accesses.)
    REQUIRE_THAT(out, Catch::Contains("kccl::test::get<unsigned long"));
    REQUIRE_THAT(out, Catch::Contains("kccl::emu::Hal::noc_write"));
    REQUIRE_THAT(out, Catch::Contains("ThreadSanitizer: reported 1 warnings"));
}
#endif

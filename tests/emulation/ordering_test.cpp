// Ordering profiles (emulation/hal/ordering.hpp, hal/ordering_strict.hpp; docs/contract.md,
// "Ordering profiles") and the two bug classes the strict profile adds, each as a kernel pair:
//   * write, then signal: a core writes data into another core's L1, then increments (or
//     inline-writes) a semaphore on that core with no flush between them. Legal under the
//     observed profile (N1); under strict the increment may land before the data.
//   * store, then send (N7): a core stores a word to its L1 and sends it with a NoC write with no
//     l1_store_fence() between them; under strict the NoC may send the value from before the
//     store.
// The buggy version must be caught by the schedule search within 100 seeds (and by the race
// detector on its first run), and replay from its replay string alone; the fixed version passes
// every mode (pct, random, adversarial) under both profiles: 50 seeds each here, 1,000 in the
// [long] sweep.
#include "util.hpp"

#include <hal/contract.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include "sweep.hpp"

using namespace kccl::test;
namespace topo = kccl::emu::topology;
using kccl::emu::OrderingProfile;
using kccl::emu::Policy;

namespace {

constexpr uint32_t kFlag = 0x100, kAck = 0x104, kWord = 0x200, kData = 0x1000, kSrc = 0x4000, kBytes = 256;
/// The store hazard's word: what the host left in it, and what the kernel stores before sending.
constexpr uint32_t kOld = 0x5EED5EEDu, kNew = 0xF2E5F2E5u;

enum class Verdict { clean, caught, other };
struct Obs {
    Verdict v = Verdict::other;
    std::string what;
};

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string races(const RunReport& r) {
    std::string s;
    for (const auto& x : r.races) s += x + "\n";
    return s;
}

RunOptions with_profile(RunOptions o, OrderingProfile p) {
    o.ordering = p;
    o.honour_replay_env = false;
    return o;
}

enum class Signal { inc, inline_write };

/// Writer (0,0) writes kBytes of a known pattern into reader (1,0)'s kData, then signals the
/// reader's kFlag (increment or inline write), with noc_writes_flushed() between them when
/// `flush`, then waits for the reader's acknowledgement. The reader waits for the flag, counts the
/// words that are not the pattern and acknowledges.
/// Caught: the reader saw the flag before the data (some word wrong; race reports aside).
Obs write_then_signal(bool flush, Signal sig, const RunOptions& o, RunReport* out = nullptr) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    host_zero(c, kData, kBytes);
    const auto w = c.chip(0).worker(0, 0), r = c.chip(0).worker(1, 0);
    uint32_t wrong = 0;
    Launcher L(c);
    L.add(w, [&](auto& h) {
        for (uint32_t i = 0; i < kBytes; i += 4) put(h, kSrc + i, uint32_t(0xA0000000u + i));
        kccl::hal::note_write(h, kSrc, kBytes);
        kccl::hal::l1_store_fence(h, kSrc, kBytes);  // N7 is the other bug class
        h.noc_write(kSrc, h.noc_addr(r.x, r.y, kData), kBytes);
        if (flush) h.noc_writes_flushed();
        if (sig == Signal::inc) h.sem_inc(h.noc_addr(r.x, r.y, kFlag), 1);
        else h.noc_inline_write32(h.noc_addr(r.x, r.y, kFlag), 1);
        h.sem_wait(kAck, 1);  // the reader's answer (a request / response pair)
        h.noc_write_barrier();
    });
    L.add(r, [&](auto& h) {
        h.sem_wait(kFlag, 1);
        kccl::hal::note_read(h, kData, kBytes);
        for (uint32_t i = 0; i < kBytes; i += 4)
            if (get<uint32_t>(h, kData + i) != 0xA0000000u + i) ++wrong;
        h.sem_inc(h.noc_addr(w.x, w.y, kAck), 1);
        h.noc_write_barrier();
    });
    RunReport rep = L.run(o);
    Obs ob;
    if (wrong) ob = {Verdict::caught, std::to_string(wrong) + " of " + std::to_string(kBytes / 4) + " words not yet landed"};
    else if (rep.ok()) ob = {Verdict::clean, {}};
    else ob = {Verdict::other, rep.summary()};
    if (out) *out = std::move(rep);
    return ob;
}

/// How the stored word is sent: a noc_write, a noc_write_mcast or a sem_set_mcast (to the cores
/// (1,0)..(2,0), the reader and one more).
enum class Send { noc_write, noc_write_mcast, sem_set_mcast };

/// Writer (0,0) stores kNew over its word kWord (the host left kOld there), sends the word to
/// reader (1,0)'s kData with a NoC write (or a multicast, `how`), waits for it to land, then
/// signals. With `fence`, l1_store_fence() separates the store from the write (N7). Caught: the
/// reader got exactly kOld, the value from before the store.
Obs store_then_send(bool fence, const RunOptions& o, RunReport* out = nullptr, Send how = Send::noc_write) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    host_zero(c, kData, 16);
    const auto w = c.chip(0).worker(0, 0), r = c.chip(0).worker(1, 0);
    c.write(w, kWord, &kOld, 4);
    uint32_t seen = 0;
    Launcher L(c);
    L.add(w, [&](auto& h) {
        put(h, kWord, kNew);
        kccl::hal::note_write(h, kWord, 4);
        if (fence) kccl::hal::l1_store_fence(h, kWord, 4);
        const kccl::hal::NocRect rect{r.x, r.y, r.x + 1, r.y};
        switch (how) {
            case Send::noc_write: h.noc_write(kWord, h.noc_addr(r.x, r.y, kData), 4); break;
            case Send::noc_write_mcast: h.noc_write_mcast(kWord, rect, kData, 4, 2, false); break;
            case Send::sem_set_mcast: h.sem_set_mcast(kWord, rect, kData, 2, false); break;
        }
        h.noc_write_barrier();
        h.sem_inc(h.noc_addr(r.x, r.y, kFlag), 1);
        h.noc_write_barrier();
    });
    L.add(r, [&](auto& h) {
        h.sem_wait(kFlag, 1);
        kccl::hal::note_read(h, kData, 4);
        seen = get<uint32_t>(h, kData);
    });
    RunReport rep = L.run(o);
    Obs ob;
    char buf[64];
    std::snprintf(buf, sizeof buf, "the reader got 0x%08x", seen);
    if (seen == kOld) ob = {Verdict::caught, buf};
    else if (seen != kNew) ob = {Verdict::other, std::string(buf) + " (neither the old nor the new value)\n" + rep.summary()};
    else if (rep.ok()) ob = {Verdict::clean, {}};
    else ob = {Verdict::other, rep.summary()};
    if (out) *out = std::move(rep);
    return ob;
}

using Scenario = std::function<Obs(const RunOptions&)>;

/// The modes every fixed version runs in: PCT and the seeded random policy without the
/// adversary, and the adversary (random policy, its default).
struct Mode {
    const char* name;
    RunOptions opt;
};
std::vector<Mode> modes(OrderingProfile p) {
    RunOptions pct = normal(3000ms);
    pct.schedule.policy = Policy::pct;
    pct.schedule.pct_depth = 3;
    pct.schedule.pct_steps = 50;
    RunOptions rnd = normal(3000ms);
    rnd.schedule.policy = Policy::random;
    return {{"pct", with_profile(pct, p)}, {"random", with_profile(rnd, p)}, {"adversarial", with_profile(adversarial(1, 3000ms), p)}};
}

/// Seeds 1..n of `sc` all clean in every mode under both profiles (race detector on: a report
/// fails the run).
void fixed_passes(const char* name, uint32_t n, const Scenario& sc) {
    for (OrderingProfile p : {OrderingProfile::observed, OrderingProfile::strict})
        for (Mode m : modes(p)) {
            m.opt.race = RunOptions::RaceCheck::on;
            std::string bad;
            auto res = kccl::emu::explore(n, m.opt, [&](const RunOptions& o) {
                const Obs ob = sc(o);
                if (ob.v != Verdict::clean) bad = ob.what.substr(0, 3000);
                return ob.v == Verdict::clean;
            });
            INFO(name << " (" << m.name << ", " << to_string(p) << "): " << bad << " replay: " << res.replay);
            REQUIRE(res.ok);
            REQUIRE(res.runs == n);
        }
}

/// explore() over seeds 1..n under `base` until the bug shows; requires a catch, and that the
/// replay string alone (applied to default RunOptions) shows it again. Returns the seed.
uint64_t caught_within(const char* name, uint32_t n, RunOptions base, const Scenario& sc) {
    base.race = RunOptions::RaceCheck::off;  // the schedule search, not the detector
    std::string unexpected;
    auto res = kccl::emu::explore(n, base, [&](const RunOptions& o) {
        const Obs ob = sc(o);
        if (ob.v == Verdict::other) unexpected = ob.what.substr(0, 3000);
        return ob.v == Verdict::clean;
    });
    INFO(name << ": " << unexpected);
    REQUIRE(unexpected.empty());
    REQUIRE_FALSE(res.ok);
    REQUIRE(has(res.replay, "ordering=strict"));
    RunOptions again;  // the replay string alone
    again.honour_replay_env = false;
    kccl::emu::apply_replay(again, res.replay);
    const Obs ob = sc(again);
    INFO("replay " << res.replay << ": " << ob.what);
    REQUIRE(ob.v == Verdict::caught);
    return res.failing_seed;
}

/// Seeds 1..n under `base` all clean (the bug the profile does not model).
void never_caught(const char* name, uint32_t n, RunOptions base, const Scenario& sc) {
    base.race = RunOptions::RaceCheck::off;
    std::string bad;
    auto res = kccl::emu::explore(n, base, [&](const RunOptions& o) {
        const Obs ob = sc(o);
        if (ob.v != Verdict::clean) bad = ob.what.substr(0, 3000);
        return ob.v == Verdict::clean;
    });
    INFO(name << ": " << bad);
    REQUIRE(res.ok);
}

RunOptions strict_adv() { return with_profile(adversarial(1, 3000ms), OrderingProfile::strict); }
RunOptions strict_pct_adv() {
    RunOptions o = strict_adv();
    o.schedule.policy = Policy::pct;
    o.schedule.pct_depth = 3;
    o.schedule.pct_steps = 50;
    return o;
}

/// The modes a bug is run in once for the race detector: plain fibers, the adversary, threads.
std::vector<RunOptions> one_run_each_mode(OrderingProfile p) {
    RunOptions threads = normal();
    threads.engine = kccl::emu::Engine::threads;
    std::vector<RunOptions> v = {normal(), adversarial(7), threads};
    for (auto& o : v) {
        o = with_profile(o, p);
        o.race = RunOptions::RaceCheck::on;
    }
    return v;
}

const Scenario kWriteIncBug = [](const RunOptions& o) { return write_then_signal(false, Signal::inc, o); };
const Scenario kWriteIncFixed = [](const RunOptions& o) { return write_then_signal(true, Signal::inc, o); };
const Scenario kWriteInlineBug = [](const RunOptions& o) { return write_then_signal(false, Signal::inline_write, o); };
const Scenario kWriteInlineFixed = [](const RunOptions& o) { return write_then_signal(true, Signal::inline_write, o); };
const Scenario kStoreBug = [](const RunOptions& o) { return store_then_send(false, o); };
const Scenario kStoreFixed = [](const RunOptions& o) { return store_then_send(true, o); };
const Scenario kStoreMcastBug = [](const RunOptions& o) { return store_then_send(false, o, nullptr, Send::noc_write_mcast); };
const Scenario kStoreMcastFixed = [](const RunOptions& o) { return store_then_send(true, o, nullptr, Send::noc_write_mcast); };
const Scenario kStoreSetMcastBug = [](const RunOptions& o) { return store_then_send(false, o, nullptr, Send::sem_set_mcast); };
const Scenario kStoreSetMcastFixed = [](const RunOptions& o) { return store_then_send(true, o, nullptr, Send::sem_set_mcast); };

}  // namespace

// ---- profile selection ----------------------------------------------------------------------------

TEST_CASE("ordering profile: RunOptions, the replay string and its errors", "[emulation][ordering]") {
    RunOptions o;
    o.ordering = OrderingProfile::strict;
    CHECK(has(kccl::emu::replay_string(o), ",ordering=strict"));
    o.ordering = OrderingProfile::observed;
    CHECK(has(kccl::emu::replay_string(o), ",ordering=observed"));
    RunOptions r;
    kccl::emu::apply_replay(r, "policy=random,seed=3,adversary=1,dirty=1,ordering=strict");
    CHECK(r.ordering == OrderingProfile::strict);
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(r, "ordering=lax"),
                        Catch::Contains("ordering profile 'lax' is unknown (allowed: observed, strict)"));
    // A run reports the profile it used.
    RunReport rep;
    write_then_signal(true, Signal::inc, with_profile(adversarial(2), OrderingProfile::strict), &rep);
    CHECK(has(rep.replay, ",ordering=strict"));
}

// ---- write, then signal without a flush -----------------------------------------------------------

TEST_CASE("strict profile: a write then an increment to the same core without a flush is caught within 100 seeds",
          "[emulation][ordering][mutation]") {
    const uint64_t a = caught_within("write then sem_inc (strict, adversary)", 100, strict_adv(), kWriteIncBug);
    const uint64_t b = caught_within("write then sem_inc (strict, PCT + adversary)", 100, strict_pct_adv(), kWriteIncBug);
    const uint64_t c = caught_within("write then inline write (strict, adversary)", 100, strict_adv(), kWriteInlineBug);
    WARN("write then signal, no flush, strict: caught at seed " << a << " (adversary), " << b << " (PCT + adversary), "
                                                                << c << " (inline write, adversary)");
    // The observed profile orders them (N1): the same kernels never fail there.
    never_caught("write then sem_inc (observed)", 100, with_profile(adversarial(1, 3000ms), OrderingProfile::observed),
                 kWriteIncBug);
}

TEST_CASE("strict profile: the race detector reports a write then an increment without a flush on the first run",
          "[emulation][ordering][race][mutation]") {
    // Whether the reader happened to see the data depends on the schedule; the report does not.
    for (const RunOptions& o : one_run_each_mode(OrderingProfile::strict)) {
        RunReport rep;
        write_then_signal(false, Signal::inc, o, &rep);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        const std::string s = races(rep);
        CHECK(has(s, "data race: chip 0 worker (1,0) note_read (a load through l1_ptr) at ordering_test.cpp"));
        CHECK(has(s, "last written by chip 0 worker (0,0) (noc_write at ordering_test.cpp"));
        CHECK(has(s, "before later increments and inline writes to it only across a noc_writes_flushed() (N1, strict profile)"));
        RunReport rep2;
        write_then_signal(false, Signal::inline_write, o, &rep2);
        INFO(rep2.summary());
        CHECK(has(races(rep2), "last written by chip 0 worker (0,0) (noc_write at ordering_test.cpp"));
    }
    // Observed: N1 orders them; no report.
    for (const RunOptions& o : one_run_each_mode(OrderingProfile::observed)) {
        RunReport rep;
        CHECK(write_then_signal(false, Signal::inc, o, &rep).v == Verdict::clean);
        CHECK(rep.races.empty());
    }
}

// ---- store, then send without a fence (N7) --------------------------------------------------------

TEST_CASE("strict profile: a store then a NoC write of it without l1_store_fence sends the old value",
          "[emulation][ordering][mutation]") {
    // The mutation's specific failure: the reader gets kOld, the value before the store.
    RunOptions base = strict_adv();
    base.race = RunOptions::RaceCheck::off;
    bool saw_old = false;
    for (uint64_t seed = 1; seed <= 100 && !saw_old; ++seed) {
        RunOptions o = base;
        o.schedule.seed = o.adversary.seed = seed;
        const Obs ob = kStoreBug(o);
        INFO("seed " << seed << ": " << ob.what);
        REQUIRE(ob.v != Verdict::other);
        if (ob.v == Verdict::caught) {
            CHECK(ob.what == "the reader got 0x5eed5eed");
            saw_old = true;
        }
    }
    REQUIRE(saw_old);
    const uint64_t a = caught_within("store then noc_write (strict, adversary)", 100, strict_adv(), kStoreBug);
    const uint64_t b = caught_within("store then noc_write (strict, PCT + adversary)", 100, strict_pct_adv(), kStoreBug);
    WARN("store then send, no fence, strict: caught at seed " << a << " (adversary), " << b << " (PCT + adversary)");
    // The observed profile does not model the hazard (never seen on hardware; docs/contract.md).
    never_caught("store then noc_write (observed)", 100, with_profile(adversarial(1, 3000ms), OrderingProfile::observed),
                 kStoreBug);
}

TEST_CASE("strict profile: the race detector reports a store read as a NoC source without a fence on the first run",
          "[emulation][ordering][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode(OrderingProfile::strict)) {
        RunReport rep;
        store_then_send(false, o, &rep);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        const std::string s = races(rep);
        CHECK(has(s, "store not fenced: chip 0 worker (0,0) noc_write at ordering_test.cpp"));
        CHECK(has(s, "reads as its source L1 [0x200, 0x204) of chip 0 worker (0,0), which it stored (note_write at ordering_test.cpp"));
        CHECK(has(s, "(N7, strict profile)"));
    }
    for (const RunOptions& o : one_run_each_mode(OrderingProfile::observed)) {
        RunReport rep;
        CHECK(store_then_send(false, o, &rep).v == Verdict::clean);
        CHECK(rep.races.empty());
    }
}

TEST_CASE("strict profile: a store then a multicast of it without l1_store_fence sends the old value (N7)",
          "[emulation][ordering][multicast][mutation]") {
    // noc_write_mcast's source and sem_set_mcast's source word are NoC reads of L1 like a
    // noc_write's source: the reader gets kOld, the value from before the store, on some seed.
    const std::pair<const char*, const Scenario*> bugs[] = {{"noc_write_mcast", &kStoreMcastBug},
                                                            {"sem_set_mcast", &kStoreSetMcastBug}};
    for (const auto& [name, sc] : bugs) {
        RunOptions base = strict_adv();
        base.race = RunOptions::RaceCheck::off;
        bool saw_old = false;
        for (uint64_t seed = 1; seed <= 100 && !saw_old; ++seed) {
            RunOptions o = base;
            o.schedule.seed = o.adversary.seed = seed;
            const Obs ob = (*sc)(o);
            INFO(name << ", seed " << seed << ": " << ob.what);
            REQUIRE(ob.v != Verdict::other);
            if (ob.v == Verdict::caught) {
                CHECK(ob.what == "the reader got 0x5eed5eed");
                saw_old = true;
            }
        }
        INFO(name);
        REQUIRE(saw_old);
        caught_within(name, 100, strict_adv(), *sc);
        never_caught(name, 100, with_profile(adversarial(1, 3000ms), OrderingProfile::observed), *sc);
    }
}

TEST_CASE("strict profile: the race detector reports a store multicast without a fence on the first run (N7)",
          "[emulation][ordering][race][multicast][mutation]") {
    for (Send how : {Send::noc_write_mcast, Send::sem_set_mcast}) {
        const std::string op = how == Send::noc_write_mcast ? "noc_write_mcast" : "sem_set_mcast";
        for (const RunOptions& o : one_run_each_mode(OrderingProfile::strict)) {
            RunReport rep;
            store_then_send(false, o, &rep, how);
            INFO(op << ": " << rep.summary());
            REQUIRE_FALSE(rep.ok());
            const std::string s = races(rep);
            CHECK(has(s, "store not fenced: chip 0 worker (0,0) " + op + " at ordering_test.cpp"));
            CHECK(has(s, "reads as its source L1 [0x200, 0x204) of chip 0 worker (0,0), which it stored (note_write at ordering_test.cpp"));
            CHECK(has(s, "(N7, strict profile)"));
            // With the fence: no report.
            RunReport fenced;
            CHECK(store_then_send(true, o, &fenced, how).v == Verdict::clean);
            CHECK(fenced.races.empty());
        }
        for (const RunOptions& o : one_run_each_mode(OrderingProfile::observed)) {
            RunReport rep;
            CHECK(store_then_send(false, o, &rep, how).v == Verdict::clean);
            CHECK(rep.races.empty());
        }
    }
}

TEST_CASE("l1_store_fence and the flushes: their one-branch fast path keeps the range check and the checkers",
          "[emulation][ordering]") {
    // Without a checker a fence is one compare (Hal::fence_limit_) and a flush or barrier returns at
    // once (Hal::quiet_), on the plain fiber engine and on the thread engine alike. The compare must
    // still refuse a range beyond L1, and with the race detector or the strict adversary every
    // fence and flush must still reach its checker (the race-detector tests above: the fixed
    // versions are clean because the fence and the flush reach it).
    RunOptions threads = normal();
    threads.engine = kccl::emu::Engine::threads;
    RunOptions threads_race = threads;
    threads_race.race = RunOptions::RaceCheck::on;
    RunOptions fibers_race = normal();
    fibers_race.race = RunOptions::RaceCheck::on;
    for (const RunOptions& base : {normal(), threads, fibers_race, threads_race, strict_adv()}) {
        const RunOptions o = with_profile(base, base.ordering == OrderingProfile::from_env ? OrderingProfile::observed : base.ordering);
        Cluster c(topo::single_chip(small_chip()));
        const auto w = c.chip(0).worker(0, 0);
        const uint32_t l1 = c.chip(0).spec().worker_l1_bytes;
        Launcher L(c);
        L.add(w, [&](auto& h) {
            for (int i = 0; i < 3; ++i) {
                kccl::hal::l1_store_fence(h, l1 - 16, 16);  // the last 16 bytes: in range
                h.noc_writes_flushed();
                h.noc_write_barrier();
                h.noc_read_barrier();
            }
            kccl::hal::l1_store_fence(h, l1 - 4, 8);  // 4 bytes beyond L1
        });
        const RunReport rep = L.run(o);
        INFO(kccl::emu::replay_string(o) << "\n" << rep.summary());
        REQUIRE_FALSE(rep.ok());
        CHECK(has(rep.summary(), "l1_store_fence"));
        CHECK(has(rep.summary(), "exceeds this core's L1 of " + std::to_string(l1) + " bytes"));
    }
}

// ---- the fixed versions ---------------------------------------------------------------------------

TEST_CASE("ordering: the fixed versions pass 50 seeds in every mode under both profiles", "[emulation][ordering]") {
    fixed_passes("write, flush, sem_inc", kccl_tests::sweep_seeds(50), kWriteIncFixed);
    fixed_passes("write, flush, inline write", kccl_tests::sweep_seeds(50), kWriteInlineFixed);
    fixed_passes("store, fence, noc_write", kccl_tests::sweep_seeds(50), kStoreFixed);
    fixed_passes("store, fence, noc_write_mcast", kccl_tests::sweep_seeds(50), kStoreMcastFixed);
    fixed_passes("store, fence, sem_set_mcast", kccl_tests::sweep_seeds(50), kStoreSetMcastFixed);
}

TEST_CASE("ordering: the fixed versions pass 1000 seeds in every mode under both profiles", "[emulation][ordering][long]") {
    const auto t0 = std::chrono::steady_clock::now();
    fixed_passes("write, flush, sem_inc", 1000, kWriteIncFixed);
    fixed_passes("write, flush, inline write", 1000, kWriteInlineFixed);
    fixed_passes("store, fence, noc_write", 1000, kStoreFixed);
    fixed_passes("store, fence, noc_write_mcast", 1000, kStoreMcastFixed);
    fixed_passes("store, fence, sem_set_mcast", 1000, kStoreSetMcastFixed);
    WARN("ordering fixed versions, 1000 seeds x 3 modes x 2 profiles x 3 pairs: "
         << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
}

// Complete replay: the replay string a run prints holds every setting that changes the run, so a
// run started from the string alone (default RunOptions + apply_replay) reproduces it: the same
// run hash, steps and switches, and the same outcome. Catches are taken from random searches
// (explore) under every mode: random, random with its own preemption rate, PCT with its step
// budget, the adversary (its own knobs, dirty L1 with its own seed, random start skew), fifo
// without handoff and with start skews, and a timed run on the Wormhole model. Dropping a key
// the run used changes the hash (the keys are needed), and the thread engine's string names it.
#include "edm/harness.hpp"

#include <string>
#include <vector>

using namespace kccl::test;
using namespace kccl::test::edm_harness::mutations;
using kccl::emu::Policy;
namespace eh = kccl::test::edm_harness;

namespace {

/// A run and what it showed.
struct Outcome {
    kccl::emu::RunReport report;
    uint64_t errors = 0, received = 0;
    std::string signature() const {
        return std::string(report.ok() ? "ok" : report.deadlock ? "deadlock" : "failed") + " errors " +
               std::to_string(errors) + " received " + std::to_string(received) + "\n" + report.watchdog_dump;
    }
};

/// The EDM with clear-before-notify swapped (an interleaving bug: some schedules erase a
/// worker's increment and the channel stops), 2 channels of 2 buffers, 30 messages each.
Outcome notify_before_clear(const RunOptions& o) {
    Cluster cluster(eh::two_chips());
    auto r = eh::run<NotifyBeforeClear>(cluster, eh::small(2, 2, 64, 30), o);
    return {r.report, r.errors, r.received};
}

bool caught(const Outcome& x) { return !x.report.ok() || x.errors != 0; }

/// Runs the string alone: default options, then the string.
Outcome from_string(const std::string& replay) {
    RunOptions o;
    o.honour_replay_env = false;
    kccl::emu::apply_replay(o, replay);
    return notify_before_clear(o);
}

void same_run(const Outcome& a, const Outcome& b) {
    CHECK(a.report.run_hash == b.report.run_hash);
    CHECK(a.report.steps == b.report.steps);
    CHECK(a.report.switches == b.report.switches);
    CHECK(a.report.replay == b.report.replay);
    CHECK(a.signature() == b.signature());
}

/// Drops key `k` (and its value) from a replay string.
std::string without(const std::string& replay, const std::string& k) {
    std::string out;
    size_t at = 0;
    while (at < replay.size()) {
        size_t end = replay.find(',', at);
        if (end == std::string::npos) end = replay.size();
        const std::string kv = replay.substr(at, end - at);
        if (kv.compare(0, k.size() + 1, k + "=") != 0) out += (out.empty() ? "" : ",") + kv;
        at = end + 1;
    }
    return out;
}

struct Mode {
    const char* name;
    RunOptions base;
    std::vector<std::string> keys;  ///< keys the string must hold, each of which changes this run
};

std::vector<Mode> modes() {
    std::vector<Mode> v;
    auto base = [] {
        RunOptions o;
        o.watchdog = std::chrono::milliseconds(3000);
        o.honour_replay_env = false;
        return o;
    };
    {
        RunOptions o = base();
        o.schedule.policy = Policy::random;
        v.push_back({"random", o, {}});
        o.schedule.preempt_percent = 40;
        v.push_back({"random, preempt 40", o, {"preempt"}});
    }
    {
        RunOptions o = base();
        o.schedule.policy = Policy::pct;
        o.schedule.pct_depth = 5;
        o.schedule.pct_steps = 300;  // a run is ~1000-3000 steps: the change points fall early in it
        v.push_back({"pct, depth 5, 300 steps", o, {"steps", "depth"}});
    }
    {
        RunOptions o = base();
        o.adversary.enabled = true;  // automatic policy: random from the adversary's seed, dirty L1
        v.push_back({"adversary", o, {"adversary"}});
    }
    {
        RunOptions o = base();
        o.schedule.policy = Policy::pct;
        o.schedule.pct_steps = 300;
        o.adversary.enabled = true;
        o.adversary.hold_percent = 60;
        o.adversary.deliver_percent = 50;
        o.adversary.max_hold = std::chrono::microseconds(50);
        o.dirty_seed = 77;
        o.random_skew_max = std::chrono::microseconds(300);
        v.push_back({"pct + adversary (hold 60, deliver 50), dirty seed, random skew", o,
                     {"adversary", "steps", "hold", "deliver", "skew_max"}});
    }
    {
        RunOptions o = base();
        o.schedule.policy = Policy::fifo;
        o.schedule.handoff = false;
        o.start_skew = {std::chrono::microseconds(0), std::chrono::microseconds(150)};
        o.random_skew_max = std::chrono::microseconds(100);
        o.wait.spin_polls = 4;
        v.push_back({"fifo without handoff, start skew", o, {"skew", "skew_max"}});
    }
    return v;
}

}  // namespace

TEST_CASE("replay: catches from random searches in every mode replay from the string alone", "[emulation][replay]") {
    for (const Mode& m : modes()) {
        INFO("mode: " << m.name);
        Outcome last;
        auto res = kccl::emu::explore(200, m.base, [&](const RunOptions& o) {
            last = notify_before_clear(o);
            return !caught(last);
        });
        // The search either caught the bug (the catch is replayed) or ran every seed clean (the
        // last run is replayed): either way the run came from a seed of the search.
        INFO("search: " << (res.ok ? "no catch in 200 seeds" : "caught at seed " + std::to_string(res.failing_seed))
                        << ", replay " << last.report.replay);
        if (!res.ok) CHECK(res.replay == last.report.replay);  // explore prints what the run reports
        for (const std::string& k : m.keys) CHECK(last.report.replay.find("," + k + "=") != std::string::npos);
        const Outcome again = from_string(last.report.replay);
        same_run(last, again);
        // Each key the mode set is needed: without it the string runs another schedule (for one
        // of the mode's first seeds at least: a setting need not matter to every run).
        for (const std::string& k : m.keys) {
            INFO("without " << k);
            bool differs = false;
            for (uint64_t seed = 1; seed <= 10 && !differs; ++seed) {
                RunOptions o = m.base;
                o.schedule.seed = o.adversary.seed = o.skew_seed = seed;
                const Outcome full = notify_before_clear(o);
                differs = from_string(without(full.report.replay, k)).report.run_hash != full.report.run_hash;
            }
            CHECK(differs);
        }
    }
}

TEST_CASE("replay: most modes catch the bug within the search, so catches are what gets replayed", "[emulation][replay]") {
    // The point of the test above is replaying catches: make sure most modes produced one.
    uint32_t catches = 0;
    for (const Mode& m : modes()) {
        auto res = kccl::emu::explore(200, m.base, [&](const RunOptions& o) { return !caught(notify_before_clear(o)); });
        catches += !res.ok;
    }
    CHECK(catches >= 4);
}

TEST_CASE("replay: a timed run names its model and replays from the string alone", "[emulation][replay][timing]") {
    kccl::emu::WormholeModel model;
    RunOptions o;
    o.honour_replay_env = false;
    o.timing = &model;
    const Outcome a = notify_before_clear(o);
    CHECK(a.report.replay == "policy=timed,seed=1,adversary=0,dirty=0,timing=wormhole,race=0,ordering=observed");
    const Outcome b = from_string(a.report.replay);
    same_run(a, b);
    CHECK(a.report.makespan == b.report.makespan);
    // A model with other options than its defaults is named as such, and the string alone refuses it.
    kccl::emu::WormholeOptions wo;
    wo.eth_link_latency_ps = 1;
    kccl::emu::WormholeModel custom(wo);
    o.timing = &custom;
    const std::string s = kccl::emu::replay_string(o);
    CHECK(s == "policy=timed,seed=1,adversary=0,dirty=0,timing=wormhole:custom,race=0,ordering=observed");
    RunOptions r;
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(r, s), Catch::Contains("model with options other than its defaults"));
}

TEST_CASE("replay: every key round-trips through apply_replay, and bad values are named", "[emulation][replay]") {
    RunOptions o;
    o.engine = kccl::emu::Engine::threads;
    o.schedule.policy = Policy::pct;
    o.schedule.seed = 9;
    o.schedule.pct_depth = 4;
    o.schedule.pct_steps = 123;
    o.adversary.enabled = true;
    o.adversary.seed = 11;
    o.adversary.deliver_percent = 1;
    o.adversary.max_words_per_step = 2;
    o.adversary.delay_percent = 3;
    o.adversary.hold_percent = 4;
    o.adversary.max_hold = std::chrono::microseconds(5);
    o.dirty_seed = 6;
    o.start_skew = {std::chrono::microseconds(7), std::chrono::microseconds(0), std::chrono::microseconds(8)};
    o.random_skew_max = std::chrono::microseconds(9);
    o.skew_seed = 10;
    o.wait.spin_polls = 12;
    o.wait.yield_polls = 13;
    o.ordering = kccl::emu::OrderingProfile::strict;
    const std::string s = kccl::emu::replay_string(o);
    CHECK(s == "policy=pct,seed=9,engine=threads,depth=4,steps=123,adversary=1,adversary_seed=11,deliver=1,words=2,"
               "delay=3,hold=4,max_hold_us=5,dirty=1,dirty_seed=6,skew=7:0:8,skew_max=9,skew_seed=10,spin=12,yield=13,"
               "race=1,ordering=strict");
    RunOptions r;
    kccl::emu::apply_replay(r, s);
    CHECK(kccl::emu::replay_string(r) == s);
    CHECK(r.engine == kccl::emu::Engine::threads);
    CHECK(r.adversary.seed == 11);
    CHECK(r.schedule.seed == 9);
    CHECK(r.skew_seed == 10);
    CHECK(r.start_skew.size() == 3);
    CHECK(r.race == RunOptions::RaceCheck::on);
    RunOptions bad;
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "adversary=yes"), Catch::Contains("'adversary=yes': adversary must be 0 or 1"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "skew=1:x"), Catch::Contains("'skew=1:x': the value must be a decimal number"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "depth=99999999999"), Catch::Contains("must fit 32 bits"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "race=2"), Catch::Contains("'race=2': race must be 0 or 1"));
    REQUIRE_THROWS_WITH(kccl::emu::apply_replay(bad, "timing=blackhole"), Catch::Contains("timing model 'blackhole' is unknown"));
}

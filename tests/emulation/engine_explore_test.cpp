// PCT exploration on real protocols. IPCQ's head-before-data mutation, in normal (non-
// adversarial) mode, is an interleaving bug only: every write lands at once, so it shows only if
// the receiver runs between the sender's head write and its payload writes. FIFO never schedules
// that; PCT must find it within 1000 seeds, and the printed setting must replay it. Tagged
// [mutation]: the broken protocol races on purpose (excluded from the TSan run).
#include "edm/harness.hpp"
#include "ipcq/ipcq_util.hpp"

#include <algorithm>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;
using kccl::emu::Policy;

namespace {

struct HeadBeforeData : iq::DefaultPolicy {
    static constexpr bool head_before_data = true;
};

constexpr uint32_t kSrc = kScratch, kAcc = kScratch + 0x4000, kMessages = 64;

/// Rank 0 streams kMessages 64-byte messages to rank 1, which counts wrong payload words.
/// Returns true when the run completed and every word was right.
template <class P>
bool clean_stream(const RunOptions& o) {
    Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 64));
    s.add_all([](auto& hal, uint32_t r) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>, Nsew, P> q(hal, hal.arg(0));
        if (r == 0) {
            for (uint32_t m = 0; m < kMessages; ++m) {
                fill(hal, kSrc, 16, 0, 1, m);
                q.send(Nsew::E, kSrc, 64);
            }
            q.quiesce();
            return 0;
        }
        uint64_t bad = 0;
        for (uint32_t m = 0; m < kMessages; ++m) {
            auto slot = q.recv(Nsew::W);
            bad += mismatches(q.data(slot), 16, 0, 1, m);
            q.release(slot);
        }
        q.quiesce();
        return bad;
    });
    const RunReport rep = s.run(o);
    return rep.ok() && rep.at(s.core(1)).value == 0;
}

RunOptions pct(uint64_t seed) {
    RunOptions o = normal();
    o.schedule.policy = Policy::pct;
    o.schedule.seed = seed;
    o.schedule.pct_depth = 3;
    o.schedule.pct_steps = 4000;
    o.honour_replay_env = false;
    return o;
}

}  // namespace

TEST_CASE("PCT finds IPCQ's head-before-data mutation without the adversary and replays it",
          "[emulation][engine][pct][mutation]") {
    // The correct protocol is clean under the same exploration, and the mutation under FIFO.
    for (uint64_t seed = 1; seed <= 20; ++seed) REQUIRE(clean_stream<iq::DefaultPolicy>(pct(seed)));
    RunOptions fifo = normal();
    fifo.schedule.policy = Policy::fifo;
    fifo.honour_replay_env = false;
    REQUIRE(clean_stream<HeadBeforeData>(fifo));
    auto res = kccl::emu::explore(1000, pct(1), [](const RunOptions& o) { return clean_stream<HeadBeforeData>(o); });
    REQUIRE_FALSE(res.ok);
    WARN("PCT (depth 3) caught IPCQ head-before-data at seed " << res.failing_seed << " (" << res.runs << " runs)");
    REQUIRE(res.runs <= 1000);
    // The printed setting replays it: the same failure, every time.
    RunOptions again = pct(1);
    kccl::emu::apply_replay(again, res.replay);
    REQUIRE_FALSE(clean_stream<HeadBeforeData>(again));
    REQUIRE_FALSE(clean_stream<HeadBeforeData>(again));
}

namespace {
struct NotifyBeforeClear : kccl::edm::DefaultConfig {
    static constexpr bool mutation_notify_before_clear = true;
};
struct SharedAckSource : kccl::edm::DefaultConfig {
    static constexpr bool mutation_shared_ack_source = true;
};
/// Two EDM channels stream `messages` packets each way; true when everything arrived intact.
template <class Config>
bool clean_edm(const RunOptions& o) {
    namespace eh = kccl::test::edm_harness;
    eh::Scenario sc;
    sc.channels = 2;
    sc.buffers = 2;
    sc.packet_bytes = 64;
    sc.messages = 200;
    Cluster cluster(eh::two_chips());
    RunOptions opt = o;
    opt.watchdog = std::chrono::milliseconds(2000);
    auto r = eh::run<Config>(cluster, sc, opt);
    return r.report.ok() && r.errors == 0 && r.received == r.expected_received;
}
}  // namespace

TEST_CASE("PCT finds the EDM's notify-before-clear (no adversary) and shared-ack-source (with it)",
          "[emulation][engine][pct][mutation]") {
    RunOptions base = pct(1);
    base.schedule.pct_steps = 20000;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        RunOptions o = base;
        o.schedule.seed = seed;
        REQUIRE(clean_edm<kccl::edm::DefaultConfig>(o));
    }
    auto a = kccl::emu::explore(1000, base, [](const RunOptions& o) { return clean_edm<NotifyBeforeClear>(o); });
    REQUIRE_FALSE(a.ok);
    WARN("PCT (depth 3) caught EDM notify-before-clear at seed " << a.failing_seed);
    // The shared ack source is not an interleaving bug: a send's source is read when it is
    // delivered (E1), which only the adversary models (in normal mode a send copies at issue).
    // No interleaving shows it; PCT with the adversary does.
    auto none = kccl::emu::explore(200, base, [](const RunOptions& o) { return clean_edm<SharedAckSource>(o); });
    REQUIRE(none.ok);
    RunOptions adv = base;
    adv.adversary.enabled = true;
    auto b = kccl::emu::explore(1000, adv, [](const RunOptions& o) { return clean_edm<SharedAckSource>(o); });
    REQUIRE_FALSE(b.ok);
    WARN("PCT (depth 3) with the adversary caught EDM shared-ack-source at seed " << b.failing_seed);
}

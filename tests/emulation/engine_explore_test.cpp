// PCT exploration against every protocol mutation switch of the library: the EDM's four
// (edm::DefaultConfig::mutation_*) and IPCQ's four of its send path (iq::DefaultPolicy; its
// fifth, put_without_window, needs collectives back to back and is caught by
// tests/collectives/put_test.cpp on the first schedule). For each one a test runs
// explore() with the PCT policy over at most 1000 seeds, stops at the first seed whose run shows
// the failure that mutation causes — the specific corrupted values, or the deadlock dump's waits
// — and replays that seed from the printed setting; any other failure (an error, a hang of
// another shape, a corruption the mutation cannot cause) fails the test. The correct protocol
// runs the same scenario with the same settings over seeds 1..100-1000 and stays clean. The
// eight CI cases take ~1.4 s at -O1 (~5 s under ASan + UBSan).
//
// Three mutations are not interleaving bugs and no schedule shows them: without the adversary a
// write or an Ethernet packet lands whole, at once, when it is issued. The sync word before the
// payload and the DRAM payload without a barrier need a delivery split or reordered (E3, N1);
// the shared ack source needs a send's source read at delivery rather than at issue (E1). Those
// run PCT with the adversary (which draws its delivery decisions from the same seed) and check
// that PCT alone stays clean. The [long] case sweeps all seeds 1..1000 of every mutation (and of
// the correct protocol, and the random policy for comparison) and prints the table in
// docs/emulation-adversarial.md ("Seeds to catch"):
//   scripts/dev_test.sh tests/emulation/engine_explore_test.cpp -- "[long]"
//
// Tagged [mutation]: the broken protocols race on purpose (excluded from the TSan run).
#include "edm/harness.hpp"
#include "ipcq/ipcq_util.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using namespace kccl::test::ipcq::mutations;
using namespace kccl::test::edm_harness::mutations;
using iq::Nsew;
using kccl::emu::Policy;
namespace eh = kccl::test::edm_harness;

namespace {

// ---- exploration helpers ------------------------------------------------------------------------

/// What one run of a scenario showed.
enum class Verdict { clean, caught, other };
struct Obs {
    Verdict v = Verdict::other;
    std::string what;  ///< for `other` (and for messages): what the run did
};
using Scenario = std::function<Obs(const RunOptions&)>;

Obs clean() { return {Verdict::clean, {}}; }
Obs caught() { return {Verdict::caught, {}}; }
Obs other(std::string what) { return {Verdict::other, std::move(what)}; }
bool has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }
bool any_failed(const RunReport& r) {
    for (const auto& c : r.cores)
        if (c.status == kccl::emu::CoreStatus::failed) return true;
    return false;
}

/// PCT of depth `depth` (depth - 1 priority change points drawn from [1, steps]); the adversary
/// on request.
RunOptions pct(uint32_t depth, uint64_t steps, bool adversary = false) {
    RunOptions o = normal(std::chrono::milliseconds(3000));
    o.schedule.policy = Policy::pct;
    o.schedule.seed = 1;
    o.schedule.pct_depth = depth;
    o.schedule.pct_steps = steps;
    o.adversary.enabled = adversary;
    o.adversary.seed = 1;
    o.honour_replay_env = false;
    // These tests measure what the schedule search catches by the failure each mutation causes;
    // the race detector reports the same mutations on their first run (race_test.cpp).
    o.race = RunOptions::RaceCheck::off;
    return o;
}

/// explore() over seeds 1..n, stopping at the first run that shows the mutation's failure.
/// Requires that it is caught, that no run failed otherwise, and that the printed setting replays
/// it. Returns the catching seed.
uint64_t find_with_pct(const char* name, uint32_t n, const RunOptions& base, const Scenario& sc) {
    std::string unexpected;
    auto res = kccl::emu::explore(n, base, [&](const RunOptions& o) {
        Obs ob = sc(o);
        if (ob.v == Verdict::other)
            unexpected = "seed " + std::to_string(o.schedule.seed) + ": " + ob.what.substr(0, 3000);
        return ob.v == Verdict::clean;
    });
    INFO(name << ": " << unexpected);
    REQUIRE(unexpected.empty());
    REQUIRE_FALSE(res.ok);  // caught within n seeds
    WARN("PCT (depth " << base.schedule.pct_depth << (base.adversary.enabled ? ", adversary" : "") << ") caught "
                       << name << " at seed " << res.failing_seed << " (" << res.replay << ")");
    // The printed setting replays the same failure, twice.
    for (int k = 0; k < 2; ++k) {
        RunOptions again = base;
        again.engine = kccl::emu::Engine::fibers;
        kccl::emu::apply_replay(again, res.replay);
        const Obs ob = sc(again);
        INFO("replay " << res.replay << ": " << ob.what.substr(0, 3000));
        REQUIRE(ob.v == Verdict::caught);
    }
    return res.failing_seed;
}

/// Seeds 1..n all run clean (the correct protocol, or a mutation no schedule alone can show).
void clean_over(const char* name, uint32_t n, const RunOptions& base, const Scenario& sc) {
    std::string bad;
    auto res = kccl::emu::explore(n, base, [&](const RunOptions& o) {
        Obs ob = sc(o);
        if (ob.v != Verdict::clean)
            bad = "seed " + std::to_string(o.schedule.seed) + (ob.v == Verdict::caught ? ": caught" : ": ") +
                  ob.what.substr(0, 3000);
        return ob.v == Verdict::clean;
    });
    INFO(name << ": " << bad);
    REQUIRE(res.ok);
    REQUIRE(res.runs == (kccl::emu::replay_env().empty() ? n : 1u));  // KCCL_EMU_REPLAY runs one setting
}

/// Every seed 1..n (no stopping): how many catch it and the first that does (0: none).
struct Sweep {
    uint32_t n = 0, caught = 0;
    uint64_t first = 0;
};
Sweep sweep(const char* name, uint32_t n, RunOptions base, const Scenario& sc) {
    Sweep s;
    s.n = n;
    base.engine = kccl::emu::Engine::fibers;
    for (uint64_t seed = 1; seed <= n; ++seed) {
        RunOptions o = base;
        o.schedule.seed = o.adversary.seed = o.skew_seed = seed;
        const Obs ob = sc(o);
        INFO(name << " seed " << seed << ": " << ob.what.substr(0, 3000));
        REQUIRE(ob.v != Verdict::other);
        if (ob.v == Verdict::caught) {
            ++s.caught;
            if (!s.first) s.first = seed;
        }
    }
    return s;
}

// ---- IPCQ ---------------------------------------------------------------------------------------
// The mutated policies are ipcq_util.hpp's (ipcq::mutations).

constexpr uint32_t kSrc = kScratch;

/// Rank 0 streams `n` messages of 1-16 words to rank 1 (4 slots of 64 B, poll mode, payload in
/// L1 or DRAM); rank 1 counts wrong payload words and wrong headers (counter or length).
/// Failure: the run completes and the receiver saw stale payload words or (only if
/// `headers_may_go_stale`) stale headers; clean: it completes with nothing wrong.
template <class P>
Obs ipcq_stream(const RunOptions& o, uint32_t n, iq::Placement placement, bool headers_may_go_stale) {
    const StreamRun r = run_stream<P>(n, cfg(4, 64, iq::Backpressure::poll, placement), o);
    if (!r.report.ok()) return other(r.report.summary());
    if (r.bad_words == 0 && r.bad_headers == 0) return clean();
    if (r.bad_headers != 0 && !headers_may_go_stale)
        return other(std::to_string(r.bad_headers) +
                     " wrong headers: the descriptor goes to the receiver's core like the head (N1)");
    return caught();  // head before data: stale payload words, stale headers, or both
}

/// A 3-slot ring whose counters start at 2^32 - 2: rank 0 sends 3 messages (counters 2^32 - 2,
/// 2^32 - 1, 0; message m carries m in word 0), rank 1 receives them and records word 0 of
/// each. With slot = counter % 3 the last two share slot 0. Failure: message 1 shows message 2's
/// payload, i.e. words {0, 2, 2}; clean: {0, 1, 2}.
template <class P>
Obs ipcq_wrap_slots(const RunOptions& o) {
    auto c = cfg(3, 64);
    c.initial_counter = 0u - 2u;
    Setup<Nsew> s(ih::ring_1d_unidir(2), c);
    s.add_all([](auto& hal, uint32_t r) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>, Nsew, P> q(hal, hal.arg(0));
        if (r == 0) {
            for (uint32_t m = 0; m < 3; ++m) {
                fill(hal, kSrc, 16, 0, 1, m);
                q.send(Nsew::E, kSrc, 64);
            }
            q.quiesce();
            return 0;
        }
        uint64_t words = 0;  // word 0 of message m in byte m
        for (uint32_t m = 0; m < 3; ++m) {
            auto slot = q.recv(Nsew::W);
            words |= uint64_t(reinterpret_cast<const uint32_t*>(q.data(slot))[0] & 0xff) << (8 * m);
            q.release(slot);
        }
        q.quiesce();
        return words;
    });
    const RunReport rep = s.run(o);
    if (!rep.ok()) return other(rep.summary());
    // fill() puts m in word 0 of message m.
    const uint64_t got = rep.at(s.core(1)).value;
    const uint64_t right = 0 | 1 << 8 | 2 << 16, collided = 0 | 2 << 8 | 2 << 16;
    if (got == right) return clean();
    if (got == collided) return caught();
    return other("words " + std::to_string(got));
}

/// Sleep mode, 3 slots, counters from 2^32 - 3, one credit return per 3 messages: rank 0 sends
/// 4 messages, rank 1 receives 4. If the sender finds the ring full (after 3) before the credit
/// comes back, it sleeps for credit >= 2^32 - 2; the returned credit is 0 (wrapped). Failure: a
/// deadlock whose dump shows that wait on the credit mailbox (0x10400) with the receiver waiting
/// for message 4; clean: the stream completes.
template <class P>
Obs ipcq_wrap_sleep(const RunOptions& o) {
    auto c = cfg(3, 64, iq::Backpressure::sleep);
    c.initial_counter = 0u - 3u;
    c.credit_batch = 3;
    Setup<Nsew> s(ih::ring_1d_unidir(2), c);
    s.add_all([](auto& hal, uint32_t r) -> uint64_t {
        iq::Queues<std::decay_t<decltype(hal)>, Nsew, P> q(hal, hal.arg(0));
        if (r == 0) {
            for (uint32_t m = 0; m < 4; ++m) {
                fill(hal, kSrc, 16, 0, 1, m);
                q.send(Nsew::E, kSrc, 64);
            }
            q.quiesce();
            return 0;
        }
        uint64_t bad = 0;
        for (uint32_t m = 0; m < 4; ++m) {
            auto slot = q.recv(Nsew::W);
            bad += mismatches(q.data(slot), 16, 0, 1, m);
            q.release(slot);
        }
        q.quiesce();
        return bad;
    });
    const RunReport rep = s.run(o);
    if (rep.ok()) return rep.at(s.core(1)).value == 0 ? clean() : other("corrupted payload");
    const std::string& d = rep.watchdog_dump;
    if (rep.deadlock && !any_failed(rep) && has(d, "sem_wait_min L1 0x10400 expected >= 4294967294, current 0"))
        return caught();
    return other(rep.summary());
}

// ---- EDM ----------------------------------------------------------------------------------------
// The mutated Configs (edm_harness::mutations), the scenarios (edm_harness::small) and the dump
// lines of their channels (eh::kChannels, eh::kGrantWait, eh::kDataWait, eh::edm_polling) come
// from the harness.

/// Everything delivered intact: clean; anything else is handed to `failure` to classify.
template <class Config, class F>
Obs edm_run(const RunOptions& o, const eh::Scenario& sc, F&& failure) {
    Cluster cluster(eh::two_chips());
    auto r = eh::run<Config>(cluster, sc, o);
    if (r.report.ok() && r.errors == 0 && r.length_errors == 0 && r.received == r.expected_received) return clean();
    return failure(r);
}

/// Sync word first (1 KiB packets). Failure: the run completes, every message arrives, and
/// receivers read payload words that had not landed yet.
template <class Config>
Obs edm_sync_first(const RunOptions& o) {
    return edm_run<Config>(o, eh::small(2, 2, 1024, 20), [](const auto& r) {
        if (r.report.ok() && r.received == r.expected_received && r.length_errors == 0 && r.errors > 0) return caught();
        return other(std::to_string(r.errors) + " corrupted words\n" + r.report.summary());
    });
}

/// Notify before clear. Failure: a worker's increment lands on the EDM's semaphore before the EDM
/// clears it and is erased, so that channel stops: a deadlock in which both EDMs poll and one
/// channel's receiver worker waits for a message (at 0) while its sender worker waits for a slot
/// grant (at 0) or — when the erased increment was the receiving worker's answer to the last
/// packets — has finished; or, when it was a worker's last increment to its EDM, every worker has
/// finished and both EDMs poll.
template <class Config>
Obs edm_notify_first(const RunOptions& o) {
    return edm_run<Config>(o, eh::small(2, 2, 64, 30), [](const auto& r) {
        const std::string& d = r.report.watchdog_dump;
        bool stalled = false;
        for (const auto& ch : eh::kChannels)
            stalled |= (has(d, ch.sender + eh::kGrantWait) || has(d, std::string(ch.sender) + ": finished")) &&
                       has(d, ch.receiver + eh::kDataWait);
        // The increment erased can also be a worker's last one to its EDM (its final message or
        // its termination): every worker has finished and both EDMs poll for it.
        bool all_workers_finished = true;
        for (const char* w : {"chip 0 worker (0,0)", "chip 0 worker (1,0)", "chip 1 worker (0,0)", "chip 1 worker (1,0)"})
            all_workers_finished &= has(d, std::string(w) + ": finished");
        if (r.report.deadlock && !any_failed(r.report) && eh::edm_polling(d, "chip 0 eth 0 (0,8)") &&
            eh::edm_polling(d, "chip 1 eth 0 (0,8)") && (stalled || all_workers_finished))
            return caught();
        return other(r.report.summary());
    });
}

/// Shared ack source. Failure: an ack goes out with the completion's content ("slot free") or
/// the reverse. Either the sending EDM counts a message complete that never arrived: a deadlock
/// in which a channel's sender worker has finished, its receiver worker waits for a message and
/// the receiving EDM polls; or it refills a slot the receiving worker has not copied yet: the run
/// completes with every message delivered and corrupted words.
template <class Config>
Obs edm_shared_ack(const RunOptions& o) {
    return edm_run<Config>(o, eh::small(2, 1, 64, 30), [](const auto& r) {
        const std::string& d = r.report.watchdog_dump;
        bool lost = false;
        for (const auto& ch : eh::kChannels)
            lost |= has(d, std::string(ch.sender) + ": finished") && has(d, ch.receiver + eh::kDataWait) &&
                    eh::edm_polling(d, ch.receiver_edm);
        if (r.report.deadlock && !any_failed(r.report) && lost) return caught();
        // The ack that went out as "slot free": the sender refilled a slot whose packet the
        // receiving worker had not copied yet, so every message arrives but one is overwritten.
        if (r.report.ok() && r.received == r.expected_received && r.errors > 0) return caught();
        return other(std::to_string(r.errors) + " corrupted words, " + std::to_string(r.length_errors) +
                     " bad lengths, " + std::to_string(r.received) + " of " + std::to_string(r.expected_received) +
                     " messages\n" + r.report.summary());
    });
}

/// Teardown without waiting (tt-metal's "asynchronous program completion"): after the EDM
/// returns, the next op on side a's Ethernet core fills the EDM's L1 region, waits until side b
/// has finished and delivered everything, and counts the words that changed. Failure: the run
/// is otherwise clean (every message delivered intact) and a late completion landed in the next
/// op's data.
template <class Config>
Obs edm_teardown(const RunOptions& o) {
    Cluster cluster(eh::two_chips());
    std::atomic<bool> b_done{false};
    const eh::AfterEdm after = eh::next_op_overwrite_count(b_done);
    eh::Scenario s = eh::small(1, 2, 256, 20);
    auto r = eh::run<Config>(cluster, s, o, 1, after);
    if (!r.report.ok() || r.received != r.expected_received || r.errors != 0 || r.length_errors != 0)
        return other(r.report.summary());
    return r.next_op_errors == 0 ? clean() : caught();
}

// ---- the settings -------------------------------------------------------------------------------
// PCT depth 3 everywhere: two priority change points, more than any of these bugs needs (each
// needs one core preempted at one point, plus the initial priorities). pct_steps, the range the
// change points are drawn from, is about the length of a run in scheduling steps (measured with
// RunReport::steps on the correct protocol: IPCQ stream ~300, wrap scenarios 15-50, EDM 1000-3000
// — more with the adversary —, EDM teardown ~530), so that the change points fall inside the run.
constexpr uint32_t kDepth = 3;
RunOptions ipcq_pct(bool adv = false) { return pct(kDepth, 400, adv); }
RunOptions wrap_pct() { return pct(kDepth, 50); }
RunOptions edm_pct(bool adv = false) { return pct(kDepth, 2000, adv); }
RunOptions teardown_pct() { return pct(kDepth, 600); }

}  // namespace

// ---- one test per mutation (CI: bounded, well under a minute together) ----------------------------

TEST_CASE("PCT catches IPCQ head-before-data without the adversary: stale payload or headers", "[emulation][engine][pct][mutation]") {
    // In normal mode every write lands at once: it shows only if the receiver runs between the
    // sender's head write and its payload writes. FIFO never schedules that.
    const Scenario right = [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::l1, true); };
    const Scenario bad = [](const RunOptions& o) { return ipcq_stream<HeadBeforeData>(o, 32, iq::Placement::l1, true); };
    RunOptions fifo = normal();
    fifo.schedule.policy = Policy::fifo;
    fifo.honour_replay_env = false;
    REQUIRE(bad(fifo).v == Verdict::clean);
    clean_over("IPCQ correct protocol", 1000, ipcq_pct(), right);
    find_with_pct("IPCQ head-before-data", 1000, ipcq_pct(), bad);
}

TEST_CASE("PCT with the adversary catches IPCQ's DRAM payload without a barrier: stale payload, right headers",
          "[emulation][engine][pct][mutation]") {
    // Not an interleaving bug: without the adversary the DRAM write has landed when the head is
    // written. With it, the head (to the receiver's core) can land before the payload (to DRAM).
    const Scenario right = [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::dram, false); };
    const Scenario bad = [](const RunOptions& o) { return ipcq_stream<NoDramBarrier>(o, 32, iq::Placement::dram, false); };
    clean_over("IPCQ no-DRAM-barrier under PCT alone", 1000, ipcq_pct(), bad);
    clean_over("IPCQ correct protocol (DRAM, adversary)", 300, ipcq_pct(true), right);
    find_with_pct("IPCQ skip-dram-barrier", 1000, ipcq_pct(true), bad);
}

TEST_CASE("PCT catches IPCQ's slot = counter % n_slots at the 2^32 wrap: message 1 reads message 2",
          "[emulation][engine][pct][mutation]") {
    clean_over("IPCQ correct protocol (wrap)", 1000, wrap_pct(), ipcq_wrap_slots<iq::DefaultPolicy>);
    find_with_pct("IPCQ slot-from-counter", 1000, wrap_pct(), ipcq_wrap_slots<SlotFromCounter>);
}

TEST_CASE("PCT catches IPCQ's unbounded sleep-mode wait at the 2^32 wrap: deadlock on the credit",
          "[emulation][engine][pct][mutation]") {
    clean_over("IPCQ correct protocol (wrap, sleep)", 1000, wrap_pct(), ipcq_wrap_sleep<iq::DefaultPolicy>);
    find_with_pct("IPCQ unbounded-sleep", 1000, wrap_pct(), ipcq_wrap_sleep<UnboundedSleep>);
}

TEST_CASE("PCT with the adversary catches the EDM's sync word before the payload: corrupted words",
          "[emulation][engine][pct][mutation]") {
    // Not an interleaving bug: without the adversary a packet lands whole (its last word a
    // release store after the payload). The adversary delivers it word by word (E3).
    clean_over("EDM sync-word-first under PCT alone", 300, edm_pct(), edm_sync_first<SyncWordFirst>);
    clean_over("EDM correct protocol (1 KiB, adversary)", 100, edm_pct(true), edm_sync_first<kccl::edm::DefaultConfig>);
    find_with_pct("EDM sync-word-first", 1000, edm_pct(true), edm_sync_first<SyncWordFirst>);
}

TEST_CASE("PCT catches the EDM's notify-before-clear without the adversary: a channel deadlocks",
          "[emulation][engine][pct][mutation]") {
    clean_over("EDM correct protocol", 300, edm_pct(), edm_notify_first<kccl::edm::DefaultConfig>);
    find_with_pct("EDM notify-before-clear", 1000, edm_pct(), edm_notify_first<NotifyBeforeClear>);
}

TEST_CASE("PCT with the adversary catches the EDM's shared ack source: a slot freed before its message was taken",
          "[emulation][engine][pct][mutation]") {
    // Not an interleaving bug: a send's source is read at delivery only in adversarial mode (E1).
    clean_over("EDM shared-ack-source under PCT alone", 300, edm_pct(), edm_shared_ack<SharedAckSource>);
    clean_over("EDM correct protocol (1 buffer, adversary)", 100, edm_pct(true), edm_shared_ack<kccl::edm::DefaultConfig>);
    find_with_pct("EDM shared-ack-source", 1000, edm_pct(true), edm_shared_ack<SharedAckSource>);
}

TEST_CASE("PCT catches the EDM's teardown without waiting: a late completion corrupts the next op",
          "[emulation][engine][pct][mutation]") {
    clean_over("EDM correct teardown", 300, teardown_pct(), edm_teardown<kccl::edm::DefaultConfig>);
    find_with_pct("EDM teardown-without-wait", 1000, teardown_pct(), edm_teardown<TeardownWithoutWait>);
}

// ---- the table: every seed of 1..N, every mutation (long) ----------------------------------------

TEST_CASE("PCT seeds-to-catch table: every mutation over seeds 1..1000", "[emulation][engine][pct][mutation][long]") {
    struct Row {
        const char* name;
        RunOptions opt;
        Scenario bad, right;
    };
    const std::vector<Row> rows = {
        {"IPCQ head_before_data", ipcq_pct(),
         [](const RunOptions& o) { return ipcq_stream<HeadBeforeData>(o, 32, iq::Placement::l1, true); },
         [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::l1, true); }},
        {"IPCQ skip_dram_barrier (PCT alone)", ipcq_pct(),
         [](const RunOptions& o) { return ipcq_stream<NoDramBarrier>(o, 32, iq::Placement::dram, false); },
         [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::dram, false); }},
        {"IPCQ skip_dram_barrier (PCT + adversary)", ipcq_pct(true),
         [](const RunOptions& o) { return ipcq_stream<NoDramBarrier>(o, 32, iq::Placement::dram, false); },
         [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::dram, false); }},
        {"IPCQ slot_from_counter", wrap_pct(), ipcq_wrap_slots<SlotFromCounter>, ipcq_wrap_slots<iq::DefaultPolicy>},
        {"IPCQ unbounded_sleep", wrap_pct(), ipcq_wrap_sleep<UnboundedSleep>, ipcq_wrap_sleep<iq::DefaultPolicy>},
        {"EDM sync_word_first (PCT alone)", edm_pct(), edm_sync_first<SyncWordFirst>, edm_sync_first<kccl::edm::DefaultConfig>},
        {"EDM sync_word_first (PCT + adversary)", edm_pct(true), edm_sync_first<SyncWordFirst>,
         edm_sync_first<kccl::edm::DefaultConfig>},
        {"EDM notify_before_clear", edm_pct(), edm_notify_first<NotifyBeforeClear>, edm_notify_first<kccl::edm::DefaultConfig>},
        {"EDM shared_ack_source (PCT alone)", edm_pct(), edm_shared_ack<SharedAckSource>, edm_shared_ack<kccl::edm::DefaultConfig>},
        {"EDM shared_ack_source (PCT + adversary)", edm_pct(true), edm_shared_ack<SharedAckSource>,
         edm_shared_ack<kccl::edm::DefaultConfig>},
        {"EDM teardown_without_wait", teardown_pct(), edm_teardown<TeardownWithoutWait>, edm_teardown<kccl::edm::DefaultConfig>},
    };
    const uint32_t n = 1000;
    std::string table =
        "| mutation | PCT: first seed | PCT: caught / N | correct protocol clean / N | random policy: first seed, caught / N | FIFO |\n"
        "|---|---|---|---|---|---|\n";
    for (const auto& row : rows) {
        const auto t0 = std::chrono::steady_clock::now();
        const Sweep b = sweep(row.name, n, row.opt, row.bad);
        const Sweep r = sweep(row.name, n, row.opt, row.right);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(r.caught == 0);
        // For comparison: the seeded random policy over the same seeds, and one FIFO run.
        RunOptions rnd = row.opt;
        rnd.schedule.policy = Policy::random;
        const Sweep x = sweep(row.name, n, rnd, row.bad);
        RunOptions fifo = row.opt;
        fifo.schedule.policy = Policy::fifo;
        const Obs f = row.bad(fifo);
        REQUIRE(f.v != Verdict::other);
        auto first = [](const Sweep& w) { return w.first ? std::to_string(w.first) : std::string("none"); };
        table += std::string("| ") + row.name + " | " + first(b) + " | " + std::to_string(b.caught) + " / " +
                 std::to_string(n) + " | " + std::to_string(n - r.caught) + " / " + std::to_string(n) + " | " +
                 first(x) + ", " + std::to_string(x.caught) + " / " + std::to_string(n) + " | " +
                 (f.v == Verdict::caught ? "caught" : "clean") + " |\n";
        std::fprintf(stderr, "%s: PCT first seed %llu, caught %u / %u; correct protocol caught %u / %u (%.2f s for both)\n",
                     row.name, static_cast<unsigned long long>(b.first), b.caught, n, r.caught, n, secs);
    }
    WARN(table);
}

// ---- the correct protocols in every mode, under both ordering profiles -----------------------------

namespace {
/// Every correct protocol of the table over seeds 1..n in every mode: PCT (as its catching test),
/// the seeded random policy, and the adversary (random policy, race detector on) under the observed
/// and the strict ordering profile (docs/contract.md, "Ordering profiles"; without the adversary a profile
/// changes nothing: every operation lands when issued).
void right_versions_pass(uint32_t n) {
    struct Row {
        const char* name;
        RunOptions opt;
        Scenario right;
    };
    const std::vector<Row> rows = {
        {"IPCQ stream (L1)", ipcq_pct(),
         [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::l1, true); }},
        {"IPCQ stream (DRAM)", ipcq_pct(),
         [](const RunOptions& o) { return ipcq_stream<iq::DefaultPolicy>(o, 32, iq::Placement::dram, false); }},
        {"IPCQ wrap slots", wrap_pct(), ipcq_wrap_slots<iq::DefaultPolicy>},
        {"IPCQ wrap sleep", wrap_pct(), ipcq_wrap_sleep<iq::DefaultPolicy>},
        {"EDM 1 KiB", edm_pct(), edm_sync_first<kccl::edm::DefaultConfig>},
        {"EDM notify", edm_pct(), edm_notify_first<kccl::edm::DefaultConfig>},
        {"EDM 1 buffer", edm_pct(), edm_shared_ack<kccl::edm::DefaultConfig>},
        {"EDM teardown", teardown_pct(), edm_teardown<kccl::edm::DefaultConfig>},
    };
    for (const Row& row : rows) {
        RunOptions pct_o = row.opt;
        pct_o.adversary.enabled = false;
        RunOptions rnd = pct_o;
        rnd.schedule.policy = Policy::random;
        RunOptions adv = rnd;
        adv.adversary.enabled = true;
        adv.race = RunOptions::RaceCheck::on;  // the detector checks the profile's rules too
        adv.ordering = kccl::emu::OrderingProfile::observed;
        RunOptions strict = adv;
        strict.ordering = kccl::emu::OrderingProfile::strict;
        const std::pair<const char*, RunOptions> modes[] = {
            {"pct", pct_o}, {"random", rnd}, {"adversarial, observed", adv}, {"adversarial, strict", strict}};
        for (const auto& [mode, o] : modes) {
            const std::string name = std::string(row.name) + " (" + mode + ")";
            clean_over(name.c_str(), n, o, row.right);
        }
    }
}
}  // namespace

TEST_CASE("the correct protocols pass 10 seeds in every mode under both ordering profiles", "[emulation][engine][pct]") {
    right_versions_pass(10);  // ~1 s at -O2: the catching tests above run 100-1000 clean seeds under PCT already
}

TEST_CASE("the correct protocols pass 1000 seeds in every mode under both ordering profiles",
          "[emulation][engine][pct][long]") {
    const auto t0 = std::chrono::steady_clock::now();
    right_versions_pass(1000);
    WARN("engine_explore correct protocols, 1000 seeds x 4 modes x 8 scenarios: "
         << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
}

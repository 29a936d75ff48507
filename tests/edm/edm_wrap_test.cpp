// EDM message counters across 2^32: the channels start their counters just below the wrap
// (edm::host::ChannelSpec::initial_counter) and carry every payload intact across it, with 1-16
// buffers, both termination modes, both sharing modes and several workers. Two mutations show
// the tests see the two ways a channel breaks at the wrap: slots derived from `counter % buffers`
// (EDMs and workers disagree on slots after the wrap: the channel stalls) and "no end yet"
// encoded as the counter value UINT32_MAX (the channel ends at that value while its workers
// still send). Both are hangs the watchdog reports, with the EDMs polling and finished
// respectively.
#include "edm/harness.hpp"

#include <string>

using namespace kccl::test;
using namespace kccl::test::edm_harness;
namespace edm = kccl::edm;

namespace {
struct WorkerInitiated : edm::DefaultConfig {
    static constexpr auto termination = edm::Termination::worker_initiated;
};

template <class Config>
Result<Config> run_one(const Scenario& s, const RunOptions& opt) {
    Cluster cluster(two_chips());
    return run<Config>(cluster, s, opt);
}

template <class Config>
void check(const Scenario& s, const RunOptions& opt) {
    auto r = run_one<Config>(s, opt);
    INFO(s.describe() << (Config::termination == edm::Termination::worker_initiated ? " worker-initiated" : " message-count"));
    KCCL_REQUIRE_OK(r.report);
    REQUIRE(r.errors == 0);
    REQUIRE(r.length_errors == 0);
    REQUIRE(r.received == r.expected_received);
}

/// Channels 0 (chip 0 -> 1) and 1 (back), `buffers` slots of 64 B, counters starting `before`
/// messages below 2^32, and enough messages to pass 0 and refill every slot twice after it.
Scenario across_wrap(uint32_t buffers, uint32_t before, uint32_t workers = 1,
                     edm::Sharing sharing = edm::Sharing::not_shared) {
    Scenario s;
    s.channels = 2;
    s.buffers = buffers;
    s.packet_bytes = 64;
    s.workers = workers;
    s.sharing = sharing;
    s.initial_counter = 0u - before;
    s.messages = before + 2 * buffers + 3;
    return s;
}
}  // namespace

TEST_CASE("EDM: a persistent channel carries messages across 2^32 with 1-16 buffers", "[edm][wrap]") {
    // WORKER_INITIATED is the persistent mode: a channel runs until its worker says last. The
    // counters pass UINT32_MAX (the old "no end" marker) and 0; with 3, 5, 6, 7, ... buffers
    // `counter % buffers` would jump at the wrap. `before` varies so the wrap falls on every slot.
    for (uint32_t buffers = 1; buffers <= 16; ++buffers) {
        check<WorkerInitiated>(across_wrap(buffers, buffers + 2), normal(std::chrono::milliseconds(10000)));
        Scenario t = across_wrap(buffers, 2 * buffers + 1);
        t.end_with_terminate = true;
        check<WorkerInitiated>(t, normal(std::chrono::milliseconds(10000)));
    }
}

TEST_CASE("EDM: MESSAGE_COUNT_REACHED across 2^32, the end counter itself wrapped", "[edm][wrap]") {
    // end = initial_counter + message_count wraps to a small number: the channel still moves
    // exactly message_count messages.
    for (uint32_t buffers : {1u, 3u, 5u, 6u, 16u}) check<edm::DefaultConfig>(across_wrap(buffers, 7), normal(std::chrono::milliseconds(10000)));
}

TEST_CASE("EDM: several workers in both sharing modes across 2^32", "[edm][wrap]") {
    // Round robin hands message k to worker k mod W; at the wrap `counter % W` would jump too
    // (2^32 is not a multiple of 3), giving two consecutive messages to the same worker.
    for (auto sharing : {edm::Sharing::not_shared, edm::Sharing::round_robin})
        for (uint32_t workers : {2u, 3u})
            for (uint32_t buffers : {3u, 4u, 5u}) {
                check<WorkerInitiated>(across_wrap(buffers, 11, workers, sharing), normal(std::chrono::milliseconds(10000)));
                check<edm::DefaultConfig>(across_wrap(buffers, 10, workers, sharing), normal(std::chrono::milliseconds(10000)));
            }
}

TEST_CASE("EDM: across 2^32 under the adversary", "[edm][wrap][adversarial]") {
    uint64_t seed = 1;
    for (uint32_t buffers : {1u, 3u, 6u})
        for (uint32_t workers : {1u, 3u}) {
            const auto sharing = workers > 1 ? edm::Sharing::round_robin : edm::Sharing::not_shared;
            check<WorkerInitiated>(across_wrap(buffers, 2 * buffers + 1, workers, sharing),
                                   adversarial(seed++, std::chrono::milliseconds(10000)));
        }
    RunOptions threads = normal(std::chrono::milliseconds(10000));
    threads.engine = kccl::emu::Engine::threads;
    check<WorkerInitiated>(across_wrap(5, 9, 3, edm::Sharing::round_robin), threads);
}

TEST_CASE("EDM initial_counter: both ends of a channel must agree", "[edm][wrap][builder]") {
    edm::host::ChannelSpec c;
    c.message_count = 4;
    c.workers = {{1, 0, 0x100}};
    edm::host::ChannelSpec d = c;
    c.initial_counter = 0u - 3u;
    d.initial_counter = 0u - 4u;
    edm::host::EdmEnd a, b;
    a.add_sender(c);
    b.add_receiver(d);
    REQUIRE_THROWS_WITH(edm::host::build_link(a, b, {0x1000, 0x10000, 0x800}),
                        "channel 0: initial counter 4294967293 on end a differs from 4294967292 on end b; both ends of "
                        "a channel must agree on initial_counter");
    edm::host::EdmEnd a2, b2;
    a2.add_sender(c);
    b2.add_receiver(c);
    const auto plan = edm::host::build_link(a2, b2, {0x1000, 0x10000, 0x800});
    const auto args = plan.edm_args(edm::host::Side::a);
    REQUIRE(args.at(edm::args::first_channel + edm::args::ch_initial_counter) == 0u - 3u);
}

TEST_CASE("mutation: EDM slots from counter % buffers are caught at the wrap", "[edm][wrap][mutation]") {
    // Counters start 7 below 2^32: 2^32 - 7 is a multiple of 3, so with 3 buffers `counter % 3`
    // agrees with the workers' ring index until the wrap and differs after it (2^32 is not a
    // multiple of 3: messages 2^32 - 1 and 0 both map to slot 0). Expected failure: the EDMs and
    // the workers disagree on slots after the wrap and the channel stalls with both EDMs still
    // polling: its sender worker waits for a slot grant, its receiver worker for a message (a
    // deadlock on the fiber engine). With 4 buffers (a divisor of 2^32) the mutation is harmless,
    // which the control shows.
    {
        auto r = run_one<mutations::EdmSlotFromCounter>(across_wrap(3, 7), normal(std::chrono::milliseconds(2000)));
        INFO(r.report.summary());
        REQUIRE(r.report.watchdog_fired);
        const std::string& dump = r.report.watchdog_dump;
        REQUIRE(edm_polling(dump, "chip 0 eth 0 (0,8)"));
        REQUIRE(edm_polling(dump, "chip 1 eth 0 (0,8)"));
        bool stalled = false;
        for (const auto& ch : kChannels)
            stalled |= dump.find(ch.sender + kGrantWait) != std::string::npos &&
                       dump.find(ch.receiver + kDataWait) != std::string::npos;
        REQUIRE(stalled);
    }
    {
        auto r = run_one<mutations::EdmSlotFromCounter>(across_wrap(4, 8), normal(std::chrono::milliseconds(10000)));
        INFO(r.report.summary());
        REQUIRE(r.report.ok());
        REQUIRE(r.received == r.expected_received);
        REQUIRE(r.errors == 0);
    }
}

TEST_CASE("mutation: EDM end marker UINT32_MAX is caught at the wrap", "[edm][wrap][mutation]") {
    // Expected failure: both EDMs take counter value 2^32 - 1 for the end of the channel and
    // finish; each channel's sender worker waits for a slot grant that never comes and its
    // receiver worker for a message. The watchdog reports the hang.
    auto r = run_one<mutations::EndMarker>(across_wrap(2, 5), normal(std::chrono::milliseconds(1000)));
    INFO(r.report.summary());
    REQUIRE(r.report.watchdog_fired);
    const std::string& dump = r.report.watchdog_dump;
    INFO(dump);
    for (const auto& ch : kChannels) {
        REQUIRE(dump.find(ch.sender + kGrantWait) != std::string::npos);
        REQUIRE(dump.find(ch.receiver + kDataWait) != std::string::npos);
    }
    REQUIRE(dump.find("chip 0 eth 0 (0,8): finished") != std::string::npos);
    REQUIRE(dump.find("chip 1 eth 0 (0,8): finished") != std::string::npos);
}

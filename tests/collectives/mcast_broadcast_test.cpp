// The NoC-multicast broadcast (collectives/mcast_broadcast.hpp, host/mcast_plan.hpp) on the
// emulation: bit-exact against a host reference on dirty L1, on rectangles of several shapes and
// sizes, with several roots and byte counts that are not a multiple of the chunk, buffers that
// move between calls and programs, counters that cross the 32-bit wrap; in plain, thread, timed,
// race-checked and adversarial runs (no race report). The mutation (no flush between the data
// multicast and the counter multicast) is caught with the stale slot content a receiver copied.
// Groups that cannot use it get PlanErrors naming why.
#include "emulation/util.hpp"

#include <collectives/host/mcast_plan.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace kccl::test;
namespace topo = kccl::emu::topology;
namespace ch = kccl::coll::host;
using kccl::coll::Transport;

namespace {

kccl::emu::ChipSpec grid_chip() {
    kccl::emu::ChipSpec c = small_chip();
    c.grid_w = 6;
    c.grid_h = 5;
    c.worker_l1_bytes = 128 * 1024;
    return c;
}

constexpr uint32_t kPlanL1 = 0x18000;  // slots and counters; buffers live below it

/// The root's input of call `call` (host reference: the host writes it and checks against it).
uint32_t value(uint32_t call, uint32_t i) { return (0xA5000000u ^ (call * 0x01000193u + i)) * 0x9E3779B9u + call; }

std::vector<ch::Core> rect_workers(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
    std::vector<ch::Core> w;
    for (uint32_t y = y0; y <= y1; ++y)
        for (uint32_t x = x0; x <= x1; ++x) w.push_back({0, x, y});
    return w;
}

/// One broadcast call: root, bytes, and where input / output are (they move from call to call).
struct Call {
    uint32_t root, bytes, input, output;
};

std::string failures(const RunReport& r) {
    std::string s;
    for (const auto& c : r.cores)
        if (c.status != kccl::emu::CoreStatus::ok) s += c.message + "\n";
    for (const auto& x : r.races) s += x + "\n";
    return s;
}

/// Runs `programs` (each a list of calls) back to back on one cluster; the host writes each
/// call's input on its root before the program and checks every rank's output after it.
/// Returns the number of wrong words seen and the first wrong word (0 if none).
template <class Policy = kccl::coll::McastBcastPolicy>
std::pair<uint64_t, uint32_t> run_programs(const ch::McastBcastPlan& plan, const std::vector<ch::Core>& workers,
                                           const std::vector<std::vector<Call>>& programs, const RunOptions& o,
                                           bool require_ok = true) {
    Cluster c(topo::single_chip(grid_chip()));
    uint64_t wrong = 0;
    uint32_t first = 0;
    uint32_t call_no = 0;
    for (size_t prog = 0; prog < programs.size(); ++prog) {
        const auto& calls = programs[prog];
        for (size_t k = 0; k < calls.size(); ++k) {
            std::vector<uint32_t> in((calls[k].bytes + 3) / 4);
            for (uint32_t i = 0; i < in.size(); ++i) in[i] = value(call_no + uint32_t(k), i);
            const ch::Core& r = workers[calls[k].root];
            if (calls[k].bytes == 0) continue;  // nothing to write (and no null source to copy from)
            c.write(c.chip(0).worker(r.x, r.y), calls[k].input, in.data(), calls[k].bytes);
        }
        Launcher L(c);
        if (prog == 0)
            for (const auto& w : plan.init_words) L.init_word(c.chip(0).worker(w.core.x, w.core.y), w.addr, w.value);
        for (const auto& w : workers)
            L.add(c.chip(0).worker(w.x, w.y), [&calls](auto& h) {
                const kccl::coll::McastBcastArgs a = kccl::coll::load_mcast_bcast_args(h, 0);
                for (const Call& k : calls) kccl::coll::mcast_broadcast<Policy>(h, a, k.root, k.input, k.output, k.bytes);
            }, plan.args);
        const RunReport rep = L.run(o);
        if (require_ok) {
            INFO("program " << prog << "\n" << rep.summary() << failures(rep));
            REQUIRE(rep.ok());
        }
        for (size_t k = 0; k < calls.size(); ++k) {
            if (calls[k].bytes == 0) continue;
            std::vector<uint32_t> got((calls[k].bytes + 3) / 4);
            for (const auto& w : workers) {
                c.read(c.chip(0).worker(w.x, w.y), calls[k].output, got.data(), calls[k].bytes);
                const uint32_t full = calls[k].bytes / 4;
                for (uint32_t i = 0; i < full; ++i)
                    if (got[i] != value(call_no + uint32_t(k), i) && wrong++ == 0) first = got[i];
                if (calls[k].bytes % 4) {  // the last partial word: only its bytes
                    const uint32_t want = value(call_no + uint32_t(k), full);
                    if (std::memcmp(&got[full], &want, calls[k].bytes % 4) != 0 && wrong++ == 0) first = got[full];
                }
            }
        }
        call_no += uint32_t(calls.size());
    }
    return {wrong, first};
}

/// The mutation: no flush between the data multicast and the counter multicast.
struct NoFlush {
    static constexpr bool flush_before_counter = false;
};

ch::McastBcastPlan plan_for(const std::vector<ch::Core>& w, uint32_t chunk, uint32_t slots, uint32_t initial = 0) {
    ch::McastBcastSpec s;
    s.transport = Transport::ipcq;
    s.workers = w;
    s.l1 = {kPlanL1, 128 * 1024, 0};
    s.chunk_bytes = chunk;
    s.slots = slots;
    s.initial_counter = initial;
    return ch::plan_mcast_broadcast(s);
}

std::vector<RunOptions> modes(kccl::emu::TimingModel* model) {
    RunOptions plain = normal();
    plain.dirty_l1 = RunOptions::DirtyL1::on;
    RunOptions threads = plain;
    threads.engine = kccl::emu::Engine::threads;
    RunOptions timed = plain;
    timed.timing = model;
    RunOptions raced = plain;
    raced.race = RunOptions::RaceCheck::on;
    RunOptions adv_raced = adversarial(7);
    adv_raced.race = RunOptions::RaceCheck::on;
    return {plain, threads, timed, raced, adversarial(3), adversarial(12345), adv_raced};
}

}  // namespace

TEST_CASE("mcast broadcast: bit-exact on rectangles of several shapes, roots, uneven counts, moving buffers, "
          "two programs and the counter wrap; dirty L1, threads, timed, race detector, adversary",
          "[collectives][mcast_broadcast]") {
    auto model = kccl::emu::wormhole_model();
    struct Case {
        uint32_t x0, y0, x1, y1, chunk, slots;
    };
    const Case cases[] = {
        {2, 2, 2, 2, 256, 2},  // one rank
        {0, 1, 5, 1, 256, 2},  // a row of 6
        {3, 0, 3, 4, 512, 3},  // a column of 5
        {1, 1, 4, 3, 256, 2},  // 4 x 3
        {0, 0, 5, 4, 1024, 1}, // the whole 6 x 5 grid, one slot
        {0, 0, 5, 4, 512, 0},  // direct mode (no slots): the whole grid
        {1, 1, 4, 3, 256, 0},  // direct mode: 4 x 3
        {2, 2, 2, 2, 256, 0},  // direct mode: one rank
    };
    for (const Case& cs : cases)
        for (const RunOptions& o : modes(model.get())) {
            const auto w = rect_workers(cs.x0, cs.y0, cs.x1, cs.y1);
            const uint32_t p = uint32_t(w.size());
            // Counters start 6 below the wrap: the calls below cross it.
            const auto plan = plan_for(w, cs.chunk, cs.slots, 0xFFFFFFFAu);
            INFO("rect (" << cs.x0 << "," << cs.y0 << ")..(" << cs.x1 << "," << cs.y1 << ") chunk " << cs.chunk << " slots "
                          << cs.slots << " seed " << o.adversary.seed << " race " << int(o.race));
            const std::vector<std::vector<Call>> programs = {
                {{0, 1000, 0x1000, 0x8000}, {p - 1, 3 * cs.chunk + 4, 0x3000, 0x9000}, {p / 2, 4, 0x2000, 0xC000}},
                {{p / 2, 5 * cs.chunk + 40, 0x4000, 0x1000}, {0, 0, 0x5000, 0x2000}, {p - 1, 777, 0x9000, 0x3000}},
            };
            const auto [wrong, first] = run_programs(plan, w, programs, o);
            INFO("first wrong word " << std::hex << first);
            REQUIRE(wrong == 0);
        }
}

TEST_CASE("mcast broadcast mutation: without the flush between the data and the counter multicast a receiver "
          "copies the slot's previous content within 100 adversarial seeds",
          "[collectives][mcast_broadcast][mutation]") {
    const auto w = rect_workers(1, 1, 4, 3);
    // One chunk of 1024 bytes: the mutant's only unflushed pair is the data and its counter (with
    // more chunks, consecutive counter multicasts could also land out of order and hang the run).
    const auto plan = plan_for(w, 1024, 1);
    // The host fills every rank's slot with a marker (a previous round's data) before the run.
    std::vector<uint32_t> marker(1024 / 4);
    for (uint32_t i = 0; i < marker.size(); ++i) marker[i] = 0xDEAD0000u | i;
    uint64_t caught_at = 0;
    for (uint64_t seed = 1; seed <= 100 && !caught_at; ++seed) {
        RunOptions o = adversarial(seed);
        o.race = RunOptions::RaceCheck::off;  // the adversary alone: what the receivers copied
        Cluster c(topo::single_chip(grid_chip()));
        for (const auto& r : w) c.write(c.chip(0).worker(r.x, r.y), kPlanL1, marker.data(), 1024);
        std::vector<uint32_t> in(1024 / 4);
        for (uint32_t i = 0; i < in.size(); ++i) in[i] = value(0, i);
        c.write(c.chip(0).worker(w[0].x, w[0].y), 0x1000, in.data(), 1024);
        Launcher L(c);
        for (const auto& iw : plan.init_words) L.init_word(c.chip(0).worker(iw.core.x, iw.core.y), iw.addr, iw.value);
        for (const auto& r : w)
            L.add(c.chip(0).worker(r.x, r.y), [](auto& h) {
                kccl::coll::mcast_broadcast<NoFlush>(h, kccl::coll::load_mcast_bcast_args(h, 0), 0, 0x1000, 0x8000, 1024);
            }, plan.args);
        const RunReport rep = L.run(o);
        KCCL_REQUIRE_OK(rep);
        std::vector<uint32_t> got(1024 / 4);
        for (const auto& r : w) {
            c.read(c.chip(0).worker(r.x, r.y), 0x8000, got.data(), 1024);
            for (uint32_t i = 0; i < got.size() && !caught_at; ++i)
                if (got[i] != value(0, i)) {
                    // What the receiver copied instead of chunk data: the slot's marker, word for word.
                    INFO("seed " << seed << " core (" << r.x << "," << r.y << ") word " << i << " = " << std::hex << got[i]);
                    REQUIRE(got[i] == (0xDEAD0000u | i));
                    caught_at = seed;
                }
        }
    }
    INFO("caught at seed " << caught_at);
    REQUIRE(caught_at != 0);
}

TEST_CASE("mcast broadcast mutation: the race detector reports the unflushed counter multicast (M1)",
          "[collectives][mcast_broadcast][mutation][race]") {
    const auto w = rect_workers(0, 0, 2, 1);
    const auto plan = plan_for(w, 1024, 1);
    RunOptions o = normal();
    o.dirty_l1 = RunOptions::DirtyL1::on;
    o.race = RunOptions::RaceCheck::on;
    Cluster c(topo::single_chip(grid_chip()));
    Launcher L(c);
    for (const auto& iw : plan.init_words) L.init_word(c.chip(0).worker(iw.core.x, iw.core.y), iw.addr, iw.value);
    for (const auto& r : w)
        L.add(c.chip(0).worker(r.x, r.y), [](auto& h) {
            kccl::coll::mcast_broadcast<NoFlush>(h, kccl::coll::load_mcast_bcast_args(h, 0), 0, 0x1000, 0x8000, 600);
        }, plan.args);
    const RunReport rep = L.run(o);
    INFO(rep.summary());
    REQUIRE_FALSE(rep.races.empty());
    const std::string s = failures(rep);
    CHECK(s.find("noc_write_mcast") != std::string::npos);
    CHECK(s.find("(M1)") != std::string::npos);
}

TEST_CASE("mcast broadcast: groups that cannot use it get a PlanError naming why", "[collectives][mcast_broadcast]") {
    auto why = [](Transport t, std::vector<ch::Core> w, uint32_t chunk = 256, uint32_t slots = 2) -> std::string {
        ch::McastBcastSpec s;
        s.transport = t;
        s.workers = std::move(w);
        s.l1 = {kPlanL1, 0x1C000, 0};
        s.chunk_bytes = chunk;
        s.slots = slots;
        try {
            ch::plan_mcast_broadcast(s);
        } catch (const ch::PlanError& e) {
            return e.what();
        }
        return "";
    };
    auto has = [](const std::string& s, const char* what) {
        INFO(s);
        return s.find(what) != std::string::npos;
    };
    CHECK(has(why(Transport::edm, rect_workers(0, 0, 1, 1)), "needs the IPCQ transport"));
    CHECK(has(why(Transport::ipcq, {}), "has no ranks"));
    CHECK(has(why(Transport::ipcq, {{0, 0, 0}, {1, 1, 0}}), "rank 1 is on chip 1, rank 0 on chip 0"));
    // An L: three cores of a 2 x 2 box.
    CHECK(has(why(Transport::ipcq, {{0, 0, 0}, {0, 1, 0}, {0, 0, 1}}),
              "do not form a rectangle of cores (their bounding box (0,0)..(1,1) has 4 cores)"));
    // A rectangle in column-major order, and one with a core twice.
    CHECK(has(why(Transport::ipcq, {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}}), "rank 1 is at chip 0 (0,1), not at (1,0)"));
    CHECK(has(why(Transport::ipcq, {{0, 0, 0}, {0, 0, 0}}), "do not form a rectangle"));
    CHECK(has(why(Transport::ipcq, rect_workers(0, 0, 1, 0), 100), "chunk_bytes is 100; it must be a positive multiple of 16"));
    CHECK(has(why(Transport::ipcq, rect_workers(0, 0, 1, 0), 0x4000, 2), "needs 32816 bytes of L1"));
    CHECK(why(Transport::ipcq, rect_workers(1, 2, 3, 4)).empty());
    CHECK(ch::mcast_unavailable(Transport::ipcq, rect_workers(0, 0, 5, 4)).empty());
}

TEST_CASE("mcast broadcast: device errors name a root out of range and overlapping root buffers",
          "[collectives][mcast_broadcast]") {
    const auto w = rect_workers(0, 0, 1, 1);
    for (uint32_t slots : {0u, 2u}) {
        const auto plan = plan_for(w, 256, slots);
        auto run = [&](uint32_t root, uint32_t in, uint32_t out) {
            Cluster c(topo::single_chip(grid_chip()));
            Launcher L(c);
            for (const auto& iw : plan.init_words) L.init_word(c.chip(0).worker(iw.core.x, iw.core.y), iw.addr, iw.value);
            for (const auto& r : w)
                L.add(c.chip(0).worker(r.x, r.y), [=](auto& h) {
                    kccl::coll::mcast_broadcast(h, kccl::coll::load_mcast_bcast_args(h, 0), root, in, out, 512);
                }, plan.args);
            RunOptions o = normal();
            return failures(L.run(o));
        };
        INFO("slots " << slots);
        CHECK(run(4, 0x1000, 0x8000).find("mcast_broadcast: root is not a rank of the group (0 .. ranks-1)") !=
              std::string::npos);
        CHECK(run(1, 0x1000, 0x1100).find("mcast_broadcast: the root's input and output overlap") != std::string::npos);
    }
}

TEST_CASE("mcast broadcast: the auto choice takes it where available, else the method table's choice with the reason",
          "[collectives][mcast_broadcast]") {
    using kccl::coll::Method;
    using kccl::coll::Topology;
    const auto grid = ch::choose_broadcast(Transport::ipcq, rect_workers(0, 0, 7, 7), Topology::ring, 65536, false);
    CHECK(grid.multicast);
    CHECK(grid.why_not.empty());
    const auto edm = ch::choose_broadcast(Transport::edm, rect_workers(0, 0, 3, 0), Topology::ring, 65536, false);
    CHECK_FALSE(edm.multicast);
    CHECK(edm.method == Method::ring_meet_middle);
    CHECK(edm.why_not.find("needs the IPCQ transport") != std::string::npos);
    auto l_shape = rect_workers(0, 0, 3, 0);
    l_shape.push_back({0, 0, 1});
    const auto l = ch::choose_broadcast(Transport::ipcq, l_shape, Topology::line, 4096, false);
    CHECK_FALSE(l.multicast);
    CHECK(l.method == Method::line);
    CHECK(l.why_not.find("do not form a rectangle") != std::string::npos);
}

TEST_CASE("mcast broadcast: 200 adversarial seeds with the race detector, staged and direct, 4 x 3 and 6 x 5",
          "[collectives][mcast_broadcast][long]") {
    for (uint64_t seed = 1; seed <= 200; ++seed)
        for (uint32_t slots : {0u, 2u}) {
            const auto w = seed % 2 ? rect_workers(1, 1, 4, 3) : rect_workers(0, 0, 5, 4);
            const uint32_t p = uint32_t(w.size());
            const auto plan = plan_for(w, 256, slots, uint32_t(0) - uint32_t(seed % 7));
            RunOptions o = adversarial(seed);
            o.race = RunOptions::RaceCheck::on;
            INFO("seed " << seed << " slots " << slots << " ranks " << p);
            const std::vector<std::vector<Call>> programs = {
                {{uint32_t(seed % p), 1300, 0x1000, 0x8000}, {uint32_t((seed * 7) % p), 600, 0x3000, 0x9000}},
                {{uint32_t((seed * 3) % p), 2100, 0x4000, 0x1000}},
            };
            const auto [wrong, first] = run_programs(plan, w, programs, o);
            INFO("first wrong word " << std::hex << first);
            REQUIRE(wrong == 0);
        }
}

TEST_CASE("mcast broadcast: a collective group's spec carries its transport and cores", "[collectives][mcast_broadcast]") {
    ch::GroupSpec g;
    g.transport = Transport::ipcq;
    for (uint32_t r = 0; r < 16; ++r) g.workers.push_back({0, r % 8, r / 8});  // 8 x 2, row-major
    g.initial_counter = 7;
    ch::McastBcastSpec s = ch::mcast_spec_of(g);
    s.l1 = {kPlanL1, 0x1C000, 0};
    s.slots = 0;
    const auto plan = ch::plan_mcast_broadcast(s);
    CHECK(plan.device.rect.x0 == 0);
    CHECK(plan.device.rect.x1 == 7);
    CHECK(plan.device.rect.y1 == 1);
    CHECK(plan.init_words.front().value == 7);
    g.workers.pop_back();  // 15 ranks: not a rectangle
    CHECK(ch::mcast_unavailable(Transport::ipcq, ch::mcast_spec_of(g).workers).find("do not form a rectangle") !=
          std::string::npos);
    g.transport = Transport::edm;
    std::string err;
    try {
        ch::plan_mcast_broadcast(ch::mcast_spec_of(g));
    } catch (const ch::PlanError& e) {
        err = e.what();
    }
    CHECK(err.find("needs the IPCQ transport") != std::string::npos);
}

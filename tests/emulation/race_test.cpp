// The race detector (emulation/race.hpp) and the hang dump's "who could have signalled it".
//
// Each bug class is a kernel pair written against the contract: the buggy version must be
// reported on its first run (one run, any engine mode), naming both operations; the fixed version
// must run clean over many seeds. Kernels mark their plain l1_ptr loads and stores with
// hal::note_read / note_write (what the detector sees of them).
#include "util.hpp"

#include <hal/contract.hpp>

#include <string>
#include "sweep.hpp"

using namespace kccl::test;
namespace topo = kccl::emu::topology;

namespace {

kccl::emu::ChipSpec chip_with_dram() {
    kccl::emu::ChipSpec c = small_chip();
    c.dram_bytes = 64 * 1024;
    return c;
}

constexpr uint32_t kFlag = 0x100, kFlag2 = 0x104, kData = 0x1000, kSrc = 0x4000, kBytes = 256;

RunOptions with_race(RunOptions o) {
    o.race = RunOptions::RaceCheck::on;
    // These pairs are written to the observed ordering profile (the default); the strict
    // profile's pairs are in ordering_test.cpp. Pinned, so KCCL_EMU_ORDERING does not change them.
    o.ordering = kccl::emu::OrderingProfile::observed;
    return o;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string races(const RunReport& r) {
    std::string s;
    for (const auto& x : r.races) s += x + "\n";
    return s;
}

/// The modes every bug is run in once: the plain fiber engine, the adversary, the thread engine.
std::vector<RunOptions> one_run_each_mode() {
    RunOptions threads = with_race(normal());
    threads.engine = kccl::emu::Engine::threads;
    return {with_race(normal()), with_race(adversarial(7)), threads};
}

// ---- 1. data to one core, signal to another, no barrier ------------------------------------------
/// A writer puts kBytes into DRAM, then tells a reader (another core) by sem_inc; the reader reads
/// the DRAM bytes. Without noc_write_barrier() between the write and the signal (N1 orders only
/// operations to the same destination), the reader may read before the data lands.
RunReport dram_then_signal(bool barrier, const RunOptions& opt) {
    Cluster c(topo::n300(chip_with_dram()));
    host_zero(c, kFlag, 16);
    const auto w = c.chip(0).worker(0, 0), r = c.chip(0).worker(1, 0), dram = c.chip(0).dram();
    Launcher L(c);
    L.add(w, [&](auto& h) {
        for (uint32_t i = 0; i < kBytes; i += 4) put(h, kSrc + i, uint32_t(0xA000 + i));
        kccl::hal::note_write(h, kSrc, kBytes);
        h.noc_write(kSrc, h.noc_addr(dram.x, dram.y, 0), kBytes);
        if (barrier) h.noc_write_barrier();
        h.sem_inc(h.noc_addr(r.x, r.y, kFlag), 1);
        h.noc_write_barrier();
    });
    L.add(r, [&](auto& h) {
        h.sem_wait(kFlag, 1);
        h.noc_read(h.noc_addr(dram.x, dram.y, 0), kData, kBytes);
        h.noc_read_barrier();
        kccl::hal::note_read(h, kData, kBytes);
    });
    return L.run(opt);
}

TEST_CASE("race detector: data written to DRAM then a signal to another core without a barrier, first run",
          "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = dram_then_signal(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        const std::string s = races(rep);
        CHECK(has(s, "data race: chip 0 worker (1,0) noc_read reading its source at race_test.cpp"));
        CHECK(has(s, "reads L1 [0x0, 0x100) of chip 0 dram (0,3), last written by chip 0 worker (0,0) (noc_write at race_test.cpp"));
        CHECK(has(s, "or after a noc_write_barrier() (N2)"));
    }
}

TEST_CASE("race detector: a run failed by the detector alone (no adversary) replays from its printed string",
          "[emulation][race][replay][mutation]") {
    // Detector on, adversary off: only the detector fails this run. The string it prints must
    // carry the detector's setting, so that default options plus the string fail the same way
    // (not only with KCCL_EMU_RACE=1 added).
    RunOptions o = with_race(normal());
    o.honour_replay_env = false;
    const RunReport first = dram_then_signal(false, o);
    INFO(first.summary());
    REQUIRE_FALSE(first.ok());
    REQUIRE(first.races.size() > 0);
    CHECK(has(first.summary(), "replay: KCCL_EMU_REPLAY=\"" + first.replay + "\""));
    CHECK(has(first.replay, ",adversary=0,"));
    CHECK(has(first.replay, ",race=1,"));
    RunOptions again;
    again.honour_replay_env = false;
    kccl::emu::apply_replay(again, first.replay);
    const RunReport second = dram_then_signal(false, again);
    INFO("replayed from: " << first.replay << "\n" << second.summary());
    REQUIRE_FALSE(second.ok());
    CHECK(second.races == first.races);
    CHECK(second.run_hash == first.run_hash);
    CHECK(second.replay == first.replay);
    // And a run with the detector off says so: its string replays without it.
    RunOptions off = o;
    off.race = RunOptions::RaceCheck::off;
    const RunReport quiet = dram_then_signal(false, off);
    KCCL_REQUIRE_OK(quiet);
    CHECK(has(quiet.replay, ",race=0,"));
}

TEST_CASE("race detector: data to DRAM, barrier, then the signal: no report over 200 seeds", "[emulation][race]") {
    for (const RunOptions& o : one_run_each_mode()) KCCL_REQUIRE_OK(dram_then_signal(true, o));
    for (uint64_t seed = 1; seed <= kccl_tests::sweep_seeds(200); ++seed) KCCL_REQUIRE_OK(dram_then_signal(true, with_race(adversarial(seed))));
}

// ---- 2. signal before the data write ---------------------------------------------------------------
/// A writer signals the reader first and writes the data after (to the reader itself). Whatever
/// the order the reader's read and the write happen to run in, the pair is unordered: a read before
/// the write is reported when the write comes (write after an unordered read), a read after it as
/// a read of an unordered write.
RunReport signal_then_data(bool data_first, const RunOptions& opt) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    host_zero(c, kData, kBytes);
    const auto w = c.chip(0).worker(0, 0), r = c.chip(0).worker(1, 0);
    Launcher L(c);
    L.add(w, [&](auto& h) {
        kccl::hal::note_write(h, kSrc, kBytes);
        if (data_first) h.noc_write(kSrc, h.noc_addr(r.x, r.y, kData), kBytes);
        h.sem_inc(h.noc_addr(r.x, r.y, kFlag), 1);
        if (!data_first) h.noc_write(kSrc, h.noc_addr(r.x, r.y, kData), kBytes);
        h.noc_write_barrier();
    });
    L.add(r, [&](auto& h) {
        h.sem_wait(kFlag, 1);
        kccl::hal::note_read(h, kData, kBytes);
    });
    return L.run(opt);
}

TEST_CASE("race detector: a signal before the data write is reported on the first run, in either order",
          "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = signal_then_data(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        const std::string s = races(rep);
        // Read first: the write is reported against the read; write first: the read against it.
        const bool read_first = has(s, "data race: chip 0 worker (0,0) noc_write at race_test.cpp") &&
                                has(s, "which chip 0 worker (1,0) read (note_read (a load through l1_ptr) at race_test.cpp");
        const bool write_first = has(s, "data race: chip 0 worker (1,0) note_read (a load through l1_ptr) at race_test.cpp") &&
                                 has(s, "last written by chip 0 worker (0,0) (noc_write at race_test.cpp");
        CHECK((read_first || write_first));
    }
}

TEST_CASE("race detector: the data write before the signal (N1, same destination): no report over 200 seeds",
          "[emulation][race]") {
    for (const RunOptions& o : one_run_each_mode()) KCCL_REQUIRE_OK(signal_then_data(true, o));
    for (uint64_t seed = 1; seed <= kccl_tests::sweep_seeds(200); ++seed) KCCL_REQUIRE_OK(signal_then_data(true, with_race(adversarial(seed))));
}

// ---- 3. noc_read used before its barrier ---------------------------------------------------------
RunReport read_without_barrier(bool barrier, const RunOptions& opt) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kSrc, kBytes);
    const auto r = c.chip(0).worker(1, 0), s = c.chip(0).worker(2, 0);
    Launcher L(c);
    L.add(r, [&](auto& h) {
        h.noc_read(h.noc_addr(s.x, s.y, kSrc), kData, kBytes);
        if (barrier) h.noc_read_barrier();
        kccl::hal::note_read(h, kData, kBytes);
        h.noc_read_barrier();
    });
    return L.run(opt);
}

TEST_CASE("race detector: noc_read data used before noc_read_barrier (N4)", "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = read_without_barrier(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        const std::string s = races(rep);
        CHECK(has(s, "reads L1 [0x1000, 0x1100) of chip 0 worker (1,0), last written by chip 0 worker (1,0) (noc_read landing"));
        CHECK(has(s, "(a noc_read's data is valid only after noc_read_barrier(), N4)"));
        KCCL_REQUIRE_OK(read_without_barrier(true, o));
    }
}

// ---- 4. source overwritten while a NoC write may still read it -------------------------------------
RunReport overwrite_source(bool flush, const RunOptions& opt) {
    Cluster c(topo::n300(small_chip()));
    const auto w = c.chip(0).worker(0, 0), d = c.chip(0).worker(1, 0);
    Launcher L(c);
    L.add(w, [&](auto& h) {
        kccl::hal::note_write(h, kSrc, kBytes);
        h.noc_write(kSrc, h.noc_addr(d.x, d.y, kData), kBytes);
        if (flush) h.noc_writes_flushed();
        kccl::hal::note_write(h, kSrc + 16, 4);  // the next message into the same buffer
        h.noc_write_barrier();
    });
    return L.run(opt);
}

TEST_CASE("race detector: a store into a NoC write's source before noc_writes_flushed (N3)", "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = overwrite_source(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        CHECK(has(races(rep), "source overwritten in flight: chip 0 worker (0,0) note_write (a store through l1_ptr) at race_test.cpp"));
        CHECK(has(races(rep), "writes L1 [0x4010, 0x4014) of chip 0 worker (0,0), the source of its noc_write at race_test.cpp"));
        KCCL_REQUIRE_OK(overwrite_source(true, o));
    }
}

// ---- 5. garbage used as data -------------------------------------------------------------------------
/// A sender writes a 16-byte header in one noc_write; the receiver uses a 32-byte header (a field
/// the sender does not send). Bytes 16-32 of the receiver's header are dirty L1 (hardware never
/// zeroes L1): nothing wrote them.
RunReport partial_header(bool whole, const RunOptions& opt) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    const auto w = c.chip(0).worker(0, 0), r = c.chip(0).worker(1, 0);
    Launcher L(c);
    L.add(w, [&](auto& h) {
        const uint32_t n = whole ? 32 : 16;
        for (uint32_t i = 0; i < n; i += 4) put(h, kSrc + i, uint32_t(42 + i));
        kccl::hal::note_write(h, kSrc, n);
        h.noc_write(kSrc, h.noc_addr(r.x, r.y, kData), n);
        h.sem_inc(h.noc_addr(r.x, r.y, kFlag), 1);
        h.noc_write_barrier();
    });
    L.add(r, [&](auto& h) {
        h.sem_wait(kFlag, 1);
        kccl::hal::note_read(h, kData, 32);
    });
    RunOptions o = opt;
    o.dirty_l1 = RunOptions::DirtyL1::on;
    return L.run(o);
}

TEST_CASE("race detector: a header field nobody wrote (dirty L1) used by the receiver", "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = partial_header(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        CHECK(has(races(rep), "garbage used as data: chip 0 worker (1,0) note_read (a load through l1_ptr) at race_test.cpp"));
        CHECK(has(races(rep), "uses L1 [0x1010, 0x1020) of chip 0 worker (1,0), which nothing has written since the memory "
                              "was made dirty"));
        KCCL_REQUIRE_OK(partial_header(true, o));
    }
}

/// A semaphore nobody cleared: the waiter's sem_wait_min is satisfied by dirty L1.
TEST_CASE("race detector: a wait satisfied by a semaphore nobody initialised", "[emulation][race][mutation]") {
    Cluster c(topo::n300(small_chip()));
    const auto r = c.chip(0).worker(1, 0);
    Launcher L(c);
    L.add(r, [&](auto& h) {
        // Dirty L1 holds some nonzero word here with near certainty: wait for >= 1.
        h.sem_wait_min(kFlag, 1);
    });
    RunOptions o = with_race(normal());
    o.dirty_l1 = RunOptions::DirtyL1::on;
    o.dirty_seed = 3;
    const RunReport rep = L.run(o);
    INFO(rep.summary());
    REQUIRE_FALSE(rep.ok());
    CHECK(has(races(rep), "garbage used as data: chip 0 worker (1,0) sem_wait at race_test.cpp"));
    CHECK(has(races(rep), "uses L1 [0x100, 0x104) of chip 0 worker (1,0), which nothing has written since the memory was made dirty"));
}

// ---- 6. Ethernet: the sync word first -----------------------------------------------------------------
/// E3: words of one send become visible in address order; polling the first word says nothing
/// about the rest. The receiver polls word 0 and uses the payload behind it.
RunReport eth_flag_first(bool flag_last, const RunOptions& opt) {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kData, 0x200);
    auto [e0, e1] = c.links_between(0, 1)[0];
    const uint32_t sync = flag_last ? kData + 0x100 : kData, payload = flag_last ? kData : kData + 16;
    Launcher L(c);
    L.add(e0, [&](auto& h) {
        put(h, kSrc + (sync - kData), uint32_t(1));
        kccl::hal::note_write(h, kSrc, 0x110);
        h.eth_send(0, kSrc, kData, 0x110);
    });
    L.add(e1, [&](auto& h) {
        h.sem_wait(sync, 1);
        kccl::hal::note_read(h, payload, 0x100 - 16);
    });
    return L.run(opt);
}

TEST_CASE("race detector: an Ethernet receiver polling the first word of a packet (E3)", "[emulation][race][mutation]") {
    for (const RunOptions& o : one_run_each_mode()) {
        const RunReport rep = eth_flag_first(false, o);
        INFO(rep.summary());
        REQUIRE_FALSE(rep.ok());
        CHECK(has(races(rep), "data race: chip 1 eth 0"));
        CHECK(has(races(rep), "(eth_send at race_test.cpp"));
        CHECK(has(races(rep), "polled the last 16-byte word of that send, E3)"));
        KCCL_REQUIRE_OK(eth_flag_first(true, o));
    }
}

// ---- every fixed version over many seeds, every mode ------------------------------------------------
/// Seeds 1..n of each fixed kernel pair run clean (race detector on) under PCT, the seeded random
/// policy and the adversary. The kernels are written to the contract's observed ordering profile
/// (the default): under the strict profile the data-then-signal pairs to one core need a flush,
/// which tests/emulation/ordering_test.cpp covers.
void fixed_versions_pass(uint32_t n) {
    using Fixed = RunReport (*)(const RunOptions&);
    const std::pair<const char*, Fixed> fixed[] = {
        {"dram, barrier, signal", [](const RunOptions& o) { return dram_then_signal(true, o); }},
        {"data, then signal", [](const RunOptions& o) { return signal_then_data(true, o); }},
        {"noc_read, barrier, use", [](const RunOptions& o) { return read_without_barrier(true, o); }},
        {"noc_write, flush, store", [](const RunOptions& o) { return overwrite_source(true, o); }},
        {"whole header", [](const RunOptions& o) { return partial_header(true, o); }},
        {"Ethernet flag last", [](const RunOptions& o) { return eth_flag_first(true, o); }},
    };
    RunOptions pct = with_race(normal(3000ms));
    pct.schedule.policy = kccl::emu::Policy::pct;
    pct.schedule.pct_depth = 3;
    pct.schedule.pct_steps = 50;
    RunOptions rnd = with_race(normal(3000ms));
    rnd.schedule.policy = kccl::emu::Policy::random;
    const std::pair<const char*, RunOptions> modes[] = {
        {"pct", pct}, {"random", rnd}, {"adversarial", with_race(adversarial(1, 3000ms))}};
    for (const auto& [fname, f] : fixed)
        for (auto [mname, base] : modes) {
            base.ordering = kccl::emu::OrderingProfile::observed;
            std::string bad;
            auto res = kccl::emu::explore(n, base, [&](const RunOptions& o) {
                const RunReport r = f(o);
                if (!r.ok()) bad = r.summary();
                return r;
            });
            INFO(fname << " (" << mname << "): " << bad);
            REQUIRE(res.ok);
            REQUIRE(res.runs == (kccl::emu::replay_env().empty() ? n : 1u));
        }
}

TEST_CASE("race detector: every fixed version passes 50 seeds in every mode", "[emulation][race]") { fixed_versions_pass(kccl_tests::sweep_seeds(50)); }

TEST_CASE("race detector: every fixed version passes 1000 seeds in every mode", "[emulation][race][long]") {
    const auto t0 = std::chrono::steady_clock::now();
    fixed_versions_pass(1000);
    WARN("race_test fixed versions, 1000 seeds x 3 modes x 6 pairs: "
         << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
}

// ---- the hang dump: who could have signalled a waiting core ----------------------------------------
/// Three workers run one kernel: each increments the collector's done-count once its work is
/// done. The zero-work worker returns early with its increment never sent; the collector waits.
TEST_CASE("hang dump: the worker that never signalled, beside those that did, all finished", "[emulation][dump][mutation]") {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    const auto col = c.chip(0).worker(0, 0);
    Launcher L(c);
    auto worker = [&](auto& h) {
        const uint32_t work = h.arg(0);
        if (work == 0) return;  // the bug: the increment below is never sent
        h.sem_inc(h.noc_addr(col.x, col.y, kFlag), 1);
        h.noc_write_barrier();
    };
    L.add(c.chip(0).worker(1, 0), worker, {5});
    L.add(c.chip(0).worker(2, 0), worker, {0});
    L.add(c.chip(0).worker(3, 0), worker, {5});
    L.add(col, [&](auto& h) { h.sem_wait(kFlag, 3); });
    const RunReport rep = L.run(normal());
    INFO(rep.summary());
    REQUIRE(rep.deadlock);
    const std::string& d = rep.watchdog_dump;
    CHECK(has(d, "chip 0 worker (0,0): sem_wait L1 0x100 expected == 3, current 2\n"));
    CHECK(has(d, "    L1 0x100 signalled by: chip 0 worker (1,0) sem_inc x1 (finished), chip 0 worker (3,0) sem_inc x1 (finished)\n"));
    CHECK(has(d, "    never signalled it, though running the same kernel as a core that did: chip 0 worker (2,0) (finished)\n"));
    CHECK(has(d, "    nobody will signal it: every core that signalled it (or runs their kernel) has finished\n"));
}

TEST_CASE("hang dump: a multicast signal is named by its multicast operation", "[emulation][dump][multicast][mutation]") {
    // A sender multicasts one increment (or sets the word) on (1,0)..(3,0); the core at (2,0)
    // waits for a value it never gets. The dump names the operation the sender issued.
    for (bool set : {false, true}) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, kFlag, 16);
        Launcher L(c);
        const kccl::hal::NocRect row{1, 0, 3, 0};
        L.add(c.chip(0).worker(0, 0), [&](auto& h) {
            if (set) {
                h.sem_set(kFlag2, 7);
                h.sem_set_mcast(kFlag2, row, kFlag, 3, false);
            } else {
                h.sem_inc_mcast(row, kFlag, 1, 3);
            }
            h.noc_write_barrier();
        });
        L.add(c.chip(0).worker(2, 0), [&](auto& h) { h.sem_wait(kFlag, 2); });
        const RunReport rep = L.run(normal());
        INFO(rep.summary());
        REQUIRE(rep.deadlock);
        const std::string& d = rep.watchdog_dump;
        CHECK(has(d, std::string("chip 0 worker (2,0): sem_wait L1 0x100 expected == 2, current ") + (set ? "7" : "1") + "\n"));
        CHECK(has(d, std::string("    L1 0x100 signalled by: chip 0 worker (0,0) ") + (set ? "sem_set_mcast" : "sem_inc_mcast") +
                         " x1 (finished)\n"));
        CHECK(has(d, "    nobody will signal it: every core that signalled it (or runs their kernel) has finished\n"));
    }
}

TEST_CASE("hang dump: a semaphore no core signals at all", "[emulation][dump][mutation]") {
    Cluster c(topo::n300(small_chip()));
    host_zero(c, kFlag, 16);
    Launcher L(c);
    L.add(c.chip(0).worker(0, 0), [&](auto& h) { h.sem_wait_min(kFlag2, 1); });
    const RunReport rep = L.run(normal());
    INFO(rep.summary());
    REQUIRE(rep.deadlock);
    CHECK(has(rep.watchdog_dump, "    L1 0x104 signalled by: no core in this run\n"));
    CHECK(has(rep.watchdog_dump, "    nobody has signalled it: no core issued a sem_inc, inline write or Ethernet send to it in this run\n"));
}

}  // namespace

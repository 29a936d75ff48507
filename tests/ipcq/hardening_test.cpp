// IPCQ hardening: streams across the 2^32 counter wrap (3, 4, 5 slots, poll and sleep), queue
// init on dirty L1 and back-to-back programs with different layouts, the plan's L1 / DRAM
// address checks, reserving futures, and strict mode on every receive variant.
#include "ipcq_util.hpp"

#include <atomic>
#include <thread>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;

namespace {

constexpr uint32_t kSrc = kScratch;
constexpr uint32_t kDst = kScratch + 0x4000;
constexpr uint32_t kAcc = kScratch + 0x8000;



template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<no error>";
}

/// Fills the whole memory of every core of the cluster (L1 and DRAM) with pseudo-random bytes:
/// what hardware leaves behind, since it never zeroes L1 between programs.
void dirty(Cluster& cl, uint64_t seed) {
    for (const auto& st : cl.cores()) {
        auto m = cl.l1(st->coord);
        uint64_t x = seed ^ (uint64_t(st->coord.x) << 32) ^ st->coord.y;
        for (size_t i = 0; i + 8 <= m.size(); i += 8) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const uint64_t v = x ^ (x >> 29);
            std::memcpy(m.data() + i, &v, 8);
        }
    }
}

/// Message m of the wrap stream: 1..16 words so that the descriptors change too.
constexpr uint32_t wrap_words(uint32_t m) { return 1 + (m * 5) % 16; }

}  // namespace

// ---- the 2^32 wrap ---------------------------------------------------------------------------------

TEST_CASE("ipcq counter wrap: streams across 2^32 with 3, 4 and 5 slots in poll and sleep mode", "[ipcq][wrap]") {
    // Counters start 300 messages below 2^32 (QueueConfig::initial_counter, installed at both
    // ends) and the stream sends 900, so it crosses the wrap mid-stream with slots in flight.
    // Before the fix: 3 and 5 slots (2^32 is not a multiple) put two messages into one slot at
    // the wrap (poll: 16 corrupted messages, the first one exactly at counter 2^32 - 1), and
    // sleep mode hung at the wrap for 3, 4 and 5 slots (sem_wait_min(>= 2^32 - 1) on a credit
    // that had jumped to 1). credit_batch = n_slots makes the credit jump by n_slots at once.
    constexpr uint32_t kStart = 0u - 300u, kMsgs = 900;
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep})
        for (uint32_t slots : {3u, 4u, 5u})
            for (uint32_t batch : {1u, slots}) {
                const auto placement = slots == 5 && batch == 1 ? iq::Placement::dram : iq::Placement::l1;
                INFO(name(mode) << ", " << slots << " slots, credit_batch " << batch
                                << (placement == iq::Placement::dram ? ", dram" : ", l1"));
                auto c = cfg(slots, 64, mode, placement);
                c.credit_batch = batch;
                c.initial_counter = kStart;
                Setup<Nsew> s(ih::ring_1d_unidir(2), c);
                s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
                    Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                    if (r == 0) {
                        for (uint32_t m = 0; m < kMsgs; ++m) {
                            fill(hal, kSrc, wrap_words(m), 0, 1, m);
                            q.send(Nsew::E, kSrc, 4 * wrap_words(m));
                        }
                        q.quiesce();
                        return q.my_head(Nsew::E);
                    }
                    uint64_t bad = 0;
                    uint32_t first_bad = UINT32_MAX;
                    for (uint32_t m = 0; m < kMsgs; ++m) {
                        auto slot = q.recv(Nsew::W);
                        const uint32_t b = (slot.seq != kStart + m) + (slot.info.nbytes != 4 * wrap_words(m)) +
                                           mismatches(q.data(slot), wrap_words(m), 0, 1, m);
                        if (b && first_bad == UINT32_MAX) first_bad = m;
                        bad += b;
                        q.release(slot);
                    }
                    q.quiesce();
                    put(hal, kAcc, bad);
                    put(hal, kAcc + 8, first_bad);
                    return q.my_tail(Nsew::W);
                });
                auto rep = s.run(adversarial(60 + slots + 10 * batch, std::chrono::milliseconds(5000)));
                KCCL_REQUIRE_OK(rep);
                CHECK(s.cluster.read32(s.core(1), kAcc + 8) == UINT32_MAX);  // index of the first bad message
                REQUIRE(s.cluster.read32(s.core(1), kAcc) == 0);
                // The stream really crossed 2^32: both ends ended past the wrap.
                REQUIRE(rep.at(s.core(0)).value == uint32_t(kStart + kMsgs));
                REQUIRE(rep.at(s.core(1)).value == uint32_t(kStart + kMsgs));
                REQUIRE(uint32_t(kStart + kMsgs) == 600u);
            }
}

TEST_CASE("ipcq counter wrap: 1-16 slots cross 2^32 with every payload intact", "[ipcq][wrap]") {
    // The wrap falls on every slot index in turn: counters start slots + 2 (poll) or 2 slots + 1
    // (sleep) below 2^32 and each stream refills every slot at least twice after the wrap.
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep})
        for (uint32_t slots = 1; slots <= 16; ++slots) {
            const uint32_t before = mode == iq::Backpressure::poll ? slots + 2 : 2 * slots + 1;
            const uint32_t start = 0u - before, msgs = before + 2 * slots + 3;
            INFO(name(mode) << ", " << slots << " slots, counters from 2^32 - " << before);
            auto c = cfg(slots, 64, mode);
            c.credit_batch = slots % 3 == 0 ? slots : 1;
            c.initial_counter = start;
            Setup<Nsew> s(ih::ring_1d_unidir(2), c);
            s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
                Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                if (r == 0) {
                    for (uint32_t m = 0; m < msgs; ++m) {
                        fill(hal, kSrc, wrap_words(m), 0, 1, m);
                        q.send(Nsew::E, kSrc, 4 * wrap_words(m));
                    }
                    q.quiesce();
                    return q.my_head(Nsew::E);
                }
                uint64_t bad = 0;
                for (uint32_t m = 0; m < msgs; ++m) {
                    auto slot = q.recv(Nsew::W);
                    bad += (slot.seq != start + m) + (slot.info.nbytes != 4 * wrap_words(m)) +
                           mismatches(q.data(slot), wrap_words(m), 0, 1, m);
                    q.release(slot);
                }
                q.quiesce();
                put(hal, kAcc, bad);
                return q.my_tail(Nsew::W);
            });
            auto rep = s.run(adversarial(200 + slots, std::chrono::milliseconds(5000)));
            KCCL_REQUIRE_OK(rep);
            REQUIRE(s.cluster.read32(s.core(1), kAcc) == 0);
            REQUIRE(rep.at(s.core(0)).value == uint32_t(start + msgs));
            REQUIRE(rep.at(s.core(1)).value == uint32_t(start + msgs));
            REQUIRE(uint32_t(start + msgs) < 64u);  // both ends ended past the wrap
        }
}

TEST_CASE("ipcq counter wrap: a bidirectional ring of 3 with 3 slots in sleep mode crosses 2^32", "[ipcq][wrap]") {
    auto c = cfg(3, 64, iq::Backpressure::sleep);
    c.initial_counter = 0u - 100u;
    Setup<Nsew> s(ih::ring_1d(3), c);
    constexpr uint32_t kMsgs = 300;
    s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
        Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        const uint32_t east = (r + 1) % 3, west = (r + 2) % 3;
        uint64_t bad = 0;
        for (uint32_t m = 0; m < kMsgs; ++m) {
            fill(hal, kSrc, 16, r, east, m);
            q.send(Nsew::E, kSrc, 64);
            fill(hal, kSrc, 16, r, west, m);
            q.send(Nsew::W, kSrc, 64);
            auto a = q.recv(Nsew::W);
            bad += mismatches(q.data(a), 16, west, r, m) + (a.seq != c.initial_counter + m);
            q.release(a);
            auto b = q.recv(Nsew::E);
            bad += mismatches(q.data(b), 16, east, r, m) + (b.seq != c.initial_counter + m);
            q.release(b);
        }
        q.quiesce();
        return bad;
    });
    auto rep = s.run(normal());
    KCCL_REQUIRE_OK(rep);
    for (uint32_t r = 0; r < 3; ++r) REQUIRE(rep.at(s.core(r)).value == 0);
}

TEST_CASE("ipcq initial_counter: both ends of a link must agree, and install writes it to every live word", "[ipcq][wrap][plan]") {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    auto c = cfg(3, 64);
    c.initial_counter = 7;
    auto other = c;
    other.initial_counter = 8;
    REQUIRE_THAT(error_of([&] {
                     ih::build_plan(ih::ring_1d(3), cores_for(3), std::vector<ih::QueueConfig>{c, c, other}, memory_for(cl));
                 }),
                 Catch::Contains("rank 0 direction W starts its counters at 7 but its peer rank 2 direction E at 8 "
                                 "(both ends of a link must agree on initial_counter)"));
    auto plan = ih::build_plan(ih::ring_1d(3), cores_for(3), c, memory_for(cl));
    namespace L = iq::layout;
    for (uint32_t w : {L::kHeadMailbox, L::kCreditMailbox, L::kMyHead, L::kMyTail, L::kPeerHeadCache, L::kPeerTailCache, L::kTaken}) {
        uint32_t v;
        std::memcpy(&v, plan.ranks[1].image.data() + L::record(Nsew::W) + w, 4);
        REQUIRE(v == 7);
    }
}

// ---- never trust stale L1 -------------------------------------------------------------------------

TEST_CASE("ipcq init on dirty L1: garbage-filled cores and back-to-back programs with different layouts", "[ipcq][init]") {
    // One cluster, memory (L1 and DRAM) full of garbage, then four programs back to back without
    // clearing anything between them: different slot counts, slot sizes, block addresses (the
    // second block overlaps the first program's rings), placements, modes and start counters.
    // Each program installs its plan and must deliver every message intact.
    ErrorsThrow errors;
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    dirty(cl, 0x5eed);
    struct Layout {
        uint32_t slots, size, block;
        iq::Placement placement;
        iq::Backpressure mode;
        uint32_t initial;
    };
    const Layout layouts[] = {{4, 256, kBlock, iq::Placement::l1, iq::Backpressure::poll, 0},
                              {3, 64, kBlock + 0x1000, iq::Placement::l1, iq::Backpressure::sleep, 0u - 50u},
                              {5, 128, kBlock, iq::Placement::dram, iq::Backpressure::sleep, 12345},
                              {2, 512, kBlock + 0x8000, iq::Placement::l1, iq::Backpressure::poll, 0}};
    for (const Layout& l : layouts) {
        INFO(l.slots << " x " << l.size << " B at " << l.block << ", initial counter " << l.initial);
        auto c = cfg(l.slots, l.size, l.mode, l.placement);
        c.initial_counter = l.initial;
        auto mem = memory_for(cl);
        mem.block_l1 = l.block;
        const auto plan = ih::build_plan(ih::ring_1d(4), cores_for(4), c, mem);
        ih::install_on(cl, 0, plan);
        Launcher launch(cl);
        constexpr uint32_t kMsgs = 200;
        for (uint32_t r = 0; r < 4; ++r)
            launch.add(cl.chip(0).worker(r % 4, r / 4), [r, l](auto& hal) -> uint64_t {
                Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                const uint32_t east = (r + 1) % 4, west = (r + 3) % 4;
                uint64_t bad = 0;
                for (uint32_t m = 0; m < kMsgs; ++m) {
                    const uint32_t words = 1 + m % 16;
                    fill(hal, kSrc, words, r, east, m);
                    q.send(Nsew::E, kSrc, 4 * words);
                    auto s = q.recv(Nsew::W);
                    bad += (s.seq != l.initial + m) + (s.info.nbytes != 4 * words) + mismatches(q.data(s), words, west, r, m);
                    q.release(s);
                }
                q.quiesce();
                return bad;
            }, plan.runtime_args(r));
        ih::attach_pointer_dumps(launch, cl, 0, plan);
        auto rep = launch.run(normal());
        KCCL_REQUIRE_OK(rep);
        for (uint32_t r = 0; r < 4; ++r) REQUIRE(rep.at(cl.chip(0).worker(r % 4, r / 4)).value == 0);
    }
}

TEST_CASE("ipcq init: a corrupt slot index in the mirror is a named error, not a wild write", "[ipcq][init][errors]") {
    // The device trusts only what install() wrote; a block whose mirror was overwritten after
    // the install (here: head slot 9 of a 3-slot ring) is rejected before any NoC write.
    Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(3, 64));
    s.cluster.write32(s.core(0), kBlock + iq::layout::record(Nsew::E) + iq::layout::kHeadSlot, 9);
    s.launch.add(s.core(0), [](auto& hal) { Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0)); }, s.plan.runtime_args(0));
    auto rep = s.run(normal());
    REQUIRE_THAT(rep.first_error(), Catch::Contains("init on direction E (2): corrupt block: n_slots 3, head slot 9, tail slot 0 "
                                                    "(allowed: slots < n_slots, n_slots >= 1); re-install the plan"));
}

// ---- plan checks --------------------------------------------------------------------------------

TEST_CASE("ipcq plan: the L1 size is required and DRAM addresses are never truncated to 32 bits", "[ipcq][plan]") {
    Cluster cl(kccl::emu::topology::single_chip(ipcq_chip()));
    auto t = ih::ring_1d(4);
    auto c = cfg(4, 4096);
    // Before the fix l1_bytes = 0 skipped the check: this plan (ends at 100160 B: the block, 4 records of 384 B, descriptors, rings) was accepted
    // for any core, however small.
    auto mem = memory_for(cl);
    mem.l1_bytes = 0;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), c, mem); }),
                 Catch::Contains("MemoryConfig::l1_bytes is 0; give the usable L1 bytes of the member cores"));
    mem.l1_bytes = 64 * 1024;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), c, mem); }),
                 Catch::Contains("rank 0 needs L1 up to 100160 bytes (block at 65536, 4 x 4096 B slots, L1 rings) but the core has 65536"));

    // DRAM: a region crossing 2^32. Before the fix rank 3's W ring got rx_base 0xc000 (the
    // truncation of 0x1_0000_c000) and the plan was accepted.
    auto dram = cfg(4, 4096, iq::Backpressure::poll, iq::Placement::dram);
    mem = memory_for(cl);
    mem.dram_base = 0xFFFF0000u;
    mem.dram_bytes = 0x100000;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), dram, mem); }),
                 Catch::Contains("the DRAM region [4294901760, 4295950336) ends above 2^32; NoC addresses of the contract carry "
                                 "32-bit offsets (allowed: dram_base + dram_bytes <= 4294967296)"));
    // A region ending exactly at 2^32 is fine, and every ring address is the real one.
    mem.dram_bytes = 0x10000;
    mem.dram_base = 0xFFFF0000u;
    {
        const auto plan = ih::build_plan(t, cores_for(4), cfg(4, 2048, iq::Backpressure::poll, iq::Placement::dram), mem);
        REQUIRE(plan.dram_end == (uint64_t(1) << 32));
        REQUIRE(plan.ranks[3].dirs[Nsew::W].rx_base == 0xFFFFE000u);
        REQUIRE(plan.ranks[0].dirs[Nsew::E].rx_base == 0xFFFF0000u);
    }
    // Rings that need more than the region: named (and the addresses were never truncated).
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), dram, mem); }),
                 Catch::Contains("DRAM rings need 131072 bytes but the region has 65536"));
    mem.dram_base = 8;
    REQUIRE_THAT(error_of([&] { ih::build_plan(t, cores_for(4), dram, mem); }),
                 Catch::Contains("MemoryConfig::dram_base 8 must be 16-byte aligned"));
}

// ---- futures reserve ------------------------------------------------------------------------------

TEST_CASE("ipcq recv_async reserves: two futures name two messages", "[ipcq][api][futures]") {
    // Before the fix both futures named message 0, and wait(f2) failed with "future for message
    // 0 but the next message on this direction is 1".
    for (auto placement : {iq::Placement::l1, iq::Placement::dram}) {
        Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 64, iq::Backpressure::poll, placement));
        std::atomic<uint32_t> seq1{99}, seq2{99}, ready2_early{99};
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            const uint32_t flag = kAcc + 16;
            if (r == 0) {
                fill(hal, kSrc, 16, 0, 1, 0);
                q.send(Nsew::E, kSrc, 64);
                hal.sem_wait_min(flag, 1);  // the receiver has looked at f2 with only message 0 sent
                fill(hal, kSrc, 16, 0, 1, 1);
                q.send(Nsew::E, kSrc, 64);
                q.quiesce();
                return 0;
            }
            auto f1 = q.recv_async(Nsew::W);
            auto f2 = q.recv_async(Nsew::W);
            seq1 = f1.seq;
            seq2 = f2.seq;
            while (!q.ready(f1)) hal.idle();
            ready2_early = q.ready(f2);  // message 1 is not sent yet
            hal.noc_inline_write32(hal.noc_addr(s.plan.ranks[0].core.x, s.plan.ranks[0].core.y, flag), 1);
            uint64_t bad = 0;
            auto a = q.wait(f1);
            bad += a.seq != 0 || mismatches(q.data(a), 16, 0, 1, 0);
            q.release(a);
            auto b = q.wait(f2);
            bad += b.seq != 1 || mismatches(q.data(b), 16, 0, 1, 1);
            q.release(b);
            return bad;
        });
        auto rep = s.run(normal());
        KCCL_REQUIRE_OK(rep);
        REQUIRE(seq1 == 0);
        REQUIRE(seq2 == 1);
        REQUIRE(ready2_early == 0);
        REQUIRE(rep.at(s.core(1)).value == 0);
    }
}

TEST_CASE("ipcq recv_async misuse: named errors for a reserved message, out-of-order and repeated waits", "[ipcq][api][futures][errors]") {
    struct Case {
        const char* what;
        int op;
        const char* expect;
    };
    for (const Case& c : {Case{"recv while a future is outstanding", 0,
                               "recv on direction W (3): message 0 is reserved by a future (recv_async; 1 outstanding); redeem it with wait() first"},
                          Case{"try_recv while a future is outstanding", 1,
                               "try_recv on direction W (3): message 0 is reserved by a future (recv_async; 1 outstanding)"},
                          Case{"wait on the second future first", 2,
                               "wait on direction W (3): future for message 1 redeemed before the future for message 0 "
                               "(redeem the futures of one direction in the order recv_async made them)"},
                          Case{"the same future twice", 3,
                               "wait on direction W (3): future for message 0 is not outstanding (none is; the next message on this "
                               "direction is 1); a future is redeemed once, by wait()"}}) {
        INFO(c.what);
        Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 64));
        s.add_all([&](auto& hal, uint32_t r) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                q.send(Nsew::E, kSrc, 16);
                q.send(Nsew::E, kSrc, 16);
                return;
            }
            auto f1 = q.recv_async(Nsew::W);
            iq::Slot sl;
            switch (c.op) {
                case 0: (void)q.recv(Nsew::W); break;
                case 1: (void)q.try_recv(Nsew::W, sl); break;
                case 2: (void)q.recv_async(Nsew::W), (void)q.wait(iq::RecvFuture{Nsew::W, 1}); break;
                default:
                    q.release(q.wait(f1));
                    (void)q.wait(f1);
            }
        });
        auto rep = s.run(normal());
        REQUIRE_FALSE(rep.ok());
        REQUIRE_THAT(rep.first_error(), Catch::Contains(c.expect));
    }
}

// ---- strict mode on every receive variant -----------------------------------------

TEST_CASE("ipcq strict mode checks every receive variant", "[ipcq][strict]") {
    // Before the fix only recv(dir, expect) took an expectation: copy-mode recv, try_recv,
    // recv_any and recv_async/wait could not be checked at all (this test did not compile).
    const char* names[] = {"recv", "copy recv", "try_recv", "recv_any", "recv_async + wait"};
    for (bool strict : {true, false})
        for (int variant = 0; variant < 5; ++variant) {
            INFO((strict ? "strict " : "lenient ") << names[variant]);
            auto c = cfg(2, 256);
            c.strict = strict;
            Setup<Nsew> s(ih::ring_1d_unidir(2), c);
            constexpr uint32_t kSentinel = 0xabcdef01u;
            s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
                Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                iq::MsgInfo info;
                info.dtype = 3;
                info.rank = 2;
                info.dims[0] = 4, info.dims[1] = 8;
                if (r == 0) {
                    fill(hal, kSrc, 32, 0, 1, 0);
                    q.send(Nsew::E, kSrc, 128, info);
                    return 0;
                }
                put(hal, kDst, kSentinel);
                iq::MsgInfo expect = info;
                expect.nbytes = 128;
                expect.dtype = 5;  // the receiver expects another type
                iq::Slot sl;
                switch (variant) {
                    case 0: sl = q.recv(Nsew::W, expect); break;
                    case 1: return q.recv(Nsew::W, kDst, 256, expect);
                    case 2:
                        while (!q.try_recv(Nsew::W, sl, expect)) hal.idle();
                        break;
                    case 3: sl = q.recv_any(expect); break;
                    default: sl = q.wait(q.recv_async(Nsew::W, expect));
                }
                const uint64_t got = sl.info.dtype;
                q.release(sl);
                return got;
            });
            auto rep = s.run(normal());
            if (strict) {
                REQUIRE_FALSE(rep.ok());
                REQUIRE_THAT(rep.first_error(), Catch::Contains("on direction W (3): strict mode: message 0 was sent with nbytes 128 "
                                                                "dtype 3 shape [4,8] but recv expects nbytes 128 dtype 5 shape [4,8]"));
                // Copy mode checks before copying: the destination is untouched.
                REQUIRE(s.cluster.read32(s.core(1), kDst) == kSentinel);
            } else {
                KCCL_REQUIRE_OK(rep);
                REQUIRE(rep.at(s.core(1)).value == (variant == 1 ? 128u : 3u));
            }
        }
}

// ---- mutations: the wrap tests catch both halves of the wrap fix ---------------------------------

namespace {
struct SlotFromCounter : iq::DefaultPolicy {
    static constexpr bool slot_from_counter = true;
};
struct UnboundedSleep : iq::DefaultPolicy {
    static constexpr bool unbounded_sleep = true;
};

/// Rank 0 sends `sent` messages on a 3-slot ring whose counters start at `start`; rank 1 waits
/// until they are all sent (flag), then receives `received` of them and reports word 0 of each
/// payload (message m carries m in word 0) through `words`.
template <class Policy>
RunReport wrap_scenario(Setup<Nsew>& s, uint32_t sent, uint32_t received, std::vector<uint32_t>& words,
                        std::chrono::milliseconds delay, std::chrono::milliseconds watchdog) {
    s.add_all([&, sent, received, delay](auto& hal, uint32_t r) {
        iq::Queues<std::decay_t<decltype(hal)>, Nsew, Policy> q(hal, hal.arg(0));
        const uint32_t flag = kAcc + 32;
        if (r == 0) {
            const auto peer_flag = hal.noc_addr(s.plan.ranks[1].core.x, s.plan.ranks[1].core.y, flag);
            for (uint32_t m = 0; m < sent; ++m) {
                fill(hal, kSrc, 16, 0, 1, m);
                q.send(Nsew::E, kSrc, 64);
                if (m + 1 == std::min<uint32_t>(sent, 3)) hal.noc_inline_write32(peer_flag, 1);  // the ring is full
            }
            q.quiesce();
            return;
        }
        hal.sem_wait_min(flag, 1);
        std::this_thread::sleep_for(delay);  // let the sender block (sleep) on the full ring first
        for (uint32_t m = 0; m < received; ++m) {
            auto slot = q.recv(Nsew::W);
            words.push_back(reinterpret_cast<const uint32_t*>(q.data(slot))[0]);
            q.release(slot);
        }
        q.quiesce();
    });
    return s.run(normal(watchdog));
}
}  // namespace

TEST_CASE("ipcq mutation: slots from counter % n_slots collide at the 2^32 wrap", "[ipcq][wrap][mutation]") {
    // 3 slots, counters 2^32-2, 2^32-1, 0: counter % 3 gives slots 2, 0, 0. The ring has room
    // for all three, so the third message overwrites the second before the receiver looks.
    auto c = cfg(3, 64);
    c.initial_counter = 0u - 2u;
    {
        Setup<Nsew> s(ih::ring_1d_unidir(2), c);
        std::vector<uint32_t> words;
        auto rep = wrap_scenario<SlotFromCounter>(s, 3, 3, words, std::chrono::milliseconds(0), std::chrono::milliseconds(5000));
        KCCL_REQUIRE_OK(rep);
        REQUIRE(words == std::vector<uint32_t>{0, 2, 2});  // message 1 (counter 2^32 - 1) reads message 2's payload
    }
    Setup<Nsew> s(ih::ring_1d_unidir(2), c);
    std::vector<uint32_t> words;
    auto rep = wrap_scenario<iq::DefaultPolicy>(s, 3, 3, words, std::chrono::milliseconds(0), std::chrono::milliseconds(5000));
    KCCL_REQUIRE_OK(rep);
    REQUIRE(words == std::vector<uint32_t>{0, 1, 2});
}

TEST_CASE("ipcq mutation: an unbounded sleep-mode wait hangs at the 2^32 wrap", "[ipcq][wrap][mutation]") {
    // Sleep mode, 3 slots, counters from 2^32 - 3, credit_batch 3: the sender fills the ring
    // (my_head wraps to 0) and sleeps for credit >= 2^32 - 2; the receiver consumes the three
    // and returns one credit of 3, so the credit jumps from 2^32 - 3 to 0 and the unsigned >=
    // is never true. The bounded wait polls across the wrap instead and the stream completes.
    auto c = cfg(3, 64, iq::Backpressure::sleep);
    c.initial_counter = 0u - 3u;
    c.credit_batch = 3;
    const uint32_t credit_mb = kBlock + iq::layout::record(Nsew::E) + iq::layout::kCreditMailbox;
    REQUIRE(credit_mb == 0x10400);  // the block, records W and N of 384 B, 64 B of header, 192 into E
    {
        Setup<Nsew> s(ih::ring_1d_unidir(2), c);
        std::vector<uint32_t> words;
        auto rep = wrap_scenario<UnboundedSleep>(s, 4, 4, words, std::chrono::milliseconds(30), std::chrono::milliseconds(400));
        REQUIRE(rep.watchdog_fired);
        INFO(rep.watchdog_dump);
        REQUIRE_THAT(rep.watchdog_dump, Catch::Contains("sem_wait_min L1 0x10400 expected >= 4294967294, current 0"));
        REQUIRE(words == std::vector<uint32_t>{0, 1, 2});
    }
    Setup<Nsew> s(ih::ring_1d_unidir(2), c);
    std::vector<uint32_t> words;
    auto rep = wrap_scenario<iq::DefaultPolicy>(s, 4, 4, words, std::chrono::milliseconds(30), std::chrono::milliseconds(5000));
    KCCL_REQUIRE_OK(rep);
    REQUIRE(words == std::vector<uint32_t>{0, 1, 2, 3});
}

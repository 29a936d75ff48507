// IPCQ device side on the emulation: send/recv, backpressure in
// both modes, recv wakes on arrival, round-robin fairness, bad directions, strict mode, the
// pointer dump of a hang, the trace, copy / try / async receives, tx slots.
#include "ipcq_util.hpp"

#include <atomic>
#include <thread>

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;

namespace {

constexpr uint32_t kSrc = kScratch;        // a message being composed
constexpr uint32_t kDst = kScratch + 0x4000;  // copy-mode destination
constexpr uint32_t kFlag = kScratch + 0x8000; // test-side flags written by other cores


/// Wraps the emulation Hal and counts sem_reads of one address (to check when caches refresh).
template <class H>
struct CountingHal {
    H& h;
    uint32_t watch;
    uint32_t reads = 0;
    using noc_addr_t = kccl::hal::noc_addr_t;
    uint32_t core_x() { return h.core_x(); }
    uint32_t core_y() { return h.core_y(); }
    noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t a) { return h.noc_addr(x, y, a); }
    uint8_t* l1_ptr(uint32_t a, uint32_t n) { return h.l1_ptr(a, n); }
    void noc_write(uint32_t s, noc_addr_t d, uint32_t n) { h.noc_write(s, d, n); }
    void noc_read(noc_addr_t s, uint32_t d, uint32_t n) { h.noc_read(s, d, n); }
    void noc_write_barrier() { h.noc_write_barrier(); }
    void noc_read_barrier() { h.noc_read_barrier(); }
    void noc_writes_flushed() { h.noc_writes_flushed(); }
    void noc_inline_write32(noc_addr_t d, uint32_t v) { h.noc_inline_write32(d, v); }
    void sem_inc(noc_addr_t d, uint32_t n) { h.sem_inc(d, n); }
    void sem_set(uint32_t a, uint32_t v) { h.sem_set(a, v); }
    void sem_wait(uint32_t a, uint32_t v) { h.sem_wait(a, v); }
    void sem_wait_min(uint32_t a, uint32_t v) { h.sem_wait_min(a, v); }
    uint32_t sem_read(uint32_t a) {
        reads += a == watch;
        return h.sem_read(a);
    }
    void eth_send(uint32_t q, uint32_t s, uint32_t d, uint32_t n) { h.eth_send(q, s, d, n); }
    bool eth_txq_busy(uint32_t q) { return h.eth_txq_busy(q); }
    void context_switch() { h.context_switch(); }
    uint32_t arg(uint32_t i) { return h.arg(i); }
    void idle() { h.idle(); }
};

/// Counts the store fences and the NoC writes to the core's own L1 of the code it wraps.
template <class H>
struct FenceCountingHal : CountingHal<H> {
    uint32_t fences = 0, self_writes = 0;
    using noc_addr_t = kccl::hal::noc_addr_t;
    void noc_write(uint32_t s, noc_addr_t d, uint32_t n) {
        self_writes += (d >> 32) == (this->h.noc_addr(this->h.core_x(), this->h.core_y(), 0) >> 32);
        this->h.noc_write(s, d, n);
    }
    void l1_store_fence(uint32_t l1, uint32_t n) {
        ++fences;
        kccl::hal::l1_store_fence(this->h, l1, n);
    }
};

}  // namespace

TEST_CASE("ipcq 2-rank ring: messages arrive whole and in order in both directions", "[ipcq][e2e]") {
    for (auto placement : {iq::Placement::l1, iq::Placement::dram}) {
        INFO("placement " << (placement == iq::Placement::dram ? "dram" : "l1"));
        Setup<Nsew> s(ih::ring_1d(2), cfg(4, 256, iq::Backpressure::poll, placement));
        constexpr uint32_t kMsgs = 500, kWords = 64;
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            const uint32_t peer = 1 - r;
            uint64_t bad = 0;
            for (uint32_t m = 0; m < kMsgs; ++m) {
                fill(hal, kSrc, kWords, r, peer, m);
                q.send(Nsew::E, kSrc, kWords * 4);
                auto slot = q.recv(Nsew::W);
                bad += slot.seq != m;
                bad += slot.info.nbytes != kWords * 4;
                bad += mismatches(q.data(slot), kWords, peer, r, m);
                q.release(slot);
            }
            q.quiesce();
            return bad;
        });
        auto rep = s.run(normal());
        KCCL_REQUIRE_OK(rep);
        REQUIRE(rep.at(s.core(0)).value == 0);
        REQUIRE(rep.at(s.core(1)).value == 0);
    }
}

TEST_CASE("ipcq backpressure: a full ring blocks the sender until the receiver consumes", "[ipcq][backpressure]") {
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep}) {
        INFO("mode " << (mode == iq::Backpressure::sleep ? "sleep" : "poll"));
        constexpr uint32_t kSlots = 4, kExtra = 3;
        Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(kSlots, 64, mode));
        std::atomic<uint32_t> credit_reads_while_filling{99};
        std::atomic<uint32_t> sent_when_receiver_looked{0};
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            if (r == 0) {
                CountingHal<std::decay_t<decltype(hal)>> ch{hal, kBlock + iq::layout::record(Nsew::E) + iq::layout::kCreditMailbox};
                iq::Queues<decltype(ch), Nsew> q(ch, hal.arg(0));
                const auto flag = hal.noc_addr(s.plan.ranks[1].core.x, s.plan.ranks[1].core.y, kFlag);
                for (uint32_t m = 0; m < kSlots + kExtra; ++m) {
                    fill(hal, kSrc, 16, 0, 1, m);
                    q.send(Nsew::E, kSrc, 64);
                    hal.noc_inline_write32(flag, m + 1);  // "m + 1 messages sent"
                    // The first n_slots sends find the cached credit sufficient: no re-read.
                    if (m + 1 == kSlots) credit_reads_while_filling = ch.reads;
                }
                q.quiesce();
                return q.peer_tail_cache(Nsew::E);
            }
            iq::Queues<std::decay_t<decltype(hal)>, Nsew> q(hal, hal.arg(0));
            hal.sem_wait_min(kFlag, kSlots);  // the ring is full now
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
            while (std::chrono::steady_clock::now() < until) hal.idle();
            sent_when_receiver_looked = hal.sem_read(kFlag);
            uint64_t bad = 0;
            for (uint32_t m = 0; m < kSlots + kExtra; ++m) {
                auto slot = q.recv(Nsew::W);
                bad += mismatches(q.data(slot), 16, 0, 1, m);
                q.release(slot);
            }
            return bad;
        });
        // Host time (a 30 ms / 20 ms wait) is what this checks: the thread engine's wall clock.
        RunOptions wall = normal();
        wall.engine = kccl::emu::Engine::threads;
        auto rep = s.run(wall);
        KCCL_REQUIRE_OK(rep);
        REQUIRE(credit_reads_while_filling == 0);
        REQUIRE(sent_when_receiver_looked == kSlots);  // blocked for 30 ms with a full ring
        REQUIRE(rep.at(s.core(1)).value == 0);
        REQUIRE(rep.at(s.core(0)).value == kSlots + kExtra);  // every credit came back
    }
}

TEST_CASE("ipcq copy mode: an aligned copy out of an L1 slot goes by the core's NoC, without a store fence",
          "[ipcq][copy]") {
    // A RISC-V copy costs a load and a store per word and then needs l1_store_fence (a load-back of
    // every word on hardware, N7) before the destination can be sent; the core's NoC copies a
    // 16-byte-aligned piece with neither. An unaligned destination still goes by memcpy + fence.
    Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 64));
    std::atomic<uint32_t> fences{99}, self_writes{99};
    s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
        if (r == 0) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            for (uint32_t m = 0; m < 3; ++m) {
                fill(hal, kSrc, 16, 0, 1, m);
                q.send(Nsew::E, kSrc, 64);
            }
            q.quiesce();
            return 0;
        }
        FenceCountingHal<std::decay_t<decltype(hal)>> ch{{hal, 0}};
        iq::Queues<decltype(ch), Nsew> q(ch, hal.arg(0));
        uint64_t bad = 0;
        const uint32_t dst[3] = {kDst, kDst + 0x100, kDst + 0x204};  // the last one 4 bytes off 16
        for (uint32_t m = 0; m < 3; ++m) {
            bad += q.recv(Nsew::W, dst[m], 64) != 64;
            bad += mismatches(hal.l1_ptr(dst[m], 64), 16, 0, 1, m);
        }
        q.quiesce();
        fences = ch.fences;
        self_writes = ch.self_writes;
        return bad;
    });
    for (const RunOptions& o : {normal(), adversarial(3)}) {
        fences = self_writes = 99;
        auto rep = s.run(o);
        KCCL_REQUIRE_OK(rep);
        REQUIRE(rep.at(s.core(1)).value == 0);
        CHECK(self_writes == 2);  // the two aligned copies
        CHECK(fences == 1);       // only the unaligned one
    }
}

TEST_CASE("ipcq recv wakes on arrival in both modes", "[ipcq][backpressure]") {
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep}) {
        Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(2, 64, mode));
        std::atomic<int64_t> waited_us{0};
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                // Let the receiver block first (it sleeps in sleep mode), then send one message.
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                fill(hal, kSrc, 16, 0, 1, 7);
                q.send(Nsew::E, kSrc, 64);
                return 0;
            }
            const auto t0 = std::chrono::steady_clock::now();
            auto slot = q.recv(Nsew::W);
            waited_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
            const uint64_t bad = mismatches(q.data(slot), 16, 0, 1, 7);
            q.release(slot);
            return bad;
        });
        // Host time (a 30 ms / 20 ms wait) is what this checks: the thread engine's wall clock.
        RunOptions wall = normal();
        wall.engine = kccl::emu::Engine::threads;
        auto rep = s.run(wall);
        KCCL_REQUIRE_OK(rep);
        REQUIRE(rep.at(s.core(1)).value == 0);
        REQUIRE(waited_us >= 10000);  // it really waited for the message
    }
}

TEST_CASE("ipcq recv_any is round robin starting after the last served direction", "[ipcq][fairness]") {
    // Star: rank 0 has N, S, E, W peers 1..4; each sends K messages before rank 0 starts.
    std::vector<std::array<int32_t, 4>> star = {
        {1, 2, 3, 4}, {-1, 0, -1, -1}, {0, -1, -1, -1}, {-1, -1, -1, 0}, {-1, -1, 0, -1}};
    constexpr uint32_t K = 3;
    Setup<Nsew> s(ih::custom<Nsew>(star, "star"), cfg(4, 64));
    std::vector<uint32_t> order;
    std::vector<uint32_t> order_one;
    s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
        Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        if (r != 0) {
            uint32_t d = 0;
            while (!q.installed(d)) ++d;
            const auto flag = hal.noc_addr(s.plan.ranks[0].core.x, s.plan.ranks[0].core.y, kFlag);
            for (uint32_t m = 0; m < K; ++m) {
                fill(hal, kSrc, 16, r, 0, m);
                q.send(d, kSrc, 64);
            }
            hal.sem_inc(flag, 1);
            if (r == 3) {  // E peer: one more burst later, alone
                hal.sem_wait_min(kFlag, 1);
                for (uint32_t m = K; m < 2 * K; ++m) {
                    fill(hal, kSrc, 16, r, 0, m);
                    q.send(d, kSrc, 64);
                }
            }
            q.quiesce();
            return 0;
        }
        hal.sem_wait_min(kFlag, 4);
        uint64_t bad = 0;
        for (uint32_t i = 0; i < 4 * K; ++i) {
            auto slot = q.recv_any();
            order.push_back(slot.dir);
            const uint32_t from = 1 + slot.dir;  // star: N=1, S=2, E=3, W=4
            bad += mismatches(q.data(slot), 16, from, 0, slot.seq);
            q.release(slot);
        }
        // Only E has data now: recv_any keeps serving it (no direction starves another).
        hal.noc_inline_write32(hal.noc_addr(s.plan.ranks[3].core.x, s.plan.ranks[3].core.y, kFlag), 1);
        for (uint32_t i = 0; i < K; ++i) {
            auto slot = q.recv_any();
            order_one.push_back(slot.dir);
            q.release(slot);
        }
        return bad;
    });
    auto rep = s.run(normal());
    KCCL_REQUIRE_OK(rep);
    REQUIRE(rep.at(s.core(0)).value == 0);
    REQUIRE(order == std::vector<uint32_t>{Nsew::N, Nsew::S, Nsew::E, Nsew::W, Nsew::N, Nsew::S, Nsew::E, Nsew::W,
                                           Nsew::N, Nsew::S, Nsew::E, Nsew::W});
    REQUIRE(order_one == std::vector<uint32_t>{Nsew::E, Nsew::E, Nsew::E});
}

TEST_CASE("ipcq bad direction: a clear error naming the core and the direction", "[ipcq][errors]") {
    struct Case {
        const char* what;
        uint32_t op;  // 0 send N, 1 recv S, 2 send on rx-only W, 3 recv on tx-only E, 4 direction 9
        const char* expect;
    };
    for (const Case& c : {Case{"send on uninstalled N", 0, "rank 0 core (0,0): send on direction N (0): not installed on this core; installed for send: E"},
                          Case{"recv on uninstalled S", 1, "rank 0 core (0,0): recv on direction S (1): not installed on this core; installed for recv: W"},
                          Case{"send on receive-only W", 2, "send on direction W (3): installed receive-only; installed for send: E"},
                          Case{"recv on send-only E", 3, "recv on direction E (2): installed send-only; installed for recv: W"},
                          Case{"direction out of range", 4, "send on direction ? (9): no such direction (the direction set has 4)"}}) {
        INFO(c.what);
        Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(2, 64));
        s.launch.add(s.core(0), [&](auto& hal) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            switch (c.op) {
                case 0: q.send(Nsew::N, kSrc, 4); break;
                case 1: q.recv(Nsew::S); break;
                case 2: q.send(Nsew::W, kSrc, 4); break;
                case 3: q.recv(Nsew::E); break;
                default: q.send(9, kSrc, 4);
            }
        }, s.plan.runtime_args(0));
        auto rep = s.run(normal());
        REQUIRE_FALSE(rep.ok());
        REQUIRE_THAT(rep.first_error(), Catch::Contains(c.expect));
    }
}

TEST_CASE("ipcq errors: oversized message and kernel without an installed block", "[ipcq][errors]") {
    {
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64));
        s.launch.add(s.core(0), [&](auto& hal) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            q.send(Nsew::E, kSrc, 80);
        }, s.plan.runtime_args(0));
        auto rep = s.run(normal());
        REQUIRE_THAT(rep.first_error(), Catch::Contains("message of 80 bytes does not fit a slot of 64 bytes"));
    }
    {
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64));
        s.launch.add(s.cluster.chip(0).worker(3, 3), [&](auto& hal) { Q<std::decay_t<decltype(hal)>> q(hal, kBlock); }, {});
        auto rep = s.run(normal());
        REQUIRE_THAT(rep.first_error(), Catch::Contains("core (3,3): no IPCQ block at L1 0x10000"));
    }
}

TEST_CASE("ipcq strict mode: matched send and recv must agree on nbytes dtype and shape", "[ipcq][strict]") {
    for (bool strict : {true, false}) {
        for (int variant = 0; variant < 3; ++variant) {  // 0 agree, 1 dtype differs, 2 shape differs
            auto c = cfg(2, 256);
            c.strict = strict;
            Setup<Nsew> s(ih::ring_1d_unidir(2), c);
            s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
                Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
                iq::MsgInfo info;
                info.dtype = 3;
                info.rank = 2;
                info.dims[0] = 4, info.dims[1] = 8;
                if (r == 0) {
                    q.send(Nsew::E, kSrc, 128, info);
                    return 0;
                }
                iq::MsgInfo expect = info;
                expect.nbytes = 128;
                if (variant == 1) expect.dtype = 5;
                if (variant == 2) expect.dims[1] = 16;
                auto slot = q.recv(Nsew::W, expect);
                const uint64_t got = slot.info.dtype * 1000 + slot.info.dims[1];
                q.release(slot);
                return got;
            });
            auto rep = s.run(normal());
            INFO("strict " << strict << " variant " << variant << ": " << rep.summary());
            if (strict && variant != 0) {
                REQUIRE_FALSE(rep.ok());
                REQUIRE_THAT(rep.first_error(), Catch::Contains("strict mode: message 0 was sent with nbytes 128 dtype 3 shape [4,8] but recv expects"));
            } else {
                REQUIRE(rep.ok());
                REQUIRE(rep.at(s.core(1)).value == 3008);  // the descriptor travelled with the message
            }
        }
    }
}

TEST_CASE("ipcq hang: the watchdog dump shows every queue's pointers", "[ipcq][watchdog]") {
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep}) {
        // Rank 0 sends 3 messages into a 2-slot ring; rank 1 receives one, never releases it,
        // and then waits for a message that never comes on E.
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64, mode));
        s.add_all([&](auto& hal, uint32_t r) {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                for (uint32_t m = 0; m < 3; ++m) q.send(Nsew::E, kSrc, 64);
            } else {
                // Both messages are in the ring before the first recv reads the head mailbox.
                hal.sem_wait_min(kBlock + iq::layout::record(Nsew::W) + iq::layout::kHeadMailbox, 2);
                (void)q.recv(Nsew::W);
                (void)q.recv(Nsew::E);
            }
        });
        auto rep = s.run(normal(std::chrono::milliseconds(300)));
        REQUIRE(rep.watchdog_fired);
        const std::string& d = rep.watchdog_dump;
        INFO(d);
        REQUIRE_THAT(d, Catch::Contains(std::string("ipcq rank 0 core (0,0) [") + (mode == iq::Backpressure::sleep ? "sleep" : "poll") + ", l1, 2 x 64 B]"));
        REQUIRE_THAT(d, Catch::Contains("E <-> rank 1 W: my_head=2 my_tail=0 peer_head_cache=0 peer_tail_cache=0 | head mailbox=0 credit mailbox=0 taken=0 TX FULL"));
        REQUIRE_THAT(d, Catch::Contains("ipcq rank 1 core (1,0)"));
        REQUIRE_THAT(d, Catch::Contains("W <-> rank 0 E: my_head=0 my_tail=0 peer_head_cache=2 peer_tail_cache=0 | head mailbox=2 credit mailbox=0 taken=1 RX PENDING 1 HELD 1"));
    }
}

TEST_CASE("ipcq trace records rank time direction and size of every operation", "[ipcq][trace]") {
    Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 256));
    struct Tick {
        uint64_t t = 100;
        uint64_t operator()() { return t += 10; }
    };
    std::vector<iq::TraceRecord> recs0(8), recs1(2);
    iq::TraceLog<Tick> log0{recs0.data(), uint32_t(recs0.size())}, log1{recs1.data(), uint32_t(recs1.size())};
    s.add_all([&](auto& hal, uint32_t r) {
        using H = std::decay_t<decltype(hal)>;
        iq::Queues<H, Nsew, iq::DefaultPolicy, iq::TraceLog<Tick>> q(hal, hal.arg(0), r == 0 ? &log0 : &log1);
        for (uint32_t m = 0; m < 3; ++m) {
            if (r == 0) q.send(Nsew::E, kSrc, 32 * (m + 1));
            else q.release(q.recv(Nsew::W));
        }
    });
    KCCL_REQUIRE_OK(s.run(normal()));
    REQUIRE(log0.count == 3);
    REQUIRE(log0.dropped == 0);
    for (uint32_t m = 0; m < 3; ++m) {
        INFO("m " << m);
        REQUIRE(recs0[m].time == 110 + 10 * m);
        REQUIRE(recs0[m].event.op == iq::TraceOp::send);
        REQUIRE(recs0[m].event.rank == 0);
        REQUIRE(recs0[m].event.dir == Nsew::E);
        REQUIRE(recs0[m].event.nbytes == 32 * (m + 1));
        REQUIRE(recs0[m].event.seq == m);
    }
    REQUIRE(log1.count == 2);  // capacity 2: the third record is counted, not stored
    REQUIRE(log1.dropped == 1);
    REQUIRE(recs1[1].event.op == iq::TraceOp::recv);
    REQUIRE(recs1[1].event.rank == 1);
    REQUIRE(recs1[1].event.dir == Nsew::W);
    REQUIRE(recs1[1].event.nbytes == 64);
}

TEST_CASE("ipcq receive variants: copy try async and tx slots", "[ipcq][api]") {
    for (auto placement : {iq::Placement::l1, iq::Placement::dram}) {
        auto c = cfg(4, 128, iq::Backpressure::poll, placement);
        c.tx_ring = true;
        Setup<Nsew> s(ih::ring_1d_unidir(2), c);
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                for (uint32_t m = 0; m < 8; ++m) {
                    const uint32_t src = q.tx_slot(Nsew::E);  // compose in place
                    fill(hal, src, 32, 0, 1, m);
                    q.send(Nsew::E, src, 4 * (8 + m));
                }
                q.quiesce();
                return 0;
            }
            uint64_t bad = 0;
            iq::Slot slot;
            while (!q.try_recv(Nsew::W, slot)) hal.idle();
            bad += slot.seq != 0 || slot.info.nbytes != 32;
            bad += mismatches(q.data(slot), 8, 0, 1, 0);
            q.release(slot);
            // copy mode: payload lands at kDst, the slot is released at once
            const uint32_t n = q.recv(Nsew::W, kDst, 128);
            bad += n != 36;
            bad += mismatches(hal.l1_ptr(kDst, n), 9, 0, 1, 1);
            auto f = q.recv_async(Nsew::W);
            while (!q.ready(f)) hal.idle();
            slot = q.wait(f);
            bad += slot.seq != 2;
            bad += mismatches(q.data(slot), 10, 0, 1, 2);
            q.release(slot);
            for (uint32_t m = 3; m < 8; ++m) {
                auto sl = q.recv(Nsew::W);
                bad += mismatches(q.data(sl), 8 + m, 0, 1, m);
                q.release(sl);
            }
            return bad;
        });
        auto rep = s.run(normal());
        KCCL_REQUIRE_OK(rep);
        REQUIRE(rep.at(s.core(1)).value == 0);
    }
}

TEST_CASE("ipcq release out of order is an error", "[ipcq][errors]") {
    Setup<Nsew> s(ih::ring_1d_unidir(2), cfg(4, 64));
    s.add_all([&](auto& hal, uint32_t r) {
        Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
        if (r == 0) {
            q.send(Nsew::E, kSrc, 4);
            q.send(Nsew::E, kSrc, 4);
            return;
        }
        auto a = q.recv(Nsew::W);
        auto b = q.recv(Nsew::W);  // L1 placement: several slots may be held at once
        (void)a;
        q.release(b);
    });
    auto rep = s.run(normal());
    REQUIRE_THAT(rep.first_error(), Catch::Contains("release on direction W (3): slot of message 1 released, but the oldest held message is 0"));
}

// IPCQ puts (Queues::open_window / peer_window / put): the payload lands where the sender puts it
// and the notice keeps its place among the sends; recv_in_place copies nothing and refuses a put
// that landed elsewhere; a put before any window, or before the peer's, is an error; a sender
// waiting for a window that never opens is a hang whose dump says so. Every run on dirty L1
// (normal() runs make the memory dirty), in both wait modes where it matters.
#include "ipcq_util.hpp"

using namespace kccl::test;
using namespace kccl::test::ipcq;
using iq::Nsew;

namespace {
constexpr uint32_t kSrc = kScratch;            // what rank 0 sends and puts
constexpr uint32_t kWin = kScratch + 0x4000;   // rank 1's window
constexpr uint32_t kCopy = kScratch + 0x8000;  // rank 1's copy-mode destination
}  // namespace

TEST_CASE("ipcq put: the payload lands in the receiver's window, the notice in FIFO order with the sends",
          "[ipcq][put]") {
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep}) {
        INFO(name(mode));
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64, mode));
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                q.open_window(0);  // one epoch on each end; rank 0's own window is unused
                const uint32_t base = q.peer_window(Nsew::E);
                fill(hal, kSrc, 50, 0, 1, 7);
                q.put(Nsew::E, kSrc, 200, base + 32);  // larger than a 64-byte slot: puts are not limited by it
                fill(hal, kSrc + 0x400, 16, 0, 1, 8);
                q.send(Nsew::E, kSrc + 0x400, 64);
                q.put(Nsew::E, kSrc, 200, base + 512);
                q.put(Nsew::E, kSrc, 0, base);  // an empty put is a notice alone
                q.quiesce();
                return 0;
            }
            q.open_window(kWin);
            uint64_t bad = 0;
            const iq::Slot a = q.recv(Nsew::W);
            bad += !a.landed || a.l1 != kWin + 32 || a.info.nbytes != 200;
            bad += mismatches(hal.l1_ptr(a.l1, 200), 50, 0, 1, 7);
            q.release(a);
            const iq::Slot b = q.recv(Nsew::W);  // the send, in its slot, after the first put
            bad += b.landed || b.info.nbytes != 64;
            bad += mismatches(hal.l1_ptr(b.l1, 64), 16, 0, 1, 8);
            q.release(b);
            bad += q.recv_in_place(Nsew::W, kWin + 512, 256) != 200;  // already there: nothing copied
            bad += mismatches(hal.l1_ptr(kWin + 512, 200), 50, 0, 1, 7);
            bad += q.recv(Nsew::W, kCopy, 16) != 0;
            return 1000 + bad;
        });
        const auto rep = s.run(normal());
        INFO(rep.summary());
        REQUIRE(rep.ok());
        REQUIRE(rep.at(s.core(1)).value == 1000);
    }
}

TEST_CASE("ipcq put: recv_in_place refuses a put that landed elsewhere; plain recv copies it", "[ipcq][put]") {
    for (bool in_place : {true, false}) {
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64));
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            q.open_window(r == 1 ? kWin : 0);
            if (r == 0) {
                fill(hal, kSrc, 25, 0, 1, 3);
                q.put(Nsew::E, kSrc, 100, q.peer_window(Nsew::E) + 64);
                q.quiesce();
                return 0;
            }
            const uint32_t n = in_place ? q.recv_in_place(Nsew::W, kCopy, 128) : q.recv(Nsew::W, kCopy, 128);
            return 1000 + (n != 100) + mismatches(hal.l1_ptr(kCopy, 100), 25, 0, 1, 3);
        });
        const auto rep = s.run(normal());
        INFO(rep.summary());
        if (in_place) {
            REQUIRE_FALSE(rep.ok());
            REQUIRE_THAT(rep.first_error(), Catch::Contains("recv_in_place on direction W (3): message 0 (100 bytes) was put at L1 0x") &&
                                                Catch::Contains("but this core receives it at 0x9000 (sender and receiver disagree on where it lands)"));
        } else {
            REQUIRE(rep.ok());
            REQUIRE(rep.at(s.core(1)).value == 1000);  // copied from where it landed
        }
    }
}

TEST_CASE("ipcq put: a put before any window, or before the peer opened this epoch's, is an error", "[ipcq][put]") {
    for (int variant : {0, 1}) {
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64));
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            if (r == 0) {
                if (variant == 1) q.open_window(0);  // an epoch begun, but the peer opens nothing
                q.put(Nsew::E, kSrc, 16, kWin);
            }
            return 0;
        });
        const auto rep = s.run(normal());
        REQUIRE_FALSE(rep.ok());
        INFO(rep.summary());
        if (variant == 0)
            REQUIRE_THAT(rep.first_error(), Catch::Contains("put on direction E (2): no epoch begun on this block; call open_window() on every core of the group first"));
        else
            REQUIRE_THAT(rep.first_error(), Catch::Contains("put on direction E (2): the peer has not opened the window of epoch 1 (it has opened 0); call peer_window(d) before putting"));
    }
}

TEST_CASE("ipcq put hang: a sender waiting for a window that never opens is named in the dump", "[ipcq][put][watchdog]") {
    for (auto mode : {iq::Backpressure::poll, iq::Backpressure::sleep}) {
        Setup<Nsew> s(ih::ring_1d(2), cfg(2, 64, mode));
        s.add_all([&](auto& hal, uint32_t r) -> uint64_t {
            Q<std::decay_t<decltype(hal)>> q(hal, hal.arg(0));
            q.open_window(kWin);
            if (r == 0) {
                q.open_window(kWin);  // epoch 2, which rank 1 never opens
                return q.peer_window(Nsew::E);
            }
            return 0;
        });
        const auto rep = s.run(normal(std::chrono::milliseconds(300)));
        REQUIRE(rep.watchdog_fired);
        INFO(rep.watchdog_dump);
        REQUIRE_THAT(rep.watchdog_dump, Catch::Contains("E <-> rank 1 W:") &&
                                            Catch::Contains("| put epoch=2 windows the peer opened=1 windows opened=2 PUT WAITS for the peer to open window 2 (it has opened 1)"));
    }
}

// Ethernet semantics: in order within a tx queue, no order across queues (E2), words of one send
// visible in increasing address order with the last word atomic (E3), no completion to the sender
// (E1), data only over links.
#include "util.hpp"

using namespace kccl::test;
namespace topo = kccl::emu::topology;

namespace {
constexpr uint32_t kBuf = 0x1000;
constexpr uint32_t kRx = 0x8000;
}  // namespace

TEST_CASE("sends on one tx queue complete in order (E2)", "[eth][adversarial]") {
    for (uint64_t seed : {0ull, 3ull, 4ull, 5ull}) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, 0x2000, 0x8000);  // the landing areas start zeroed (host-initialised)
        auto [tx, rx] = c.links_between(0, 1)[0];
        Launcher L(c);
        const uint32_t N = 400;
        // The sender sends N one-word packets, each carrying its index, to N different slots,
        // then a final "done" word. Sources are never reused. Because the queue is in order, when
        // the receiver sees "done" every slot must hold its index.
        L.add(tx, [&](auto& h) {
            for (uint32_t i = 0; i < N; ++i) {
                put(h, kBuf + 16 * i, i + 1);
                h.eth_send(0, kBuf + 16 * i, kRx + 16 * i, 16);
            }
            put(h, kBuf + 16 * N, 0xD0Eu);
            h.eth_send(0, kBuf + 16 * N, kRx + 16 * N, 16);
        });
        L.add(rx, [&](auto& h) {
            h.sem_wait(kRx + 16 * N, 0xD0E);
            uint32_t bad = 0;
            for (uint32_t i = 0; i < N; ++i) bad += h.sem_read(kRx + 16 * i) != i + 1;
            return bad;
        });
        auto r = L.run(seed ? adversarial(seed) : normal());
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(rx).value == 0);
    }
}

TEST_CASE("sends on different tx queues are not ordered (E2): the adversary reorders them",
          "[eth][adversarial]") {
    uint32_t reordered = 0;
    for (uint64_t seed = 1; seed <= 40 && reordered == 0; ++seed) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, 0x2000, 0x8000);  // the landing areas start zeroed (host-initialised)
        auto [tx, rx] = c.links_between(0, 1)[0];
        Launcher L(c);
        // 64 words on queue 0 first, then one word on queue 1. A receiver that sees queue 1's word
        // before queue 0's last one has observed the reordering. The sender then waits for the
        // receiver's verdict, so its deliveries happen while the receiver watches.
        L.add(tx, [&](auto& h) {
            for (uint32_t i = 0; i < 64; ++i) put(h, kBuf + 16 * i, 1u);
            h.eth_send(0, kBuf, kRx, 64 * 16);
            put(h, kBuf + 0x800, 1u);
            h.eth_send(1, kBuf + 0x800, kRx + 0x800, 16);
            h.sem_wait(kRx + 0x900, 1);
        });
        L.add(rx, [&](auto& h) {
            h.sem_wait(kRx + 0x800, 1);
            const uint32_t last = h.sem_read(kRx + 63 * 16);  // 0 if queue 0's packet is incomplete
            h.sem_wait(kRx + 63 * 16, 1);
            put(h, kBuf, 1u);
            h.eth_send(0, kBuf, kRx + 0x900, 16);
            return last;
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        reordered += r.at(rx).value == 0;
    }
    REQUIRE(reordered > 0);
}

TEST_CASE("the words of one send become visible in address order - the last word guards all (E3)",
          "[eth][adversarial]") {
    // Adversarial mode only: it delivers word by word with one release store per word, so
    // sampling words of a packet in flight is race-free there (normal mode copies the payload at
    // once and guarantees only the last word; see hal.hpp).
    for (uint64_t seed : {21ull, 22ull, 23ull, 24ull}) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, 0x2000, 0x8000);  // the landing areas start zeroed (host-initialised)
        auto [tx, rx] = c.links_between(0, 1)[0];
        Launcher L(c);
        const uint32_t kWords = 256;  // 4 KiB packet
        L.add(tx, [&](auto& h) {
            for (uint32_t w = 0; w < kWords; ++w)
                for (uint32_t k = 0; k < 4; ++k) put(h, kBuf + 16 * w + 4 * k, w + 1);
            h.eth_send(0, kBuf, kRx, kWords * 16);
        });
        // The receiver samples the words while they arrive: once word w is seen, every word
        // before it must be there (address order), and when the last is seen, all are.
        L.add(rx, [&](auto& h) {
            uint32_t violations = 0;
            while (h.sem_read(kRx + 16 * (kWords - 1)) == 0) {
                for (uint32_t w = kWords - 1; w > 0; --w)
                    if (h.sem_read(kRx + 16 * w) != 0) {
                        for (uint32_t v = 0; v < w; ++v) violations += h.sem_read(kRx + 16 * v) != v + 1;
                        break;
                    }
                h.idle();
            }
            for (uint32_t w = 0; w < kWords; ++w)
                for (uint32_t k = 0; k < 4; ++k) violations += h.sem_read(kRx + 16 * w + 4 * k) != w + 1;
            return violations;
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(rx).value == 0);
    }
}

TEST_CASE("a send's source is read when the command executes / not when it is queued (E1)",
          "[eth][adversarial]") {
    // Modifying the source before the receiver has acknowledged is a bug the adversary shows.
    uint32_t corrupted = 0;
    for (uint64_t seed = 1; seed <= 40 && corrupted == 0; ++seed) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, 0x2000, 0x8000);  // the landing areas start zeroed (host-initialised)
        auto [tx, rx] = c.links_between(0, 1)[0];
        Launcher L(c);
        L.add(tx, [&](auto& h) {
            for (uint32_t w = 0; w < 64; ++w) put(h, kBuf + 16 * w, 7u);
            h.eth_send(0, kBuf, kRx, 64 * 16);
            for (uint32_t w = 0; w < 64; ++w) put(h, kBuf + 16 * w, 9u);  // BUG: no ack awaited
        });
        L.add(rx, [&](auto& h) {
            h.sem_wait_min(kRx + 63 * 16, 1);
            uint32_t bad = 0;
            for (uint32_t w = 0; w < 64; ++w) bad += h.sem_read(kRx + 16 * w) != 7u;
            return bad;
        });
        auto r = L.run(adversarial(seed));
        KCCL_REQUIRE_OK(r);
        corrupted += r.at(rx).value != 0;
    }
    REQUIRE(corrupted > 0);
}

TEST_CASE("both directions of a link at once / many packets / credit-based", "[eth]") {
    for (bool adv : {false, true}) {
        Cluster c(topo::n300(small_chip()));
        host_zero(c, 0x2000, 0x8000);  // the landing areas start zeroed (host-initialised)
        auto [e0, e1] = c.links_between(0, 1)[0];
        Launcher L(c);
        const uint32_t N = 500, kPayload = 256;
        // Each side sends N packets [payload | sync] into one remote slot and waits for the
        // peer's credit (a 16-byte word sent back from a distinct source word) before the next.
        constexpr uint32_t kTx = 0x1000, kSlot = 0x2000, kCreditSrc = 0x3000, kCredit = 0x3100;
        auto side = [&](auto& h) {
            uint32_t bad = 0, received = 0, sent = 0;
            while (sent < N || received < N) {
                bool did = false;
                if (sent < N && h.sem_read(kCredit) == sent) {  // peer consumed all we sent
                    for (uint32_t w = 0; w < kPayload / 4; ++w) put(h, kTx + 4 * w, sent * 1000 + w);
                    put(h, kTx + kPayload, sent + 1);  // sync word at the END of the packet
                    h.eth_send(0, kTx, kSlot, kPayload + 16);
                    ++sent;
                    did = true;
                }
                if (received < N && h.sem_read(kSlot + kPayload) == received + 1) {
                    for (uint32_t w = 0; w < kPayload / 4; ++w)
                        bad += get<uint32_t>(h, kSlot + 4 * w) != received * 1000 + w;
                    ++received;
                    put(h, kCreditSrc, received);
                    h.eth_send(0, kCreditSrc, kCredit, 16);
                    did = true;
                }
                if (!did) h.idle();
            }
            return bad;
        };
        L.add(e0, side);
        L.add(e1, side);
        auto r = L.run(adv ? adversarial(9) : normal());
        KCCL_REQUIRE_OK(r);
        REQUIRE(r.at(e0).value == 0);
        REQUIRE(r.at(e1).value == 0);
    }
}

// The primitives over both transports: chains of 2-4 ranks, chunks of 0, 1, odd and many pieces,
// every output compared on the host with a plain reference (a loop over the ranks in the
// primitives' documented order: local operand first, received partial second; the order itself is
// held by tests/collectives/order_test.cpp with a non-commutative combine).
#include "collectives/link_util.hpp"

#include <collectives/ops.hpp>
#include <collectives/primitives.hpp>

#include <cstring>
#include <sstream>
#include <vector>

using namespace kccl::test;
using namespace kccl::test::coll_link;
using kccl::coll::GroupArgs;
using kccl::coll::GroupShape;
using kccl::coll::RedOp;
using kccl::coll::Reducer;
using kccl::coll::Transport;

namespace {

/// Element i of rank r's input (plain function of (r, i); small values so float sums are exact
/// enough to stay readable, but with fractions so that order matters in principle).
template <class T>
T input(uint32_t r, uint32_t i) {
    const uint32_t h = (r + 1) * 2654435761u ^ (i + 1) * 40503u;
    if constexpr (std::is_same_v<T, float>) return float(int32_t(h % 2001) - 1000) / 8.0f;
    else return T(h);
}

template <class T>
void fill_input(uint8_t* p, uint32_t r, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        const T v = input<T>(r, i);
        std::memcpy(p + i * sizeof(T), &v, sizeof(T));
    }
}

/// Plain references of the operators used here.
template <class T, RedOp Op>
T ref_op(T a, T b) {
    if constexpr (Op == RedOp::sum) {
        if constexpr (std::is_integral_v<T>) return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
        else return a + b;
    } else if constexpr (Op == RedOp::max) {
        return a < b ? b : a;
    } else {
        static_assert(Op == RedOp::bit_xor);
        return T(a ^ b);
    }
}

enum class Pattern { copy_chain, reduce_chain, reduce_copy_send_chain };
const char* pname(Pattern p) {
    return p == Pattern::copy_chain ? "send / recv_copy_send / recv"
           : p == Pattern::reduce_chain ? "send / recv_reduce_send / recv_reduce_copy"
                                        : "send / recv_reduce_copy_send / recv_reduce_copy";
}

/// The kernel: rank 0 sends its input; the middle ranks forward with the pattern's verb; the last
/// rank receives. Each rank writes its input first (dirty L1 elsewhere).
template <class Red>
struct Chain {
    Pattern pattern;
    uint32_t n;
    template <class L>
    uint64_t operator()(L& link, const GroupArgs& g) const {
        using T = typename Red::value_type;
        auto& hal = link.hal();
        fill_input<T>(hal.l1_ptr(g.input_l1, n * sizeof(T) + 1), g.rank, n);
        const bool first = g.rank == 0, last = g.rank + 1 == g.ranks;
        if (first) {
            kccl::coll::send<Red>(link, g.next_dir, g.input_l1, n);
        } else if (!last) {
            if (pattern == Pattern::copy_chain) kccl::coll::recv_copy_send<Red>(link, g.prev_dir, g.next_dir, g.output_l1, n);
            else if (pattern == Pattern::reduce_chain)
                kccl::coll::recv_reduce_send<Red>(link, g.prev_dir, g.next_dir, g.input_l1, n);
            else kccl::coll::recv_reduce_copy_send<Red>(link, g.prev_dir, g.next_dir, g.input_l1, g.output_l1, n);
        } else {
            if (pattern == Pattern::copy_chain) kccl::coll::recv<Red>(link, g.prev_dir, g.output_l1, n);
            else kccl::coll::recv_reduce_copy<Red>(link, g.prev_dir, g.input_l1, g.output_l1, n);
        }
        link.quiesce();
        return 0;
    }
};

template <class T, RedOp Op>
void run_chain(Transport t, uint32_t ranks, Pattern p, uint32_t n, bool adv) {
    using Red = Reducer<T, Op>;
    Bed bed(t, GroupShape::line, ranks, 256, 2, 16 * 1024);
    REQUIRE(n * sizeof(T) <= 16 * 1024);
    bed.add([p, n](auto& hal) { return with_link(hal, Chain<Red>{p, n}); });
    const RunReport rep = bed.run(adv ? adversarial(n * 13 + ranks * 5 + uint32_t(t) + uint32_t(p) * 101) : normal());
    INFO(bed.describe() << ", " << pname(p) << ", " << n << " elements of " << sizeof(T) << " bytes, "
                        << (adv ? "adversarial, dirty L1" : "normal"));
    KCCL_REQUIRE_OK(rep);
    // Reference: the partial after rank r (copy chain: rank 0's input everywhere).
    std::vector<T> acc(n);
    for (uint32_t i = 0; i < n; ++i) acc[i] = input<T>(0, i);
    for (uint32_t r = 1; r < ranks; ++r) {
        if (p != Pattern::copy_chain)
            for (uint32_t i = 0; i < n; ++i) acc[i] = ref_op<T, Op>(input<T>(r, i), acc[i]);
        const bool last = r + 1 == ranks;
        if (p == Pattern::reduce_chain && !last) continue;  // recv_reduce_send writes no output
        const auto l1 = bed.cluster->l1(bed.worker(r));
        const uint8_t* out = l1.data() + bed.plan.ranks[r].output;
        uint32_t wrong = 0, first_wrong = n;
        for (uint32_t i = 0; i < n; ++i) {
            T v;
            std::memcpy(&v, out + i * sizeof(T), sizeof(T));
            if (std::memcmp(&v, &acc[i], sizeof(T)) != 0) {
                ++wrong;
                if (first_wrong == n) first_wrong = i;
            }
        }
        INFO("rank " << r << ": first wrong element " << first_wrong);
        CHECK(wrong == 0);
    }
}

}  // namespace

TEST_CASE("primitives: chains of 2-4 ranks over both transports, sizes 0, 1, odd and many pieces", "[collectives][primitives]") {
    // 256-byte messages: 64 floats / int32 per piece; 1000 elements = 16 pieces (> 2 slots).
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (uint32_t ranks : {2u, 3u, 4u})
            for (Pattern p : {Pattern::copy_chain, Pattern::reduce_chain, Pattern::reduce_copy_send_chain})
                for (uint32_t n : {0u, 1u, 63u, 64u, 65u, 1000u}) {
                    run_chain<float, RedOp::sum>(t, ranks, p, n, false);
                    run_chain<int32_t, RedOp::sum>(t, ranks, p, n, n == 1000u);
                }
}

TEST_CASE("primitives: other operators and element sizes, adversarial", "[collectives][primitives]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        run_chain<float, RedOp::max>(t, 4, Pattern::reduce_copy_send_chain, 777, true);
        run_chain<uint64_t, RedOp::bit_xor>(t, 3, Pattern::reduce_chain, 301, true);
        run_chain<uint64_t, RedOp::bit_xor>(t, 3, Pattern::copy_chain, 33, true);
    }
}

TEST_CASE("primitives: piece elements are the largest multiple of 16 bytes within a message", "[collectives][primitives]") {
    struct FakeLink {
        uint32_t max;
        uint32_t max_message_bytes() const { return max; }
    };
    FakeLink a{256}, b{200}, c{8};
    CHECK(kccl::coll::piece_elems<float>(a) == 64);
    CHECK(kccl::coll::piece_elems<float>(b) == 48);
    CHECK(kccl::coll::piece_elems<uint64_t>(b) == 24);
    CHECK(kccl::coll::piece_elems<uint8_t>(c) == 8);
    CHECK(kccl::coll::piece_elems<uint64_t>(c) == 1);
}

TEST_CASE("primitives: a sender and a receiver that disagree on the chunk size are a named device error", "[collectives][primitives]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        Bed bed(t, GroupShape::line, 2, 256, 2);
        bed.add([](auto& hal) {
            return with_link(hal, [](auto& link, const GroupArgs& g) -> uint64_t {
                using Red = Reducer<float, RedOp::sum>;
                if (g.rank == 0) kccl::coll::send<Red>(link, g.next_dir, g.input_l1, 10);
                else kccl::coll::recv_reduce_copy<Red>(link, g.prev_dir, g.input_l1, g.output_l1, 11);
                link.quiesce();
                return 0;
            });
        });
        const RunReport rep = bed.run(normal(2000ms));
        INFO(name(t));
        REQUIRE_FALSE(rep.ok());
        CHECK_THAT(rep.first_error(), Catch::Contains("recv_reduce_copy: a piece from direction"));
        CHECK_THAT(rep.first_error(), Catch::Contains("has 40 bytes but this rank expects 44"));
    }
}

TEST_CASE("primitives: a ring step (every rank sends, then receives and reduces) with chunks up to the pipeline depth", "[collectives][primitives]") {
    // 256-byte messages, 2 slots: a chunk of 2 pieces (128 floats) fills the pipeline exactly.
    using Red = Reducer<int32_t, RedOp::sum>;
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (uint32_t ranks : {2u, 3u, 5u})
            for (uint32_t n : {0u, 1u, 127u, 128u}) {
                Bed bed(t, GroupShape::ring, ranks, 256, 2);
                bed.add([n](auto& hal) {
                    return with_link(hal, [&hal, n](auto& link, const GroupArgs& g) -> uint64_t {
                        fill_input<int32_t>(hal.l1_ptr(g.input_l1, n * 4 + 1), g.rank, n);
                        if (g.pipeline_messages * kccl::coll::piece_elems<int32_t>(link) < n) return 1;
                        kccl::coll::send<Red>(link, g.next_dir, g.input_l1, n);
                        kccl::coll::recv_reduce_copy<Red>(link, g.prev_dir, g.input_l1, g.output_l1, n);
                        link.quiesce();
                        return 0;
                    });
                });
                const RunReport rep = bed.run(adversarial(ranks * 100 + n + uint32_t(t)));
                INFO(bed.describe() << ", " << n << " elements");
                KCCL_REQUIRE_OK(rep);
                for (uint32_t r = 0; r < ranks; ++r) {
                    CHECK(rep.at(bed.worker(r), 0).value == 0);
                    const uint8_t* out = bed.cluster->l1(bed.worker(r)).data() + bed.plan.ranks[r].output;
                    uint32_t wrong = 0;
                    for (uint32_t i = 0; i < n; ++i) {
                        int32_t v;
                        std::memcpy(&v, out + 4 * i, 4);
                        wrong += v != ref_op<int32_t, RedOp::sum>(input<int32_t>(r, i), input<int32_t>((r + ranks - 1) % ranks, i));
                    }
                    INFO("rank " << r);
                    CHECK(wrong == 0);
                }
            }
}

TEST_CASE("primitives: a ring step with a chunk beyond the pipeline depth deadlocks, and the watchdog says where", "[collectives][primitives]") {
    // The documented limit (docs/collectives-links.md, "Deadlock rule"): on IPCQ the pipeline is the
    // ring's 2 slots, so a 3-piece chunk leaves every rank blocked in send with its peer's ring full.
    using Red = Reducer<int32_t, RedOp::sum>;
    Bed bed(Transport::ipcq, GroupShape::ring, 3, 256, 2);
    bed.add([](auto& hal) {
        return with_link(hal, [](auto& link, const GroupArgs& g) -> uint64_t {
            const uint32_t n = 3 * kccl::coll::piece_elems<int32_t>(link);
            kccl::coll::send<Red>(link, g.next_dir, g.input_l1, n);
            kccl::coll::recv_reduce_copy<Red>(link, g.prev_dir, g.input_l1, g.output_l1, n);
            link.quiesce();
            return 0;
        });
    });
    const RunReport rep = bed.run(normal(1000ms));
    REQUIRE_FALSE(rep.ok());
    REQUIRE(rep.watchdog_fired);
    INFO(rep.watchdog_dump);
    // Every rank waits on its own E credit mailbox: record E (2) of the block, + 192.
    const uint32_t credit_mailbox = bed.plan.ipcq_block + kccl::ipcq::layout::record(kccl::ipcq::Nsew::E) +
                                    kccl::ipcq::layout::kCreditMailbox;
    std::ostringstream hex;
    hex << std::hex << credit_mailbox;
    for (uint32_t r = 0; r < 3; ++r)
        CHECK_THAT(rep.watchdog_dump, Catch::Contains("worker (" + std::to_string(r) + ",0): idle in a poll loop; last sem_read L1 0x" +
                                                      hex.str()));
}

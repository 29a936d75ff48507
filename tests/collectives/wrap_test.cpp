// Collectives across the 2^32 counter wrap: every link of the group starts its message counters a
// few messages below 2^32 (GroupSpec::initial_counter, passed to IPCQ's QueueConfig and to every
// EDM channel) and the collective moves enough messages per link to cross it, with 3, 4 and 5
// slots, over both transports, under the adversary. Every rank's output is compared bit for bit
// with the host reference (testing/inputs.hpp).
#include <catch2/catch.hpp>

#include "e2e_bed.hpp"

#include <edm/types.hpp>
#include <ipcq/layout.hpp>

#include <cstring>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;

namespace {
std::string run_across_wrap(Op op, Method method, Transport t, uint32_t slots, uint32_t before, uint64_t seed) {
    Shape sh;
    sh.op = op;
    sh.method = method;
    sh.topo = Topology::ring;
    sh.ranks = 4;
    sh.root = 1;
    cb::GroupOptions bo;
    bo.transport = t;
    bo.shape = GroupShape::ring;
    bo.ranks = 4;
    bo.message_bytes = 64;  // 16 f32 per message: a 300-element collective is dozens of messages per link
    bo.slots = slots;
    bo.initial_counter = 0u - before;
    const e2e::Run run{300, seed, RedOp::sum, true};
    return e2e::run_standard(op, DataType::f32, RedOp::sum, sh, bo, run, e2e::Dirs::ring);
}
}  // namespace

TEST_CASE("collectives across the 2^32 counter wrap on both transports", "[collectives][wrap]") {
    uint64_t seed = 1;
    for (Transport t : {Transport::ipcq, Transport::edm})
        for (uint32_t slots : {3u, 4u, 5u})
            for (auto [op, method] : {std::pair{Op::all_reduce, Method::ring_cw}, std::pair{Op::all_gather, Method::ring_bidir},
                                      std::pair{Op::reduce_scatter, Method::ring_ccw}, std::pair{Op::broadcast, Method::ring_cw}}) {
                INFO(cb::name(t) << " " << op_name(op) << " " << method_name(method) << ", " << slots
                                 << " slots, counters from 2^32 - " << slots + 2);
                CHECK(run_across_wrap(op, method, t, slots, slots + 2, seed++) == "");
            }
}

TEST_CASE("GroupSpec::initial_counter reaches every link counter of both transports", "[collectives][wrap][plan]") {
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        cb::GroupOptions bo;
        bo.transport = t;
        bo.ranks = 3;
        bo.initial_counter = 0u - 9u;
        cb::Group bed(bo);
        if (t == Transport::edm) {
            REQUIRE(!bed.plan.edm.empty());
            for (const auto& k : bed.plan.edm) {
                // Every channel block of every EDM carries it.
                const uint32_t channels = k.args.at(kccl::edm::args::num_channels);
                uint32_t a = kccl::edm::args::first_channel;
                for (uint32_t c = 0; c < channels; ++c) {
                    REQUIRE(k.args.at(a + kccl::edm::args::ch_initial_counter) == 0u - 9u);
                    a += kccl::edm::args::ch_fixed + kccl::edm::args::per_worker * k.args.at(a + kccl::edm::args::ch_num_workers);
                }
            }
        } else {
            // The installed block's counter mirrors of every installed direction start there.
            namespace L = kccl::ipcq::layout;
            REQUIRE(bed.plan.ipcq_images.size() == 3);
            for (uint32_t r = 0; r < 3; ++r) {
                const auto& img = bed.plan.ipcq_images[r].image;
                auto word = [&](uint32_t off) {
                    uint32_t v;
                    std::memcpy(&v, img.data() + off, 4);
                    return v;
                };
                uint32_t installed = 0;
                for (uint32_t d = 0; d < kccl::ipcq::Nsew::count; ++d) {
                    if (!(word(L::record(d) + L::kCfgFlags) & L::kInstalled)) continue;
                    ++installed;
                    REQUIRE(word(L::record(d) + L::kMyHead) == 0u - 9u);
                    REQUIRE(word(L::record(d) + L::kMyTail) == 0u - 9u);
                    REQUIRE(word(L::record(d) + L::kHeadMailbox) == 0u - 9u);
                    REQUIRE(word(L::record(d) + L::kCreditMailbox) == 0u - 9u);
                }
                REQUIRE(installed == 2);  // E and W of a ring
            }
        }
    }
}

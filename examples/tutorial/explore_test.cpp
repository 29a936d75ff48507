// Tutorial step 2b (docs/tutorial.md): the same collective as a Catch2 test, explored over many
// schedules with kccl::testing::explore (PCT: probabilistic priority scheduling). The first
// failing seed fails the test with the KCCL_EMU_REPLAY value that replays it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <emulation/collective.hpp>
#include <testing/catch2.hpp>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

TEST_CASE("my reduce_scatter survives 30 PCT schedules", "[tutorial]") {
    kc::GroupOptions g;
    g.transport = Transport::ipcq;  // 4 PEs of one chip
    g.ranks = 4;
    kc::Collective c;
    c.op = Op::reduce_scatter;
    c.count = 256;
    const std::vector<std::vector<int32_t>> in(4, std::vector<int32_t>(256, 3));
    kccl::emu::RunOptions base = kc::default_run_options();
    base.schedule.policy = kccl::emu::Policy::pct;
    // A scenario returns a RunReport (failed: !ok()) or a bool (failed: false).
    kccl::testing::explore(30, base, [&](const kccl::emu::RunOptions& o) {
        const auto r = kc::run_collective<Reducer<int32_t, RedOp::sum>, kc::link_ipcq>(g, c, in, o);
        if (!r.ok()) {
            UNSCOPED_INFO(r.summary());
            return false;
        }
        for (uint32_t rank = 0; rank < 4; ++rank)  // rank's part: [rank * frag, rank * frag + frag)
            for (uint32_t j = 0; j < r.layout.frag && rank * r.layout.frag + j < 256; ++j)
                if (r.outputs[rank][j] != 12) {
                    UNSCOPED_INFO("rank " << rank << " element " << j << " is " << r.outputs[rank][j] << ", want 12");
                    return false;
                }
        return true;
    });
}

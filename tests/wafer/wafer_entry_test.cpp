// The wafer's patterns through run_collective: the user's own per-PE inputs in, every PE's
// output out, with the library's coll::Op / RedOp / DataType; outputs checked against sums and
// maxima computed here from the inputs.
#include <catch2/catch.hpp>

#include <emulation/collective.hpp>

#include <algorithm>
#include <vector>

namespace kc = kccl::emu::collective;
namespace kw = kccl::wafer;
using namespace kccl::coll;

namespace {

kc::GroupOptions grid(uint32_t rows, uint32_t cols) {
    kc::GroupOptions g;
    g.transport = Transport::wafer;
    g.ranks = rows * cols;
    g.mesh_cols = cols;
    return g;
}

std::vector<std::vector<int32_t>> inputs(uint32_t pes, uint32_t n) {
    std::vector<std::vector<int32_t>> in(pes, std::vector<int32_t>(n));
    for (uint32_t r = 0; r < pes; ++r)
        for (uint32_t i = 0; i < n; ++i) in[r][i] = int32_t((r * 7919 + i * 104729) % 2001) - 1000;
    return in;
}

}  // namespace

TEST_CASE("run_collective on the wafer: allreduce of the user's inputs on a 3 x 4 grid", "[wafer][entry]") {
    const auto g = grid(3, 4);
    kc::Collective c;
    c.op = Op::all_reduce;
    c.count = 20;
    const auto in = inputs(12, 20);
    const auto res = kc::run_collective<Reducer<int32_t, RedOp::sum>>(g, c, in);  // pattern: the cost model's choice
    INFO(res.method_name() << "\n" << res.summary());
    REQUIRE(res.ok());
    CHECK(res.report.makespan > 0);
    for (uint32_t i = 0; i < 20; ++i) {
        int32_t want = 0;
        for (const auto& v : in) want += v[i];
        for (uint32_t r = 0; r < 12; ++r) REQUIRE(res.outputs[r][i] == want);
    }
}

TEST_CASE("run_collective on the wafer: reduce (max) to a root inside a row, a pattern of the user's choice", "[wafer][entry]") {
    const auto g = grid(1, 9);
    kc::Collective c;
    c.op = Op::reduce;
    c.count = 13;
    c.root = 4;
    kw::PatternArgs a;
    a.pattern = kw::Pattern::left_right;
    a.base[0] = kw::Pattern::chain;
    c.pattern = a;
    const auto in = inputs(9, 13);
    auto ro = kc::default_run_options();
    ro.adversary.enabled = true;
    const auto res = kc::run_collective<Reducer<int32_t, RedOp::max>>(g, c, in, ro);
    INFO(res.summary());
    REQUIRE(res.ok());
    CHECK(res.method_name().find("left_right") != std::string::npos);
    for (uint32_t i = 0; i < 13; ++i) {
        int32_t want = in[0][i];
        for (const auto& v : in) want = std::max(want, v[i]);
        REQUIRE(res.outputs[4][i] == want);
    }
}

TEST_CASE("run_collective on the wafer: broadcast from a PE of a 2 x 3 grid", "[wafer][entry]") {
    kc::Collective c;
    c.op = Op::broadcast;
    c.count = 5;
    c.root = 4;
    std::vector<std::vector<float>> in(6, std::vector<float>(5, 0.f));
    for (uint32_t i = 0; i < 5; ++i) in[4][i] = 1.5f * float(i);
    const auto res = kc::run_collective<Reducer<float, RedOp::sum>>(grid(2, 3), c, in);
    INFO(res.summary());
    REQUIRE(res.ok());
    for (uint32_t r = 0; r < 6; ++r) CHECK(res.outputs[r] == in[4]);
}

TEST_CASE("run_collective on the wafer: what it does not take is named with what it allows", "[wafer][entry]") {
    kc::Collective c;
    c.count = 4;
    const std::vector<std::vector<int64_t>> in64(4, std::vector<int64_t>(4));
    CHECK_THROWS_WITH((kc::run_collective<Reducer<int64_t, RedOp::sum>>(grid(2, 2), c, in64)),
                      Catch::Contains("element type") && Catch::Contains("allowed: float, int32, uint32"));
    const std::vector<std::vector<float>> in(4, std::vector<float>(4));
    CHECK_THROWS_WITH((kc::run_collective<Reducer<float, RedOp::prod>>(grid(2, 2), c, in)), Catch::Contains("allowed: sum, max, min"));
    c.op = Op::all_gather;
    CHECK_THROWS_WITH((kc::run_collective<Reducer<float, RedOp::sum>>(grid(2, 2), c, in)),
                      Catch::Contains("allowed: reduce, all_reduce, broadcast"));
}

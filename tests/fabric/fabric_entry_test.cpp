// The chip fabric through run_collective: a Galaxy's 32 chips run multi-hop collectives with the
// same GroupOptions / Collective / CollectiveResult as IPCQ and EDM, outputs checked against the
// plain host reference of testing/inputs.hpp (written from the operations' definitions).
#include <catch2/catch.hpp>

#include <emulation/collective.hpp>
#include <testing/inputs.hpp>

#include <vector>

namespace kc = kccl::emu::collective;
using namespace kccl::coll;

namespace {

template <class T>
void check_galaxy(Op op, std::optional<Method> method, uint32_t count, uint64_t seed) {
    kc::GroupOptions g;
    g.transport = Transport::fabric;
    g.cluster = "galaxy";
    g.ranks = 32;
    kc::Collective c;
    c.op = op;
    c.method = method;
    c.count = count;
    std::vector<std::vector<T>> in(g.ranks, std::vector<T>(count));
    for (uint32_t r = 0; r < g.ranks; ++r)
        for (uint32_t i = 0; i < count; ++i) in[r][i] = kccl::testing::input_value<T>(seed, RedOp::sum, op_reduces(op), r, i);
    const auto res = kc::run_collective<Reducer<T, RedOp::sum>>(g, c, in);
    INFO(op_name(op) << " / " << res.method_name() << "\n" << res.summary());
    REQUIRE(res.ok());
    const auto [nbad, bad] = kccl::testing::check_outputs<T>(res.layout, RedOp::sum, seed, [&](uint32_t r) {
        return reinterpret_cast<const uint8_t*>(res.outputs[r].data());
    });
    INFO(bad);
    CHECK(nbad == 0);
}

}  // namespace

TEST_CASE("run_collective on the chip fabric: a Galaxy's 32 chips", "[fabric][entry]") {
    check_galaxy<float>(Op::all_reduce, Method::recursive_doubling, 300, 1);  // multi-hop over 32 ranks
    check_galaxy<uint32_t>(Op::all_gather, std::nullopt, 37, 2);             // automatic method
}

TEST_CASE("run_collective on the chip fabric: a ring of chips, in place and adversarial", "[fabric][entry]") {
    kc::GroupOptions g;
    g.transport = Transport::fabric;
    g.cluster = "ring";
    g.ranks = 6;
    kc::Collective c;
    c.op = Op::all_reduce;
    c.method = Method::rabenseifner;
    c.count = 100;
    c.in_place = true;
    std::vector<std::vector<int32_t>> in(6, std::vector<int32_t>(100));
    for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t i = 0; i < 100; ++i) in[r][i] = int32_t(r * 1000 + i);
    auto ro = kc::default_run_options();
    ro.adversary.enabled = true;
    ro.adversary.seed = 5;
    const auto res = kc::run_collective<Reducer<int32_t, RedOp::sum>>(g, c, in, ro);
    INFO(res.summary());
    REQUIRE(res.ok());
    for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t i = 0; i < 100; ++i) REQUIRE(res.outputs[r][i] == int32_t(15000 + 6 * i));
}

TEST_CASE("run_collective on the chip fabric: a request the cluster cannot take names what it allows", "[fabric][entry]") {
    kc::GroupOptions g;
    g.transport = Transport::fabric;
    g.cluster = "galaxy";
    g.ranks = 33;
    kc::Collective c;
    c.count = 4;
    const std::vector<std::vector<float>> in(33, std::vector<float>(4));
    CHECK_THROWS_WITH((kc::run_collective<Reducer<float, RedOp::sum>>(g, c, in)),
                      Catch::Contains("has 32 chips") && Catch::Contains("ranks must be 32"));
    g.cluster = "torus";
    CHECK_THROWS_WITH((kc::run_collective<Reducer<float, RedOp::sum>>(g, c, in)),
                      Catch::Contains("allowed: line, ring, mesh, t3000, galaxy"));
}

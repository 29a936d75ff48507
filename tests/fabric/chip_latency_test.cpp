// The chip fabric's per-hop latency on the timed engine (Wormhole model), measured as tt-metal
// measured its fabric's: "timing a round trip n hops out and halving the slope" (tt-metal's CCL
// bandwidth notes, "What sets the floor / Latency"). A ping (one packet: the 16-byte message header
// and no data) goes from rank 0 to rank k and back, R times in one run; the round trip is
// (T(R2) - T(R1)) / (R2 - R1) of rank 0's modelled kernel time, so setup and teardown cancel; the
// per-hop latency is half the least-squares slope of the round trip over k = 1..K.
// Published (Wormhole): 711 ns per hop on the 1D fabric, 874 ns on the 2D fabric.
//
//   ./kccl_tests "[fabric][latency]" -s     prints the table
#include <catch2/catch.hpp>

#include <emulation/fabric/fabric.hpp>

#include <cmath>
#include <cstdio>

namespace cf = kccl::emu::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

/// Rank 0's modelled time (ns) for `pings` round trips to the rank k hops away.
double ping_ns(fh::FabricKind kind, uint32_t k, uint32_t pings, const emu::WormholeOptions& w) {
    kccl::set_assert_handler(&throw_handler);
    cf::BedOptions o;
    o.kind = kind;
    o.message_bytes = 64;
    if (kind == fh::FabricKind::mesh_2d) {
        o.topology = "mesh";
        o.rows = 1;
        o.cols = k + 1;
    } else {
        o.topology = "line";
        o.ranks = k + 1;
    }
    cf::Bed bed(o);
    bed.add([k, pings](auto&, auto& link, const cf::RankBuffers& b) -> uint64_t {
        const uint32_t me = link.rank();
        if (me == 0) {
            const uint32_t d = k - 1;  // direction of rank k
            for (uint32_t i = 0; i < pings; ++i) {
                link.send(d, b.input_l1, 0);
                const kccl::coll::View v = link.recv(d);
                link.release(v);
            }
        } else if (me == k) {
            for (uint32_t i = 0; i < pings; ++i) {
                const kccl::coll::View v = link.recv(0);
                link.send(0, b.input_l1, 0);  // the pong before the credit, so it does not queue behind it
                link.release(v);
            }
        }
        link.quiesce();
        return 0;
    });
    auto model = emu::wormhole_model(w);
    emu::RunOptions ro;
    ro.timing = model.get();
    const emu::RunReport r = bed.run(ro);
    REQUIRE(r.ok());
    const emu::CoreResult& c = r.at(bed.worker(0));
    return double(c.modelled_end - c.modelled_start) / r.ticks_per_second * 1e9;
}

double round_trip_ns(fh::FabricKind kind, uint32_t k, const emu::WormholeOptions& w) {
    return (ping_ns(kind, k, 21, w) - ping_ns(kind, k, 1, w)) / 20.0;
}

/// Half the least-squares slope of the round trip over k = 1..K.
double per_hop_ns(fh::FabricKind kind, uint32_t K, std::vector<double>& rtt, const emu::WormholeOptions& w = {}) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t k = 1; k <= K; ++k) {
        const double y = round_trip_ns(kind, k, w);
        rtt.push_back(y);
        sx += k;
        sy += y;
        sxx += double(k) * k;
        sxy += k * y;
    }
    const double n = K;
    return (n * sxy - sx * sy) / (n * sxx - sx * sx) / 2.0;
}

}  // namespace

TEST_CASE("fabric latency: per-hop latency of the 1D and 2D fabric vs tt-metal's published Wormhole figures",
          "[fabric][latency]") {
    struct Row {
        fh::FabricKind kind;
        double published;
    };
    for (const Row row : {Row{fh::FabricKind::line_1d, 711.0}, Row{fh::FabricKind::mesh_2d, 874.0}}) {
        std::vector<double> rtt;
        const double hop = per_hop_ns(row.kind, 6, rtt);
        std::printf("fabric %-8s round trip over k hops (ns):", fh::kind_name(row.kind));
        for (double y : rtt) std::printf(" %.0f", y);
        std::printf("\n  per hop (half the slope): %.0f ns; tt-metal (Wormhole): %.0f ns; error %+.1f%%\n", hop,
                    row.published, 100.0 * (hop - row.published) / row.published);
        // What the model must do: the round trip grows with every hop, by a router's forwarding
        // time (NoC + Ethernet), i.e. hundreds of nanoseconds per hop.
        for (size_t i = 1; i < rtt.size(); ++i) CHECK(rtt[i] > rtt[i - 1]);
        CHECK(hop > 300.0);
        CHECK(hop < 3000.0);
        // Within 5% of tt-metal's figure. The 1D hop is a prediction: nothing in the model is
        // fitted to it. The 2D hop is not: WormholeOptions::cost_route_2d_hop is calibrated from the
        // two published figures (see the case below), so this checks the calibration holds.
        CHECK(std::fabs(hop - row.published) <= 0.05 * row.published);
    }
}

// The 2D router's extra per-hop work: 874 - 711 = 163 ns in tt-metal's figures. The model's own 2D
// structure (four sender channels polled, the 80-byte mesh header, the routing-table read) costs
// part of it; the rest, instruction work with no published figure (the hop-command decode, the full
// NoC write setup), is the calibrated cost_route_2d_hop, charged once per packet at every router
// it reaches. This case checks where the 2D hop's time comes from: without that cost the 2D hop is
// within 60 ns of the 1D hop (measured: 27); with it, one cost per hop on the slope, and 2D minus
// 1D is tt-metal's 163 ns within 20 (measured: 170).
TEST_CASE("fabric latency: the 2D hop's calibrated instruction work is charged once per hop", "[fabric][latency]") {
    std::vector<double> rtt;
    const double d1 = per_hop_ns(fh::FabricKind::line_1d, 6, rtt);
    const double d2 = per_hop_ns(fh::FabricKind::mesh_2d, 6, rtt);
    emu::WormholeOptions none;
    none.cost_route_2d_hop = 0;
    const double d2_structural = per_hop_ns(fh::FabricKind::mesh_2d, 6, rtt, none);
    const double charged = emu::WormholeOptions{}.cost_route_2d_hop;  // cycles at 1 GHz: ns
    std::printf("2D hop %.0f ns = %.0f without the calibrated %.0f ns (1D hop %.0f ns)\n", d2, d2_structural, charged, d1);
    CHECK(d2_structural > d1);
    CHECK(d2_structural - d1 < 60.0);
    // Once per hop: the slope grows by the charge (plus a few ns: the longer router step delays
    // its next poll), not by twice it (charged at both routers of a hop) or by nothing.
    CHECK(std::fabs((d2 - d2_structural) - charged) <= 15.0);
    CHECK(std::fabs((d2 - d1) - (874.0 - 711.0)) <= 20.0);
}

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

#include <emulation/chip_fabric.hpp>

#include <cmath>
#include <cstdio>

namespace cf = kccl::emu::chip_fabric;
namespace fh = kccl::fabric::chip::host;
namespace emu = kccl::emu;

namespace {

void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

/// Rank 0's modelled time (ns) for `pings` round trips to the rank k hops away.
double ping_ns(fh::FabricKind kind, uint32_t k, uint32_t pings) {
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
    auto model = emu::wormhole_model();
    emu::RunOptions ro;
    ro.timing = model.get();
    const emu::RunReport r = bed.run(ro);
    REQUIRE(r.ok());
    const emu::CoreResult& c = r.at(bed.worker(0));
    return double(c.modelled_end - c.modelled_start) / r.ticks_per_second * 1e9;
}

double round_trip_ns(fh::FabricKind kind, uint32_t k) { return (ping_ns(kind, k, 21) - ping_ns(kind, k, 1)) / 20.0; }

/// Half the least-squares slope of the round trip over k = 1..K.
double per_hop_ns(fh::FabricKind kind, uint32_t K, std::vector<double>& rtt) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t k = 1; k <= K; ++k) {
        const double y = round_trip_ns(kind, k);
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
        // The 1D hop: within 5% of tt-metal's figure (nothing in the model is fitted to it).
        if (row.kind == fh::FabricKind::line_1d) CHECK(std::fabs(hop - row.published) <= 0.05 * row.published);
    }
}

// The 2D hop is not within 5%: tt-metal's 2D hop costs 163 ns more than its 1D hop. The emulated 2D
// router does the per-hop work of tt-metal's 2D router that the model can cost from its own figures
// (it polls four sender channels, carries tt-metal's 80-byte mesh header, reads its routing table
// for every packet): 768 ns, 27 above the 1D hop, 106 ns (12%) under 874. What is left is work the
// model charges nothing for (instructions: the hop-command decode; tt-metal's 1D stateful NoC write
// against its 2D full one), with no published cost (docs/fabric.md, "Latency", "The 2D hop").
// Marked until the model has a sourced cost for it.
TEST_CASE("fabric latency: the 2D hop within 5% of tt-metal's 874 ns (not met)", "[fabric][latency][fidelity-gap][!shouldfail]") {
    std::vector<double> rtt;
    const double hop = per_hop_ns(fh::FabricKind::mesh_2d, 6, rtt);
    CHECK(std::fabs(hop - 874.0) <= 0.05 * 874.0);
}

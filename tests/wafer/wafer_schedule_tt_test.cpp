// The Shapes the Cerebras WSE reduce/allreduce thesis's patterns are written as
// (wafer/host/collectives.hpp pattern_schedule; lowered to the wafer fabric in
// wafer_schedule_test.cpp) run unchanged on the Tenstorrent side, through the collectives executor.
// Its own file: it instantiates the end-to-end bed (e2e_bed.hpp), which the bounded sanitizer run
// leaves out (docs/testing.md), so that the wafer-side cases still run under ASan+UBSan.
#include <catch2/catch.hpp>

#include <wafer/host/collectives.hpp>

#include "collectives/e2e_bed.hpp"

#include <string>

namespace fh = kccl::wafer::host;

// ---- the same schedules on the Tenstorrent side ---------------------------------------------
// The Shapes pattern_schedule writes for the wafer run unchanged through the collectives executor
// (e2e_bed.hpp: every rank's output bit for bit against the host reference): over IPCQ on a
// Tensix grid where every core has a queue pair to every other (all_pairs: a tree edge is one
// hop whatever the PEs' distance on the wafer), over EDM on chips linked all to all, and — for the
// trees whose edges join neighbours in rank order (chain) — over EDM on a row of chips (a line).
namespace {

std::string run_on_tenstorrent(const fh::PatternSpec& s, kccl::coll::Transport t, kccl::coll::GroupShape g, uint32_t count, kccl::coll::DataType dt,
                               kccl::coll::RedOp red) {
    const fh::PatternSchedule ps = fh::pattern_schedule(s);
    namespace cb = kccl::emu::collective;
    cb::GroupOptions bo;
    bo.transport = t;
    bo.shape = g;
    bo.ranks = ps.base.ranks;
    bo.message_bytes = 256;
    bo.slots = 4;
    const kccl::coll::e2e::Run run{count, 7, red, true};
    return kccl::coll::e2e::run_standard(ps.base.op, dt, red, ps.shape(), bo, run, kccl::coll::e2e::Dirs::group);
}

}  // namespace

TEST_CASE("wafer schedules: the same Shapes on Tensix cores over IPCQ and on chips over EDM", "[wafer][schedule][collectives][e2e]") {
    using kccl::coll::DataType;
    using kccl::coll::GroupShape;
    using kccl::coll::RedOp;
    using kccl::coll::Transport;
    struct C {
        const char* name;
        const char* base;
        uint32_t P, root;
        Transport t;
        GroupShape g;
    };
    const C cases[] = {
        {"two_phase", "chain", 7, 0, Transport::ipcq, GroupShape::all_pairs},
        {"optimal", "chain", 9, 0, Transport::ipcq, GroupShape::all_pairs},
        {"left_right", "two_phase", 8, 3, Transport::ipcq, GroupShape::all_pairs},
        {"jump", "tree", 6, 2, Transport::ipcq, GroupShape::all_pairs},
        {"ring", "chain", 5, 2, Transport::ipcq, GroupShape::all_pairs},
        {"scalar", "chain", 5, 0, Transport::ipcq, GroupShape::all_pairs},
        {"allreduce_naive", "optimal", 6, 0, Transport::ipcq, GroupShape::all_pairs},
        {"allreduce_naive", "left_right", 5, 2, Transport::ipcq, GroupShape::all_pairs},
        {"bcast_1d", "chain", 6, 4, Transport::ipcq, GroupShape::all_pairs},
        {"two_phase", "chain", 5, 0, Transport::edm, GroupShape::all_pairs},
        {"allreduce_naive", "two_phase", 4, 0, Transport::edm, GroupShape::all_pairs},
        {"chain", "chain", 4, 0, Transport::edm, GroupShape::line},
        {"allreduce_ring", "chain", 5, 0, Transport::ipcq, GroupShape::all_pairs},
        {"reduce_2d", "left_right", 0, 0, Transport::ipcq, GroupShape::all_pairs},
        {"allreduce_ring", "chain", 4, 0, Transport::edm, GroupShape::ring},
    };
    for (const C& c : cases)
        for (uint32_t count : {1u, 37u, 300u}) {
            fh::PatternSpec s;
            s.name = c.name;
            s.base = c.base;
            s.P = c.P;
            s.root = c.root;
            if (std::string(c.name) == "reduce_2d") s.M = 3, s.N = 3, s.root_x = 1, s.root_y = 1;  // a row leaf stores its column
            s.B = count;
            INFO(c.name << " over " << c.base << " P=" << c.P << " root=" << c.root << " transport " << int(c.t) << " group " << int(c.g) << " count " << count);
            CHECK(run_on_tenstorrent(s, c.t, c.g, count, DataType::f32, RedOp::sum) == "");
            if (count == 37) CHECK(run_on_tenstorrent(s, c.t, c.g, count, DataType::i32, RedOp::max) == "");
        }
}

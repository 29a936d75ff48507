// Several links and several workers per link (slicer.hpp, sliced.hpp) end to end: every rank's
// tensor is cut into W = links x workers_per_link worker slices; worker w of every rank forms its
// own group (IPCQ: its own PEs and queues; EDM: its own channels of the EDMs of its link — the
// workers of one link share its Ethernet cores, GroupSpec::more_workers) and runs its slice with
// execute_slice. Each worker's output starts as a sentinel: the bytes outside its slice (and
// all of them on ranks the op gives no output) must still hold it. The rank's output is then
// assembled from its workers' slices and compared bit for bit with the plain host reference of
// emulation/collective.hpp, under the adversarial mode with dirty L1.
#include <catch2/catch.hpp>

#include "e2e_bed.hpp"

#include <collectives/sliced.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace ch = kccl::coll::host;
namespace emu = kccl::emu;

namespace {

constexpr uint8_t kSentinel = 0xA5;

struct SlicedCase {
    Op op;
    Method method;
    Transport transport;
    uint32_t ranks, links, per_link, count;
    uint64_t seed = 1;
    uint32_t message_bytes = 256, slots = 4;
    std::string describe() const {
        std::ostringstream s;
        s << op_name(op) << " " << method_name(method) << " on a ring of " << ranks << " over " << cb::name(transport)
          << ", " << links << " links x " << per_link << " workers per link, count " << count << ", seed " << seed;
        return s.str();
    }
};

/// Runs one case with float sum (or the op's data movement); "" if every rank's assembled output
/// matches the reference bit for bit.
template <class Red>
std::string run_sliced(const SlicedCase& c) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    const uint32_t p = c.ranks, W = c.links * c.per_link;
    const Slicer sl(c.op, c.count, p, SliceConfig{eb, c.message_bytes, c.links, c.per_link});
    Shape sh;
    sh.op = c.op;
    sh.method = c.method;
    sh.topo = Topology::ring;
    sh.ranks = p;
    sh.root = p > 1 ? 1 : 0;
    sh.peer = p > 2 ? p - 1 : 0;
    sh.window = c.slots - 1;
    if (const char* err = validate(slice_shape(sh, sl, 0))) return std::string("not supported: ") + err;
    uint32_t work = 16;
    for (uint32_t w = 0; w < W; ++w) work = std::max(work, slice_work_bytes(sh, sl, w));
    const uint32_t buffer_bytes =
        (std::max({sl.in_elems() * eb, sl.out_elems() * eb, work, 16u}) + 15u) & ~15u;

    // the cluster: IPCQ on one chip (worker w of rank r at PE r*W + w), EDM on a ring of chips
    // (worker w of rank r at (w, 0) of chip r; link l's workers on link l's Ethernet cores)
    const uint64_t need = 0x10000ull + 3ull * (buffer_bytes + 16) + 4ull * c.slots * (c.message_bytes + 64) * 8 + 0x10000;
    const uint32_t l1 = uint32_t((need + 0xFFFF) & ~0xFFFFull);
    emu::ChipSpec chip;
    chip.worker_l1_bytes = l1;
    std::unique_ptr<emu::Cluster> cluster;
    if (c.transport == Transport::ipcq) {
        chip.grid_w = 8;
        chip.grid_h = (p * W + 7) / 8;
        chip.eth_cores = 1;
        chip.eth_l1_bytes = 16 * 1024;
        cluster = std::make_unique<emu::Cluster>(emu::topology::single_chip(chip));
    } else {
        chip.grid_w = W;
        chip.grid_h = 1;
        // one Ethernet link per pair and group link (a 2-rank ring joins the one pair twice); the
        // per_link workers of a link share its EDMs, 2 channels each
        const uint32_t per_pair = (p == 2 ? 2 : 1) * c.links;
        chip.eth_cores = 2 * per_pair;
        chip.eth_l1_bytes = std::max<uint32_t>(
            64 * 1024, (c.per_link * (2 * c.slots + 2) * (c.message_bytes + 64) + 0x1000 + 0xFFF) & ~0xFFFu);
        cluster = std::make_unique<emu::Cluster>(emu::topology::ring(p, per_pair, chip));
    }
    emu::Launcher launch(*cluster);
    // IPCQ: one plan per worker. EDM: one plan per link, whose per_link workers share its Ethernet
    // links (GroupSpec::more_workers: each its own channels of the same EDMs).
    struct Where {
        uint32_t plan, k;  ///< plans[plan], its worker k
    };
    std::vector<Where> where(W);
    std::vector<ch::GroupPlan> plans;
    std::vector<ch::Hop> used;
    const bool edm = c.transport == Transport::edm;
    const uint32_t nplans = edm ? c.links : W, per_plan = edm ? c.per_link : 1;
    for (uint32_t pl = 0; pl < nplans; ++pl) {
        ch::GroupSpec g;
        g.transport = c.transport;
        g.shape = GroupShape::ring;
        g.message_bytes = c.message_bytes;
        g.slots = c.slots;
        g.buffer_bytes = buffer_bytes;
        g.worker_l1 = {0x10000, l1, 0};
        g.more_workers.resize(per_plan - 1);
        for (uint32_t k = 0; k < per_plan; ++k) {
            const uint32_t w = pl * per_plan + k;
            where[w] = {pl, k};
            for (uint32_t r = 0; r < p; ++r) {
                const ch::Core core = edm ? ch::Core{r, w, 0} : ch::Core{0, (r * W + w) % 8, (r * W + w) / 8};
                (k ? g.more_workers[k - 1] : g.workers).push_back(core);
            }
        }
        if (edm) {
            g.eth_l1 = {0x1000, chip.eth_l1_bytes, 0x800};
            for (const ch::Edge& e : ch::group_edges(g)) {  // the first link of the pair no plan uses yet
                bool found = false;
                for (const auto& [ea, eb2] : cluster->links_between(g.workers[e.a].chip, g.workers[e.b].chip)) {
                    const ch::Core a{ea.chip, ea.x, ea.y}, b{eb2.chip, eb2.x, eb2.y};
                    const bool taken = std::any_of(used.begin(), used.end(), [&](const ch::Hop& h) {
                        return h.a == a || h.b == a || h.a == b || h.b == b;
                    });
                    if (taken) continue;
                    g.hops.push_back({a, b});
                    used.push_back({a, b});
                    found = true;
                    break;
                }
                if (!found) return "bed: not enough Ethernet links";
            }
        }
        plans.push_back(ch::build_group(g));
        ch::install_on(plans.back(), *cluster, launch);
    }
    const uint64_t seed = c.seed;
    const bool reduces = op_reduces(c.op);
    for (uint32_t w = 0; w < W; ++w)
        ch::add_worker_kernels(
            plans[where[w].plan], launch, where[w].k,
            [sh, sl, w, seed, reduces](auto& hal) -> uint64_t {
                using H = std::remove_reference_t<decltype(hal)>;
                const GroupArgs g = load_group_args(hal, 0);
                T* in = reinterpret_cast<T*>(hal.l1_ptr(g.input_l1, std::max(sl.in_elems(), 1u) * eb));
                for (uint32_t i = 0; i < sl.in_elems(); ++i) in[i] = kccl::testing::input_value<T>(seed, RedOp::sum, reduces, g.rank, i);
                // a sentinel in the whole output: what the worker must not write stays so
                std::memset(hal.l1_ptr(g.output_l1, std::max(sl.out_elems(), 1u) * eb), kSentinel, size_t(sl.out_elems()) * eb);
                SliceParams sp;
                sp.shape = sh;
                sp.slicer = sl;
                sp.worker = w;
                sp.rank = g.rank;
                sp.input = g.input_l1;
                sp.output = g.output_l1;
                sp.work = g.scratch_l1;
                auto run = [&](auto& link) {
                    execute_slice<Red>(link, sp, cb::dirs_of(g));
                    link.quiesce();
                };
                if (g.transport == Transport::ipcq) {
                    IpcqLink<H> link(hal, g.link_args);
                    run(link);
                } else {
                    EdmLink<H> link(hal, g.link_args);
                    run(link);
                }
                return 0;
            });
    for (const ch::GroupPlan& plan : plans)
        ch::add_edm_kernels(plan, launch, [](auto& hal) {
            kccl::edm::Edm<EdmLinkConfig> e;
            return e.run(hal) == kccl::edm::Status::ok ? uint64_t(0) : uint64_t(1);
        });
    emu::RunOptions ro;
    ro.watchdog = std::chrono::milliseconds(5000);
    ro.adversary.enabled = true;
    ro.adversary.seed = seed * 131 + 7;
    const emu::RunReport rep = launch.run(ro);
    if (!rep.ok()) return "run failed: " + rep.summary();

    // every worker writes only its slice, and only where the op defines this rank's output
    const uint32_t out_n = sl.out_elems(), m = sl.m;
    const bool writer_only = c.op == Op::reduce || c.op == Op::gather || c.op == Op::send_recv;
    const uint32_t writer = c.op == Op::send_recv ? sh.peer : sh.root;
    uint64_t strays = 0;
    std::string stray;
    for (uint32_t r = 0; r < p; ++r)
        for (uint32_t w = 0; w < W; ++w) {
            const ElemRange wr = sl.worker_range(w);
            const ch::RankLayout& lw = plans[where[w].plan].at(r, where[w].k);
            const uint8_t* o = cluster->l1({lw.worker.chip, lw.worker.x, lw.worker.y}).data() + lw.output;
            for (uint32_t e = 0; e < out_n; ++e) {
                const uint32_t off = m ? e % m : 0;
                const bool mine = (!writer_only || r == writer) && off >= wr.begin && off < wr.begin + wr.count;
                if (mine) continue;
                for (uint32_t b = 0; b < eb; ++b)
                    if (o[size_t(e) * eb + b] != kSentinel && strays++ < 3)
                        stray += " rank " + std::to_string(r) + " worker " + std::to_string(w) + " wrote out[" + std::to_string(e) + "];";
            }
        }
    if (strays) return std::to_string(strays) + " bytes written outside the worker's slice:" + stray;

    // assemble each rank's output: element e belongs to the worker whose range holds e % m
    std::vector<std::vector<uint8_t>> out(p, std::vector<uint8_t>(size_t(std::max(out_n, 1u)) * eb));
    for (uint32_t r = 0; r < p; ++r)
        for (uint32_t e = 0; e < out_n; ++e) {
            const uint32_t off = m ? e % m : 0;
            uint32_t owner = 0;
            for (uint32_t w = 0; w < W; ++w) {
                const ElemRange wr = sl.worker_range(w);
                if (off >= wr.begin && off < wr.begin + wr.count) owner = w;
            }
            const ch::RankLayout& lo = plans[where[owner].plan].at(r, where[owner].k);
            const uint8_t* src = cluster->l1({lo.worker.chip, lo.worker.x, lo.worker.y}).data() + lo.output + size_t(e) * eb;
            std::copy(src, src + eb, out[r].data() + size_t(e) * eb);
        }
    cb::Layout L;
    L.shape = sh;
    // the reference's count: scatter / all_to_all count the whole input (p fragments of n)
    L.count = c.op == Op::scatter || c.op == Op::all_to_all ? p * c.count : c.count;
    L.frag = m;
    const auto [nbad, bad] = kccl::testing::check_outputs<T>(L, RedOp::sum, seed, [&](uint32_t r) { return out[r].data(); });
    if (nbad) return std::to_string(nbad) + " wrong elements:" + bad;
    return "";
}

}  // namespace

namespace {

/// Every op but barrier x ring / line method x p in {2, 3, 5} x count in {0, 1, 37, 1001}, each
/// on the three setups `setups(op, method, p, count)` gives; returns how many ran (supported).
template <class Setups>
uint32_t sweep_sliced(Setups setups) {
    using Red = Reducer<float, RedOp::sum>;
    uint32_t runs = 0;
    for (Op op : {Op::all_gather, Op::reduce_scatter, Op::all_reduce, Op::broadcast, Op::reduce, Op::gather,
                  Op::scatter, Op::all_to_all, Op::send_recv})
        for (Method m : {Method::ring_cw, Method::ring_bidir, Method::ring_meet_middle, Method::line})
            for (uint32_t p : {2u, 3u, 5u})
                for (uint32_t count : {0u, 1u, 37u, 1001u}) {
                    const std::array<SlicedCase, 3> cases = setups(op, m, p, count);
                    for (const SlicedCase& c : cases) {
                        const std::string r = run_sliced<Red>(c);
                        if (r.rfind("not supported", 0) == 0) continue;
                        INFO(c.describe());
                        CHECK(r == "");
                        ++runs;
                    }
                }
    return runs;
}

}  // namespace

TEST_CASE("e2e: several links and workers per link, each worker running its slice (slicer)", "[collectives][e2e][sliced]") {
    // IPCQ: 2 links x 2 workers; 1 link x 3 workers. EDM: 2 links, one worker each.
    const uint32_t runs = sweep_sliced([](Op op, Method m, uint32_t p, uint32_t count) {
        return std::array<SlicedCase, 3>{SlicedCase{op, m, Transport::ipcq, p, 2, 2, count, count * 3 + p},
                                         SlicedCase{op, m, Transport::ipcq, p, 1, 3, count, count * 5 + p},
                                         SlicedCase{op, m, Transport::edm, p, 2, 1, count, count * 7 + p}};
    });
    CHECK(runs > 900);
}

TEST_CASE("e2e: sliced bf16 all_reduce with 4 workers on 8 ranks", "[collectives][e2e][sliced]") {
    using Red = Reducer<bfloat16, RedOp::sum>;
    for (Transport t : {Transport::ipcq, Transport::edm}) {
        const SlicedCase c{Op::all_reduce, Method::ring_bidir, t, 8, t == Transport::ipcq ? 2u : 4u, t == Transport::ipcq ? 2u : 1u, 4099, 11};
        INFO(c.describe());
        CHECK(run_sliced<Red>(c) == "");
    }
}

TEST_CASE("e2e: several workers share one EDM link, each on its own channels", "[collectives][e2e][sliced]") {
    // EDM: 1 link x 2 workers, 1 link x 4 workers (8 channels: the EDM's limit), 2 x 2.
    const uint32_t runs = sweep_sliced([](Op op, Method m, uint32_t p, uint32_t count) {
        return std::array<SlicedCase, 3>{SlicedCase{op, m, Transport::edm, p, 1, 2, count, count * 11 + p},
                                         SlicedCase{op, m, Transport::edm, p, 1, 4, count, count * 13 + p},
                                         SlicedCase{op, m, Transport::edm, p, 2, 2, count, count * 17 + p}};
    });
    CHECK(runs > 900);
}

TEST_CASE("plan: several workers per EDM link, and its named limits", "[collectives][sliced]") {
    // A ring of 3 chips, 3 workers per link: every EDM gets 6 channels, worker w channels 2w, 2w+1.
    emu::ChipSpec chip;
    chip.grid_w = 5;
    chip.grid_h = 1;
    chip.eth_cores = 2;
    chip.eth_l1_bytes = 256 * 1024;
    chip.worker_l1_bytes = 256 * 1024;
    emu::Cluster cluster(emu::topology::ring(3, 1, chip));
    auto spec = [&](uint32_t W) {
        ch::GroupSpec g;
        g.transport = Transport::edm;
        g.shape = GroupShape::ring;
        g.message_bytes = 1024;
        g.slots = 2;
        g.buffer_bytes = 4096;
        g.worker_l1 = {0x10000, 256 * 1024, 0};
        g.eth_l1 = {0x1000, 256 * 1024, 0x800};
        for (uint32_t r = 0; r < 3; ++r) g.workers.push_back({r, 0, 0});
        g.more_workers.resize(W - 1);
        for (uint32_t w = 1; w < W; ++w)
            for (uint32_t r = 0; r < 3; ++r) g.more_workers[w - 1].push_back({r, w, 0});
        g.hops = ch::edm_hops_from(cluster, g);
        return g;
    };
    const ch::GroupPlan plan = ch::build_group(spec(3));
    CHECK(plan.workers_per_link() == 3);
    CHECK(plan.edm_kernels().size() == 6);  // 3 hops x 2 ends: the workers share the EDMs
    for (const ch::EdmKernel& k : plan.edm_kernels()) CHECK(k.args[kccl::edm::args::num_channels] == 6);
    for (uint32_t w = 0; w < 3; ++w)
        for (uint32_t r = 0; r < 3; ++r) {
            const ch::RankLayout& l = plan.at(r, w);
            CHECK(l.worker == ch::Core{r, w, 0});
            CHECK(l.output == plan.at(r, 0).output);  // the same L1 layout on every worker
            const std::vector<uint32_t> a = plan.worker_args(r, w);
            CHECK(a[group_args::rank] == r);
            CHECK(a[group_args::next_dir] == plan.at(r, 0).next_dir);
            // its E direction's send channel notifies the same semaphore address, on its own core
            CHECK(a[a[group_args::link_args] + 1 + 2 * edm_link_dir_args + 2 + kccl::edm::args::w_worker_sem] ==
                  plan.worker_args(r, 0)[a[group_args::link_args] + 1 + 2 * edm_link_dir_args + 2 + kccl::edm::args::w_worker_sem]);
        }
    // Rank 0's E link: every worker's send and receive channel is on the same EDM (the same
    // Ethernet core), and the 2W channels' buffers are 2W distinct regions of it, as are their
    // EDM semaphores.
    {
        std::vector<uint32_t> bases, edm_sems;
        for (uint32_t w = 0; w < 3; ++w) {
            const auto a = plan.worker_args(0, w);
            const uint32_t dir = a[group_args::link_args] + 1 + 2 * edm_link_dir_args;
            for (uint32_t ch_at : {dir + 2, dir + 2 + kccl::edm::args::w_count}) {
                CHECK(a[ch_at + kccl::edm::args::w_edm_xy] == plan.worker_args(0, 0)[dir + 2 + kccl::edm::args::w_edm_xy]);
                bases.push_back(a[ch_at + kccl::edm::args::w_buffers_base]);
                edm_sems.push_back(a[ch_at + kccl::edm::args::w_edm_sem]);
            }
        }
        std::sort(bases.begin(), bases.end());
        std::sort(edm_sems.begin(), edm_sems.end());
        CHECK(std::adjacent_find(bases.begin(), bases.end()) == bases.end());
        CHECK(std::adjacent_find(edm_sems.begin(), edm_sems.end()) == edm_sems.end());
    }
    CHECK_THROWS_WITH(plan.at(0, 3), Catch::Contains("worker 3 is out of range (the group has 3 worker(s) per link)"));

    CHECK_THROWS_WITH(ch::build_group(spec(5)),
                      Catch::Contains("5 workers per link need 10 EDM channels on every Ethernet link") &&
                          Catch::Contains("an EDM has at most 8 (EdmLinkConfig::max_channels); allowed: at most 4 workers per link"));
    CHECK_NOTHROW(ch::build_group(spec(4)));
    ch::GroupSpec g = spec(2);
    g.more_workers[0].pop_back();
    CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("more_workers[0] (worker 1 of every rank) names 2 cores; it needs one per rank (3)"));
    g = spec(2);
    g.more_workers[0][1] = {2, 1, 0};
    CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("worker 1 of rank 1 is on chip 2 (1,0), but rank 1 is on chip 1"));
    g = spec(2);
    g.more_workers[0][2] = {2, 0, 0};
    CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("worker 0 of rank 2 and worker 1 of rank 2 are both on chip 2 (0,0)"));
    g = spec(2);
    g.transport = Transport::ipcq;
    g.hops.clear();
    CHECK_THROWS_WITH(ch::build_group(g), Catch::Contains("more_workers (2 workers per link) is for the EDM transport"));
}

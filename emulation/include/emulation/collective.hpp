// kccl/emulation/collective.hpp — run a collective on the emulation from the host, in a few lines.
//
// HOST-ONLY (C++20, std::vector, exceptions). Two levels:
//
// High level — run_collective: a group (transport, shape, ranks), a collective (op, method or
// automatic, count, root) and every rank's input; returns every rank's output, the run report
// (errors, the watchdog's dump, the replay string), host and modelled time:
//
//   namespace kc = kccl::emu::collective;
//   kc::GroupOptions g;                       // EDM over a ring of 4 chips (IPCQ: PEs of one chip)
//   g.transport = kccl::coll::Transport::edm;  g.ranks = 4;
//   kc::Collective c;  c.op = kccl::coll::Op::all_reduce;  c.count = 1024;   // method: automatic
//   std::vector<std::vector<float>> in(4, std::vector<float>(1024, 1.f));
//   auto r = kc::run_collective<kccl::coll::Reducer<float, kccl::coll::RedOp::sum>>(g, c, in);
//   if (!r.ok()) std::puts(r.summary().c_str());   // errors, dump and replay string
//   r.outputs[rank][i]                              // 4.f
//
// Machines — the transport picks one: IPCQ (PEs of one chip), EDM (chips over Ethernet),
// fabric (tt-metal's routed chip fabric on GroupOptions::cluster: line, ring, mesh, t3000, galaxy;
// every method, multi-hop included, on a Bed of emulation/fabric/fabric.hpp) or wafer (the
// thesis patterns on a PE grid of emulation/wafer/, Collective::pattern or the cost model's).
//
// Groups — GroupOptions::groups = CommGroup::consecutive(k) or orthogonal(k) (Graphcore GCL's
// kinds, include/collectives/groups.hpp) splits the ranks into groups of k that all run the
// collective at once, in one launch, each on its own links; inputs / outputs stay indexed by rank
// among all, root / peer are ranks inside each group, result.groups lists the groups.
//
// Lower level — Group: the group's plan (collective/host/plan.hpp) built on an emulated cluster
// with L1 sized for the tensor (make_layout, buffer_bytes_for); add(kernel) runs YOUR kernel
// body `kernel(hal, link, group_args)` on every rank (the transport's link model, the plan's
// buffer addresses in group_args), so compute can be fused before / after
// execute_any<Red>(link, exec_params(layout, g), group_dirs_of(g)); input(r) / output(r) are the
// host views of rank r's buffers after the run (docs/host-api.md).
//
// Layout of a collective's buffers (make_layout): the executor works on fragments of
// `layout.frag` elements (a multiple of the chunk size, so >= the elements a rank owns).
// Inputs are the plain tensor of `count` elements from input(r). Outputs: all_reduce, broadcast,
// reduce (root), send_recv (peer): count elements; all_gather, gather (root): fragment f (rank
// f's piece, count elements) at f * frag; reduce_scatter, scatter: rank r's fragment, elements
// [r * frag, r * frag + frag) of the tensor (zero past the tensor's end for reduce_scatter);
// all_to_all: fragment f at f * frag, holding elements [r * frag, ...) of rank f's input.
//
// The seeded inputs and the host reference the tests and tools check a run with are in
// testing/inputs.hpp.
#pragma once

#include <collectives/algorithms.hpp>
#include <collectives/executor.hpp>
#include <collectives/host/groups.hpp>
#include <collectives/host/mcast_plan.hpp>
#include <collectives/host/plan.hpp>
#include <collectives/link_edm.hpp>
#include <collectives/link_ipcq.hpp>
#include <collectives/ops.hpp>
#include <common/host/error.hpp>
#include <edm/edm.hpp>
#include <wafer/auto.hpp>

#include "emulation.hpp"
#include "fabric/fabric.hpp"
#include "wafer/run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kccl::emu::collective {

namespace coll = kccl::coll;
namespace ch = kccl::coll::host;
namespace emu = kccl::emu;
using namespace kccl::coll;
using coll::Op;  // not emu::Op (timing.hpp), which the enclosing namespace would find first

/// Device errors throw in the emulation, failing the run with the message.
inline void throw_handler(const char*, const char* msg, const char*, int) { throw emu::EmulationError(msg); }

/// Device checks the host-side builders run (planning, installing a plan) throw while one of these
/// lives; the handler installed before (the user's, or none) is back when it goes, also when the
/// builder throws. (Inside a run the launcher installs its own handler the same way.)
class HostChecksThrow {
public:
    HostChecksThrow() noexcept : prev_(kccl::set_assert_handler(&throw_handler)) {}
    ~HostChecksThrow() { kccl::set_assert_handler(prev_); }
    HostChecksThrow(const HostChecksThrow&) = delete;
    HostChecksThrow& operator=(const HostChecksThrow&) = delete;

private:
    kccl::assert_handler_t prev_;
};

inline const char* name(coll::Transport t) {
    constexpr const char* n[] = {"ipcq", "edm", "fabric", "wafer"};
    return n[uint32_t(t) & 3];
}

/// Calls f(Reducer<T, Op>{}) for the operator on element type T; false if the pair is not valid.
/// (Instantiates the reducers of T only: a translation unit per type keeps compile times apart.)
template <class T, class F>
bool with_reducer_of(coll::RedOp op, F&& f) {
    using coll::RedOp;
    if (!coll::is_valid_op(coll::dtype_of<T>::value, op)) return false;
    if constexpr (std::is_same_v<T, bool>) {
        if (op == RedOp::logical_and) f(coll::Reducer<T, RedOp::logical_and>{});
        else f(coll::Reducer<T, RedOp::logical_or>{});
    } else {
        switch (op) {
            case RedOp::sum: f(coll::Reducer<T, RedOp::sum>{}); break;
            case RedOp::prod: f(coll::Reducer<T, RedOp::prod>{}); break;
            case RedOp::min: f(coll::Reducer<T, RedOp::min>{}); break;
            case RedOp::max: f(coll::Reducer<T, RedOp::max>{}); break;
            case RedOp::square_add: f(coll::Reducer<T, RedOp::square_add>{}); break;
            case RedOp::mean:
                if constexpr (coll::is_floating_v<T>) f(coll::Reducer<T, RedOp::mean>{});
                break;
            case RedOp::bit_and:
            case RedOp::bit_or:
            case RedOp::bit_xor:
                if constexpr (coll::is_integer_v<T>) {
                    if (op == RedOp::bit_and) f(coll::Reducer<T, RedOp::bit_and>{});
                    else if (op == RedOp::bit_or) f(coll::Reducer<T, RedOp::bit_or>{});
                    else f(coll::Reducer<T, RedOp::bit_xor>{});
                }
                break;
            default: return false;
        }
    }
    return true;
}

/// Calls f(tag) with a value of the element type of `t` (float, bfloat16, half, int32_t, ...).
template <class F>
void with_type(coll::DataType t, F&& f) {
    switch (t) {
        case coll::DataType::f32: f(float{}); break;
        case coll::DataType::bf16: f(coll::bfloat16{}); break;
        case coll::DataType::f16: f(coll::half{}); break;
        case coll::DataType::i32: f(int32_t{}); break;
        case coll::DataType::u32: f(uint32_t{}); break;
        case coll::DataType::i64: f(int64_t{}); break;
        case coll::DataType::u64: f(uint64_t{}); break;
        case coll::DataType::boolean: f(bool{}); break;
    }
}

/// Calls f(Reducer<T, Op>{}) for a valid (dtype, op) pair; false if the pair is not valid.
template <class F>
bool with_reducer(coll::DataType t, coll::RedOp op, F&& f) {
    bool ok = false;
    with_type(t, [&](auto tag) { ok = with_reducer_of<decltype(tag)>(op, f); });
    return ok;
}

/// An operator every type accepts, for operations that move data without reducing.
inline coll::RedOp any_valid_op(coll::DataType t) {
    return t == coll::DataType::boolean ? coll::RedOp::logical_or : coll::RedOp::sum;
}

/// Element layout of one collective: per-rank input count -> chunk grid -> buffer sizes.
/// The element counts are computed in 64 bits and saturate at 2^32 - 1 (as coll::grid() does)
/// instead of wrapping; buffer_elems_wide() gives them exactly. A layout that runs has buffers of
/// at most 1 GiB (buffer_bytes_for, plan_collective), so its counts never saturate.
struct Layout {
    coll::Shape shape;
    uint32_t count = 0;        ///< input elements per rank (all_gather: its piece; others: the tensor)
    uint32_t chunk_elems = 0;
    uint32_t frag = 0;         ///< elements per fragment in the buffers (chunks * chunk_elems)
    uint32_t in_elems = 0, out_elems = 0, scratch_elems = 0;
};

/// Elements of buffer b of layout l, exact in 64 bits (chunks of the grid x chunk_elems).
inline uint64_t buffer_elems_wide(const Layout& l, coll::Buf b) {
    const uint64_t chunks = b == coll::Buf::scratch ? coll::scratch_chunks_wide(l.shape) : coll::grid_wide(l.shape, b);
    // at most ranks^2 x (the fragment rounded up to whole chunks): < 2^53 for a group (<= 1024 ranks)
    return chunks * l.chunk_elems;
}

/// x saturated to 32 bits (2^32 - 1 for anything larger).
inline uint32_t saturate32(uint64_t x) { return x > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(x); }

/// What a group's links allow a layout: elements per chunk (one packet) and message slots per
/// channel (0: unknown). Converts to the element count for callers that only want that.
struct ChunkLimit {
    uint32_t elems = 1;
    uint32_t slots = 0;
    ChunkLimit(uint32_t e, uint32_t s = 0) : elems(e), slots(s) {}
    operator uint32_t() const { return elems; }
};

/// The layout of `count` elements: chunks of at most limit.elems elements, and (ring all_gather /
/// reduce_scatter / all_reduce) a wavefront window of limit.slots - 1 chunks in flight, the most
/// the links' slots hold without deadlock (schedule.hpp window_slots()); window 1 without slots.
inline Layout make_layout(coll::Shape sh, uint32_t count, ChunkLimit limit) {
    const coll::Chunking c = coll::choose_chunking(sh.op, sh.ranks, count, limit.elems);
    sh.chunks = c.chunks;
    sh.window = limit.slots >= 2 ? limit.slots - 1 : 1;
    Layout l;
    l.shape = sh;
    l.count = count;
    l.chunk_elems = c.chunk_elems;
    l.frag = saturate32(uint64_t(c.chunks) * c.chunk_elems);
    l.in_elems = saturate32(buffer_elems_wide(l, coll::Buf::input));
    l.out_elems = saturate32(buffer_elems_wide(l, coll::Buf::output));
    l.scratch_elems = saturate32(buffer_elems_wide(l, coll::Buf::scratch));
    return l;
}

struct GroupOptions {
    coll::Transport transport = coll::Transport::ipcq;
    coll::GroupShape shape = coll::GroupShape::ring;
    uint32_t ranks = 4;
    uint32_t message_bytes = 1024;  ///< IPCQ slot / EDM packet
    uint32_t slots = 4;
    uint32_t buffer_bytes = 4096;   ///< each of input / output / scratch
    uint32_t extra_bytes = 0;       ///< more L1 after the plan's buffers (extra(rank))
    bool t3000 = false;             ///< EDM: the 8 chips of an emulated T3000 (2x4 mesh), ring order 0 1 2 3 7 6 5 4
    uint32_t mesh_cols = 0;         ///< shape mesh: columns (rank = row * cols + col)
    bool mesh_wrap = false;         ///< shape mesh: torus links along dimensions of 3 or more
    uint32_t dram_bytes = 0;        ///< EDM: a DRAM endpoint of this size per chip (0: none)
    /// EDM: workers per rank sharing each Ethernet link (GroupSpec::more_workers; worker w of rank r
    /// at (w, 0) of r's chip, its own channels of the link's EDMs); at most ch::max_workers_per_link.
    uint32_t workers_per_link = 1;
    /// Test hook: every link counter starts here (GroupSpec::initial_counter; 2^32 - k crosses the wrap).
    uint32_t initial_counter = 0;
    /// Communication groups (include/collectives/groups.hpp, Graphcore GCL's kinds): all() — one
    /// group of every rank; consecutive(k) — ranks/k groups of k adjacent ranks {0..k-1}
    /// {k..2k-1} ...; orthogonal(k) — ranks/k groups of k ranks with stride m = ranks/k
    /// {0, m, 2m, ...} {1, m+1, ...} .... `ranks` is then the number of ranks of ALL groups; each
    /// group runs the collective on its own (its own links, the collective's rank = position in
    /// the group), every group in the same launch. k must divide ranks (BadGroup otherwise).
    coll::CommGroup groups = coll::CommGroup::all();
    /// Transport::fabric (tt-metal's routed chip fabric, one worker per chip, every rank reachable:
    /// every method runs, multi-hop ones on any chip count): the emulated cluster, "line" / "ring"
    /// (`ranks` chips), "mesh" (ranks / mesh_cols rows), "t3000" (8 chips), "galaxy" (32 chips,
    /// 4 x 8); its routing (empty: mesh_2d on mesh / t3000 / galaxy, else line_1d / ring_1d).
    std::string cluster = "ring";
    std::optional<emu::fabric::FabricKind> routing;
};

/// Largest buffer run_collective gives a rank (each of input, output and scratch).
inline constexpr uint64_t kMaxBufferBytes = 1ull << 30;

/// Bytes of the largest of a layout's three buffers, rounded to 16 (exact: 64-bit sizes from the
/// layout's chunk grid). Throws kccl::Error naming the buffer and its size when one is
/// above 1 GiB (kMaxBufferBytes).
inline uint32_t buffer_bytes_for(const Layout& l, uint32_t elem_bytes) {
    uint64_t m = 1;  // at least one element
    for (coll::Buf b : {coll::Buf::input, coll::Buf::output, coll::Buf::scratch}) {
        const uint64_t e = buffer_elems_wide(l, b);
        // bytes, saturating (e * elem_bytes may exceed 2^64 only for absurd element sizes)
        const uint64_t bytes = elem_bytes && e > ~0ull / elem_bytes ? ~0ull : e * elem_bytes;
        if (bytes > kMaxBufferBytes) {
            const char* name = b == coll::Buf::input ? "input" : b == coll::Buf::output ? "output" : "scratch";
            throw kccl::Error(kccl::Errc::usage, std::string(coll::op_name(l.shape.op)) + " / " + coll::method_name(l.shape.method) +
                                        " of " + std::to_string(l.count) + " elements of " + std::to_string(elem_bytes) +
                                        " bytes over " + std::to_string(l.shape.ranks) + " ranks needs a " + name +
                                        " buffer of " + std::to_string(e) + " elements (" + std::to_string(bytes) +
                                        " bytes) per rank; collective buffers above 1 GiB per rank are not supported");
        }
        m = std::max(m, std::max<uint64_t>(e, 1) * elem_bytes);
    }
    return uint32_t((m + 15) & ~uint64_t(15));
}

/// Largest worker L1 the group gives a core (its addresses are 32-bit).
inline constexpr uint64_t kMaxWorkerL1 = 0xF0000000ull;

/// Worker L1 bytes the group gives each rank: the link area below 0x10000, the IPCQ block and
/// landing buffers, then the three buffers and the extra area; rounded to 64 KiB.
inline uint64_t worker_l1_need(const GroupOptions& o) {
    const uint64_t need = 0x10000ull + 3ull * (o.buffer_bytes + 16) + o.extra_bytes + 4ull * o.slots * (o.message_bytes + 64) * 8 + 0x10000;
    return (need + 0xFFFF) & ~0xFFFFull;
}

/// Host bytes the group's emulated cluster allocates for worker L1 (every worker core of every chip
/// it builds), for checking a run fits in host memory before starting it.
inline uint64_t host_l1_bytes(const GroupOptions& o) {
    const uint64_t n = std::max<uint32_t>(1, o.ranks), W = std::max<uint32_t>(1, o.workers_per_link);
    uint64_t cores;
    if (o.transport == coll::Transport::ipcq) {
        const uint64_t w = n <= 4 ? 4 : 8;
        cores = w * ((n + w - 1) / w);
    } else {
        cores = (o.t3000 ? 8 : n) * W;
    }
    return cores * worker_l1_need(o);
}

/// members[s][i] = the rank that is rank i of group s of o.groups over o.ranks; throws
/// ch::BadGroup naming the field, the kind, k, the ranks and the sizes allowed.
inline std::vector<std::vector<uint32_t>> group_table_of(const GroupOptions& o, const char* who) {
    try {
        return ch::group_table(o.groups, o.ranks);
    } catch (const ch::BadGroup& e) {
        throw ch::BadGroup(e.error, std::string(who) + ": GroupOptions::groups: " + e.what());
    }
}

/// Width of the IPCQ group's grid of cores: 4 up to 4 ranks, else 8 (Group puts rank r at
/// core (r % w, r / w) of one chip).
inline uint32_t ipcq_grid_width(uint32_t ranks) { return ranks <= 4 ? 4 : 8; }

/// The core of rank r (worker 0; r among all ranks) where Group puts it: IPCQ (r % w, r / w) of
/// chip 0; EDM worker (0,0) of chip r (the T3000 layout: chips 0 1 2 3 7 6 5 4).
inline ch::Core rank_core(const GroupOptions& o, uint32_t r) {
    if (o.transport == coll::Transport::ipcq) {
        const uint32_t w = ipcq_grid_width(o.ranks);
        return {0, r % w, r / w};
    }
    static constexpr uint32_t t3000_chips[8] = {0, 1, 2, 3, 7, 6, 5, 4};
    return {o.t3000 && r < 8 ? t3000_chips[r] : r, 0, 0};
}

/// Which link types a bed's kernel is instantiated for (Group::add<Links>): fewer link types,
/// less to compile (a tool that only runs EDM passes link_edm).
enum LinkSet : unsigned { link_ipcq = 1, link_ipcq_all_pairs = 2, link_edm = 4, link_fabric = 8, link_all = 15 };

/// A group of `ranks` over the transport: IPCQ on PEs of one chip (ring order = row-major on a
/// grid as wide as needed), EDM on worker (0,0) of each chip of a ring / line of chips (and, with
/// workers_per_link W, workers (1,0) .. (W-1,0) sharing the links, each its own EDM channels).
class Group {
public:
    GroupOptions opt;
    std::unique_ptr<emu::Cluster> cluster;
    ch::GroupPlan plan;                      ///< the plan of group 0 (with groups = all(): of every rank)
    std::vector<ch::GroupPlan> other_plans;  ///< groups 1 .. : other_plans[s - 1] (GroupOptions::groups)
    /// members[s][i]: the rank (0 .. ranks-1) that is rank i of group s (one group: the identity).
    std::vector<std::vector<uint32_t>> members;
    std::unique_ptr<emu::Launcher> launch;

    explicit Group(const GroupOptions& o) : opt(o) {
        const HostChecksThrow checks;
        const uint32_t n = o.ranks, W = std::max<uint32_t>(1, o.workers_per_link);
        if (W > 1 && (o.transport != coll::Transport::edm || o.t3000))
            throw kccl::Error(kccl::Errc::usage, "the group puts several workers per link only on the EDM transport "
                                        "(not IPCQ, not the T3000 layout)");
        members = group_table_of(o, "Group");
        const bool subgroups = members.size() > 1;
        if (subgroups && (o.t3000 || o.shape == coll::GroupShape::mesh))
            throw kccl::Error(kccl::Errc::usage, "GroupOptions::groups = " + ch::group_name(o.groups) + " over " + std::to_string(n) +
                                        " ranks: several groups are built as rings, lines or all-pairs groups only "
                                        "(not shape mesh, not the T3000 layout); use groups = all() there");
        ch::GroupSpec g;
        g.transport = o.transport;
        g.shape = o.shape;
        g.message_bytes = o.message_bytes;
        g.slots = o.slots;
        g.buffer_bytes = o.buffer_bytes;
        g.mesh_cols = o.mesh_cols;
        g.mesh_wrap = o.mesh_wrap;
        g.initial_counter = o.initial_counter;
        const uint64_t need = worker_l1_need(o);
        if (need > kMaxWorkerL1)
            throw kccl::Error(kccl::Errc::usage, "the group's worker L1 would be " + std::to_string(need) + " bytes; at most " +
                                        std::to_string(kMaxWorkerL1) + " (32-bit L1 addresses): use smaller buffers or messages");
        const uint32_t l1 = uint32_t(need);
        g.worker_l1 = {0x10000, l1, 0};
        emu::ChipSpec chip;
        chip.worker_l1_bytes = l1;
        std::vector<ch::Core> cores;                    // worker 0 of every rank
        std::vector<std::vector<ch::Core>> more(W - 1);  // workers 1 .. W-1 of every rank
        if (o.transport == coll::Transport::ipcq) {
            const uint32_t w = ipcq_grid_width(n);
            chip.grid_w = w;
            chip.grid_h = (n + w - 1) / w;
            chip.eth_cores = 1;
            chip.eth_l1_bytes = 16 * 1024;
            cluster = std::make_unique<emu::Cluster>(emu::topology::single_chip(chip));
            for (uint32_t r = 0; r < n; ++r) cores.push_back(rank_core(o, r));
        } else {
            const uint32_t k = uint32_t(members[0].size());  // ranks per group
            chip.grid_w = W;
            chip.grid_h = 1;
            chip.eth_cores = o.shape == coll::GroupShape::mesh ? 4
                           : o.shape == coll::GroupShape::all_pairs ? std::max<uint32_t>(1, k - 1) : 2;
            // each worker of a link: 2 channels of o.slots packets on each EDM
            const uint32_t eth = std::max<uint32_t>(
                64 * 1024, (W * (2 * o.slots + 2) * (o.message_bytes + 64) + 0x1000 + 0xFFF) & ~0xFFFu);
            chip.eth_l1_bytes = eth;
            chip.dram_bytes = o.dram_bytes;
            g.eth_l1 = {0x1000, eth, 0x800};
            if (o.t3000) {
                if (n != 8) throw kccl::Error(kccl::Errc::usage, "a T3000 has 8 chips: use 8 ranks with --topology t3000");
                chip.eth_cores = 16;
                cluster = std::make_unique<emu::Cluster>(emu::topology::t3000(chip));
                for (uint32_t r = 0; r < 8; ++r) cores.push_back(rank_core(o, r));
            } else {
                if (n == 1) cluster = std::make_unique<emu::Cluster>(emu::topology::single_chip(chip));
                else if (subgroups || o.shape == coll::GroupShape::all_pairs) {
                    // Several groups: chip r is rank r; each group's chips are wired as the group's
                    // shape (a ring, a line or all pairs in group order), as a mesh's rows and
                    // columns are lines and rings of chips of their own. One all-pairs group (the
                    // identity): a cluster wired all-to-all, one Ethernet link per chip pair (no real
                    // Tenstorrent system is; see docs/collectives-links.md, "All-pairs groups").
                    emu::ClusterSpec cs = emu::topology::custom(n, chip);
                    cs.name = subgroups ? ch::group_name(o.groups) + " groups" : std::string("all-pairs");
                    for (const auto& m : members) {
                        const uint32_t size = uint32_t(m.size());
                        if (o.shape == coll::GroupShape::all_pairs) {
                            for (uint32_t a = 0; a < size; ++a)
                                for (uint32_t b = a + 1; b < size; ++b) cs.connect(m[a], m[b]);
                        } else if (size >= 2) {
                            const uint32_t edges = o.shape == coll::GroupShape::ring ? size : size - 1;
                            for (uint32_t i = 0; i < edges; ++i) cs.connect(m[i], m[(i + 1) % size]);
                        }
                    }
                    cluster = std::make_unique<emu::Cluster>(cs);
                }
                else if (o.shape == coll::GroupShape::mesh)
                    cluster = std::make_unique<emu::Cluster>(emu::topology::mesh(n / o.mesh_cols, o.mesh_cols, 1, o.mesh_wrap, chip));
                else if (o.shape == coll::GroupShape::ring) cluster = std::make_unique<emu::Cluster>(emu::topology::ring(n, 1, chip));
                else cluster = std::make_unique<emu::Cluster>(emu::topology::line(n, 1, chip));
                for (uint32_t r = 0; r < n; ++r) cores.push_back(rank_core(o, r));
                for (uint32_t w = 1; w < W; ++w)
                    for (uint32_t r = 0; r < n; ++r) more[w - 1].push_back({r, w, 0});
            }
        }
        launch = std::make_unique<emu::Launcher>(*cluster);
        for (uint32_t s = 0; s < members.size(); ++s) {
            ch::GroupSpec gs = g;
            for (uint32_t r : members[s]) gs.workers.push_back(cores[r]);
            if (o.transport == coll::Transport::edm) {
                gs.more_workers.resize(W - 1);
                for (uint32_t w = 1; w < W; ++w)
                    for (uint32_t r : members[s]) gs.more_workers[w - 1].push_back(more[w - 1][r]);
                gs.hops = ch::edm_hops_from(*cluster, gs);
            }
            if (s == 0) plan = ch::build_group(gs);
            else other_plans.push_back(ch::build_group(gs));
        }
        for (uint32_t s = 0; s < members.size(); ++s) ch::install_on(plan_of_group(s), *cluster, *launch);
    }

    /// Number of groups (GroupOptions::groups; 1 for all()).
    uint32_t num_groups() const { return uint32_t(members.size()); }
    /// Ranks per group.
    uint32_t group_size() const { return uint32_t(members[0].size()); }
    const ch::GroupPlan& plan_of_group(uint32_t s) const { return s == 0 ? plan : other_plans.at(s - 1); }
    /// Rank r's group and its rank inside it.
    uint32_t group_of(uint32_t r) const { return coll::group_of(opt.groups, opt.ranks, r); }
    uint32_t rank_in_group(uint32_t r) const { return coll::rank_in_group(opt.groups, opt.ranks, r); }
    /// Rank r's layout (worker w) in its group's plan.
    const ch::RankLayout& layout_of(uint32_t r, uint32_t w = 0) const { return plan_of_group(group_of(r)).at(rank_in_group(r), w); }

    /// Adds `kernel(hal, link, group_args)` on every worker (link: the transport's model) and the
    /// EDM kernels (EDM transport). group_args.rank / ranks are the rank inside its group and the
    /// group's size (with groups = all(): the rank and the ranks).
    /// `Links` restricts the link types the kernel is compiled for; a group of another type then
    /// fails its run with an error naming the missing type.
    template <unsigned Links = link_all, class K>
    void add(K kernel) {
        add_all<Links>([kernel](auto& hal, auto& link, const coll::GroupArgs& g, uint32_t, uint32_t) { return kernel(hal, link, g); });
    }
    /// The same with the worker's index on its link: `kernel(hal, link, group_args, w)`.
    template <unsigned Links = link_all, class K>
    void add_each(K kernel) {
        add_all<Links>([kernel](auto& hal, auto& link, const coll::GroupArgs& g, uint32_t w, uint32_t) { return kernel(hal, link, g, w); });
    }
    /// The same with the rank among all groups' ranks (0 .. ranks-1; GroupOptions::groups):
    /// `kernel(hal, link, group_args, rank)`, group_args.rank being the rank inside its group.
    template <unsigned Links = link_all, class K>
    void add_ranked(K kernel) {
        add_all<Links>([kernel](auto& hal, auto& link, const coll::GroupArgs& g, uint32_t, uint32_t r) { return kernel(hal, link, g, r); });
    }

private:
    template <unsigned Links, class K>
    void add_all(K kernel) {
        for (uint32_t s = 0; s < num_groups(); ++s) {
            const ch::GroupPlan& p = plan_of_group(s);
            for (uint32_t w = 0; w < p.workers_per_link(); ++w) add_worker<Links>(p, members[s], w, kernel);
            ch::add_edm_kernels(p, *launch, [](auto& hal) {
                kccl::edm::Edm<coll::EdmLinkConfig> e;
                const kccl::edm::Status st = e.run(hal);
                return st == kccl::edm::Status::ok ? uint64_t(0) : uint64_t(1000000 + uint32_t(st));
            });
        }
    }

    template <unsigned Links, class K>
    void add_worker(const ch::GroupPlan& p, const std::vector<uint32_t>& ranks_of, uint32_t w, K kernel) {
        ch::add_worker_kernels(
            p, *launch, w,
            [kernel, w, ranks_of](auto& hal) -> uint64_t {
                using H = std::remove_reference_t<decltype(hal)>;
                const coll::GroupArgs g = coll::load_group_args(hal, 0);
                const uint32_t r = ranks_of.at(g.rank);
                if (g.transport == coll::Transport::ipcq) {
                    if (g.shape == coll::GroupShape::all_pairs) {  // its queue block has PeerDirSet's 8 directions
                        if constexpr ((Links & link_ipcq_all_pairs) != 0) {
                            coll::IpcqLink<H, coll::PeerDirSet> link(hal, g.link_args);
                            return kernel(hal, link, g, w, r);
                        } else {
                            throw emu::EmulationError("this kernel was not compiled for IPCQ all-pairs groups");
                        }
                    }
                    if constexpr ((Links & link_ipcq) != 0) {
                        coll::IpcqLink<H> link(hal, g.link_args);
                        return kernel(hal, link, g, w, r);
                    } else {
                        throw emu::EmulationError("this kernel was not compiled for IPCQ groups");
                    }
                }
                if constexpr ((Links & link_edm) != 0) {
                    coll::EdmLink<H> link(hal, g.link_args);
                    return kernel(hal, link, g, w, r);
                } else {
                    throw emu::EmulationError("this kernel was not compiled for EDM groups");
                }
            });
    }

public:
    /// Starts the next program of the launch (Launcher::next_program) with the plan's initial
    /// words again (semaphores start from their initial values in every program, as tt-metal's
    /// CreateSemaphore does per program); add() then adds that program's kernels. Each program
    /// relaunches the workers and the EDMs (handshake, traffic, teardown), as a tt-metal op does.
    void next_program() {
        const HostChecksThrow checks;
        launch->next_program();
        for (uint32_t s = 0; s < num_groups(); ++s) ch::install_on(plan_of_group(s), *cluster, *launch);
    }
    /// Rank r's worker w (r: 0 .. ranks-1, over all groups).
    emu::CoreCoord worker(uint32_t r, uint32_t w = 0) const {
        const auto& c = layout_of(r, w).worker;
        return {c.chip, c.x, c.y};
    }
    /// rank r's (worker w's) output buffer (host view after the run).
    const uint8_t* output(uint32_t r, uint32_t w = 0) const { return cluster->l1(worker(r, w)).data() + layout_of(r, w).output; }
    const uint8_t* input(uint32_t r, uint32_t w = 0) const { return cluster->l1(worker(r, w)).data() + layout_of(r, w).input; }
    /// L1 address of rank r's extra area (extra_bytes long, 16-byte aligned; the same on every worker).
    uint32_t extra(uint32_t r) const { return (layout_of(r).l1_end + 15u) & ~15u; }
    emu::RunReport run(const emu::RunOptions& o) { return launch->run(o); }
};

/// The direction map of a rank of a ring / line group.
inline coll::RingDirs dirs_of(const coll::GroupArgs& g) { return {g.rank, g.ranks, g.next_dir, g.prev_dir}; }
/// ... and of a mesh group.
inline coll::PeerDirs mesh_dirs_of(const coll::GroupArgs& g) {
    coll::PeerDirs d;
    d.directions = g.directions;
    for (uint32_t i = 0; i < coll::max_group_dirs; ++i) d.peer_of_dir[i] = g.peer_of_dir[i];
    return d;
}

/// ... and of an all_pairs group (direction all_pairs_dir(rank, peer)).
inline coll::AllPairsDirs all_pairs_dirs_of(const coll::GroupArgs& g) { return {g.rank, g.ranks}; }
/// The right map for any group shape (ring / line: RingDirs, mesh: PeerDirs, all_pairs:
/// AllPairsDirs), for tools that run any method on any group.
struct GroupDirs {
    coll::GroupShape shape;
    coll::RingDirs ring;
    coll::PeerDirs mesh;
    coll::AllPairsDirs all;
    uint32_t operator()(uint32_t peer, bool sending) const {
        return shape == coll::GroupShape::all_pairs ? all(peer, sending)
             : shape == coll::GroupShape::mesh      ? mesh(peer, sending)
                                                    : ring(peer, sending);
    }
};
inline GroupDirs group_dirs_of(const coll::GroupArgs& g) { return {g.shape, dirs_of(g), mesh_dirs_of(g), all_pairs_dirs_of(g)}; }

/// Chunk size: one packet, and the group's slots per channel (the schedules are checked to finish
/// with window + 1 slots per channel when every message is one chunk of one packet; slicer.hpp,
/// kSlotsNeeded for window 1).
inline ChunkLimit max_chunk_elems(const GroupOptions& o, uint32_t elem_bytes) {
    return {std::max<uint32_t>(1, (o.message_bytes & ~15u) / elem_bytes), o.slots};
}

/// Chunks of a collective that moves by puts (coll::moves_by_puts) over IPCQ: a chunk is one put
/// and one notice whatever its size, so chunks of up to kPutChunkMessages messages cut the
/// notices (and the steps) per byte; at least kPutMinChunks chunks per fragment keep the ring's
/// pipeline going, and a chunk is never smaller than one message.
inline constexpr uint32_t kPutChunkMessages = 16, kPutMinChunks = 8;
inline ChunkLimit put_chunk_elems(const GroupOptions& o, const coll::Shape& sh, uint32_t count, uint32_t elem_bytes) {
    const ChunkLimit one = max_chunk_elems(o, elem_bytes);
    const uint32_t f = coll::fragment_elems(sh.op, sh.ranks, count);
    const uint64_t want = std::clamp<uint64_t>(f / kPutMinChunks, one.elems, uint64_t(one.elems) * kPutChunkMessages);
    return {uint32_t(want), one.slots};
}

// ---- the executor's parameters and the high-level run ----

/// This rank's executor parameters for layout L: input, output and scratch from the group
/// arguments. `prepared`: L1 of the prepared input for reducers with a prepare step
/// (Reducer::has_prepare, square_add): the input itself (overwritten) unless given.
inline coll::ExecParams exec_params(const Layout& L, const coll::GroupArgs& g, uint32_t prepared = 0) {
    coll::ExecParams ep;
    ep.shape = L.shape;
    ep.rank = g.rank;
    ep.chunk_elems = L.chunk_elems;
    ep.buf = {g.input_l1, g.output_l1, g.scratch_l1, prepared ? prepared : g.input_l1};
    ep.count = L.count;
    return ep;
}

/// A collective to run.
struct Collective {
    coll::Op op = coll::Op::all_reduce;
    /// The method; empty: automatic (coll::choose_method for the op, the group's shape, ranks and
    /// bytes per rank, like Graphcore GCL's "auto"). CollectiveResult::method says what ran.
    std::optional<coll::Method> method;
    uint32_t count = 0;  ///< input elements per rank (all_gather / gather: its piece; others: the tensor)
    uint32_t root = 0;   ///< broadcast, reduce, gather, scatter; send_recv: the sender
    /// send_recv: the receiver (empty: the last rank).
    std::optional<uint32_t> peer;
    /// The output buffer is the input buffer (input == output). Only some collectives allow it
    /// (docs/host-api.md, "In place"); the others give wrong outputs, which the tests show.
    bool in_place = false;
    /// broadcast only: run the NoC-multicast broadcast (method name "multicast";
    /// collectives/mcast_broadcast.hpp, direct mode) instead of a method of the method table. It
    /// needs an IPCQ group whose ranks are a rectangle of cores of one chip, not in place; where
    /// it is not available run_collective throws kccl::Error naming why. Automatic
    /// broadcasts (no method, multicast false) take it where available (ch::choose_broadcast).
    bool multicast = false;
    /// Transport::wafer: the thesis pattern to run (wafer/patterns.hpp; its root is set from
    /// `root`); empty: the cost model's fastest for the grid (wafer::choose, wafer/auto.hpp).
    std::optional<kccl::wafer::PatternArgs> pattern;
};

/// What run_collective returns.
template <class T>
struct CollectiveResult {
    RunReport report;                       ///< errors, the watchdog's dump, makespan (timed runs)
    /// groups[s][i]: the rank that is rank i of group s (GroupOptions::groups; all(): one group, the identity).
    std::vector<std::vector<uint32_t>> groups;
    RunOptions options;                     ///< the options the run used (replay() is derived from them)
    Layout layout;                          ///< the shape that ran (method, chunks) and the buffers' element counts
    std::vector<std::vector<T>> outputs;    ///< every rank's output buffer (layout.out_elems), after the run
    double host_us = 0;      ///< host wall time from the first rank starting the collective to the last finishing it
    double modelled_us = 0;  ///< timed runs (RunOptions::timing): the whole run's modelled time (set-up included)

    /// The NoC-multicast broadcast ran (Collective::multicast, or chosen automatically); the
    /// layout's method is then the method table's choice, which did not run.
    bool multicast = false;
    /// Transport::wafer: the pattern that ran (wafer::describe); report.makespan: its modelled cycles.
    std::string pattern;

    bool ok() const { return report.ok(); }
    coll::Method method() const { return layout.shape.method; }
    /// The name of what ran: "multicast" or the method's name (ring_cw, binomial_tree, ...).
    std::string method_name() const { return !pattern.empty() ? pattern : multicast ? "multicast" : coll::method_name(method()); }
    /// The setting that replays this run exactly (fiber engine; KCCL_EMU_REPLAY).
    std::string replay() const { return report.replay.empty() ? replay_string(options) : report.replay; }
    /// The report's summary (errors and the watchdog's dump) and the replay string.
    std::string summary() const {
        std::string s = report.summary();
        if (s.find("KCCL_EMU_REPLAY") == std::string::npos)
            s += (s.empty() || s.back() == '\n' ? "" : "\n") + std::string("replay: KCCL_EMU_REPLAY=\"") + replay() + "\"\n";
        return s;
    }
};

/// Default options for run_collective: a 10 s watchdog, dirty L1 (hardware never zeroes L1):
/// every core starts with seeded garbage in all of L1 the host did not write (the seed derived
/// from adversary.seed unless dirty_seed is set; the replay string says dirty=1).
inline RunOptions default_run_options() {
    RunOptions o;
    o.watchdog = std::chrono::milliseconds(10000);
    o.dirty_l1 = RunOptions::DirtyL1::on;
    return o;
}

/// The group's shape as the schedules' topology.
inline coll::Topology topology_of(const GroupOptions& g) {
    return g.shape == coll::GroupShape::line ? coll::Topology::line
         : g.shape == coll::GroupShape::mesh ? (g.mesh_wrap ? coll::Topology::torus : coll::Topology::mesh)
                                             : coll::Topology::ring;
}

/// Why broadcast `c` cannot run by NoC multicast on `groups` (groups[s][i]: the core of rank i of
/// group s) over transport t; empty if it can. The reason of ch::mcast_unavailable for the first
/// group that does not qualify, or an in-place broadcast.
inline std::string multicast_unavailable_on(coll::Transport t, const std::vector<std::vector<ch::Core>>& groups, const Collective& c) {
    const std::string pre = "multicast broadcast is not available for this group: ";
    if (t == coll::Transport::fabric || t == coll::Transport::wafer)
        return pre + "it runs on IPCQ groups (NoC multicast stays on one chip), not on the " + name(t) + " transport";
    if (c.in_place)
        return pre + "it is in place (Collective::in_place), and the multicast broadcast needs the root's input and "
                     "output disjoint; use in_place = false or a method of the method table";
    for (size_t s = 0; s < groups.size(); ++s) {
        std::string why = ch::mcast_unavailable(t, groups[s]);
        if (!why.empty()) return groups.size() > 1 ? "group " + std::to_string(s) + ": " + why : why;
    }
    return {};
}

/// The same for the groups of `g`, from where Group puts their ranks (rank_core): what
/// plan_collective decides with before any group is built.
inline std::string multicast_unavailable(const GroupOptions& g, const Collective& c) {
    std::vector<std::vector<ch::Core>> cores;
    for (const auto& m : group_table_of(g, "run_collective")) {
        cores.emplace_back();
        for (uint32_t r : m) cores.back().push_back(rank_core(g, r));
    }
    return multicast_unavailable_on(g.transport, cores, c);
}

/// ... and for a group built (its plan's cores, and one output address per group: the direct mode
/// writes every rank's output at the same address).
inline std::string multicast_unavailable(const Group& group, const Collective& c) {
    std::vector<std::vector<ch::Core>> cores;
    for (uint32_t s = 0; s < group.num_groups(); ++s) {
        cores.emplace_back();
        for (uint32_t r : group.members[s]) cores.back().push_back(group.layout_of(r).worker);
    }
    if (std::string why = multicast_unavailable_on(group.opt.transport, cores, c); !why.empty()) return why;
    for (uint32_t s = 0; s < group.num_groups(); ++s)
        for (uint32_t r : group.members[s])
            if (group.layout_of(r).output != group.layout_of(group.members[s][0]).output)
                return "multicast broadcast is not available for this group: its ranks' output buffers are at different L1 addresses";
    return {};
}

/// run_collective's error for Collective::multicast where it is not available (why: the reason;
/// op: the collective's op, a broadcast, whose methods the message lists).
inline kccl::Error multicast_refused(const std::string& why, coll::Op op) {
    std::string m = "run_collective: method multicast: " + why +
                    " (broadcast takes multicast on an IPCQ group whose ranks are a rectangle of cores of one chip, "
                    "not in place; everywhere: ";
    m.append(coll::allowed_methods(op));
    return kccl::Error(kccl::Errc::usage, m + ")");
}

/// Columns of the chip fabric's cluster for `g` (0: a line or ring); throws kccl::Error
/// naming what is allowed when the request does not fit the cluster.
inline uint32_t fabric_cols(const GroupOptions& g) {
    using emu::fabric::FabricKind;
    const std::string& n = g.cluster;
    const std::string pre = "run_collective: transport fabric on cluster \"" + n + "\": ";
    uint32_t chips = g.ranks, cols = 0;
    if (n == "t3000") chips = 8, cols = 4;
    else if (n == "galaxy") chips = 32, cols = 8;
    else if (n == "mesh") {
        if (!g.mesh_cols || g.ranks % g.mesh_cols)
            throw kccl::Error(kccl::Errc::usage, pre + "GroupOptions::mesh_cols (" + std::to_string(g.mesh_cols) + ") must divide the ranks (" +
                                        std::to_string(g.ranks) + ")");
        cols = g.mesh_cols;
    } else if (n != "line" && n != "ring")
        throw kccl::Error(kccl::Errc::usage, pre + "unknown cluster (allowed: line, ring, mesh, t3000, galaxy)");
    if (g.ranks != chips)
        throw kccl::Error(kccl::Errc::usage, pre + "it has " + std::to_string(chips) + " chips, one rank each: GroupOptions::ranks must be " +
                                    std::to_string(chips) + " (asked for " + std::to_string(g.ranks) + ")");
    if (g.routing == FabricKind::mesh_2d && !cols)
        throw kccl::Error(kccl::Errc::usage, pre + "mesh_2d routing needs a 2D cluster (mesh, t3000, galaxy); use line_1d or ring_1d");
    if (g.routing == FabricKind::ring_1d && n == "line")
        throw kccl::Error(kccl::Errc::usage, pre + "a line of chips has no closing link for ring_1d routing; use line_1d or cluster \"ring\"");
    if (coll::group_size(g.groups, g.ranks) != g.ranks || g.workers_per_link != 1)
        throw kccl::Error(kccl::Errc::usage, pre + "one group of every rank (GroupOptions::groups = all()) and one worker per chip "
                                          "(workers_per_link = 1) only");
    return cols;
}

/// The chip fabric bed of group `g` (its buffers `g.buffer_bytes`).
inline emu::fabric::BedOptions fabric_bed_options(const GroupOptions& g) {
    using emu::fabric::FabricKind;
    emu::fabric::BedOptions o;
    o.topology = g.cluster;
    o.kind = g.routing ? *g.routing
           : fabric_cols(g) ? FabricKind::mesh_2d
           : g.cluster == "line" ? FabricKind::line_1d : FabricKind::ring_1d;
    o.ranks = g.ranks;
    o.cols = g.mesh_cols;
    o.rows = g.mesh_cols ? g.ranks / g.mesh_cols : 0;
    o.message_bytes = g.message_bytes;
    o.peer_slots = g.slots;
    o.buffer_bytes = g.buffer_bytes;
    o.initial_counter = g.initial_counter;
    o.dram_bytes = g.dram_bytes;
    return o;
}

/// The shape `c` runs on group `g` (the method chosen if automatic); throws kccl::Error
/// naming the problem if the executor does not support it.
/// With GroupOptions::groups other than all(), the shape of one group (every group has the same):
/// its ranks are the group size k, and root / peer are ranks inside each group (0 .. k-1).
inline Layout plan_collective(const GroupOptions& g, const Collective& c, uint32_t elem_bytes) {
    const HostChecksThrow checks;
    if (g.ranks == 0) throw kccl::Error(kccl::Errc::usage, "run_collective: the group needs at least one rank");
    group_table_of(g, "run_collective");
    const uint32_t k = coll::group_size(g.groups, g.ranks);  // ranks of each group
    const bool fabric = g.transport == coll::Transport::fabric;
    const uint32_t fcols = fabric ? fabric_cols(g) : 0;
    coll::Shape sh;
    sh.op = c.op;
    sh.topo = fabric ? coll::Topology::ring : topology_of(g);
    sh.ranks = k;
    if (g.shape == coll::GroupShape::mesh) {  // a mesh or, with mesh_wrap, a torus
        sh.cols = g.mesh_cols;
        sh.rows = g.mesh_cols ? k / g.mesh_cols : 0;
    }
    sh.root = c.root;
    sh.peer = c.peer ? *c.peer : k - 1;
    const bool routed = fabric || g.shape == coll::GroupShape::all_pairs;  // every rank reachable
    sh.method = c.method ? *c.method : coll::choose_method(c.op, sh.topo, k, uint64_t(c.count) * elem_bytes, routed);
    if (fabric && sh.method == coll::Method::mesh_2d && fcols)  // the cluster's chips as a mesh, row-major
        sh.topo = coll::Topology::mesh, sh.rows = k / fcols, sh.cols = fcols;
    if (c.root >= k || sh.peer >= k)
        throw kccl::Error(kccl::Errc::usage, "run_collective: root " + std::to_string(c.root) + " / peer " + std::to_string(sh.peer) +
                                    " is not a rank of a group of " + std::to_string(k) +
                                    (k != g.ranks ? " (root and peer are ranks inside each group: 0.." + std::to_string(k - 1) + ")" : ""));
    bool known = false;
    coll::dispatch(sh, [&](auto) { known = true; });
    if (!known)
        throw kccl::Error(kccl::Errc::usage, std::string("run_collective: ") + coll::op_name(c.op) + " does not take method " +
                                    coll::method_name(sh.method) + " (it takes: " + coll::allowed_methods(c.op) + ")");
    if (c.multicast && (c.op != coll::Op::broadcast || c.method))
        throw kccl::Error(kccl::Errc::usage, std::string("run_collective: Collective::multicast is the broadcast method \"multicast\"; ") +
                                    (c.op != coll::Op::broadcast ? std::string("op ") + coll::op_name(c.op) + " does not take it (only broadcast does)"
                                                                 : std::string("it replaces Collective::method, which is set too (") +
                                                                       coll::method_name(*c.method) + "): set one of them"));
    if (!routed && coll::multi_hop(sh))
        throw kccl::Error(kccl::Errc::usage, std::string("run_collective: method ") + coll::method_name(sh.method) +
                                    " sends to ranks that are not neighbours: it needs a routed link "
                                    "(GroupOptions::shape = GroupShape::all_pairs, or Transport::fabric)");
    // The NoC-multicast broadcast (asked for, or automatic where available) runs instead of the
    // method table's choice, which may have no method for the group's shape (a mesh or torus
    // without routes): that choice is then not validated, only kept in the layout.
    const bool mcast_asked_or_auto = c.op == coll::Op::broadcast && (c.multicast || !c.method);
    const std::string mcast_why = mcast_asked_or_auto ? multicast_unavailable(g, c) : std::string("not a broadcast");
    if (c.multicast && !mcast_why.empty()) throw multicast_refused(mcast_why, c.op);
    const bool mcast = mcast_asked_or_auto && mcast_why.empty();
    // in place the executor takes no puts (the output is not free at the start): slot-sized chunks
    const bool by_puts = g.transport == coll::Transport::ipcq && coll::moves_by_puts(sh.op, sh.method) && !c.in_place;
    const Layout L = make_layout(sh, c.count, by_puts ? put_chunk_elems(g, sh, c.count, elem_bytes) : max_chunk_elems(g, elem_bytes));
    if (const char* err = coll::validate(L.shape); err && !mcast)
        throw kccl::Error(kccl::Errc::usage, std::string("run_collective: ") + coll::op_name(c.op) + " / " +
                                    coll::method_name(sh.method) + ": " + err +
                                    (mcast_asked_or_auto ? " The NoC-multicast broadcast is not available either: " + mcast_why : ""));
    try {  // every buffer at most 1 GiB per rank, before any input is looked at or L1 allocated
        buffer_bytes_for(L, elem_bytes);
    } catch (const kccl::Error& e) {
        throw kccl::Error(kccl::Errc::usage, std::string("run_collective: ") + e.what());
    }
    return L;
}

/// Chunk size of the NoC-multicast broadcast run_collective plans (direct mode: the chunks go
/// straight into the outputs, so it only sets how many data multicasts there are).
inline constexpr uint32_t kMulticastChunkBytes = 4096;

/// Copies the first n elements of v to p. std::vector<bool> packs its bits and has no data():
/// bool goes element by element (one byte each in L1, as the device's bool).
template <class T>
void copy_elems_in(T* p, const std::vector<T>& v, size_t n) {
    if constexpr (std::is_same_v<T, bool>) {
        for (size_t i = 0; i < n; ++i) p[i] = v[i];
    } else if (n) {
        std::memcpy(static_cast<void*>(p), v.data(), n * sizeof(T));
    }
}
/// Copies n elements at p (host view of L1) into v (resized to n). A bool byte is true when it is
/// not 0 (read as a byte: an element the op leaves undefined may hold any byte).
template <class T>
void copy_elems_out(std::vector<T>& v, const uint8_t* p, size_t n) {
    v.resize(n);
    if constexpr (std::is_same_v<T, bool>) {
        for (size_t i = 0; i < n; ++i) v[i] = p[i] != 0;
    } else if (n) {
        std::memcpy(static_cast<void*>(v.data()), p, n * sizeof(T));
    }
}

/// run_collective's error for an element type the wafer does not combine.
inline kccl::Error wafer_type_error(coll::DataType t) {
    using coll::DataType, coll::dtype_name;
    return kccl::Error(kccl::Errc::usage, std::string("run_collective: transport wafer: element type ") + dtype_name(t) +
                                 " is not one the wafer's PEs combine (allowed: " + dtype_name(DataType::f32) + ", " +
                                 dtype_name(DataType::i32) + ", " + dtype_name(DataType::u32) + ")");
}

/// run_collective on the wafer's PE grid (Transport::wafer): `g.ranks` PEs, `g.mesh_cols` columns
/// (0: one row), rank r at PE (r % cols, r / cols); `c.count` elements per PE; c.pattern or the
/// cost model's choice. Throws kccl::Error naming what the wafer allows.
template <class Red>
CollectiveResult<typename Red::value_type> run_on_wafer(const GroupOptions& g, const Collective& c,
                                                        const std::vector<std::vector<typename Red::value_type>>& inputs, const RunOptions& ro) {
    using T = typename Red::value_type;
    namespace kw = kccl::wafer;
    namespace ew = kccl::emu::wafer;
    const std::string pre = "run_collective: transport wafer: ";
    constexpr coll::DataType dt = coll::dtype_of<T>::value;
    static_assert(kccl::wafer::supports(dt), "run_collective checks the type first (wafer_type_error)");
    const bool reduces = c.op != coll::Op::broadcast;
    if (c.op != coll::Op::reduce && c.op != coll::Op::all_reduce && c.op != coll::Op::broadcast)
        throw kccl::Error(kccl::Errc::usage, pre + "op " + coll::op_name(c.op) + " has no wafer pattern (allowed: reduce, all_reduce, broadcast)");
    if (reduces && !kw::supports(Red::op))
        throw kccl::Error(kccl::Errc::usage, pre + "reduction " + coll::redop_name(Red::op) + " is not one the wafer's PEs combine with (allowed: sum, max, min)");
    if (c.method || c.multicast)
        throw kccl::Error(kccl::Errc::usage, pre + "the wafer runs its thesis patterns (Collective::pattern), not the method table's methods nor multicast");
    const uint32_t cols = g.mesh_cols ? g.mesh_cols : g.ranks, rows = cols ? g.ranks / cols : 0;
    if (!g.ranks || rows * cols != g.ranks || coll::group_size(g.groups, g.ranks) != g.ranks)
        throw kccl::Error(kccl::Errc::usage, pre + "a grid of " + std::to_string(g.ranks) + " PEs with mesh_cols " + std::to_string(g.mesh_cols) +
                                    ": mesh_cols (0: one row) must divide the ranks, and one group of every rank (groups = all())");
    if (c.root >= g.ranks) throw kccl::Error(kccl::Errc::usage, pre + "root " + std::to_string(c.root) + " is not a PE of the " + std::to_string(g.ranks));
    if (inputs.size() != g.ranks) throw kccl::Error(kccl::Errc::usage, pre + std::to_string(inputs.size()) + " inputs for " + std::to_string(g.ranks) + " PEs");
    for (uint32_t r = 0; r < g.ranks; ++r)
        if (inputs[r].size() != c.count)
            throw kccl::Error(kccl::Errc::usage, pre + "input of PE " + std::to_string(r) + " has " + std::to_string(inputs[r].size()) +
                                        " elements; the collective's count is " + std::to_string(c.count));
    const kw::host::Profile profile = kw::host::wse2();
    const uint32_t rx = c.root % cols, ry = c.root / cols;
    kw::PatternArgs a;
    if (c.pattern) a = *c.pattern;
    else {
        kw::AutoRequest q;
        q.collective = c.op, q.rows = rows, q.cols = cols, q.B = c.count, q.root = rx, q.root_y = ry, q.tr = profile.t_r;
        const kw::AutoChoice choice = kw::choose(q);
        if (choice.cycles == kw::cost::kCostInvalid)
            throw kccl::Error(kccl::Errc::usage, pre + "no pattern the cost model can cost for " + coll::op_name(c.op) + " on " + std::to_string(rows) +
                                        " x " + std::to_string(cols) + " PEs");
        a = choice.args;
    }
    if (kw::pattern_info(a.pattern).collective != c.op)
        throw kccl::Error(kccl::Errc::usage, pre + "pattern " + kw::pattern_name(a.pattern) + " is a " + coll::op_name(kw::pattern_info(a.pattern).collective) +
                                    " pattern, not " + coll::op_name(c.op));
    if (c.op != coll::Op::all_reduce) a.root = rx, a.root_y = ry;
    const kw::host::PatternSpec spec = ew::spec_of(a, rows, cols, c.count, dt, reduces ? Red::op : kw::kCopy);
    const kw::host::Built built = kw::host::build(spec, profile.t_r);
    CollectiveResult<T> res;
    char name[128];
    kw::describe(a, name, sizeof name);
    res.pattern = name;
    res.options = ro;
    res.groups = group_table_of(g, "run_collective");
    res.layout.shape.op = c.op, res.layout.shape.ranks = g.ranks, res.layout.shape.root = c.root;
    res.layout.count = res.layout.in_elems = res.layout.out_elems = c.count;
    ew::FabricOptions fo;
    fo.seed = ro.adversary.seed * 131 + 7;  // the PEs' garbage
    fo.adversarial = ro.adversary.enabled;
    fo.order_seed = ro.adversary.seed;
    try {
        const ew::LayoutRun run = ew::run_layout(built, spec, profile, fo, [&](size_t i, uint32_t* v) {
            const kw::host::Coord at = built.expect.pes[i];
            if (c.count) std::memcpy(v, inputs[at.y * cols + at.x].data(), size_t(c.count) * 4);
        });
        res.report.timed = true, res.report.model = "wafer", res.report.time_unit = "cycles", res.report.makespan = run.result.cycles;
        res.host_us = run.result.wall_seconds * 1e6;
        res.outputs.resize(g.ranks);
        for (uint32_t r = 0; r < g.ranks; ++r)
            if (ew::Pe* pe = run.fabric->pe({r % cols, r / cols})) copy_elems_out(res.outputs[r], pe->mem(0, c.count * 4), c.count);
    } catch (const ew::WaferError& e) {  // a failed run: in the report, as on the other transports
        emu::CoreResult failed;
        failed.status = emu::CoreStatus::failed;
        failed.message = e.what();
        res.report.cores.push_back(failed);
    }
    return res;
}

/// Runs collective `c` with reducer `Red` (element type and operator; for operations that do not
/// reduce any valid operator of the type) on a fresh group made from `g` (its buffer_bytes is
/// set here from the layout), `inputs[r]` (c.count elements) as rank r's input. With
/// GroupOptions::groups other than all(), every group runs `c` on its own ranks, all in one
/// launch; inputs and outputs are indexed by rank (0 .. g.ranks-1), result.groups lists the groups. `Links` limits the
/// link types the kernel is compiled for (link_edm, link_ipcq, link_ipcq_all_pairs: less to
/// compile). Throws kccl::Error for an unsupported collective or bad inputs; a failed
/// run is in the result's report, not an exception.
template <class Red, unsigned Links = link_all>
CollectiveResult<typename Red::value_type> run_collective(GroupOptions g, const Collective& c,
                                                          const std::vector<std::vector<typename Red::value_type>>& inputs,
                                                          RunOptions ro = default_run_options()) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    if (g.transport == coll::Transport::wafer) {
        if constexpr (kccl::wafer::supports(coll::dtype_of<T>::value)) return run_on_wafer<Red>(g, c, inputs, ro);
        else throw wafer_type_error(coll::dtype_of<T>::value);
    }
    CollectiveResult<T> res;
    res.layout = plan_collective(g, c, eb);
    const Layout L = res.layout;
    if (inputs.size() != g.ranks)
        throw kccl::Error(kccl::Errc::usage, "run_collective: " + std::to_string(inputs.size()) + " inputs for " + std::to_string(g.ranks) +
                                    " ranks (one per rank)");
    for (uint32_t r = 0; r < g.ranks; ++r)
        if (inputs[r].size() != c.count)
            throw kccl::Error(kccl::Errc::usage, "run_collective: input of rank " + std::to_string(r) + " has " +
                                        std::to_string(inputs[r].size()) + " elements; the collective's count is " +
                                        std::to_string(c.count));
    g.buffer_bytes = buffer_bytes_for(L, eb);
    const bool prep = Red::has_prepare && coll::op_reduces(c.op);
    std::vector<std::chrono::steady_clock::time_point> start(g.ranks), end(g.ranks);
    const bool in_place = c.in_place;
    // rank r's input into its L1
    auto load_input = [&inputs, L](auto& hal, const coll::GroupArgs& ga, uint32_t r) {
        copy_elems_in(reinterpret_cast<T*>(hal.l1_ptr(ga.input_l1, std::max(L.in_elems, 1u) * eb)), inputs[r], L.count);
    };
    // rank r's part of the run (r: its rank among all groups' ranks; ga.rank: inside its group)
    auto body = [&, L, in_place](auto& hal, auto& link, const coll::GroupArgs& ga, uint32_t r, const auto& dirs, uint32_t prepared) {
        load_input(hal, ga, r);
        coll::ExecParams ep = exec_params(L, ga, prepared);
        if (in_place) ep.buf.output = ep.buf.input;
        start[r] = std::chrono::steady_clock::now();
        coll::execute_any<Red>(link, ep, dirs);
        end[r] = std::chrono::steady_clock::now();
        link.quiesce();
        return uint64_t(0);
    };
    // every rank's output (host views out(r)), the times, once the run went well
    auto finish = [&](auto&& out) {
        if (!res.report.ok()) return;
        const auto t0 = *std::min_element(start.begin(), start.end());
        const auto t1 = *std::max_element(end.begin(), end.end());
        res.host_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        if (ro.timing && res.report.ticks_per_second > 0) res.modelled_us = double(res.report.makespan) / res.report.ticks_per_second * 1e6;
        res.outputs.resize(g.ranks);
        for (uint32_t r = 0; r < g.ranks; ++r) copy_elems_out(res.outputs[r], out(r), L.out_elems);
    };
    res.options = ro;
    if (g.transport == coll::Transport::fabric) {  // one worker per chip, every rank one direction away
        if constexpr ((Links & link_fabric) != 0) {
            const HostChecksThrow checks;
            emu::fabric::Bed bed(fabric_bed_options(g));
            res.groups = group_table_of(g, "run_collective");
            bed.add([&body](auto& hal, auto& link, const emu::fabric::RankBuffers& b) {
                coll::GroupArgs ga;
                ga.rank = b.rank, ga.ranks = b.ranks, ga.input_l1 = b.input_l1, ga.output_l1 = b.output_l1, ga.scratch_l1 = b.scratch_l1;
                return body(hal, link, ga, b.rank, coll::AllPairsDirs{b.rank, b.ranks}, 0);
            });
            res.report = bed.run(ro);
            finish([&](uint32_t r) { return in_place ? bed.input(r) : bed.output(r); });
            return res;
        } else {
            throw kccl::Error(kccl::Errc::usage, "run_collective: not compiled for the fabric transport (its Links leave out link_fabric)");
        }
    }
    g.extra_bytes = prep ? g.buffer_bytes : 0;
    // broadcast: room for the multicast broadcast's counters in the extra area (unused by broadcast)
    const uint32_t k = coll::group_size(g.groups, g.ranks);
    if (c.op == coll::Op::broadcast) g.extra_bytes = coll::mcast_bcast_counter_bytes(k);
    Group group(g);
    res.groups = group.members;
    // The NoC-multicast broadcast: asked for (Collective::multicast), or automatic by ch::choose_broadcast.
    std::vector<ch::McastBcastPlan> mplans;
    if (c.op == coll::Op::broadcast && (c.multicast || !c.method)) {
        const std::string why = multicast_unavailable(group, c);
        if (c.multicast && !why.empty()) throw multicast_refused(why, c.op);
        const bool routed = g.shape == coll::GroupShape::all_pairs;
        res.multicast = why.empty();
        for (uint32_t s = 0; res.multicast && s < group.num_groups(); ++s) {
            std::vector<ch::Core> w;
            for (uint32_t r : group.members[s]) w.push_back(group.layout_of(r).worker);
            const ch::BroadcastChoice choice = ch::choose_broadcast(g.transport, w, topology_of(g), uint64_t(c.count) * eb, routed);
            res.multicast = c.multicast || choice.multicast;
            if (!res.multicast) break;
            ch::McastBcastSpec ms = ch::mcast_spec_of(group.plan_of_group(s).spec);
            ms.workers = w;
            const uint32_t at = group.extra(group.members[s][0]);
            ms.l1 = {at, at + coll::mcast_bcast_counter_bytes(k), 0};
            ms.chunk_bytes = kMulticastChunkBytes;
            ms.slots = 0;
            mplans.push_back(ch::plan_mcast_broadcast(ms));
        }
        if (res.multicast)
            for (const auto& p : mplans)
                for (const auto& w : p.init_words) group.launch->init_word({w.core.chip, w.core.x, w.core.y}, w.addr, w.value);
        else mplans.clear();
        // not by multicast after all: the method table's choice runs, which plan_collective did
        // not check where it expected the multicast broadcast
        if (!res.multicast)
            if (const char* err = coll::validate(L.shape))
                throw kccl::Error(kccl::Errc::usage, std::string("run_collective: broadcast / ") + coll::method_name(L.shape.method) + ": " +
                                            err + " The NoC-multicast broadcast is not available either: " + why);
    }
    std::vector<uint32_t> extra(g.ranks);
    for (uint32_t r = 0; r < g.ranks; ++r) extra[r] = group.extra(r);
    group.template add_ranked<Links>([&, L, prep](auto& hal, auto& link, const coll::GroupArgs& ga, uint32_t r) -> uint64_t {
        if (mplans.empty()) return body(hal, link, ga, r, group_dirs_of(ga), prep ? extra[r] : 0);
        load_input(hal, ga, r);
        const coll::McastBcastArgs& a = mplans[group.group_of(r)].device;
        if (L.count) {  // the input above is this core's stores: say so (race detector), and
                        // have them reach L1 before the NoC reads them (contract N7)
            kccl::hal::note_write(hal, ga.input_l1, L.count * eb);
            kccl::hal::l1_store_fence(hal, ga.input_l1, L.count * eb);
        }
        start[r] = std::chrono::steady_clock::now();
        coll::mcast_broadcast(hal, a, L.shape.root, ga.input_l1, ga.output_l1, L.count * eb);
        end[r] = std::chrono::steady_clock::now();
        return 0;
    });
    res.report = group.run(ro);
    finish([&](uint32_t r) { return in_place ? group.input(r) : group.output(r); });
    return res;
}

}  // namespace kccl::emu::collective

// coll_perf_fabric.cpp — coll_perf --transport fabric: the collectives in the nccl-tests
// convention over the chip fabric (include/fabric/, docs/fabric.md), every rank reachable
// through the routers, so every method runs: rings, lines, trees, recursive doubling, Rabenseifner,
// pairwise all_to_all, direct send/recv.
//
//   coll_perf --transport fabric [--topology line|ring|mesh|t3000|galaxy] [--ranks N] [--mesh RxC]
//             [--fabric 1d|2d] [-b MIN] [-e MAX] [-f FACTOR] [-d bfloat16|float] [-o sum]
//             [-n ITERS] [-w WARMUP] [-c 0|1] [--coll OP[,OP...]] [--method M|auto]
//             [--message BYTES] [--slots N] [--timing wormhole]
//
// Topologies (emulation/fabric/fabric.hpp): a line or ring of --ranks chips (1D fabric:
// tt-metal's FABRIC_1D / FABRIC_1D_RING), a mesh of R x C chips (--mesh RxC; 2D fabric), the
// T3000 (2 x 4 chips) and the Galaxy (4 x 8 chips), 2D by default or, with --fabric 1d, a 1D ring
// through every chip (T3000: 0 1 2 3 7 6 5 4; Galaxy: a snake through the mesh). --message is
// the payload of one fabric packet (tt-metal's benchmark: 6144 B), --slots the worker-to-worker
// message slots per peer. Sizes, columns and the modelled time are coll_perf's (see its header):
// modelled time per iteration = (makespan of warmup + n iterations - makespan of warmup only) / n.
//
// Every option and row is checked before any run (the method against the op, the fabric against
// the topology, the router and worker L1 against the builder, host memory); a bad one is an error
// naming it and what is allowed, exit code 2. A failed run is an error row, exit code 1.
#include "tools/coll_perf_fabric.hpp"
#include "tools/coll_perf_args.hpp"
#include "tools/ttm_fabric_ops.hpp"

#include <emulation/fabric/fabric.hpp>
#include <emulation/collective.hpp>
#include <emulation/trace.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace kccl::coll_perf {
namespace {

using namespace kccl::coll;
namespace cb = kccl::emu::collective;
namespace cf = kccl::emu::fabric;
namespace fh = kccl::fabric::host;
namespace emu = kccl::emu;

[[noreturn]] void bad(const std::string& m) { usage_error(m); }

struct FOptions {
    uint64_t min_bytes = 1024, max_bytes = 1 << 20, factor = 2;
    DataType dtype = DataType::bf16;
    uint32_t iters = 5, warmup = 1;
    bool check = true;
    std::vector<Op> colls{Op::all_reduce};
    bool method_given = false;
    Method method = Method::ring_bidir;
    std::string topology = "ring";
    bool ranks_given = false;
    uint32_t ranks = 8, rows = 0, cols = 0;
    std::string fabric;  ///< "", "1d", "2d"
    uint32_t message = 6144, slots = 4;
    uint32_t tx_slots = 0, rx_slots = 0;  ///< router channels; 0: 8 / 16 on 1D, 4 / 8 on 2D
    std::string timing;
    // --structure: "generic" (default: the collectives executor over FabricLink), "ttm" (tt-metal's op
    // structure, tools/ttm_fabric_ops.hpp: all_gather / all_to_all / reduce_scatter /
    // all_reduce by include/fabric/ops/), "ttm_one_core" (the gathering ops' kernels on the fabric
    // worker alone) or "ttm_executor" (reduce_scatter / all_reduce on the collectives executor with
    // the combine on the Tensix compute engine, OnComputeEngine).
    std::string structure = "generic";
    uint32_t mux_slots = 1;  ///< --structure ttm: slots per mux channel
    uint32_t rs_workers = 0;  ///< --structure ttm: reduce_scatter workers per direction (0: tt-metal's rule)
};

FOptions parse(int argc, char** argv, bool& help) {
    FOptions o;
    help = !parse_args(argc, argv, kFabric, [&](std::string_view a, const std::string& v, uint64_t x) {
        if (a == "-b") o.min_bytes = x;
        else if (a == "-e") o.max_bytes = x;
        else if (a == "-f") o.factor = x;
        else if (a == "-d") o.dtype = v == "bfloat16" ? DataType::bf16 : DataType::f32;
        else if (a == "-n") o.iters = uint32_t(x);
        else if (a == "-w") o.warmup = uint32_t(x);
        else if (a == "-c") o.check = x == 1;
        else if (a == "--coll") {
            o.colls.clear();
            for (auto& s : split(v)) o.colls.push_back(parse_enum("--coll", s, kOps, [](Op x) { return op_name(x); }));
        } else if (a == "--method") {
            o.method_given = v != "auto";
            if (o.method_given) o.method = parse_enum("--method", v, kMethods, [](Method x) { return method_name(x); });
        } else if (a == "--topology") o.topology = v;
        else if (a == "--ranks") {
            o.ranks = uint32_t(x);
            o.ranks_given = true;
        } else if (a == "--mesh") {
            const size_t c = v.find('x');
            if (c == std::string::npos) bad("--mesh '" + v + "' is not ROWSxCOLS (allowed: e.g. 2x4; rows and cols 1..8)");
            o.rows = parse_u32("--mesh rows", v.substr(0, c), 1, 8);
            o.cols = parse_u32("--mesh cols", v.substr(c + 1), 1, 8);
        } else if (a == "--fabric") o.fabric = v;
        else if (a == "--message") o.message = uint32_t(x);
        else if (a == "--slots") o.slots = uint32_t(x);
        else if (a == "--router-slots") {
            const size_t c = v.find(',');
            if (c == std::string::npos) bad("--router-slots '" + v + "' is not TX,RX (allowed: e.g. 8,16; TX 1..64, RX 2..64)");
            o.tx_slots = parse_u32("--router-slots TX", v.substr(0, c), 1, 64);
            o.rx_slots = parse_u32("--router-slots RX", v.substr(c + 1), 2, 64);
        } else if (a == "--structure") o.structure = v;
        else if (a == "--mux-slots") o.mux_slots = uint32_t(x);
        else if (a == "--rs-workers") o.rs_workers = uint32_t(x);
        else if (a == "--timing") o.timing = v;
    });
    return o;
}

fh::FabricKind kind_of(const FOptions& o) {
    if (o.topology == "line") return fh::FabricKind::line_1d;
    if (o.topology == "ring") return fh::FabricKind::ring_1d;
    if (o.topology == "mesh") return fh::FabricKind::mesh_2d;
    return o.fabric == "1d" ? fh::FabricKind::ring_1d : fh::FabricKind::mesh_2d;
}

cf::BedOptions bed_of(const FOptions& o, uint32_t buffer_bytes) {
    cf::BedOptions b;
    b.topology = o.topology;
    b.kind = kind_of(o);
    b.ranks = o.ranks;
    b.rows = o.rows;
    b.cols = o.cols;
    b.message_bytes = o.message;
    b.peer_slots = o.slots;
    const bool two_d = b.kind == fh::FabricKind::mesh_2d;
    b.tx_slots = o.tx_slots ? o.tx_slots : two_d ? 4 : 8;
    b.rx_slots = o.rx_slots ? o.rx_slots : two_d ? 8 : 16;
    b.buffer_bytes = buffer_bytes;
    return b;
}

struct Row {
    Op op;
    Method method;
    bool automatic;
    uint64_t size, count, bytes;
    std::vector<uint32_t> parent;  ///< Method::tree: a binomial tree rooted at 0
    Shape shape;
};

uint64_t count_for(Op op, uint64_t size_bytes, uint32_t eb, uint32_t p) {
    const uint64_t elems = size_bytes / eb;
    // all_to_all: the count is a rank's whole input (p blocks, one per destination), the size in
    // nccl-tests' convention too
    return (op == Op::all_gather || op == Op::gather) ? elems / p : elems;
}

double busbw_factor(Op op, uint32_t n) {
    switch (op) {
        case Op::all_reduce: return 2.0 * (n - 1) / n;
        case Op::all_gather:
        case Op::reduce_scatter:
        case Op::all_to_all: return double(n - 1) / n;
        default: return 1.0;
    }
}

Shape shape_of(const FOptions& o, Op op, Method m, std::vector<uint32_t>& parent) {
    Shape sh;
    sh.op = op;
    sh.method = m;
    // The fabric reaches every rank: ring methods run on any topology (the closing step crosses
    // the chips in between); the line method's shape is a line.
    sh.topo = m == Method::line ? Topology::line : Topology::ring;
    sh.ranks = o.ranks;
    if (m == Method::mesh_2d) {  // the chips' mesh, ranks row-major (plan_rows allows it on 2D fabrics only)
        sh.topo = Topology::mesh;
        sh.rows = o.topology == "galaxy" ? 4 : o.topology == "t3000" ? 2 : o.rows;
        sh.cols = o.ranks / sh.rows;
    }
    sh.root = 0;
    sh.peer = o.ranks - 1;
    if (m == Method::tree) {
        parent.assign(o.ranks, 0);
        tree_binomial(parent.data(), o.ranks);
        sh.tree = parent.data();
    }
    return sh;
}

/// --structure ttm_executor on a reducing op: the executor, reducing on the Tensix compute engine (OnComputeEngine).
bool executor_on_compute_engine(const FOptions& o, Op op) {
    return o.structure == "ttm_executor" && (op == Op::reduce_scatter || op == Op::all_reduce);
}
/// --structure ttm / ttm_one_core: tools/ttm_fabric_ops.hpp's kernels (every op for ttm, the gathering ones for ttm_one_core).
bool ttm_kernels(const FOptions& o, Op op) {
    const bool gathers = op == Op::all_gather || op == Op::all_to_all, reduces = op == Op::reduce_scatter || op == Op::all_reduce;
    return (o.structure == "ttm" && (gathers || reduces)) || (o.structure == "ttm_one_core" && gathers);
}

std::vector<Row> plan_rows(FOptions& o) {
    if (o.topology == "t3000" || o.topology == "galaxy") {
        const uint32_t n = o.topology == "t3000" ? 8 : 32;
        if (o.ranks_given && o.ranks != n)
            bad("--topology " + o.topology + " has " + std::to_string(n) + " chips: use --ranks " + std::to_string(n) + " or leave it out");
        if (o.rows || o.cols) bad("--mesh is for --topology mesh; --topology " + o.topology + " has its own shape");
        o.ranks = n;
    } else if (o.topology == "mesh") {
        if (!o.rows) bad("--topology mesh needs --mesh RxC (rows x columns)");
        if (o.rows * o.cols < 2) bad("--mesh " + std::to_string(o.rows) + "x" + std::to_string(o.cols) + " has fewer than 2 chips");
        if (o.fabric == "1d") bad("--fabric 1d runs on a line, a ring, t3000 or galaxy; a mesh takes --fabric 2d");
        if (o.ranks_given && o.ranks != o.rows * o.cols)
            bad("--ranks " + std::to_string(o.ranks) + " does not match --mesh " + std::to_string(o.rows) + "x" + std::to_string(o.cols));
        o.ranks = o.rows * o.cols;
    } else {
        if (o.fabric == "2d") bad("--fabric 2d needs a 2D topology (mesh, t3000, galaxy); --topology " + o.topology + " is 1d");
        if (o.rows || o.cols) bad("--mesh is for --topology mesh");
    }
    if (o.message % 16) bad("--message '" + std::to_string(o.message) + "' must be a multiple of 16");
    if (o.min_bytes > o.max_bytes) bad("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
    if (o.colls.empty()) bad("--coll needs at least one op");
    if (o.structure != "generic")
        for (Op op : o.colls) {
            const bool reduces = op == Op::reduce_scatter || op == Op::all_reduce;
            if (!ttm_kernels(o, op) && !executor_on_compute_engine(o, op))
                bad("--structure " + o.structure + " is built for " +
                    (o.structure == "ttm"            ? "all_gather, all_to_all, reduce_scatter and all_reduce"
                     : o.structure == "ttm_one_core" ? "all_gather and all_to_all"
                                                     : "reduce_scatter and all_reduce") +
                    ", not " + op_name(op) + " (leave --structure out for it)");
            if (o.structure != "ttm_executor" && o.topology != "line" && o.topology != "ring")
                bad("--structure " + o.structure + " runs on --topology line or ring (a 1D fabric); got " + o.topology);
            if (o.structure == "ttm" && reduces && o.dtype != DataType::bf16)
                bad("--structure ttm sums bfloat16 (tt-metal's benchmark type) for " + std::string(op_name(op)) + ": use -d bfloat16");
        }
    if (o.method_given && o.method == Method::mesh_2d && kind_of(o) != fh::FabricKind::mesh_2d)
        bad("--method mesh_2d runs on a 2D mesh of chips (--topology mesh, t3000 or galaxy with the 2d fabric); --topology " +
            o.topology + (o.fabric == "1d" ? " --fabric 1d" : "") + " is a 1D fabric: use rabenseifner, recursive_doubling or a ring method");
    // The fabric itself: build one plan now (small buffers), so a router or worker layout that
    // does not fit is a usage error before any run.
    try {
        cf::Bed probe(bed_of(o, 64));
    } catch (const std::exception& e) {
        bad(std::string("the fabric for these options cannot be built: ") + e.what() + " (lower --message, --slots or --router-slots)");
    }
    const uint32_t eb = dtype_size(o.dtype);
    const bool routed = true;
    std::vector<Row> rows;
    uint64_t worst = 0;
    std::string worst_row;
    for (Op op : o.colls) {
        if (o.method_given) {
            std::vector<uint32_t> par;
            Shape sh = shape_of(o, op, o.method, par);
            bool known = false;
            dispatch(sh, [&](auto) { known = true; });
            if (!known)
                bad(std::string("--method ") + method_name(o.method) + " is not a method of " + op_name(op) + " (" +
                    op_name(op) + " takes: " + allowed_methods(op) + ")");
        }
        for (uint64_t size = o.min_bytes; size <= o.max_bytes; size = size ? size * o.factor : 1) {
            Row r;
            r.op = op;
            r.size = size;
            r.count = count_for(op, size, eb, o.ranks);
            r.automatic = !o.method_given;
            r.method = o.method_given ? o.method : choose_method(op, Topology::ring, o.ranks, r.count * eb, routed);
            r.bytes = (op == Op::all_gather || op == Op::gather) ? r.count * o.ranks * eb : r.count * eb;
            const std::string where = std::string(op_name(op)) + " / " + method_name(r.method) + " at size " + std::to_string(size);
            if (r.count > 0x7FFFFFFFull) bad(where + ": count too large (lower -e)");
            r.shape = shape_of(o, op, r.method, r.parent);
            if (ttm_kernels(o, op)) {  // DRAM tensors (tools/ttm_fabric_ops.hpp): input and output (and intermediate) per rank
                kccl::tools::ttm_fabric::Options t;
                t.op = op_name(op);
                t.ranks = o.ranks;
                t.size = r.bytes;
                t.iters = o.iters;
                t.warmup = o.warmup;
                const uint64_t host = uint64_t(o.ranks) * kccl::tools::ttm_fabric::dram_bytes(t);
                if (host > worst) { worst = host; worst_row = where; }
                rows.push_back(std::move(r));
                continue;
            }
            const cb::Layout L = cb::make_layout(r.shape, uint32_t(r.count), cb::ChunkLimit{o.message / eb, o.slots});
            if (const char* err = validate(L.shape)) bad(where + ": " + err);
            uint32_t buf = 0;
            try {
                buf = cb::buffer_bytes_for(L, eb);
            } catch (const std::exception& e) {
                bad(where + ": " + e.what() + " (lower -e)");
            }
            const uint64_t host = uint64_t(o.ranks) * 3 * (uint64_t(buf) + 0x20000);
            if (host > worst) { worst = host; worst_row = where; }
            rows.push_back(std::move(r));
            if (size == 0 && o.max_bytes == 0) break;
        }
    }
    check_host_memory(worst, worst_row, "the emulated L1 of " + std::to_string(o.ranks) + " ranks", "lower -e");
    return rows;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Result {
    double host_us = 0, model_us = 0;
    uint64_t wrong = 0;
    std::string first_wrong, error;
};

template <class T, bool kComputeEngine = false>
Result run_row(const FOptions& o, const Row& row) {
    using Red = std::conditional_t<kComputeEngine, OnComputeEngine<Reducer<T, RedOp::sum>>, Reducer<T, RedOp::sum>>;
    constexpr uint32_t eb = sizeof(T);
    Result res;
    Shape sh = row.shape;
    if (row.method == Method::tree) sh.tree = row.parent.data();
    const cb::Layout L = cb::make_layout(sh, uint32_t(row.count), cb::ChunkLimit{o.message / eb, o.slots});
    const uint32_t buf = cb::buffer_bytes_for(L, eb);
    const uint64_t seed = 1;
    const RedOp redop = RedOp::sum;
    struct Once {
        emu::RunReport report;
        double host_us = 0;
        uint64_t wrong = 0;
        std::string first_wrong;
    };
    auto once = [&](uint32_t iters, uint32_t warmup, emu::TimingModel* model, bool check, emu::Trace* trace = nullptr) {
        Once out;
        cf::Bed bed(bed_of(o, buf));
        std::vector<double> start(o.ranks), end(o.ranks);
        // The baseline run (no timed iterations, no check) takes the same modelled L1 access for
        // the inputs but skips computing them (a third of the host time of a large row).
        const bool fill = check || iters > 0;
        bed.add([&, L, iters, warmup, fill](auto& hal, auto& link, const cf::RankBuffers& b) -> uint64_t {
            T* in = reinterpret_cast<T*>(hal.l1_ptr(b.input_l1, std::max(L.in_elems, 1u) * eb));
            const bool reduces = op_reduces(L.shape.op);
            if (fill)
                for (uint32_t i = 0; i < L.count; ++i) in[i] = kccl::testing::input_value<T>(seed, redop, reduces, b.rank, i);
            ExecParams ep;
            ep.shape = L.shape;
            ep.rank = b.rank;
            ep.chunk_elems = L.chunk_elems;
            ep.buf = {b.input_l1, b.output_l1, b.scratch_l1, b.input_l1};
            ep.count = L.count;
            const AllPairsDirs dirs{b.rank, b.ranks};
            for (uint32_t i = 0; i < warmup; ++i) execute_any<Red>(link, ep, dirs);
            start[b.rank] = now();
            for (uint32_t i = 0; i < iters; ++i) execute_any<Red>(link, ep, dirs);
            end[b.rank] = now();
            link.quiesce();
            return 0;
        });
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(120000);
        ro.dirty_l1 = emu::RunOptions::DirtyL1::off;
        ro.timing = model;
        ro.trace = trace;
        out.report = bed.run(ro);
        if (!out.report.ok()) return out;
        out.host_us = (*std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end())) * 1e6 /
                      std::max(1u, iters);
        if (check) {
            const auto [nbad, text] = kccl::testing::check_outputs<T>(L, redop, seed, [&](uint32_t r) { return bed.output(r); });
            out.wrong = nbad;
            out.first_wrong = text;
        }
        return out;
    };
    std::unique_ptr<emu::TimingModel> model = o.timing == "wormhole" ? emu::wormhole_model() : nullptr;
    // KCCL_TRACE_OUT=file.json: the timed run's trace (docs/emulation-traces.md), one row per core.
    const char* trace_out = std::getenv("KCCL_TRACE_OUT");
    emu::Trace trace;
    const Once r = once(o.iters, o.warmup, model.get(), o.check, trace_out && *trace_out ? &trace : nullptr);
    if (!r.report.ok()) { res.error = "run failed: " + r.report.summary(); return res; }
    if (trace_out && *trace_out) {
        std::string err;
        if (!trace.write_json(trace_out, &err)) { res.error = "cannot write the trace: " + err; return res; }
        std::printf("# trace: %s\n", trace_out);
    }
    if (std::getenv("KCCL_FABRIC_LINKS"))
        for (const auto& l : r.report.links)
            std::printf("#   link chip %u (%u,%u) q%u: %llu bytes, %llu packets, busy %.1f us of makespan %.1f us\n", l.eth.chip, l.eth.x,
                        l.eth.y, l.queue, (unsigned long long)l.bytes, (unsigned long long)l.packets, double(l.busy) / 1e6,
                        double(r.report.makespan) / 1e6);
    res.host_us = r.host_us;
    res.wrong = r.wrong;
    res.first_wrong = r.first_wrong;
    if (model) {
        const Once b = once(0, o.warmup, model.get(), false);
        if (!b.report.ok()) { res.error = "run failed (modelled baseline): " + b.report.summary(); return res; }
        const emu::vtime_t m1 = r.report.makespan, m0 = std::min(b.report.makespan, m1);
        res.model_us = double(m1 - m0) / std::max(1u, o.iters) / r.report.ticks_per_second * 1e6;
    }
    return res;
}

/// --structure ttm: tt-metal's op structure (tools/ttm_fabric_ops.hpp), every output byte checked.
Result run_row_ttm(const FOptions& o, const Row& row) {
    namespace tf = kccl::tools::ttm_fabric;
    tf::Options t;
    t.op = op_name(row.op);
    t.ring = o.topology == "ring";
    t.ranks = o.ranks;
    t.size = row.bytes;
    t.message = o.message;
    t.tx_slots = o.tx_slots ? o.tx_slots : 8;
    t.rx_slots = o.rx_slots ? o.rx_slots : 16;
    t.iters = o.iters;
    t.warmup = o.warmup;
    t.structure = o.structure == "ttm_one_core" ? "one_core" : "auto";  // auto: the op's own (tools/ttm_fabric_ops.hpp)
    t.mux_slots = o.mux_slots;
    t.rs_workers = o.rs_workers;  // reduce_scatter / all_reduce: 0 is tt-metal's worker count
    Result res;
    tf::Result r;
    const double t0 = now();
    if (o.timing.empty()) {
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(120000);
        ro.dirty_l1 = emu::RunOptions::DirtyL1::off;
        r = tf::run(t, ro);
    } else {
        const char* trace_out = std::getenv("KCCL_TRACE_OUT");  // the timed run's trace (docs/emulation-traces.md)
        emu::Trace trace;
        res.model_us = tf::timed_us(t, r, trace_out && *trace_out ? &trace : nullptr) +
                       tf::device_ops(t) * tf::OpOverhead::us(o.ranks);  // the fitted fixed cost per tt-metal program
        if (trace_out && *trace_out && r.error.empty()) {
            std::string err;
            if (!trace.write_json(trace_out, &err)) { res.error = "cannot write the trace: " + err; return res; }
            std::printf("# trace: %s\n", trace_out);
        }
    }
    res.host_us = (now() - t0) * 1e6 / std::max(1u, o.iters);
    if (!r.error.empty()) res.error = "run failed: " + r.error;
    if (std::getenv("KCCL_FABRIC_LINKS"))
        for (const auto& l : r.report.links)
            std::printf("#   link chip %u (%u,%u) q%u: %llu bytes, %llu packets, busy %.1f us of makespan %.1f us\n", l.eth.chip, l.eth.x,
                        l.eth.y, l.queue, (unsigned long long)l.bytes, (unsigned long long)l.packets, double(l.busy) / 1e6,
                        double(r.report.makespan) / 1e6);
    res.wrong = o.check ? r.wrong : 0;
    res.first_wrong = r.first_wrong;
    return res;
}

int run(const FOptions& o, const std::vector<Row>& rows) {
    const fh::FabricKind kind = kind_of(o);
    std::string topo = o.topology;
    if (o.topology == "t3000") topo = "T3000 (2 x 4 chips)";
    else if (o.topology == "galaxy") topo = "Galaxy (4 x 8 chips)";
    else if (o.topology == "mesh") topo = "mesh " + std::to_string(o.rows) + " x " + std::to_string(o.cols);
    const cf::BedOptions bo = bed_of(o, 0);
    const uint32_t hb = cf::header_bytes_of(bo);
    std::printf("# coll_perf: %u ranks, %s over the chip fabric (%s, %u B header + %u B payload per packet, router channels "
                "%u tx / %u rx slots), %u slots per peer\n",
                o.ranks, topo.c_str(), fh::kind_name(kind), hb, o.message, bo.tx_slots, bo.rx_slots, o.slots);
    std::printf("# engine: fibers%s\n", o.timing.empty() ? "" : "; timed: Wormhole model (modelled time in us; %line = modelled busbw / 12.5 GB/s)");
    std::printf("# host(us): wall time per iteration of the emulation on this host (not a prediction of the hardware)\n");
    if (o.method_given) std::printf("# method: %s\n", method_name(o.method));
    else std::printf("# method: auto (choose_method for a routed link; each row names the method it ran)\n");
    const bool timed = !o.timing.empty();
    std::printf("#\n# %10s %12s %8s %10s %6s %14s %8s %8s %8s", "size", "count", "type", "redop", "root", "host(us)", "algbw",
                "busbw", "#wrong");
    if (timed) std::printf(" | %12s %8s %8s %8s", "model(us)", "m.algbw", "m.busbw", "%line");
    std::printf("  %s\n", "op / method");
    std::fflush(stdout);
    int status = 0;
    const uint32_t eb = dtype_size(o.dtype);
    for (const Row& row : rows) {
        Result r;
        try {
            if (ttm_kernels(o, row.op)) r = run_row_ttm(o, row);
            else if (executor_on_compute_engine(o, row.op))  // --structure ttm_executor
                r = o.dtype == DataType::bf16 ? run_row<bfloat16, true>(o, row) : run_row<float, true>(o, row);
            else
                r = o.dtype == DataType::bf16 ? run_row<bfloat16>(o, row) : run_row<float>(o, row);
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        const char* redop = op_reduces(row.op) ? "sum" : "none";
        const bool rooted = row.op == Op::broadcast || row.op == Op::reduce || row.op == Op::gather || row.op == Op::scatter;
        if (!r.error.empty()) {
            std::printf("  %10llu %12llu %8s %10s %6s  error: %s / %s: %s\n", (unsigned long long)row.bytes,
                        (unsigned long long)(row.bytes / eb), dtype_name(o.dtype), redop, rooted ? "0" : "-1", op_name(row.op),
                        method_name(row.method), r.error.c_str());
            status = 1;
            std::fflush(stdout);
            continue;
        }
        const double algbw = r.host_us > 0 ? double(row.bytes) / (r.host_us * 1e3) : 0;
        char wrong[32];
        if (o.check) std::snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)r.wrong);
        else std::snprintf(wrong, sizeof wrong, "N/A");
        std::printf("  %10llu %12llu %8s %10s %6s %14.1f %8.3f %8.3f %8s", (unsigned long long)row.bytes,
                    (unsigned long long)(row.bytes / eb), dtype_name(o.dtype), redop, rooted ? "0" : "-1", r.host_us, algbw,
                    algbw * busbw_factor(row.op, o.ranks), wrong);
        if (timed) {
            const double malg = r.model_us > 0 ? double(row.bytes) / (r.model_us * 1e3) : 0;
            const double mbus = malg * busbw_factor(row.op, o.ranks);
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * mbus / 12.5);
            std::printf(" | %12.2f %8.3f %8.3f %8s", r.model_us, malg, mbus, pct);
        }
        if (ttm_kernels(o, row.op)) std::printf("  %s / %s\n", op_name(row.op), o.structure.c_str());
        else
            std::printf("  %s / %s%s%s\n", op_name(row.op), method_name(row.method), row.automatic ? " (auto)" : "",
                        executor_on_compute_engine(o, row.op) ? " (ttm_executor: compute-engine reduction)" : "");
        if (r.wrong) {
            std::printf("#   first wrong:%s\n", r.first_wrong.c_str());
            status = 1;
        }
        std::fflush(stdout);
    }
    return status;
}

}  // namespace

bool wants_fabric(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--transport") == 0 && std::strcmp(argv[i + 1], "fabric") == 0) return true;
    return false;
}

int fabric_main(int argc, char** argv, const char* prog) {
    return guarded_main(prog, "--transport fabric --help", [&] {
        bool help = false;
        FOptions o = parse(argc, argv, help);
        if (help) {
            print_usage();
            return 0;
        }
        const std::vector<Row> rows = plan_rows(o);
        return run(o, rows);
    });
}

}  // namespace kccl::coll_perf

// coll_perf — collectives benchmark in the nccl-tests convention, on the emulation.
//
//   coll_perf [-b MIN] [-e MAX] [-f FACTOR] [-o REDOP] [-d TYPE] [-n ITERS] [-w WARMUP] [-c 0|1]
//             [--coll OP[,OP...]] [--method M] [--transport edm|ipcq] [--topology ring|line|all_pairs|t3000]
//             [--ranks N] [--message BYTES] [--slots N] [--repeat R] [--memcpy BYTES[,BYTES...]]
//             [--adversarial SEED] [--engine fibers|threads] [--timing wormhole|wafer] [--clock wall|cpu]
//
// Sizes (-b/-e, suffixes K M G) are nccl-tests' "size": the bytes of the largest buffer (all_gather:
// the gathered output; reduce_scatter: each rank's input; all_reduce and the rest: the tensor).
// Columns: size count type redop root | time(us) algbw busbw #wrong (out of place; in-place is
// not offered). algbw = size / time; busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather,
// reduce_scatter, all_to_all), 1 otherwise. time: from the first rank starting the timed loop to
// the last rank finishing it, divided by -n; with --repeat R the median of R such loops. Inputs are
// seeded and exactly predictable (tools/coll_bed.hpp), so -c 1 counts every wrong element.
// --memcpy prints a memcpy baseline (median of 5 copies per repeat, GB/s) measured in the same run.
//
// Engine: --engine fibers (default: every emulated core a fiber on one host thread) or threads
// (one host thread per core). --timing wormhole|wafer runs the timed fiber engine with that model
// (emulation/timing.hpp) and adds modelled time per iteration, modelled algbw/busbw and (Wormhole)
// busbw as a share of the 12.5 GB/s Ethernet line rate. Modelled time per iteration is exact and
// host-independent: (makespan of a run with warmup + n iterations - makespan of a run with warmup
// iterations only) / n, so set-up, EDM handshakes and teardown cancel out.
// --clock cpu (fiber engine only) measures time and the memcpy baseline in CPU time of the host
// thread that runs them instead of wall time: on a shared host the time other processes take
// from this one is then not counted (a diagnostic for A/B comparisons under load; the default,
// wall, is what nccl-tests reports). Every fiber runs on that one thread, so its CPU clock is
// the run's clock.
#include "tools/coll_bed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace kccl::coll;
namespace cb = kccl::coll_bed;
namespace emu = kccl::emu;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "coll_perf: %s (see --help)\n", msg.c_str());
    std::exit(2);
}

uint64_t parse_size(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) usage_error(opt + " '" + v + "' is not a size (allowed: N, NK, NM, NG)");
    uint64_t x = std::strtoull(v.c_str(), &end, 10);
    const std::string suf = end;
    if (suf == "K" || suf == "k") x <<= 10;
    else if (suf == "M" || suf == "m") x <<= 20;
    else if (suf == "G" || suf == "g") x <<= 30;
    else if (!suf.empty()) usage_error(opt + " '" + v + "' is not a size (allowed: N, NK, NM, NG)");
    return x;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> v;
    size_t a = 0;
    while (a <= s.size()) {
        const size_t b = s.find(',', a);
        v.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
        if (b == std::string::npos) break;
        a = b + 1;
    }
    return v;
}

template <class E, size_t N>
E parse_enum(const std::string& opt, const std::string& v, const E (&all)[N], const char* (*name)(E)) {
    std::string allowed;
    for (E e : all) {
        if (v == name(e)) return e;
        allowed += (allowed.empty() ? "" : ", ") + std::string(name(e));
    }
    usage_error(opt + " '" + v + "' is not known (allowed: " + allowed + ")");
}

constexpr Op kOps[] = {Op::all_gather, Op::reduce_scatter, Op::all_reduce, Op::broadcast, Op::reduce,
                       Op::gather, Op::scatter, Op::all_to_all, Op::send_recv};
constexpr Method kMethods[] = {Method::ring_cw, Method::ring_ccw, Method::ring_bidir, Method::ring_meet_middle,
                               Method::line, Method::broadcast_local_reduce, Method::reduce_broadcast_chain,
                               Method::reduce_broadcast_tree, Method::binomial_tree, Method::tree,
                               Method::recursive_doubling, Method::rabenseifner, Method::pairwise, Method::direct,
                               Method::mesh_2d};
constexpr DataType kTypes[] = {DataType::f32, DataType::bf16, DataType::f16, DataType::i32,
                               DataType::u32, DataType::i64, DataType::u64, DataType::boolean};
constexpr RedOp kRedOps[] = {RedOp::sum, RedOp::mean, RedOp::prod, RedOp::min, RedOp::max, RedOp::square_add,
                             RedOp::logical_and, RedOp::logical_or, RedOp::bit_and, RedOp::bit_or, RedOp::bit_xor};
const char* dtype_name_f(DataType t) { return dtype_name(t); }
const char* redop_name_f(RedOp r) { return redop_name(r); }
const char* op_name_f(Op o) { return op_name(o); }
const char* method_name_f(Method m) { return method_name(m); }

struct Options {
    uint64_t min_bytes = 1024, max_bytes = 1 << 20, factor = 2;
    RedOp redop = RedOp::sum;
    DataType dtype = DataType::f32;
    uint32_t iters = 5, warmup = 1;
    bool check = true;
    std::vector<Op> colls{Op::all_reduce};
    bool method_given = false;
    Method method = Method::ring_bidir;
    Transport transport = Transport::edm;
    std::string topology = "ring";
    bool interleave = false;  ///< --lanes interleaved: execute_any_interleaved
    uint32_t ranks = 8;
    uint32_t message = 16384, slots = 4;
    uint32_t repeat = 1;
    std::vector<uint64_t> memcpy_sizes;
    bool adversarial = false;
    uint64_t adv_seed = 0;
    emu::Engine engine = emu::Engine::fibers;
    std::string timing;  ///< "", "wormhole" or "wafer"
};

std::unique_ptr<emu::TimingModel> make_model(const std::string& t) {
    if (t == "wormhole") return emu::wormhole_model();
    if (t == "wafer") return emu::wafer_model();
    return nullptr;
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

/// Per-rank input count for a size in nccl-tests' convention.
uint64_t count_for(Op op, uint64_t size_bytes, uint32_t eb, uint32_t p) {
    const uint64_t elems = size_bytes / eb;
    switch (op) {
        case Op::all_gather:
        case Op::gather:
        case Op::all_to_all: return elems / p;
        default: return elems;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/// --clock: wall time (default) or the calling thread's CPU time, in seconds.
bool g_cpu_clock = false;
double now_s() {
    if (g_cpu_clock) {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
    }
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

double memcpy_gbps(uint64_t bytes) {
    std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
    std::vector<double> t;
    for (int i = 0; i < 6; ++i) {
        const double s = now_s();
        std::memcpy(b.data(), a.data(), bytes);
        const double e = now_s();
        asm volatile("" : : "r"(b.data()) : "memory");
        if (i) t.push_back(e - s);
    }
    return double(bytes) / median(t) / 1e9;
}

struct Result {
    double time_us = 0;
    double model_us = 0;         ///< timed engine: modelled time per iteration (µs)
    double model_ticks = 0;      ///< the same in the model's ticks
    uint64_t wrong = 0;
    std::string first_wrong;
    std::string error;
};

template <class Red>
Result run_one(const Options& o, Op op, Method method, uint64_t count) {
    using T = typename Red::value_type;
    constexpr uint32_t eb = sizeof(T);
    Shape sh;
    sh.op = op;
    sh.method = method;
    sh.topo = o.topology == "line" ? Topology::line : Topology::ring;
    sh.ranks = o.ranks;
    sh.root = 0;
    sh.peer = o.ranks > 1 ? o.ranks - 1 : 0;
    cb::BedOptions bo;
    bo.transport = o.transport;
    bo.shape = o.topology == "line" ? GroupShape::line : o.topology == "all_pairs" ? GroupShape::all_pairs : GroupShape::ring;
    bo.t3000 = o.topology == "t3000";
    bo.ranks = o.ranks;
    bo.message_bytes = o.message;
    bo.slots = o.slots;
    Result res;
    if (count > 0x7FFFFFFFull) { res.error = "count too large"; return res; }
    const cb::Layout L = cb::make_layout(sh, uint32_t(count), cb::max_chunk_elems(bo, eb));
    if (const char* err = validate(L.shape)) { res.error = err; return res; }
    bo.buffer_bytes = cb::buffer_bytes_for(L, eb);
    const bool prep = Red::has_prepare && op_reduces(op);
    bo.extra_bytes = prep ? bo.buffer_bytes : 0;
    const uint64_t seed = 1;
    const RedOp redop = o.redop;

    // One run of `warmup` + `iters` collectives on a fresh group; `check` counts wrong outputs.
    struct Once {
        emu::RunReport report;
        double wall_us = 0;
        uint64_t wrong = 0;
        std::string first_wrong;
    };
    auto run_once = [&](uint32_t iters, uint32_t warmup, emu::TimingModel* model, uint64_t adv_seed, bool check) {
        Once out;
        cb::Bed bed(bo);
        std::vector<uint32_t> extra(o.ranks);
        for (uint32_t r = 0; r < o.ranks; ++r) extra[r] = bed.extra(r);
        std::vector<double> start(o.ranks), end(o.ranks);
        bed.add([&, L, seed, redop, iters, warmup, prep](auto& hal, auto& link, const GroupArgs& g) -> uint64_t {
            T* in = reinterpret_cast<T*>(hal.l1_ptr(g.input_l1, std::max(L.in_elems, 1u) * eb));
            const bool reduces = op_reduces(L.shape.op);
            for (uint32_t i = 0; i < L.count; ++i) in[i] = cb::input_value<T>(seed, redop, reduces, g.rank, i);
            ExecParams ep;
            ep.shape = L.shape;
            ep.rank = g.rank;
            ep.chunk_elems = L.chunk_elems;
            ep.buf = {g.input_l1, g.output_l1, g.scratch_l1, prep ? extra[g.rank] : g.input_l1};
            ep.count = L.count;
            const cb::GroupDirs dirs = cb::group_dirs_of(g);
            auto exec = [&] {
                if (o.interleave) execute_any_interleaved<Red>(link, ep, dirs);
                else execute_any<Red>(link, ep, dirs);
            };
            for (uint32_t i = 0; i < warmup; ++i) exec();
            start[g.rank] = now_s();
            for (uint32_t i = 0; i < iters; ++i) exec();
            end[g.rank] = now_s();
            link.quiesce();
            return 0;
        });
        emu::RunOptions ro;
        ro.watchdog = std::chrono::milliseconds(60000);
        ro.dirty_l1 = emu::RunOptions::DirtyL1::off;
        ro.engine = o.engine;
        ro.timing = model;
        if (o.adversarial) {
            ro.adversary.enabled = true;
            ro.adversary.seed = adv_seed;
            ro.dirty_l1 = emu::RunOptions::DirtyL1::on;
        }
        out.report = bed.run(ro);
        if (!out.report.ok()) return out;
        const auto t0 = *std::min_element(start.begin(), start.end());
        const auto t1 = *std::max_element(end.begin(), end.end());
        out.wall_us = (t1 - t0) * 1e6 / std::max(1u, iters);
        if (check) {
            const auto [nbad, text] = cb::check_outputs<T>(L, redop, seed, [&](uint32_t r) { return bed.output(r); });
            out.wrong = nbad;
            out.first_wrong = text;
        }
        return out;
    };

    const std::unique_ptr<emu::TimingModel> model = make_model(o.timing);
    std::vector<double> times;
    for (uint32_t rep = 0; rep < o.repeat; ++rep) {
        const Once r = run_once(o.iters, o.warmup, model.get(), o.adv_seed + rep, o.check && rep == 0);
        if (!r.report.ok()) { res.error = "run failed: " + r.report.summary(); return res; }
        times.push_back(r.wall_us);
        if (rep == 0) {
            res.wrong = r.wrong;
            res.first_wrong = r.first_wrong;
        }
        if (model && rep == 0) {
            // Modelled time is deterministic: once. The same group with the warmup only; the
            // difference of the makespans is the n timed iterations (set-up, EDM handshakes and
            // teardown cancel out).
            const Once b = run_once(0, o.warmup, model.get(), 0, false);
            if (!b.report.ok()) { res.error = "run failed (modelled baseline): " + b.report.summary(); return res; }
            const emu::vtime_t m1 = r.report.makespan, m0 = std::min(b.report.makespan, m1);
            res.model_ticks = double(m1 - m0) / std::max(1u, o.iters);
            res.model_us = res.model_ticks / r.report.ticks_per_second * 1e6;
        }
    }
    res.time_us = median(times);
    return res;
}

void print_help() {
    std::printf(
        "coll_perf: collectives on the kccl emulation, nccl-tests style.\n"
        "  -b MIN -e MAX   sizes in bytes (K/M/G suffixes), default 1K..1M\n"
        "  -f FACTOR       size multiplication factor, default 2\n"
        "  -o REDOP        sum mean prod min max square_add logical_and logical_or bit_and bit_or bit_xor\n"
        "  -d TYPE         float bfloat16 half int32 uint32 int64 uint64 bool\n"
        "  -n ITERS        timed iterations per size (default 5)   -w WARMUP (default 1)\n"
        "  -c 0|1          check results (#wrong), default 1\n"
        "  --coll OPS      comma list: all_gather reduce_scatter all_reduce broadcast reduce gather scatter all_to_all send_recv\n"
        "  --method M      ring_cw ring_ccw ring_bidir ring_meet_middle line broadcast_local_reduce reduce_broadcast_chain ...\n"
        "                  (default: auto, choose_method() per op, topology, ranks and size, like GCL's auto)\n"
        "  --transport T   edm (chips in a ring) or ipcq (PEs of one chip), default edm\n"
        "  --lanes L       serial (default: a method's lanes one after the other) or interleaved\n"
        "                  (piece by piece, execute_any_interleaved; ring_bidir has 2 lanes)\n"
        "  --topology T    ring, line, all_pairs (every rank linked to every other: IPCQ queue pair / EDM\n"
        "                  link per pair, at most 9 ranks; runs the multi-hop methods) or t3000 (EDM, 8 ranks),\n"
        "                  default ring\n"
        "  --ranks N       default 8\n"
        "  --message B     packet / slot bytes, default 16384      --slots N, default 4\n"
        "  --repeat R      runs per size, median time reported, default 1\n"
        "  --memcpy SIZES  also print memcpy GB/s for these sizes (median over the repeats)\n"
        "  --adversarial SEED  adversarial deliveries and dirty L1\n"
        "  --engine E      fibers (default: every core a fiber on one host thread) or threads (a host thread per core)\n"
        "  --clock C       wall (default) or cpu: time and the memcpy baseline in CPU time of the host thread\n"
        "                  (fiber engine only; on a shared host, time taken by other processes is not counted)\n"
        "  --timing M      wormhole or wafer: the timed fiber engine with that model; adds modelled time per\n"
        "                  iteration, modelled algbw / busbw and (wormhole) busbw as a share of 12.5 GB/s\n");
}

uint32_t parse_u32(const std::string& opt, const std::string& v, uint32_t lo, uint32_t hi) {
    char* end = nullptr;
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) usage_error(opt + " '" + v + "' is not a non-negative integer");
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (*end || x < lo || x > hi)
        usage_error(opt + " '" + v + "' is out of range (allowed: " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
    return uint32_t(x);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") { print_help(); return 0; }
        if (i + 1 >= argc) usage_error(a + " needs a value");
        const std::string v = argv[++i];
        if (a == "-b") o.min_bytes = parse_size(a, v);
        else if (a == "-e") o.max_bytes = parse_size(a, v);
        else if (a == "-f") o.factor = parse_u32(a, v, 2, 1024);
        else if (a == "-o") o.redop = parse_enum(a, v, kRedOps, redop_name_f);
        else if (a == "-d") o.dtype = parse_enum(a, v, kTypes, dtype_name_f);
        else if (a == "-n") o.iters = parse_u32(a, v, 1, 1000000);
        else if (a == "-w") o.warmup = parse_u32(a, v, 0, 1000000);
        else if (a == "-c") o.check = parse_u32(a, v, 0, 1) == 1;
        else if (a == "--coll") { o.colls.clear(); for (auto& s : split(v)) o.colls.push_back(parse_enum(a, s, kOps, op_name_f)); }
        else if (a == "--method") { o.method = parse_enum(a, v, kMethods, method_name_f); o.method_given = true; }
        else if (a == "--transport") {
            if (v == "edm") o.transport = Transport::edm;
            else if (v == "ipcq") o.transport = Transport::ipcq;
            else usage_error("--transport '" + v + "' is not known (allowed: edm, ipcq)");
        } else if (a == "--lanes") {
            if (v != "serial" && v != "interleaved") usage_error("--lanes '" + v + "' is not known (allowed: serial, interleaved)");
            o.interleave = v == "interleaved";
        } else if (a == "--topology") {
            if (v != "ring" && v != "line" && v != "all_pairs" && v != "t3000")
                usage_error("--topology '" + v + "' is not known (allowed: ring, line, all_pairs, t3000)");
            o.topology = v;
        } else if (a == "--ranks") o.ranks = parse_u32(a, v, 1, 64);
        else if (a == "--message") o.message = parse_u32(a, v, 16, 1 << 20);
        else if (a == "--slots") o.slots = parse_u32(a, v, 2, 1024);
        else if (a == "--repeat") o.repeat = parse_u32(a, v, 1, 100);
        else if (a == "--memcpy") { for (auto& s : split(v)) o.memcpy_sizes.push_back(parse_size(a, s)); }
        else if (a == "--adversarial") { o.adversarial = true; o.adv_seed = parse_size(a, v); }
        else if (a == "--engine") {
            if (v == "fibers") o.engine = emu::Engine::fibers;
            else if (v == "threads") o.engine = emu::Engine::threads;
            else usage_error("--engine '" + v + "' is not known (allowed: fibers, threads)");
        } else if (a == "--timing") {
            if (v != "wormhole" && v != "wafer") usage_error("--timing '" + v + "' is not known (allowed: wormhole, wafer)");
            o.timing = v;
        } else if (a == "--clock") {
            if (v != "wall" && v != "cpu") usage_error("--clock '" + v + "' is not known (allowed: wall, cpu)");
            g_cpu_clock = v == "cpu";
        }
        else usage_error("unknown option '" + a + "'");
    }
    if (o.topology == "t3000") {
        if (o.transport != Transport::edm) usage_error("--topology t3000 is a ring of 8 chips over EDM: use --transport edm");
        if (o.ranks != 8) usage_error("--topology t3000 has 8 chips: use --ranks 8");
    }
    if (o.topology == "all_pairs" && o.ranks > 9)
        usage_error("--topology all_pairs needs ranks - 1 directions per rank; at most 8, so --ranks <= 9");
    if (!o.timing.empty()) {
        if (o.engine != emu::Engine::fibers) usage_error("--timing needs the fiber engine (--engine fibers); the thread engine has no modelled time");
        if (o.adversarial) usage_error("--timing cannot be combined with --adversarial (a timed run delivers at the modelled times)");
        if (o.timing == "wafer" && o.transport != Transport::ipcq)
            usage_error("--timing wafer models a PE mesh without Ethernet: use --transport ipcq (PEs of one chip)");
    }
    if (g_cpu_clock && o.engine != emu::Engine::fibers)
        usage_error("--clock cpu needs the fiber engine (--engine fibers): with threads every core has its own CPU clock");
    if (o.message % 16) usage_error("--message '" + std::to_string(o.message) + "' must be a multiple of 16");
    if (o.min_bytes > o.max_bytes) usage_error("-b is larger than -e");
    if (o.transport == Transport::ipcq && o.ranks > 16) usage_error("--ranks with ipcq: at most 16 PEs on the emulated chip");

    for (Op op : o.colls)
        if (op_reduces(op) && !is_valid_op(o.dtype, o.redop))
            usage_error(std::string("-o ") + redop_name(o.redop) + " is not defined on -d " + dtype_name(o.dtype) +
                        " (GCL's rules: mean only on floating types, logical_and/logical_or only on bool, bit_and/bit_or/bit_xor "
                        "only on integers; sum, prod, min, max, square_add on floating and integer types)");
    std::printf("# coll_perf: %u ranks, %s over %s, message %u B x %u slots%s\n",
                o.ranks, o.topology == "t3000" ? "T3000 (2x4 chips, ring 0 1 2 3 7 6 5 4)" : o.topology.c_str(),
                o.transport == Transport::edm ? "EDM" : "IPCQ", o.message, o.slots, o.adversarial ? ", adversarial" : "");
    std::printf("# engine: %s%s\n",
                o.engine == emu::Engine::fibers ? "fibers (every emulated core a fiber on one host thread)"
                                                : "threads (a host thread per emulated core)",
                o.timing == "wormhole" ? "; timed: Wormhole model (modelled time in us; %line = modelled busbw / 12.5 GB/s)"
                : o.timing == "wafer"  ? "; timed: wafer PE-mesh model (modelled time in us at the model's clock, and in cycles)"
                                       : "");
    if (g_cpu_clock) std::printf("# clock: CPU time of the host thread (time taken by other processes not counted)\n");
    for (uint64_t b : o.memcpy_sizes) {
        std::vector<double> g;
        for (uint32_t r = 0; r < std::max(3u, o.repeat); ++r) g.push_back(memcpy_gbps(b));
        std::printf("# memcpy %llu bytes: %.2f GB/s (median of %zu)\n", (unsigned long long)b, median(g), g.size());
    }
    const bool timed = !o.timing.empty();
    const char* extra_col = o.timing == "wafer" ? "cycles" : "%line";
    if (!timed) {
        std::printf("#\n# %10s %12s %8s %10s %6s %14s %8s %8s %8s  %s\n", "size", "count", "type", "redop", "root", "time(us)",
                    "algbw", "busbw", "#wrong", "op / method");
        std::printf("# %10s %12s %8s %10s %6s %14s %8s %8s %8s\n", "(B)", "(elements)", "", "", "", "", "(GB/s)", "(GB/s)", "");
    } else {
        std::printf("#\n# %10s %12s %8s %10s %6s %14s %8s %8s %8s | %12s %8s %8s %8s  %s\n", "size", "count", "type", "redop",
                    "root", "time(us)", "algbw", "busbw", "#wrong", "model(us)", "m.algbw", "m.busbw", extra_col, "op / method");
        std::printf("# %10s %12s %8s %10s %6s %14s %8s %8s %8s | %12s %8s %8s %8s\n", "(B)", "(elements)", "", "", "", "wall",
                    "(GB/s)", "(GB/s)", "", "modelled", "(GB/s)", "(GB/s)", "");
    }
    int status = 0;
    const uint32_t eb = dtype_size(o.dtype);
    for (Op op : o.colls) {
        const RedOp redop = op_reduces(op) ? o.redop : cb::any_valid_op(o.dtype);
        for (uint64_t size = o.min_bytes; size <= o.max_bytes; size = size ? size * o.factor : 1) {
            const uint64_t count = count_for(op, size, eb, o.ranks);
            // Default: GCL's "auto" — choose_method for the op, topology, ranks and bytes per rank.
            const Method m = o.method_given ? o.method
                                            : choose_method(op, o.topology == "line" ? Topology::line : Topology::ring,
                                                            o.ranks, count * eb, o.topology == "all_pairs");
            Options oo = o;
            oo.redop = redop;
            Result r;
            cb::with_reducer(o.dtype, redop, [&](auto red) { r = run_one<decltype(red)>(oo, op, m, count); });
            const uint64_t bytes = (op == Op::all_gather || op == Op::gather || op == Op::all_to_all) ? count * o.ranks * eb : count * eb;
            if (!r.error.empty()) {
                std::printf("  %10llu %12llu %8s %10s %6s  error: %s\n", (unsigned long long)bytes, (unsigned long long)(bytes / eb),
                            dtype_name(o.dtype), op_reduces(op) ? redop_name(redop) : "none", "0", r.error.c_str());
                status = 1;
            } else {
                const double algbw = r.time_us > 0 ? double(bytes) / (r.time_us * 1e3) : 0;
                const double busbw = algbw * busbw_factor(op, o.ranks);
                const bool rooted = op == Op::broadcast || op == Op::reduce || op == Op::gather || op == Op::scatter;
                char wrong[32];
                if (o.check) std::snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)r.wrong);
                else std::snprintf(wrong, sizeof wrong, "N/A");
                std::printf("  %10llu %12llu %8s %10s %6s %14.1f %8.3f %8.3f %8s", (unsigned long long)bytes,
                            (unsigned long long)(bytes / eb), dtype_name(o.dtype), op_reduces(op) ? redop_name(redop) : "none",
                            rooted ? "0" : "-1", r.time_us, algbw, busbw, wrong);
                if (timed) {
                    const double malg = r.model_us > 0 ? double(bytes) / (r.model_us * 1e3) : 0;
                    const double mbus = malg * busbw_factor(op, o.ranks);
                    char last[32];
                    if (o.timing == "wafer") std::snprintf(last, sizeof last, "%.0f", r.model_ticks);
                    else std::snprintf(last, sizeof last, "%.1f%%", 100.0 * mbus / 12.5);
                    std::printf(" | %12.2f %8.3f %8.3f %8s", r.model_us, malg, mbus, last);
                }
                std::printf("  %s / %s\n", op_name(op), method_name(m));
                if (r.wrong) { std::printf("#   first wrong:%s\n", r.first_wrong.c_str()); status = 1; }
            }
            std::fflush(stdout);
            if (size == 0 && o.max_bytes == 0) break;
        }
    }
    return status;
}

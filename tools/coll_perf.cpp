// coll_perf — collectives benchmark in the nccl-tests convention, on the emulation.
//
//   coll_perf [-b MIN] [-e MAX] [-f FACTOR] [-o REDOP] [-d TYPE] [-n ITERS] [-w WARMUP] [-c 0|1]
//             [--coll OP[,OP...]] [--method M] [--transport edm|ipcq] [--topology ring|line|all_pairs|t3000]
//             [--ranks N] [--message BYTES] [--slots N] [--repeat R] [--memcpy BYTES[,BYTES...]]
//             [--adversarial SEED] [--engine fibers|threads] [--timing wormhole|wafer] [--clock wall|cpu]
//             [--trace FILE]
//
// Sizes (-b/-e, suffixes K M G) are nccl-tests' "size": the bytes of the largest buffer (all_gather:
// the gathered output; reduce_scatter: each rank's input; all_reduce and the rest: the tensor).
// Columns: size count type redop root | host(us) algbw busbw #wrong (out of place; in-place is
// not offered). host(us) is host time of the emulation (wall clock by default), not a prediction
// of the hardware; the modelled columns (--timing) are. algbw = size / time; busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather,
// reduce_scatter, all_to_all), 1 otherwise. time: from the first rank starting the timed loop to
// the last rank finishing it, divided by -n; with --repeat R the median of R such loops. Inputs are
// seeded and exactly predictable (testing/inputs.hpp), so -c 1 counts every wrong element.
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
// --trace FILE (fiber engine) writes the Perfetto trace of the first row's first run.
//
// Every option and every combination is checked before any run (sizes without overflow and at
// most 512M, the method against each op and topology, the L1 of every row against the emulation's
// 32-bit addresses and host memory); a bad one is an error line naming it and what is allowed,
// exit code 2. A failed run is an error row, exit code 1; the tool catches every exception.
#include "tools/coll_perf.hpp"
#include "tools/coll_perf_args.hpp"
#include "tools/coll_perf_wafer.hpp"
#ifndef KCCL_COLL_PERF_DEMO
#define KCCL_COLL_PERF_DEMO 0
#endif
// A build of the tool for scripts/demo.sh, which compiles only what a run needs: KCCL_COLL_PERF_ONLY
// names the one element type compiled in (a DataType enumerator, e.g. bf16; its runner
// KCCL_COLL_PERF_ONLY_FN); KCCL_COLL_PERF_FABRIC 0 leaves --transport fabric out.
#ifndef KCCL_COLL_PERF_FABRIC
#define KCCL_COLL_PERF_FABRIC !KCCL_COLL_PERF_DEMO
#endif
#if KCCL_COLL_PERF_FABRIC
#include "tools/coll_perf_fabric.hpp"  // --transport fabric
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace kccl::coll;
using namespace kccl::coll_perf;
namespace cb = kccl::emu::collective;
namespace emu = kccl::emu;

namespace {

#if KCCL_COLL_PERF_DEMO
const char* const kProg = "coll_demo";
#else
const char* const kProg = "coll_perf";
#endif

constexpr DataType kTypes[] = {DataType::f32, DataType::bf16, DataType::f16, DataType::i32,
                               DataType::u32, DataType::i64, DataType::u64, DataType::boolean};
constexpr RedOp kRedOps[] = {RedOp::sum, RedOp::mean, RedOp::prod, RedOp::min, RedOp::max, RedOp::square_add,
                             RedOp::logical_and, RedOp::logical_or, RedOp::bit_and, RedOp::bit_or, RedOp::bit_xor};
const char* dtype_name_f(DataType t) { return dtype_name(t); }
const char* redop_name_f(RedOp r) { return redop_name(r); }
const char* op_name_f(Op o) { return op_name(o); }
const char* method_name_f(Method m) { return method_name(m); }

/// Does `m` send to ranks that are not neighbours (for some op that takes it)? Such methods need a
/// routed link: --topology all_pairs.
bool method_is_routed(Method m) {
    for (Op op : kOps) {
        Shape sh;
        sh.op = op;
        sh.method = m;
        sh.ranks = 8;
        bool known = false;
        bool mh = false;
        dispatch(sh, [&](auto tag) { known = true; mh = decltype(tag)::type::multi_hop; });
        if (known && mh) return true;
    }
    return false;
}

std::string routed_methods() {
    std::string s;
    for (Method m : kMethods)
        if (method_is_routed(m)) s += (s.empty() ? "" : ", ") + std::string(method_name(m));
    return s;
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

double memcpy_gbps(uint64_t bytes, bool cpu) {
    std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
    std::vector<double> t;
    for (int i = 0; i < 6; ++i) {
        const double s = now_s(cpu);
        std::memcpy(b.data(), a.data(), bytes);
        const double e = now_s(cpu);
        asm volatile("" : : "r"(b.data()) : "memory");
        if (i) t.push_back(e - s);
    }
    return double(bytes) / median(t) / 1e9;
}

}  // namespace

void kccl::coll_perf::print_usage() {
    std::printf(
        "coll_perf: collectives on the kccl emulation, nccl-tests style, in three modes:\n"
        "  edm/ipcq (default)  the collectives over EDM (chips in a ring) or IPCQ (PEs of one chip)\n"
        "  fabric              --transport fabric: the collectives over the chip fabric (routers on the Ethernet\n"
        "                      cores, every rank reachable) on line, ring, mesh, T3000 or Galaxy, every method\n"
        "  grid                Wafer-scale fabric mode (--grid): the reduce, allreduce and broadcast patterns of the\n"
        "                      Cerebras WSE reduce/allreduce thesis on the emulated PE fabric, cycle-exact on the\n"
        "                      thesis's model (docs/wafer.md); host memory is checked before any run (about 14 KiB\n"
        "                      per PE plus twice its bytes, at most three quarters of the host's)\n"
        "Options (the modes that take each in brackets):\n");
    print_options([](const std::string& key) { return key == "routed" ? routed_methods() : wafer_patterns(); });
    std::printf(
        "Columns: host(us) is host time of the emulation per iteration (it measures the emulator, not the\n"
        "hardware); model(us) and the m.* columns are the timing model's modelled device time. grid: cycles\n"
        "(emulated, the thesis's model), model (cost model, include/wafer/cost.hpp), run(s) (host wall time of\n"
        "the emulated run), total(s) (with layout, set-up and check), #wrong (against a host fold of the inputs).\n"
        "Exit codes: 0 every row ran and verified; 1 a row failed or had wrong elements; 2 bad options.\n");
}

namespace {

/// What a row will run, worked out before any run.
struct Row {
    Op op;
    RedOp redop;
    Method method;
    bool automatic;
    uint64_t size, count, bytes;
};

RowRunner runner_for(DataType t) {
#if KCCL_COLL_PERF_DEMO
    return t == DataType::bf16 ? &run_bf16 : nullptr;
#elif defined(KCCL_COLL_PERF_ONLY)
    return t == DataType::KCCL_COLL_PERF_ONLY ? &KCCL_COLL_PERF_ONLY_FN : nullptr;
#else
    switch (t) {
        case DataType::f32: return &run_f32;
        case DataType::bf16: return &run_bf16;
        case DataType::f16: return &run_f16;
        case DataType::i32: return &run_i32;
        case DataType::u32: return &run_u32;
        case DataType::i64: return &run_i64;
        case DataType::u64: return &run_u64;
        case DataType::boolean: return &run_bool;
    }
    return nullptr;
#endif
}

Options parse(int argc, char** argv, bool& help) {
    Options o;
    help = !parse_args(argc, argv, kColl, [&](std::string_view a, const std::string& v, uint64_t x) {
        if (a == "-b") o.min_bytes = x;
        else if (a == "-e") o.max_bytes = x;
        else if (a == "-f") o.factor = x;
        else if (a == "-o") o.redop = parse_enum("-o", v, kRedOps, redop_name_f);
        else if (a == "-d") o.dtype = parse_enum("-d", v, kTypes, dtype_name_f);
        else if (a == "-n") o.iters = uint32_t(x);
        else if (a == "-w") o.warmup = uint32_t(x);
        else if (a == "-c") o.check = x == 1;
        else if (a == "--coll") { o.colls.clear(); for (auto& s : split(v)) o.colls.push_back(parse_enum("--coll", s, kOps, op_name_f)); }
        else if (a == "--method") {
            o.method_given = v != "auto";
            if (o.method_given) o.method = parse_enum("--method", v, kMethods, method_name_f);
        } else if (a == "--transport") o.transport = v == "edm" ? Transport::edm : Transport::ipcq;
        else if (a == "--lanes") o.interleave = v == "interleaved";
        else if (a == "--topology") o.topology = v;
        else if (a == "--ranks") o.ranks = uint32_t(x);
        else if (a == "--message") o.message = uint32_t(x);
        else if (a == "--slots") o.slots = uint32_t(x);
        else if (a == "--repeat") o.repeat = uint32_t(x);
        else if (a == "--memcpy") { for (auto& s : split(v)) o.memcpy_sizes.push_back(parse_size("--memcpy", s)); }
        else if (a == "--adversarial") { o.adversarial = true; o.adv_seed = x; }
        else if (a == "--engine") o.engine = v == "fibers" ? emu::Engine::fibers : emu::Engine::threads;
        else if (a == "--timing") o.timing = v;
        else if (a == "--clock") o.cpu_clock = v == "cpu";
        else if (a == "--trace") {
            if (v.empty()) usage_error("--trace needs a file name");
            o.trace_path = v;
        }
    });
    return o;
}

/// Every combination of options, and every row, checked before any run; returns the rows.
std::vector<Row> plan_rows(const Options& o) {
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
    if (o.cpu_clock && o.engine != emu::Engine::fibers)
        usage_error("--clock cpu needs the fiber engine (--engine fibers): with threads every core has its own CPU clock");
    if (!o.trace_path.empty() && o.engine != emu::Engine::fibers)
        usage_error("--trace needs the fiber engine (--engine fibers): the thread engine records no trace");
    if (o.message % 16) usage_error("--message '" + std::to_string(o.message) + "' must be a multiple of 16");
    if (o.min_bytes > o.max_bytes) usage_error("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
    if (o.transport == Transport::ipcq && o.ranks > 16) usage_error("--ranks with ipcq: at most 16 PEs on the emulated chip");
    if (o.colls.empty()) usage_error("--coll needs at least one op");
#if KCCL_COLL_PERF_DEMO
    if (o.dtype != DataType::bf16 || o.transport != Transport::edm || o.interleave)
        usage_error("this is the demo's build of coll_perf: -d bfloat16 over --transport edm, --lanes serial (it "
                    "compiles in a fraction of the full tool's time); build the target coll_perf for other options");
    for (Op op : o.colls)
        if (op_reduces(op) && o.redop != RedOp::sum)
            usage_error("this is the demo's build of coll_perf: -o sum only; build the target coll_perf for other operators");
#elif defined(KCCL_COLL_PERF_ONLY)
    if (o.dtype != DataType::KCCL_COLL_PERF_ONLY)
        usage_error(std::string("this build of coll_perf has -d ") + dtype_name(DataType::KCCL_COLL_PERF_ONLY) +
                    " only (scripts/demo.sh builds one element type at a time); build the target coll_perf for every type");
#endif
    for (Op op : o.colls)
        if (op_reduces(op) && !is_valid_op(o.dtype, o.redop))
            usage_error(std::string("-o ") + redop_name(o.redop) + " is not defined on -d " + dtype_name(o.dtype) +
                        " (Graphcore GCL's rules: mean only on floating types, logical_and/logical_or only on bool, "
                        "bit_and/bit_or/bit_xor only on integers; sum, prod, min, max, square_add on floating and integer types)");
    const bool routed = o.topology == "all_pairs";
    if (o.method_given) {
        for (Op op : o.colls) {
            Shape sh = row_shape(o, op, o.method);
            bool known = false;
            dispatch(sh, [&](auto) { known = true; });
            if (!known)
                usage_error(std::string("--method ") + method_name(o.method) + " is not a method of " + op_name(op) +
                            " (" + op_name(op) + " takes: " + allowed_methods(op) + ")");
        }
        if (!routed && method_is_routed(o.method))
            usage_error(std::string("--method ") + method_name(o.method) +
                        " sends to ranks that are not neighbours: it needs a routed link, --topology all_pairs (methods "
                        "that do: " + routed_methods() + "; --topology " + o.topology + " links neighbours only)");
    }

    const uint32_t eb = dtype_size(o.dtype);
    std::vector<Row> rows;
    uint64_t worst_host = 0;
    std::string worst_row;
    for (Op op : o.colls) {
        const RedOp redop = op_reduces(op) ? o.redop : cb::any_valid_op(o.dtype);
        for (uint64_t size = o.min_bytes; size <= o.max_bytes; size = size ? size * o.factor : 1) {
            Row r;
            r.op = op;
            r.redop = redop;
            r.size = size;
            r.count = count_for(op, size, eb, o.ranks);
            r.automatic = !o.method_given;
            // GCL's "auto": choose_method for the op, topology, ranks and bytes per rank.
            r.method = o.method_given ? o.method
                                      : choose_method(op, o.topology == "line" ? Topology::line : Topology::ring, o.ranks,
                                                      r.count * eb, routed);
            r.bytes = (op == Op::all_gather || op == Op::gather || op == Op::all_to_all) ? r.count * o.ranks * eb : r.count * eb;
            const std::string where = std::string(op_name(op)) + " / " + method_name(r.method) + " at size " + std::to_string(size);
            cb::GroupOptions bo = bed_options(o);
            const cb::Layout L = cb::make_layout(row_shape(o, op, r.method), uint32_t(r.count), cb::max_chunk_elems(bo, eb));
            if (const char* err = validate(L.shape)) usage_error(where + ": " + err);
            uint32_t buf = 0;
            try {
                buf = cb::buffer_bytes_for(L, eb);
            } catch (const std::exception& e) {
                usage_error(where + ": " + e.what() + " (lower -e)");
            }
            bo.buffer_bytes = buf;
            bo.extra_bytes = op_reduces(op) && redop == RedOp::square_add ? buf : 0;  // Reducer::has_prepare
            if (cb::worker_l1_need(bo) > cb::kMaxWorkerL1)
                usage_error(where + ": a rank's L1 would be " + std::to_string(cb::worker_l1_need(bo)) +
                            " bytes, above the emulation's 32-bit L1 addresses (lower -e, --message or --slots)");
            const uint64_t host = cb::host_l1_bytes(bo);
            if (host > worst_host) { worst_host = host; worst_row = where; }
            rows.push_back(r);
            if (size == 0 && o.max_bytes == 0) break;
        }
    }
    check_host_memory(worst_host, worst_row, "the emulated L1 of " + std::to_string(o.ranks) + " ranks", "lower -e");
    for (uint64_t b : o.memcpy_sizes)
        if (b == 0) usage_error("--memcpy sizes must be at least 1 byte");
    if (!o.trace_path.empty()) {  // writable? (the trace is written after the first row)
        std::ofstream f(o.trace_path, std::ios::out | std::ios::trunc);
        if (!f) usage_error("--trace '" + o.trace_path + "' cannot be opened for writing: " + std::strerror(errno));
    }
    return rows;
}

int run(const Options& o, const std::vector<Row>& rows) {
    const RowRunner runner = runner_for(o.dtype);
    if (!runner) usage_error(std::string("-d ") + dtype_name(o.dtype) + " is not compiled into this build");
    std::printf("# coll_perf: %u ranks, %s over %s, message %u B x %u slots%s\n",
                o.ranks, o.topology == "t3000" ? "T3000 (2x4 chips, ring 0 1 2 3 7 6 5 4)" : o.topology.c_str(),
                o.transport == Transport::edm ? "EDM" : "IPCQ", o.message, o.slots, o.adversarial ? ", adversarial" : "");
    std::printf("# engine: %s%s\n",
                o.engine == emu::Engine::fibers ? "fibers (every emulated core a fiber on one host thread)"
                                                : "threads (a host thread per emulated core)",
                o.timing == "wormhole" ? "; timed: Wormhole model (modelled time in us; %line = modelled busbw / 12.5 GB/s)"
                : o.timing == "wafer"  ? "; timed: wafer PE-mesh model (modelled time in us at the model's clock, and in cycles)"
                                       : "");
    std::printf("# host(us): %s per iteration of the emulation on this host (not a prediction of the hardware%s)\n",
                o.cpu_clock ? "CPU time of the host thread (time taken by other processes not counted)" : "wall time",
                o.timing.empty() ? "; --timing wormhole adds modelled device time" : "; model(us) is the modelled device time");
    if (o.method_given) std::printf("# method: %s\n", method_name(o.method));
    else std::printf("# method: auto (chosen per op, topology, ranks and size; each row names the method it ran)\n");
    for (uint64_t b : o.memcpy_sizes) {
        std::vector<double> g;
        for (uint32_t r = 0; r < std::max(3u, o.repeat); ++r) g.push_back(memcpy_gbps(b, o.cpu_clock));
        std::printf("# memcpy %llu bytes: %.2f GB/s (median of %zu)\n", (unsigned long long)b, median(g), g.size());
    }
    const bool timed = !o.timing.empty();
    const char* extra_col = o.timing == "wafer" ? "cycles" : "%line";
    const char* host_unit = o.cpu_clock ? "cpu" : "wall";
    if (!timed) {
        std::printf("#\n# %10s %12s %8s %10s %6s %14s %8s %8s %8s  %s\n", "size", "count", "type", "redop", "root", "host(us)",
                    "algbw", "busbw", "#wrong", "op / method");
        std::printf("# %10s %12s %8s %10s %6s %14s %8s %8s %8s\n", "(B)", "(elements)", "", "", "", host_unit, "(GB/s)", "(GB/s)", "");
    } else {
        std::printf("#\n# %10s %12s %8s %10s %6s %14s %8s %8s %8s | %12s %8s %8s %8s  %s\n", "size", "count", "type", "redop",
                    "root", "host(us)", "algbw", "busbw", "#wrong", "model(us)", "m.algbw", "m.busbw", extra_col, "op / method");
        std::printf("# %10s %12s %8s %10s %6s %14s %8s %8s %8s | %12s %8s %8s %8s\n", "(B)", "(elements)", "", "", "", host_unit,
                    "(GB/s)", "(GB/s)", "", "modelled", "(GB/s)", "(GB/s)", "");
    }
    std::fflush(stdout);
    int status = 0;
    const uint32_t eb = dtype_size(o.dtype);
    std::unique_ptr<emu::Trace> trace = o.trace_path.empty() ? nullptr : std::make_unique<emu::Trace>();
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        Options oo = o;
        oo.redop = row.redop;
        const Result r = runner(oo, row.redop, row.op, row.method, row.count, i == 0 ? trace.get() : nullptr);
        const char* redop_col = op_reduces(row.op) ? redop_name(row.redop) : "none";
        if (!r.error.empty()) {
            std::printf("  %10llu %12llu %8s %10s %6s  error: %s / %s: %s\n", (unsigned long long)row.bytes,
                        (unsigned long long)(row.bytes / eb), dtype_name(o.dtype), redop_col, "0", op_name(row.op),
                        method_name(row.method), r.error.c_str());
            status = 1;
        } else {
            const double algbw = r.time_us > 0 ? double(row.bytes) / (r.time_us * 1e3) : 0;
            const double busbw = algbw * busbw_factor(row.op, o.ranks);
            const bool rooted = row.op == Op::broadcast || row.op == Op::reduce || row.op == Op::gather || row.op == Op::scatter;
            char wrong[32];
            if (o.check) std::snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)r.wrong);
            else std::snprintf(wrong, sizeof wrong, "N/A");
            std::printf("  %10llu %12llu %8s %10s %6s %14.1f %8.3f %8.3f %8s", (unsigned long long)row.bytes,
                        (unsigned long long)(row.bytes / eb), dtype_name(o.dtype), redop_col, rooted ? "0" : "-1", r.time_us,
                        algbw, busbw, wrong);
            if (timed) {
                const double malg = r.model_us > 0 ? double(row.bytes) / (r.model_us * 1e3) : 0;
                const double mbus = malg * busbw_factor(row.op, o.ranks);
                char last[32];
                if (o.timing == "wafer") std::snprintf(last, sizeof last, "%.0f", r.model_ticks);
                else std::snprintf(last, sizeof last, "%.1f%%", 100.0 * mbus / 12.5);
                std::printf(" | %12.2f %8.3f %8.3f %8s", r.model_us, malg, mbus, last);
            }
            std::printf("  %s / %s%s\n", op_name(row.op), method_name(row.method), row.automatic ? " (auto)" : "");
            if (r.wrong) { std::printf("#   first wrong:%s\n", r.first_wrong.c_str()); status = 1; }
        }
        if (i == 0 && trace) {
            std::string err;
            if (!trace->write_json(o.trace_path, &err)) {
                std::printf("# error: %s\n", err.c_str());
                status = 1;
            } else {
                std::printf("# trace: %s (%s / %s, %llu B, first run; open at https://ui.perfetto.dev)\n", o.trace_path.c_str(),
                            op_name(row.op), method_name(row.method), (unsigned long long)row.bytes);
            }
        }
        std::fflush(stdout);
    }
    return status;
}

}  // namespace

int main(int argc, char** argv) {
#if KCCL_COLL_PERF_FABRIC
    if (kccl::coll_perf::wants_fabric(argc, argv)) return kccl::coll_perf::fabric_main(argc, argv, kProg);
#else
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--transport") == 0 && std::strcmp(argv[i + 1], "fabric") == 0) {
            std::fprintf(stderr, "%s: --transport fabric is not compiled into this build (scripts/demo.sh --transport fabric "
                                 "builds it; the target coll_perf has every mode)\n", kProg);
            return 2;
        }
#endif
    if (wafer_requested(argc, argv)) return wafer_main(argc, argv);  // --grid: tools/coll_perf_wafer.cpp
    return guarded_main(kProg, "--help", [&] {
        bool help = false;
        const Options o = parse(argc, argv, help);
        if (help) { print_usage(); return 0; }
        const std::vector<Row> rows = plan_rows(o);
        return run(o, rows);
    });
}

// coll_perf --grid: the patterns of the Cerebras WSE reduce/allreduce thesis on the emulated
// wafer-scale PE fabric, one row per vector size, nccl-tests style.
//
//   coll_perf --grid RxC [--timing wafer] [--method PATTERN|auto] [--coll reduce|all_reduce|broadcast]
//             [--base P[,P[,P]]] [--root X[,Y]] [--S N] [--G N] [-b MIN] [-e MAX] [-f FACTOR]
//             [-d float|int32|uint32] [-o sum|max|min] [-n ITERS] [--profile wse2|wse3]
//
// R rows by C columns of PEs (1xC: a row of C PEs, the 1D patterns; R > 1: the 2D patterns).
// Sizes are bytes per PE (nccl-tests' size), a multiple of 4: B = size / 4 elements of 32 bits.
// Columns: size, count (B), type, redop, cycles (the emulation's modelled cycles: when the last PE
// finished, cycle-exact on the thesis's performance model), model (the cost model's prediction,
// include/wafer/cost.hpp; "-" where it cannot evaluate the run), run(s) (host wall time of the
// emulated run, the median over -n runs), total(s) (layout, set-up, run and check of one run),
// #wrong (result elements that differ bit for bit from a host fold of every PE's input, computed
// apart from the fabric), and the pattern as run ("(auto)": chosen by wafer/auto.hpp for this
// size, with its parameters).
//
// Every option and combination is checked before the first run; a bad one is an error line naming
// it and what is allowed, exit code 2. A failed run is an error row, exit code 1.
#include "tools/coll_perf_wafer.hpp"
#include "tools/coll_perf_args.hpp"

#include <emulation/wafer/run.hpp>
#include <wafer/auto.hpp>
#include <wafer/cost.hpp>
#include <wafer/patterns.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace kccl::coll_perf {
namespace {

namespace kf = kccl::wafer;
namespace fh = kccl::wafer::host;
namespace ef = kccl::emu::wafer;

constexpr const char* kProg = "coll_perf";
// A PE's host memory besides twice its data (its memory and the words its streams carry): the Pe
// object, its router queues and program state. Measured as maximum RSS / PEs: 14.1 KiB at
// --grid 256x256 -b 4 (925 MB), 98.4 KiB at --grid 128x128 -b 48K (1612 MB, 2 x 48 KiB + 2.4 KiB);
// the larger figure is taken, so the estimate errs on the safe side.
constexpr uint64_t kHostBytesPerPe = 14 * 1024;
constexpr uint32_t kMaxSide = 1024;  // the cost model's and auto's limit per axis (cost::kMaxCostPes)

[[noreturn]] void bad(const std::string& m) { usage_error(m); }

struct WaferOptions {
    uint32_t rows = 0, cols = 0;
    bool automatic = true;
    kf::PatternArgs args;
    bool coll_given = false;
    kccl::coll::Op coll = kccl::coll::Op::all_reduce;
    bool base_given = false, root_given = false;
    uint64_t min_bytes = 4, max_bytes = 4096, factor = 4;
    kccl::coll::DataType type = kccl::coll::DataType::f32;
    kccl::coll::RedOp op = kccl::coll::RedOp::sum;
    std::string type_name = "float", op_name = "sum";
    uint32_t iters = 1;
    fh::Profile profile = fh::wse2();
};


/// -b / -e of the wafer: a size (parse_size) that is a positive multiple of 4 and fits a PE.
uint64_t pe_bytes(const std::string& opt, const std::string& v, uint32_t pe_mem) {
    const uint64_t x = parse_size(opt, v);
    if (x == 0 || x % 4 != 0) bad(opt + " '" + v + "' is not a positive multiple of 4 bytes (a PE's vector is 32-bit elements)");
    if (x > pe_mem)
        bad(opt + " '" + v + "' does not fit in a PE: a PE holds " + std::to_string(pe_mem) + " bytes (" + std::to_string(pe_mem / 4) +
            " elements), and the vector stays in place in its memory");
    return x;
}

kf::Pattern parse_pattern(const std::string& opt, const std::string& v) {
    kf::Pattern p = kf::Pattern::chain;
    if (!kf::pattern_from_name(v.c_str(), p)) {
        char list[512];
        kf::pattern_list(list, sizeof list, ' ');
        bad(opt + " '" + v + "' is not a fabric pattern (allowed: " + list + (opt == "--method" ? ", auto" : "") + ")");
    }
    return p;
}

/// -d, -o and --coll (values the option table allows) as the wafer's element type, operator and collective.
void set_wafer_value(WaferOptions& o, std::string_view a, const std::string& v) {
    using namespace kccl::coll;
    if (a == "-d") o.type = v == "float" ? DataType::f32 : v == "int32" ? DataType::i32 : DataType::u32;
    else if (a == "-o") o.op = v == "sum" ? RedOp::sum : v == "max" ? RedOp::max : RedOp::min;
    else o.coll = v == "reduce" ? Op::reduce : v == "all_reduce" ? Op::all_reduce : Op::broadcast;
}

WaferOptions parse(int argc, char** argv, bool& help) {
    WaferOptions o;
    std::string sizes[2];
    bool size_given[2] = {false, false};
    help = !parse_args(argc, argv, kWafer, [&](std::string_view a, const std::string& v, uint64_t x) {
        if (a == "--grid") {
            const size_t c = v.find('x');
            if (c == std::string::npos) bad("--grid '" + v + "' is not RxC (R rows by C columns of PEs, each 1.." + std::to_string(kMaxSide) + "; 1xC is a row)");
            o.rows = uint32_t(parse_uint("--grid rows", v.substr(0, c), 1, kMaxSide));
            o.cols = uint32_t(parse_uint("--grid columns", v.substr(c + 1), 1, kMaxSide));
            if (uint64_t(o.rows) * o.cols < 2) bad("--grid '" + v + "' has one PE; a collective needs at least 2");
        } else if (a == "--method") {
            o.automatic = v == "auto";
            if (!o.automatic) o.args.pattern = parse_pattern("--method", v);
        } else if (a == "--coll" || a == "-d" || a == "-o") {
            set_wafer_value(o, a, v);
            if (a == "--coll") o.coll_given = true;
            else (a == "-d" ? o.type_name : o.op_name) = v;
        } else if (a == "--base") {
            const auto names = split(v);
            if (names.size() > kf::kMaxBaseDepth)
                bad("--base '" + v + "' lists " + std::to_string(names.size()) + " patterns; a chain of bases is at most " +
                    std::to_string(kf::kMaxBaseDepth) + " deep (allreduce_2d over allreduce_naive over jump over two_phase)");
            for (size_t k = 0; k < names.size(); ++k) o.args.base[k] = parse_pattern("--base", names[k]);
            o.base_given = true;
        } else if (a == "--root") {
            const auto xy = split(v);
            if (xy.size() > 2) bad("--root '" + v + "' is not X or X,Y (X the column, Y the row)");
            o.args.root = uint32_t(parse_uint("--root", xy[0], 0, kMaxSide - 1));
            if (xy.size() == 2) o.args.root_y = uint32_t(parse_uint("--root", xy[1], 0, kMaxSide - 1));
            o.root_given = true;
        } else if (a == "--S") o.args.s = uint32_t(x);
        else if (a == "--G") o.args.g = uint32_t(x);
        else if (a == "-b" || a == "-e") {
            sizes[a == "-e"] = v;
            size_given[a == "-e"] = true;
        } else if (a == "-f") o.factor = x;
        else if (a == "-n") o.iters = uint32_t(x);
        else if (a == "--profile") o.profile = v == "wse2" ? fh::wse2() : fh::wse3();
    });
    if (help) return o;
    if (o.rows == 0) bad("--grid RxC is required in the fabric mode");
    for (int k = 0; k < 2; ++k)
        if (size_given[k]) (k ? o.max_bytes : o.min_bytes) = pe_bytes(k ? "-e" : "-b", sizes[k], o.profile.pe_mem_bytes);
    if (size_given[0] && !size_given[1]) o.max_bytes = std::max(o.max_bytes, o.min_bytes);
    if (size_given[1] && !size_given[0]) o.min_bytes = std::min(o.min_bytes, o.max_bytes);
    if (o.min_bytes > o.max_bytes) bad("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
    return o;
}

/// Every combination checked before any run; returns the sizes (elements per PE).
std::vector<uint32_t> plan(WaferOptions& o) {
    const bool one_row = o.rows == 1;
    if (o.automatic) {
        if (o.base_given || o.args.s != 0 || o.args.g != 0)
            bad("--method auto chooses the base, S and G itself; --base, --S and --G need a named pattern (--method PATTERN)");
        if (o.root_given && o.coll == kccl::coll::Op::all_reduce)
            bad("--root with --method auto and --coll all_reduce: auto chooses an allreduce's root itself; drop --root or name a pattern");
        if (o.args.root >= o.cols || o.args.root_y >= o.rows)
            bad("--root " + std::to_string(o.args.root) + "," + std::to_string(o.args.root_y) + " is outside the " + std::to_string(o.rows) + "x" +
                std::to_string(o.cols) + " grid (X < " + std::to_string(o.cols) + ", Y < " + std::to_string(o.rows) + ")");
    } else {
        const kf::PatternInfo& pi = kf::pattern_info(o.args.pattern);
        if (o.coll_given && pi.collective != o.coll)
            bad(std::string("--method ") + pi.name + " is a " + kccl::coll::op_name(pi.collective) + " pattern, not " + kccl::coll::op_name(o.coll));
        o.coll = pi.collective;
        if (pi.dim == kf::Dim::one_d && !one_row)
            bad(std::string("--method ") + pi.name + " is a 1D pattern: use --grid 1x" + std::to_string(o.rows * o.cols) +
                " (a row), or a 2D pattern (reduce_2d, bcast_2d, allreduce_2d) on a grid");
        if (o.base_given && !pi.takes(kf::param_base)) bad(std::string("--base: ") + pi.name + " takes no base pattern");
        if (!o.base_given && o.args.pattern == kf::Pattern::allreduce_2d) {  // the thesis's 2D allreduce: naive (chain) per line
            o.args.base[0] = kf::Pattern::allreduce_naive;
            o.args.base[1] = kf::Pattern::chain;
        }
        // What the builder refuses is refused here, before any run (spec_of at the largest size).
        try {
            (void)ef::spec_of(o.args, o.rows, o.cols, uint32_t(o.max_bytes / 4), o.type, o.op);
        } catch (const std::invalid_argument& e) {
            bad(std::string("--method ") + pi.name + ": " + e.what());
        }
        if (o.args.pattern == kf::Pattern::butterfly && kf::cost::log_of(o.cols, o.args.g ? o.args.g : 3) == 0)
            bad("--method butterfly: P = " + std::to_string(o.cols) + " is not a power of G = " + std::to_string(o.args.g ? o.args.g : 3) +
                " (set --G or the grid)");
    }
    // Host memory, before anything is allocated: every PE's memory and the words its streams carry
    // (twice the largest size) and its state (kHostBytesPerPe).
    const uint64_t pes = uint64_t(o.rows) * o.cols;
    check_host_memory(pes * (2 * o.max_bytes + kHostBytesPerPe),
                      "--grid " + std::to_string(o.rows) + "x" + std::to_string(o.cols) + " at -e " + std::to_string(o.max_bytes),
                      "the emulated memory of " + std::to_string(pes) + " PEs", "lower --grid or -e");
    std::vector<uint32_t> sizes;
    for (uint64_t b = o.min_bytes; b <= o.max_bytes; b *= o.factor) {
        sizes.push_back(uint32_t(b / 4));
        if (b * o.factor <= b) break;
    }
    return sizes;
}

std::string describe(const kf::PatternArgs& a) {
    char buf[256];
    kf::describe(a, buf, sizeof buf);
    return buf;
}

int run(const WaferOptions& o, const std::vector<uint32_t>& sizes) {
    std::printf("# coll_perf: %s on the emulated wafer-scale PE fabric, %u x %u PEs (%s, T_R = %u, %u colors, %u bytes per PE)\n",
                o.automatic ? (std::string("auto ") + kccl::coll::op_name(o.coll)).c_str() : kf::pattern_name(o.args.pattern), o.rows, o.cols,
                o.profile.name, o.profile.t_r, o.profile.colors, o.profile.pe_mem_bytes);
    std::printf("# cycles: modelled by the emulation (Cerebras WSE reduce/allreduce thesis, chapter 3 model); model: the cost model's\n"
                "# prediction; run(s): host wall time of the emulated run (median of %u); total(s): layout + set-up + run + check;\n"
                "# #wrong: elements differing bit for bit from a host fold of every PE's input\n",
                o.iters);
    std::printf("#%11s %9s %7s %5s %10s %10s %9s %9s %7s  %s\n", "size", "count", "type", "redop", "cycles", "model", "run(s)", "total(s)", "#wrong",
                "pattern");
    int status = 0;
    for (const uint32_t B : sizes) {
        kf::PatternArgs a = o.args;
        if (o.automatic) {
            kf::AutoRequest q;
            q.collective = o.coll;
            q.rows = o.rows;
            q.cols = o.cols;
            q.B = B;
            q.root = o.args.root;
            q.root_y = o.args.root_y;
            q.tr = o.profile.t_r;
            const kf::AutoChoice c = kf::choose(q);
            if (c.cycles == kf::cost::kCostInvalid) {
                std::printf("# error at B = %u: auto found no pattern it can cost for %s on %u x %u\n", B, kccl::coll::op_name(o.coll), o.rows, o.cols);
                status = 1;
                continue;
            }
            a = c.args;
        }
        const uint64_t model = kf::cost::t_pattern(a, o.rows, o.cols, B, o.profile.t_r);
        const std::string name = describe(a) + (o.automatic ? " (auto)" : "");
        try {
            const fh::PatternSpec spec = ef::spec_of(a, o.rows, o.cols, B, o.type, o.op);
            std::vector<double> walls;
            ef::PatternRun r;
            double total = 0;
            for (uint32_t k = 0; k < o.iters; ++k) {
                const auto t0 = std::chrono::steady_clock::now();
                r = ef::run_pattern(spec, o.profile, 1 + k);
                const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (k == 0) total = t;
                walls.push_back(r.wall_seconds);
                if (r.wrong) break;
            }
            std::sort(walls.begin(), walls.end());
            char model_s[24] = "-";
            if (model != kf::cost::kCostInvalid) std::snprintf(model_s, sizeof model_s, "%llu", (unsigned long long)model);
            std::printf("%12llu %9u %7s %5s %10llu %10s %9.3f %9.3f %7llu  %s\n", (unsigned long long)B * 4, B, o.type_name.c_str(), o.op_name.c_str(),
                        (unsigned long long)r.cycles, model_s, walls[walls.size() / 2], total, (unsigned long long)r.wrong, name.c_str());
            if (r.wrong) status = 1;
        } catch (const std::exception& e) {
            std::printf("%12llu %9u %7s %5s %10s %10s %9s %9s %7s  %s\n# error: %s\n", (unsigned long long)B * 4, B, o.type_name.c_str(), o.op_name.c_str(), "-", "-", "-",
                        "-", "-", name.c_str(), e.what());
            status = 1;
        }
        std::fflush(stdout);
    }
    return status;
}

}  // namespace

bool wafer_requested(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--grid") == 0) return true;
    return false;
}

std::string wafer_patterns() {
    char list[512];
    kccl::wafer::pattern_list(list, sizeof list, ' ');
    return list;
}

int wafer_main(int argc, char** argv) {
    return guarded_main(kProg, "--help", [&] {
        bool help = false;
        WaferOptions o = parse(argc, argv, help);
        if (help) {
            print_usage();
            return 0;
        }
        const std::vector<uint32_t> sizes = plan(o);
        return run(o, sizes);
    });
}

}  // namespace kccl::coll_perf

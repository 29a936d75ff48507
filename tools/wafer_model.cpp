// wafer_model — cycles of the Cerebras WSE reduce/allreduce thesis's patterns, by its cost model
// (include/wafer/cost.hpp) or by the per-wavelet reference simulator of the model
// (include/wafer/host/model_patterns.hpp), one request per input line.
//
//   wafer_model [--source model|sim] [--tr N] < requests
//   wafer_model --help
//
// REQUEST LINE (key=value, space separated; '#' starts a comment; defaults in brackets)
//   pattern=NAME        a pattern name (patterns.hpp), or `auto` (auto.hpp picks)
//   collective=KIND     with pattern=auto: reduce | allreduce | broadcast [reduce]
//   base=A[,B[,C]]      the chain of bases [chain,chain,chain]
//   rows=M cols=N       grid (1D: rows=1, cols=P) [1 x 1]
//   B=n                 elements (32-bit wavelets) [1]
//   root=x root_y=y     root PE (1D index, or column) and row [0 0]
//   s=S g=G             two-phase group size, butterfly group size [0: the defaults]
// ANSWER LINE: `<cycles> <description of the run>`, or `error: <what is wrong>`.
//
// This line protocol is the boundary between the figures script (scripts/wafer_figures.py) and
// whatever produces cycles: another runner (for example the routed-fabric emulation) that reads
// the same lines and answers the same way can be passed to the script with --runner.
#include <wafer/auto.hpp>
#include <wafer/cost.hpp>
#include <wafer/host/model_patterns.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

using namespace kccl::wafer;

namespace {

bool parse_u32(const std::string& v, uint32_t& out) {
    char* end = nullptr;
    const unsigned long x = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x > 0xFFFFFFFFul) return false;
    out = uint32_t(x);
    return true;
}

std::string answer(const std::string& line, bool sim, uint32_t tr) {
    std::istringstream in(line);
    std::string tok;
    PatternArgs a;
    bool is_auto = false;
    kccl::coll::Op coll = kccl::coll::Op::reduce;
    uint32_t rows = 1, cols = 1, B = 1;
    while (in >> tok) {
        const size_t eq = tok.find('=');
        if (eq == std::string::npos) return "error: '" + tok + "' is not key=value";
        const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
        uint32_t* num = k == "rows" ? &rows : k == "cols" ? &cols : k == "B" ? &B : k == "root" ? &a.root
                      : k == "root_y" ? &a.root_y : k == "s" ? &a.s : k == "g" ? &a.g : nullptr;
        if (num != nullptr) {
            if (!parse_u32(v, *num)) return "error: " + k + "='" + v + "' is not a number";
        } else if (k == "pattern") {
            if (v == "auto")
                is_auto = true;
            else if (!pattern_from_name(v.c_str(), a.pattern))
                return "error: unknown pattern '" + v + "'";
        } else if (k == "collective") {
            if (v == "reduce") coll = kccl::coll::Op::reduce;
            else if (v == "allreduce") coll = kccl::coll::Op::all_reduce;
            else if (v == "broadcast") coll = kccl::coll::Op::broadcast;
            else return "error: collective='" + v + "' (allowed: reduce, allreduce, broadcast)";
        } else if (k == "base") {
            std::istringstream bs(v);
            std::string b;
            for (uint32_t i = 0; std::getline(bs, b, ','); ++i) {
                if (i >= kMaxBaseDepth) return "error: more than 3 bases";
                if (!pattern_from_name(b.c_str(), a.base[i])) return "error: unknown base pattern '" + b + "'";
            }
        } else {
            return "error: unknown key '" + k + "'";
        }
    }
    if (is_auto) {
        AutoRequest q;
        q.collective = coll;
        q.rows = rows;
        q.cols = cols;
        q.B = B;
        q.root = a.root;
        q.root_y = a.root_y;
        q.tr = tr;
        const AutoChoice c = choose(q);
        if (c.cycles == cost::kCostInvalid) return "error: auto found nothing it can evaluate for this request";
        a = c.args;
    }
    char desc[160] = {};
    describe(a, desc, sizeof desc);
    const ArgsError e = check_args(a, rows, cols);
    if (e != ArgsError::ok) return std::string("error: ") + args_error_text(e);
    uint64_t t = 0;
    if (sim) {
        try {
            t = host::simulate(a, rows, cols, B, tr);
        } catch (const std::exception& ex) {
            return std::string("error: ") + ex.what();
        }
    } else {
        if (rows > cost::kMaxCostPes || cols > cost::kMaxCostPes)
            t = cost::t_pattern<4096>(a, rows, cols, B, tr);
        else
            t = cost::t_pattern(a, rows, cols, B, tr);
        if (t == cost::kCostInvalid) return "error: the model cannot evaluate this run (butterfly needs P = G^k)";
    }
    return std::to_string(t) + " " + desc;
}

}  // namespace

int main(int argc, char** argv) {
    bool sim = false;
    uint32_t tr = 2;
    for (int i = 1; i < argc; ++i) {
        const std::string f = argv[i];
        if (f == "--help" || f == "-h") {
            std::printf("wafer_model [--source model|sim] [--tr N] < requests\n"
                        "one request per line: pattern=NAME|auto [collective=reduce|allreduce|broadcast]\n"
                        "  [base=A,B,C] [rows=M] [cols=N] [B=n] [root=x] [root_y=y] [s=S] [g=G]\n"
                        "answers: '<cycles> <run>' or 'error: ...'\npatterns:");
            char list[512] = {};
            pattern_list(list, sizeof list, ' ');
            std::printf(" %s\n", list);
            return 0;
        }
        if (f == "--source" && i + 1 < argc) {
            const std::string v = argv[++i];
            if (v == "sim") sim = true;
            else if (v != "model") {
                std::fprintf(stderr, "wafer_model: --source %s (allowed: model, sim)\n", v.c_str());
                return 2;
            }
        } else if (f == "--tr" && i + 1 < argc) {
            if (!parse_u32(argv[++i], tr) || tr < 1) {
                std::fprintf(stderr, "wafer_model: --tr needs a number >= 1\n");
                return 2;
            }
        } else {
            std::fprintf(stderr, "wafer_model: unknown argument '%s' (try --help)\n", f.c_str());
            return 2;
        }
    }
    std::string line;
    while (std::getline(std::cin, line)) {
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        std::cout << answer(line, sim, tr) << '\n' << std::flush;
    }
    return 0;
}

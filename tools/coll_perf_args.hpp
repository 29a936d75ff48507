// tools/coll_perf_args.hpp — what every mode of coll_perf (collectives, --transport fabric, --grid)
// shares to read its command line and to end: one option table (kOptions: each option's value kind,
// range or allowed values, help, and the modes that take it), one parser over it (parse_args) and
// one usage text (print_options). Bad input is a UsageError (exit code 2, a message naming the
// option, the value and what is allowed), anything else an error line (exit code 1); nothing
// escapes as an abort.
#pragma once

#include <collectives/schedule.hpp>
#include <common/host/error.hpp>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace kccl::coll_perf {

/// Bad input: a message naming the option, the value and what is allowed; exit code 2.
struct UsageError : ErrorOf<Errc::usage> {
    using ErrorOf::ErrorOf;
};
[[noreturn]] inline void usage_error(const std::string& msg) { throw UsageError(msg); }

/// The host's memory in bytes: KCCL_COLL_PERF_HOST_MEMORY when set (the tests set it, so a check
/// does not depend on the machine they run on), else the machine's physical memory; 0 if unknown.
inline uint64_t host_memory_bytes() {
    if (const char* env = std::getenv("KCCL_COLL_PERF_HOST_MEMORY")) {
        char* end = nullptr;
        const unsigned long long v = std::strtoull(env, &end, 10);
        if (end == env || *end || v == 0)
            usage_error(std::string("KCCL_COLL_PERF_HOST_MEMORY '") + env + "' is not a positive number of bytes");
        return v;
    }
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

/// Refuses a run whose emulation would need more than three quarters of the host's memory:
/// `need` bytes for `what` (e.g. "all_gather / ring_bidir at size 1024 needs N MiB of host memory
/// for the emulated L1 of 8 ranks"), before anything is allocated.
inline void check_host_memory(uint64_t need, const std::string& what_needs, const std::string& for_what, const std::string& lower) {
    const uint64_t phys = host_memory_bytes();
    if (phys > 0 && need > phys / 4 * 3)
        usage_error(what_needs + " needs " + std::to_string(need >> 20) + " MiB of host memory for " + for_what + "; this host has " +
                    std::to_string(phys >> 20) + " MiB (allowed: at most three quarters of it; " + lower + ")");
}

/// The sizes -b / -e take, and their limit: a rank's buffers are at most 1 GiB each, and a method
/// may use scratch of twice its largest tensor buffer (collectives/schedule.hpp scratch_chunks), so
/// 512 MiB is the largest size every op can plan (broadcast and reduce, whose scratch grows with the
/// ranks, stop lower: the error names the buffer).
inline constexpr uint64_t kMaxSizeArg = 1ull << 29;
inline constexpr const char* kSizeForms = "N, NK, NM or NG (K = 1024), at most 512M";

inline uint64_t parse_size(const std::string& opt, const std::string& v) {
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])))
        usage_error(opt + " '" + v + "' is not a size (allowed: " + kSizeForms + ")");
    char* end = nullptr;
    errno = 0;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    const std::string suf = end;
    unsigned shift = 0;
    if (suf == "K" || suf == "k") shift = 10;
    else if (suf == "M" || suf == "m") shift = 20;
    else if (suf == "G" || suf == "g") shift = 30;
    else if (!suf.empty()) usage_error(opt + " '" + v + "' is not a size (allowed: " + kSizeForms + ")");
    if (errno == ERANGE || x > (kMaxSizeArg >> shift))
        usage_error(opt + " '" + v + "' is too large (allowed: " + kSizeForms + "; a rank's buffers are at most 1 GiB, its scratch up to twice the tensor)");
    return uint64_t(x) << shift;
}

/// A decimal integer in [lo, hi] (no sign, no suffix, no overflow).
inline uint64_t parse_uint(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi) {
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        usage_error(opt + " '" + v + "' is not a non-negative decimal integer (allowed: " + range + ")");
    errno = 0;
    const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
    if (errno == ERANGE || x < lo || x > hi) usage_error(opt + " '" + v + "' is out of range (allowed: " + range + ")");
    return x;
}
inline uint32_t parse_u32(const std::string& opt, const std::string& v, uint32_t lo, uint32_t hi) {
    return uint32_t(parse_uint(opt, v, lo, hi));
}

/// "a,b,c" -> {"a", "b", "c"} (empty fields kept, so a bad list is named, not skipped).
inline std::vector<std::string> split(const std::string& s) {
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

/// The collectives and methods the IPCQ / EDM and chip fabric modes take (--coll, --method).
constexpr coll::Op kOps[] = {coll::Op::all_gather, coll::Op::reduce_scatter, coll::Op::all_reduce, coll::Op::broadcast,
                             coll::Op::reduce,     coll::Op::gather,         coll::Op::scatter,    coll::Op::all_to_all,
                             coll::Op::send_recv};
constexpr coll::Method kMethods[] = {coll::Method::ring_cw, coll::Method::ring_ccw, coll::Method::ring_bidir, coll::Method::ring_meet_middle,
                                     coll::Method::line, coll::Method::broadcast_local_reduce, coll::Method::reduce_broadcast_chain,
                                     coll::Method::reduce_broadcast_tree, coll::Method::binomial_tree, coll::Method::tree,
                                     coll::Method::recursive_doubling, coll::Method::rabenseifner, coll::Method::pairwise,
                                     coll::Method::direct, coll::Method::mesh_2d};

/// The value of `all` whose name(e) is v, else a UsageError listing every name.
template <class E, size_t N, class Name>
E parse_enum(const std::string& opt, const std::string& v, const E (&all)[N], Name name) {
    std::string allowed;
    for (E e : all) {
        if (v == name(e)) return e;
        allowed += (allowed.empty() ? "" : ", ") + std::string(name(e));
    }
    usage_error(opt + " '" + v + "' is not known (allowed: " + allowed + ")");
}

/// coll_perf's modes: the IPCQ / EDM collectives (the default), the chip fabric (--transport
/// fabric) and the wafer's PE fabric (--grid).
enum Mode : unsigned { kColl = 1, kFabric = 2, kWafer = 4 };

/// One option as some modes take it (an option whose range or values differ between modes has a
/// row per mode). number: a decimal integer in [lo, hi]; size: parse_size; choice: one of `choices`
/// (space-separated); text: checked by the mode (lists, shapes, names).
struct OptionSpec {
    const char* name;
    unsigned modes;
    enum Kind { number, size, choice, text } kind;
    uint64_t lo, hi;
    const char* choices;
    const char* meta;
    const char* help;  ///< lines after the first are indented; "{routed}" / "{patterns}" filled in by the usage
};

inline constexpr OptionSpec kOptions[] = {
    // Every mode.
    {"-b", kColl | kFabric | kWafer, OptionSpec::size, 0, 0, nullptr, "MIN",
     "smallest size in bytes: N, NK, NM or NG (K = 1024), at most 512M; default 1K (--grid: bytes per PE,\n"
     "a multiple of 4 that fits a PE's memory; default 4). A rank's buffers are at most 1 GiB each and a\n"
     "method may use scratch of twice its largest tensor buffer, so 512M runs for every op but broadcast\n"
     "and reduce (scratch grows with the ranks; the error names the buffer). Every rank's emulated L1 must\n"
     "fit in host memory (checked before the first run)"},
    {"-e", kColl | kFabric | kWafer, OptionSpec::size, 0, 0, nullptr, "MAX", "largest size, as -b; default 1M (--grid: 4K)"},
    {"-f", kColl | kFabric | kWafer, OptionSpec::number, 2, 1024, nullptr, "FACTOR", "size multiplication factor, default 2 (--grid: 4)"},
    {"-n", kColl | kFabric | kWafer, OptionSpec::number, 1, 1000000, nullptr, "ITERS",
     "timed iterations per size, default 5 (--grid: runs per size, the median reported; default 1)"},
    {"-o", kColl, OptionSpec::text, 0, 0, nullptr, "REDOP",
     "sum mean prod min max square_add logical_and logical_or bit_and bit_or bit_xor"},
    {"-o", kFabric, OptionSpec::choice, 0, 0, "sum", "REDOP", "the reduction"},
    {"-o", kWafer, OptionSpec::choice, 0, 0, "sum max min", "REDOP", "the reduction, default sum"},
    {"-d", kColl, OptionSpec::text, 0, 0, nullptr, "TYPE", "float bfloat16 half int32 uint32 int64 uint64 bool; default float"},
    {"-d", kFabric, OptionSpec::choice, 0, 0, "bfloat16 float", "TYPE", "element type, default bfloat16"},
    {"-d", kWafer, OptionSpec::choice, 0, 0, "float int32 uint32", "TYPE", "element type (one 32-bit wavelet each), default float"},
    {"--coll", kColl | kFabric, OptionSpec::text, 0, 0, nullptr, "OPS",
     "comma list: all_gather reduce_scatter all_reduce broadcast reduce gather scatter all_to_all send_recv"},
    {"--coll", kWafer, OptionSpec::choice, 0, 0, "reduce all_reduce broadcast", "C",
     "what auto chooses for, default all_reduce (a named pattern implies it)"},
    {"--method", kColl, OptionSpec::text, 0, 0, nullptr, "M",
     "auto (default: choose_method() per op, topology, ranks and size, like Graphcore's GCL auto; the row's\n"
     "last column names the method chosen) or one of ring_cw ring_ccw ring_bidir ring_meet_middle line\n"
     "broadcast_local_reduce reduce_broadcast_chain (mesh_2d needs a mesh, which this mode does not build), or,\n"
     "needing a routed link (--topology all_pairs): {routed}.\n"
     "Each op takes some of them; a method an op does not take is an error listing the op's methods"},
    {"--method", kFabric, OptionSpec::text, 0, 0, nullptr, "M",
     "auto (choose_method for a routed link) or any method the op takes: ring_cw ring_ccw ring_bidir\n"
     "ring_meet_middle line broadcast_local_reduce reduce_broadcast_chain reduce_broadcast_tree binomial_tree\n"
     "tree recursive_doubling rabenseifner pairwise direct, mesh_2d (all_gather, all_reduce; 2D fabrics:\n"
     "mesh, t3000, galaxy)"},
    {"--method", kWafer, OptionSpec::text, 0, 0, nullptr, "P",
     "auto (default: the cost model's cheapest pattern and parameters for each size, named in the last\n"
     "column) or a pattern: {patterns}"},
    {"--timing", kColl, OptionSpec::choice, 0, 0, "wormhole wafer", "M",
     "the timed fiber engine with that model; adds modelled time per iteration, modelled algbw / busbw and\n"
     "(wormhole) busbw as a share of 12.5 GB/s"},
    {"--timing", kFabric, OptionSpec::choice, 0, 0, "wormhole", "M", "the timed fiber engine with the Wormhole model"},
    {"--timing", kWafer, OptionSpec::choice, 0, 0, "wafer", "M", "may be given and is implied: the patterns run on the wafer model"},
    {"-w", kColl | kFabric, OptionSpec::number, 0, 1000000, nullptr, "WARMUP", "warmup iterations, default 1"},
    {"-c", kColl | kFabric, OptionSpec::number, 0, 1, nullptr, "0|1", "check results (#wrong), default 1"},
    {"--message", kColl | kFabric, OptionSpec::number, 16, 1 << 20, nullptr, "B",
     "packet / slot bytes, a multiple of 16; default 16384 (fabric: payload of one fabric packet, default\n"
     "6144, tt-metal's benchmark)"},
    // The IPCQ / EDM collectives.
    {"--transport", kColl, OptionSpec::choice, 0, 0, "edm ipcq fabric", "T",
     "edm (chips in a ring, default) or ipcq (PEs of one chip); or fabric: the chip fabric mode"},
    {"--lanes", kColl, OptionSpec::choice, 0, 0, "serial interleaved", "L",
     "serial (default: a method's lanes one after the other) or interleaved (piece by piece,\n"
     "execute_any_interleaved; ring_bidir has 2 lanes)"},
    {"--topology", kColl, OptionSpec::choice, 0, 0, "ring line all_pairs t3000", "T",
     "default ring; all_pairs: every rank linked to every other (IPCQ queue pair / EDM link per pair, at\n"
     "most 9 ranks; a routed link, runs the multi-hop methods); t3000: EDM, 8 ranks"},
    {"--ranks", kColl, OptionSpec::number, 1, 64, nullptr, "N", "ranks (ipcq: at most 16), default 8"},
    {"--slots", kColl, OptionSpec::number, 2, 1024, nullptr, "N", "slots per queue, default 4"},
    {"--repeat", kColl, OptionSpec::number, 1, 100, nullptr, "R", "runs per size, median time reported, default 1"},
    {"--memcpy", kColl, OptionSpec::text, 0, 0, nullptr, "SIZES", "also print memcpy GB/s for these sizes (median over the repeats)"},
    {"--adversarial", kColl, OptionSpec::number, 0, ~0ull, nullptr, "SEED", "adversarial deliveries and dirty L1"},
    {"--engine", kColl, OptionSpec::choice, 0, 0, "fibers threads", "E",
     "fibers (default: every core a fiber on one host thread) or threads (a host thread per core)"},
    {"--clock", kColl, OptionSpec::choice, 0, 0, "wall cpu", "C",
     "wall (default) or cpu: host time and the memcpy baseline in CPU time of the host thread (fiber\n"
     "engine only; on a shared host, time taken by other processes is not counted)"},
    {"--trace", kColl, OptionSpec::text, 0, 0, nullptr, "FILE",
     "fiber engine: write the Perfetto trace (https://ui.perfetto.dev) of the first row's first run to FILE\n"
     "(modelled time with --timing, scheduling steps otherwise)"},
    // The chip fabric (--transport fabric).
    {"--transport", kFabric, OptionSpec::choice, 0, 0, "fabric", "T", "selects this mode"},
    {"--topology", kFabric, OptionSpec::choice, 0, 0, "ring line mesh t3000 galaxy", "T",
     "ring, line (--ranks N chips, 1D fabric), mesh (--mesh RxC, 2D fabric), t3000 (8 chips), galaxy\n"
     "(32 chips); default ring"},
    {"--ranks", kFabric, OptionSpec::number, 2, 64, nullptr, "N", "ring / line: chips, default 8"},
    {"--mesh", kFabric, OptionSpec::text, 0, 0, nullptr, "RxC", "mesh: rows x columns, each 1..8, at least 2 chips"},
    {"--fabric", kFabric, OptionSpec::choice, 0, 0, "1d 2d", "K",
     "ring/line are 1d; mesh 2d; t3000/galaxy 2d (default) or 1d (a ring through every chip)"},
    {"--slots", kFabric, OptionSpec::number, 2, 64, nullptr, "N", "worker message slots per peer, default 4"},
    {"--router-slots", kFabric, OptionSpec::text, 0, 0, nullptr, "TX,RX",
     "slots of each router sender channel (1..64) and of its receiver channel (2..64); default 8,16 on a\n"
     "1D fabric (tt-metal's 1D router), 4,8 on 2D (5 sender channels must fit the Ethernet core's L1)"},
    {"--structure", kFabric, OptionSpec::choice, 0, 0, "generic ttm ttm_one_core ttm_executor", "S",
     "generic (default: the collectives executor over the fabric link) or ttm, tt-metal's op structure on a\n"
     "line or ring: DRAM tensors, packets written into the destination tensor; all_gather relayed hop by hop\n"
     "by tt-metal's worker cores per direction behind a mux, all_to_all as all_to_all_async_generic schedules\n"
     "it (one core, or 3 workers per direction behind the mux; include/fabric/ops/all_to_all.hpp); reduce_scatter /\n"
     "all_reduce (bfloat16) by partial sums passed chip to chip by tt-metal's workers per direction (2..8 by\n"
     "the size, each its share of every slice) behind the mux, summed on the Tensix compute engine\n"
     "(ops/reduce_scatter.hpp). ttm_one_core: all_gather (multicast streams) and all_to_all (destinations in\n"
     "turns) with the fabric worker doing everything; ttm_executor: reduce_scatter / all_reduce on the\n"
     "collectives executor, the combine on the compute engine (unpack, FPU add, pack)"},
    {"--mux-slots", kFabric, OptionSpec::number, 1, 8, nullptr, "N",
     "--structure ttm: packet slots per mux channel; default 1 (tt-metal's fabric mux default)"},
    {"--rs-workers", kFabric, OptionSpec::number, 1, 8, nullptr, "N",
     "--structure ttm, reduce_scatter / all_reduce: workers per direction; default tt-metal's rule as it runs\n"
     "(default_workers: 8 at every size above a few bytes; the ring's one-shot sizes 1)"},
    // The wafer's PE fabric (--grid).
    {"--grid", kWafer, OptionSpec::text, 0, 0, nullptr, "RxC",
     "R rows by C columns of PEs, each 1..1024 (1xC: a row, the 1D patterns). Selects this mode"},
    {"--base", kWafer, OptionSpec::text, 0, 0, nullptr, "LIST",
     "the pattern's chain of bases, outermost first, e.g. allreduce_naive,jump,two_phase for allreduce_2d\n"
     "(default: chain; allreduce_2d: allreduce_naive,chain)"},
    {"--root", kWafer, OptionSpec::text, 0, 0, nullptr, "X[,Y]", "root column X (the PE in a row) and row Y, default 0,0"},
    {"--S", kWafer, OptionSpec::number, 1, 1024, nullptr, "N", "two_phase's group size (the pattern column shows S and G as chosen; no S:\n"
     "ceil(sqrt(n)) on each line of n PEs)"},
    {"--G", kWafer, OptionSpec::number, 2, 1024, nullptr, "N", "butterfly's group size"},
    {"--profile", kWafer, OptionSpec::choice, 0, 0, "wse2 wse3", "P", "the wafer generation's profile, default wse2"},
};

/// The mode's name in messages ("" for the collectives, the default mode).
inline std::string mode_suffix(Mode m) { return m == kFabric ? " with --transport fabric" : m == kWafer ? " with --grid" : ""; }

/// `choices` ("a b c") as "a, b, c".
inline std::string comma_list(std::string_view choices) {
    std::string s(choices);
    for (size_t at = 0; (at = s.find(' ', at)) != std::string::npos; at += 2) s.replace(at, 1, ", ");
    return s;
}

/// Reads argv for `mode`: each option the table gives `mode`, its value checked as the row says, goes
/// to set(row, value, number) in order (number: the value of a number or size row). Returns false at
/// -h / --help. Throws UsageError for an option no mode takes, an option of another mode, a missing
/// value, or a value out of range or not allowed.
template <class Set>
bool parse_args(int argc, char** argv, Mode mode, Set set) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") return false;
        const OptionSpec* row = nullptr;
        bool known = false;
        for (const OptionSpec& r : kOptions)
            if (a == r.name) {
                known = true;
                if (r.modes & mode) row = &r;
            }
        if (!known) usage_error("unknown option '" + a + "'" + mode_suffix(mode));
        if (!row) {
            std::string takes = " ";
            for (const OptionSpec& r : kOptions)
                if ((r.modes & mode) && takes.find(std::string(" ") + r.name + " ") == std::string::npos) takes += std::string(r.name) + " ";
            usage_error("option '" + a + "' is not used" + (mode == kColl ? " with --transport edm or ipcq" : mode_suffix(mode)) +
                        " (it takes:" + takes.substr(0, takes.size() - 1) + ")");
        }
        if (i + 1 >= argc) usage_error(a + " needs a value");
        const std::string v = argv[++i];
        uint64_t x = 0;
        if (row->kind == OptionSpec::number) x = parse_uint(a, v, row->lo, row->hi);
        else if (row->kind == OptionSpec::size) x = parse_size(a, v);
        else if (row->kind == OptionSpec::choice && (" " + std::string(row->choices) + " ").find(" " + v + " ") == std::string::npos)
            usage_error(a + " '" + v + "' is not known" + mode_suffix(mode) + " (allowed: " + comma_list(row->choices) + ")");
        set(std::string_view(row->name), v, x);
    }
    return true;
}

/// The usage text's option list: every row, its modes and its range or values; `fill` gives the
/// text for a "{key}" in a help line.
template <class Fill>
void print_options(Fill fill) {
    for (const OptionSpec& r : kOptions) {
        std::string help = r.help;
        for (size_t at; (at = help.find('{')) != std::string::npos;) {
            const size_t end = help.find('}', at);
            help.replace(at, end - at + 1, fill(help.substr(at + 1, end - at - 1)));
        }
        if (r.kind == OptionSpec::number) help += "; " + std::to_string(r.lo) + ".." + std::to_string(r.hi);
        if (r.kind == OptionSpec::choice) help += "; one of: " + comma_list(r.choices);
        std::string modes;
        if (r.modes & kColl) modes += "edm/ipcq";
        if (r.modes & kFabric) modes += std::string(modes.empty() ? "" : ", ") + "fabric";
        if (r.modes & kWafer) modes += std::string(modes.empty() ? "" : ", ") + "grid";
        for (size_t at = 0; (at = help.find('\n', at)) != std::string::npos; at += 19) help.replace(at, 1, "\n                  ");
        std::printf("  %-15s %s [%s]\n", (std::string(r.name) + " " + r.meta).c_str(), help.c_str(), modes.c_str());
    }
}

/// The one usage text of every mode (tools/coll_perf.cpp).
void print_usage();

/// Runs a mode's whole main: its exit code, or 2 with "PROG: message (see SEE)" for bad input, or
/// 1 with "PROG: error: ..." for anything else thrown.
template <class Body>
int guarded_main(const char* prog, const char* see, Body body) {
    try {
        return body();
    } catch (const UsageError& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: %s (see %s)\n", prog, e.what(), see);
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
        return 1;
    } catch (...) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: error: unknown exception\n", prog);
        return 1;
    }
}

}  // namespace kccl::coll_perf

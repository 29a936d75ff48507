// tools/coll_perf_args.hpp — what every mode of coll_perf (collectives, --transport fabric, --grid)
// shares to read its command line and to end: bad input is a UsageError (exit code 2, a message
// naming the option, the value and what is allowed), anything else an error line (exit code 1);
// nothing escapes as an abort.
#pragma once

#include <common/host/error.hpp>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <unistd.h>

namespace kccl::coll_perf {

/// Bad input: a message naming the option, the value and what is allowed; exit code 2.
struct UsageError : ErrorOf<Errc::usage> {
    using ErrorOf::ErrorOf;
};
[[noreturn]] inline void usage_error(const std::string& msg) { throw UsageError(msg); }

/// The message for an option given last with no value after it: "needs a value" only for an option
/// of `known` (a mode's options that take a value); anything else is an unknown option.
inline std::string missing_value(const std::string& opt, const std::vector<const char*>& known, const std::string& unknown_hint) {
    for (const char* k : known)
        if (opt == k) return opt + " needs a value";
    return "unknown option '" + opt + "'" + unknown_hint;
}

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

// kccl/wafer/patterns.hpp — the reduce, allreduce and broadcast patterns of the Cerebras WSE
// reduce/allreduce thesis, named once.
//
// Contract
//   * ONE table, `KCCL_FABRIC_PATTERN_TABLE`, lists every pattern with its dimension (1D row of P
//     PEs or 2D M x N grid), its collective (reduce, allreduce, broadcast), the parameters it takes
//     (root, group size S, butterfly group G, base pattern), what kind of base it needs, and the
//     thesis section it comes from. The enum `Pattern`, `kPatternCount`, `pattern_name`,
//     `pattern_info` and `pattern_from_name` are all generated from that table, so a pattern is
//     added by adding one row.
//   * Names are the snake_case spellings users type (`--method two_phase`); lookups are exact and
//     case-sensitive. `pattern_from_name` returns false for an unknown name and leaves its output
//     untouched; `pattern_list` gives the names for --help.
//   * `PatternArgs` is the full description of one run: the pattern, its chain of bases (where it
//     takes one: allreduce_2d over allreduce_naive over jump over two_phase is the deepest),
//     root, S and G. `check_args` says what is wrong with a description (an `ArgsError` with
//     `args_error_text`), without running anything; the cost model (cost.hpp), "auto" (auto.hpp)
//     and the fabric's runners take the same struct.
//   * Reduce patterns of the thesis's chapter 5 (scalar, chain, tree, two_phase, optimal) reduce
//     to the leftmost PE (root 0); left_right, ring and jump reduce to any root (chapter 6).
//   * Device-safe: C++17, freestanding, no heap, constexpr throughout.
#pragma once

#include <collectives/schedule.hpp>
#include <stdint.h>

namespace kccl::wafer {

/// 1D: a row of P PEs. 2D: an M x N grid (the thesis's p_{i,j}, i the row).
enum class Dim : uint8_t { one_d, two_d };
namespace detail {  // the table's collective column as the library's coll::Op
inline constexpr coll::Op reduce_op = coll::Op::reduce, allreduce_op = coll::Op::all_reduce, broadcast_op = coll::Op::broadcast;
}
/// What a pattern's base must be (none: it takes no base).
enum class BaseKind : uint8_t {
    none,
    leftmost_reduce,  ///< a 1D reduce to PE 0 that takes no root and no base (chapter 5 patterns)
    any_reduce,       ///< any 1D reduce pattern (a chapter 5 pattern, ring, left_right, jump)
    allreduce_1d,     ///< any 1D allreduce pattern
};

/// Parameters a pattern takes (bit set).
enum ParamBits : uint8_t {
    param_none = 0,
    param_root = 1u << 0,  ///< reduces / broadcasts to (from) a chosen PE
    param_s = 1u << 1,     ///< group size S (two-phase)
    param_g = 1u << 2,     ///< group size G (butterfly)
    param_base = 1u << 3,  ///< a base pattern (left-right, jump, 2D, naive allreduce)
};

// The table. Columns: name, dimension, collective, parameters, base kind, thesis section, summary.
// clang-format off
#define KCCL_FABRIC_PATTERN_TABLE(X)                                                                \
    X(scalar,          one_d, reduce,    param_none,              none,         "5.1",            \
      "every PE sends to PE 0, which adds one wavelet per cycle")                                   \
    X(chain,           one_d, reduce,    param_none,              none,         "5.2",            \
      "each PE adds its vector into the stream from its east neighbour and forwards it west")      \
    X(tree,            one_d, reduce,    param_none,              none,         "5.3",            \
      "binary tree: every round, every other remaining PE sends west and retires")                 \
    X(two_phase,       one_d, reduce,    param_s,                 none,         "5.4",            \
      "chain within groups of S PEs (assigned from the east end), then chain over group leaders")  \
    X(optimal,         one_d, reduce,    param_none,              none,         "5.5",            \
      "the optimal pre-order reduction tree of the model (recursion of Lemma 5.9)")                \
    X(left_right,      one_d, reduce,    param_root | param_base, leftmost_reduce, "6.1",            \
      "base pattern reduces each side of the root towards it; the root adds both")                 \
    X(ring,            one_d, reduce,    param_root,              none,         "6.2",            \
      "chain over the PEs reordered into a ring (even PEs east, odd PEs west), entered at the root")\
    X(jump,            one_d, reduce,    param_root | param_base, leftmost_reduce, "6.3",            \
      "base pattern reduces all but the root to the nearer end, which forwards to the root")       \
    X(reduce_2d,       two_d, reduce,    param_root | param_base, any_reduce,   "6.4",            \
      "base pattern down every column to the root's row, then along that row to the root")        \
    X(bcast_1d,        one_d, broadcast, param_root,              none,         "4.1",            \
      "the root sends once; every router multicasts to its processor and onwards")                 \
    X(bcast_2d,        two_d, broadcast, param_root,              none,         "4.2",            \
      "multicast along the root's row, every PE of that row multicasts along its column")          \
    X(allreduce_naive, one_d, allreduce, param_root | param_base, any_reduce,   "7.1",            \
      "base reduce to the root, then 1D broadcast from the root")                                  \
    X(allreduce_ring,  one_d, allreduce, param_none,              none,         "7.2",            \
      "ring reduce-scatter then allgather in segments of B/P over the reordered ring")             \
    X(butterfly,       one_d, allreduce, param_g,                 none,         "7.3",            \
      "log_G(P) rounds; each round a ring allreduce inside groups of G PEs at growing distance")   \
    X(allreduce_2d,    two_d, allreduce, param_root | param_base, allreduce_1d, "7.4",            \
      "1D allreduce down every column, then along every row (root: the naive base's root)")
// clang-format on

enum class Pattern : uint8_t {
#define KCCL_FABRIC_PATTERN_ENUM(name, dim, coll, params, base, section, summary) name,
    KCCL_FABRIC_PATTERN_TABLE(KCCL_FABRIC_PATTERN_ENUM)
#undef KCCL_FABRIC_PATTERN_ENUM
};

/// One row of the table.
struct PatternInfo {
    Pattern pattern;
    const char* name;
    Dim dim;
    coll::Op collective;  ///< what it computes: reduce, all_reduce or broadcast
    uint8_t params;  ///< ParamBits
    BaseKind base;
    const char* section;  ///< section of the thesis the pattern and its cost come from
    const char* summary;

    constexpr bool takes(ParamBits p) const noexcept { return (params & p) != 0; }
};

inline constexpr PatternInfo kPatternTable[] = {
#define KCCL_FABRIC_PATTERN_ROW(name, dim, coll, params, base, section, summary) \
    PatternInfo{Pattern::name, #name, Dim::dim, detail::coll##_op, uint8_t(params), BaseKind::base, section, summary},
    KCCL_FABRIC_PATTERN_TABLE(KCCL_FABRIC_PATTERN_ROW)
#undef KCCL_FABRIC_PATTERN_ROW
};

inline constexpr uint32_t kPatternCount = uint32_t(sizeof(kPatternTable) / sizeof(kPatternTable[0]));

namespace detail {
constexpr bool table_in_enum_order() noexcept {
    for (uint32_t i = 0; i < kPatternCount; ++i)
        if (uint32_t(kPatternTable[i].pattern) != i) return false;
    return true;
}
constexpr bool str_eq(const char* a, const char* b) noexcept {
    if (a == nullptr || b == nullptr) return false;
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}
}  // namespace detail

static_assert(detail::table_in_enum_order(),
              "kPatternTable must list the patterns in enum order; it is generated from one table, so "
              "this only fails if the generator macros were edited.");

constexpr const PatternInfo& pattern_info(Pattern p) noexcept {
    return kPatternTable[uint32_t(p) < kPatternCount ? uint32_t(p) : 0u];
}
constexpr const char* pattern_name(Pattern p) noexcept {
    return uint32_t(p) < kPatternCount ? kPatternTable[uint32_t(p)].name : "unknown_pattern";
}
/// Exact, case-sensitive name lookup. Returns false (and leaves `out` alone) for an unknown name.
constexpr bool pattern_from_name(const char* name, Pattern& out) noexcept {
    for (uint32_t i = 0; i < kPatternCount; ++i)
        if (detail::str_eq(name, kPatternTable[i].name)) {
            out = kPatternTable[i].pattern;
            return true;
        }
    return false;
}

/// Can `base` serve as the base of `p`? (False if `p` takes no base.)
constexpr bool valid_base(Pattern p, Pattern base) noexcept {
    if (uint32_t(p) >= kPatternCount || uint32_t(base) >= kPatternCount) return false;
    const PatternInfo& pi = pattern_info(p);
    const PatternInfo& bi = pattern_info(base);
    if (bi.dim != Dim::one_d) return false;
    switch (pi.base) {
        case BaseKind::none: return false;
        case BaseKind::leftmost_reduce:
            return bi.collective == coll::Op::reduce && bi.base == BaseKind::none && !bi.takes(param_root);
        case BaseKind::any_reduce: return bi.collective == coll::Op::reduce;
        case BaseKind::allreduce_1d: return bi.collective == coll::Op::all_reduce;
    }
    return false;
}

/// Bases nest at most this deep: allreduce_2d over allreduce_naive over jump over two_phase.
inline constexpr uint32_t kMaxBaseDepth = 3;

/// One run of a pattern. Fields a pattern does not take are ignored by the runners, and
/// `check_args` rejects a non-default value in them, so a misplaced flag is not silently dropped.
struct PatternArgs {
    Pattern pattern = Pattern::chain;
    /// base[0] is the pattern's base (if it takes one), base[1] the base's base, and so on; only
    /// as many entries as the chain needs are read.
    Pattern base[kMaxBaseDepth] = {Pattern::chain, Pattern::chain, Pattern::chain};
    uint32_t root = 0;    ///< 1D: root PE index; 2D: root column (x)
    uint32_t root_y = 0;  ///< 2D: root row (y)
    uint32_t s = 0;       ///< two-phase group size S (0: the thesis's default ceil(sqrt(P)))
    uint32_t g = 0;       ///< butterfly group size G (0: 3, the thesis's choice)
};

/// The patterns a run uses, outermost first: out[0] = a.pattern, out[1] its base, ...
/// Returns how many (1..kMaxBaseDepth + 1); stops at the first pattern that takes no base.
constexpr uint32_t pattern_stack(const PatternArgs& a, Pattern (&out)[kMaxBaseDepth + 1]) noexcept {
    out[0] = a.pattern;
    uint32_t n = 1;
    while (n <= kMaxBaseDepth && uint32_t(out[n - 1]) < kPatternCount &&
           pattern_info(out[n - 1]).takes(param_base)) {
        out[n] = a.base[n - 1];
        ++n;
    }
    return n;
}

enum class ArgsError : uint8_t {
    ok,
    unknown_pattern,
    too_few_pes,       ///< P < 1 (or M, N < 1)
    two_d_needs_grid,  ///< a 1D pattern given more than one row
    base_invalid,      ///< a base is not a pattern its parent can build on
    base_too_deep,     ///< the chain of bases does not end within kMaxBaseDepth
    root_outside,      ///< root >= P (1D) or outside the grid (2D)
    root_not_taken,    ///< a non-zero root given to a pattern that reduces to PE 0
    s_out_of_range,    ///< S not in 1..P
    s_not_taken,
    g_out_of_range,    ///< G < 2
    g_not_taken,
};

constexpr const char* args_error_text(ArgsError e) noexcept {
    switch (e) {
        case ArgsError::ok: return "ok";
        case ArgsError::unknown_pattern: return "unknown pattern (pattern_list gives the names)";
        case ArgsError::too_few_pes: return "the row or grid has no PEs; P (or M and N) must be at least 1";
        case ArgsError::two_d_needs_grid: return "a 1D pattern runs on one row (M = 1); use a 2D pattern on a grid";
        case ArgsError::base_invalid:
            return "the base is not allowed here: left_right and jump take a reduce to PE 0 (scalar, chain, tree, "
                   "two_phase, optimal); reduce_2d and allreduce_naive take any 1D reduce; allreduce_2d takes a "
                   "1D allreduce";
        case ArgsError::base_too_deep: return "the chain of base patterns is deeper than kMaxBaseDepth";
        case ArgsError::root_outside: return "the root lies outside the row or grid; it must be < P (x < N, y < M)";
        case ArgsError::root_not_taken:
            return "this pattern reduces to PE 0 (thesis chapter 5); use left_right, ring or jump for another root";
        case ArgsError::s_out_of_range: return "two-phase group size S must be in 1..P (0 picks ceil(sqrt(P)))";
        case ArgsError::s_not_taken: return "S is a parameter of two_phase only, and two_phase is not in this run";
        case ArgsError::g_out_of_range: return "butterfly group size G must be at least 2 (0 picks 3)";
        case ArgsError::g_not_taken: return "G is a parameter of butterfly only, and butterfly is not in this run";
    }
    return "unknown error";
}

/// Does the run use a pattern that takes parameter `bit`?
constexpr bool args_take(const PatternArgs& a, ParamBits bit) noexcept {
    Pattern st[kMaxBaseDepth + 1] = {};
    const uint32_t n = pattern_stack(a, st);
    for (uint32_t i = 0; i < n; ++i)
        if (uint32_t(st[i]) < kPatternCount && pattern_info(st[i]).takes(bit)) return true;
    return false;
}

/// Check a run description against a grid of `rows` x `cols` PEs (1D: rows == 1, cols == P).
constexpr ArgsError check_args(const PatternArgs& a, uint32_t rows, uint32_t cols) noexcept {
    Pattern st[kMaxBaseDepth + 1] = {};
    const uint32_t n = pattern_stack(a, st);
    for (uint32_t i = 0; i < n; ++i)
        if (uint32_t(st[i]) >= kPatternCount) return ArgsError::unknown_pattern;
    if (pattern_info(st[n - 1]).takes(param_base)) return ArgsError::base_too_deep;
    for (uint32_t i = 0; i + 1 < n; ++i)
        if (!valid_base(st[i], st[i + 1])) return ArgsError::base_invalid;
    const PatternInfo& pi = pattern_info(a.pattern);
    if (rows < 1 || cols < 1) return ArgsError::too_few_pes;
    if (pi.dim == Dim::one_d && rows != 1) return ArgsError::two_d_needs_grid;
    if (a.root >= cols || a.root_y >= rows) return ArgsError::root_outside;
    if ((a.root != 0 || a.root_y != 0) && !pi.takes(param_root)) return ArgsError::root_not_taken;
    if (a.s != 0) {
        if (!args_take(a, param_s)) return ArgsError::s_not_taken;
        if (a.s > (rows > cols ? rows : cols)) return ArgsError::s_out_of_range;
    }
    if (a.g != 0) {
        if (!args_take(a, param_g)) return ArgsError::g_not_taken;
        if (a.g < 2) return ArgsError::g_out_of_range;
    }
    return ArgsError::ok;
}

/// Writes the pattern names, separated by `sep`, into `out` (at most `cap` bytes, always
/// NUL-terminated when cap > 0). Returns the length the full list needs (without the NUL).
constexpr uint32_t pattern_list(char* out, uint32_t cap, char sep = ' ') noexcept {
    uint32_t n = 0;
    for (uint32_t i = 0; i < kPatternCount; ++i) {
        if (i != 0) {
            if (n + 1 < cap) out[n] = sep;
            ++n;
        }
        for (const char* c = kPatternTable[i].name; *c != '\0'; ++c) {
            if (n + 1 < cap) out[n] = *c;
            ++n;
        }
    }
    if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

}  // namespace kccl::wafer

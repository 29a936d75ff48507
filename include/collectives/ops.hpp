// kccl/collectives/ops.hpp — reduction operators: what a collective does when two chunks meet.
//
// Contract
//   * `Reducer<T, Op>` is the only thing primitives and the executor know about an operator:
//       combine(dst, a, b, n)   dst[i] = a[i] op b[i]; dst may equal a or b (not overlap them
//                               partly). `a` is the operand that
//                               comes first in the method's fixed reduction order, so every rank
//                               (and every run) evaluates the same expression and gets the same bits.
//       prepare(dst, src, n)    applied once to each rank's own contribution before it enters the
//                               reduction (square for square_add, a copy otherwise); dst may be src.
//       finalize(dst, n, ranks) applied once to a fully reduced element (divide by the number of
//                               ranks for mean, nothing otherwise).
//     `has_prepare` / `has_finalize` say whether those do anything beyond a copy / nothing.
//     `apply(a, b)` is the scalar form of combine.
//   * Validity (GCL's rules, checked at compile time with a full-sentence static_assert):
//       mean                       floating types only (float, bfloat16, half);
//       logical_and, logical_or    bool only;
//       bit_and, bit_or, bit_xor   integer types only (int32, uint32, int64, uint64);
//       sum, prod, square_add      floating and integer types; not bool (GCL has no bool ADD/MUL;
//                                  use logical_or / logical_and);
//       min, max                   floating and integer types; not bool (use logical_and / _or).
//     GCL lists no UNSIGNED_INT for ADD/MUL but does for MIN/MAX/SQUARE_ADD; we allow uint32 for
//     all arithmetic operators (its wrap-around is well defined).
//   * Arithmetic: integers wrap modulo 2^width (signed ones are computed in the unsigned type, so
//     overflow is defined, two's complement). float uses float arithmetic. bfloat16 and half are
//     combined in float: both operands are converted exactly, combined in float, and rounded once
//     (nearest even) back to the type; prepare (square) and finalize (divide) also round once. The
//     wire and the buffers carry T, so a reduction over p ranks rounds p-1 times, in the method's
//     fixed order.
//   * NaN: a NaN produced by sum/mean/prod/square_add (or finalize) is the canonical quiet NaN
//     (float 0x7FC00000, bfloat16 0x7FC0, half 0x7E00), so swapping operands never changes bits.
//     min/max on floating types: a NaN wins (of two NaNs the one whose bits, as float, are the
//     smaller unsigned number), bits unchanged; -0 is smaller than +0; for low-precision types the
//     selected operand's bits are returned unchanged. So every combine is commutative bit for bit.
//   * `OnComputeEngine<Reducer<T, Op>>`: the same operator (same bits, same order), combined by
//     the Tensix compute engine (kccl::hal::compute_reduce: unpackers, the FPU's element-wise
//     add, the packer) instead of the RISC-V's loads and stores, as tt-metal's CCL ops reduce.
//     Primitives and the executor dispatch on `on_compute_engine`; the backend must offer the
//     call (the emulation does; the tt-metal shim refuses at compile time, see the contract).
//   * Device-safe: C++17, freestanding, no heap; loops only.
#pragma once

#include <collectives/types.hpp>
#include <stdint.h>
#include <type_traits>

namespace kccl::coll {

enum class RedOp : uint8_t { sum, mean, prod, min, max, square_add, logical_and, logical_or,
                             bit_and, bit_or, bit_xor };

constexpr const char* redop_name(RedOp op) noexcept {
    switch (op) {
        case RedOp::sum: return "sum";
        case RedOp::mean: return "mean";
        case RedOp::prod: return "prod";
        case RedOp::min: return "min";
        case RedOp::max: return "max";
        case RedOp::square_add: return "square_add";
        case RedOp::logical_and: return "logical_and";
        case RedOp::logical_or: return "logical_or";
        case RedOp::bit_and: return "bit_and";
        case RedOp::bit_or: return "bit_or";
        case RedOp::bit_xor: return "bit_xor";
    }
    return "?";
}

/// True when GCL's validity rules (and ours, see the contract above) allow Op on T.
template <class T, RedOp Op>
constexpr bool is_valid_op_v =
    is_supported_type_v<T> &&
    ((Op == RedOp::mean) ? is_floating_v<T>
     : (Op == RedOp::logical_and || Op == RedOp::logical_or) ? is_bool_v<T>
     : (Op == RedOp::bit_and || Op == RedOp::bit_or || Op == RedOp::bit_xor) ? is_integer_v<T>
     : (is_floating_v<T> || is_integer_v<T>));

/// Run-time form of is_valid_op_v (benchmark flags, test sweeps).
constexpr bool is_valid_op(DataType t, RedOp op) noexcept {
    const bool fl = t == DataType::f32 || t == DataType::bf16 || t == DataType::f16;
    const bool in = t == DataType::i32 || t == DataType::u32 || t == DataType::i64 || t == DataType::u64;
    const bool bo = t == DataType::boolean;
    switch (op) {
        case RedOp::mean: return fl;
        case RedOp::logical_and: case RedOp::logical_or: return bo;
        case RedOp::bit_and: case RedOp::bit_or: case RedOp::bit_xor: return in;
        default: return fl || in;
    }
}

namespace detail {

template <class T> struct unsigned_of { using type = T; };
template <> struct unsigned_of<int32_t> { using type = uint32_t; };
template <> struct unsigned_of<int64_t> { using type = uint64_t; };

/// By the bits, not `x != x`: tt-metal compiles kernels with -ffast-math, which may fold that away.
inline bool is_nan(float x) noexcept { return (float_bits(x) & 0x7FFFFFFFu) > 0x7F800000u; }
inline bool sign_bit(float x) noexcept { return (float_bits(x) >> 31) != 0; }

/// For min/max on floating values: true when the result is the first operand.
template <bool IsMin>
inline bool pick_first(float a, float b) noexcept {
    if (is_nan(a)) return !is_nan(b) || float_bits(a) <= float_bits(b);  // two NaNs: fewer bits wins
    if (is_nan(b)) return false;
    if (a == b) return IsMin ? sign_bit(a) || !sign_bit(b) : !sign_bit(a) || sign_bit(b);
    return IsMin ? (a < b) : (a > b);
}

/// Canonical quiet NaN of T: the one bit pattern every NaN produced by an arithmetic combine gets,
/// so results do not depend on which operand's payload the hardware propagates.
template <class T> inline T canonical_nan() noexcept {
    if constexpr (std::is_same<T, bfloat16>::value) return bfloat16{0x7FC0};
    else if constexpr (std::is_same<T, half>::value) return half{0x7E00};
    else return bits_float(0x7FC00000u);
}

template <class T> inline float widen(T x) noexcept {
    if constexpr (is_low_precision_v<T>) return x.to_float(); else return x;
}
template <class T> inline T narrow(float x) noexcept {
    if (is_nan(x)) return canonical_nan<T>();
    if constexpr (is_low_precision_v<T>) return T::from_float(x); else return x;
}

template <class T, RedOp Op>
inline T apply(T a, T b) noexcept {
    if constexpr (is_floating_v<T>) {
        if constexpr (Op == RedOp::min || Op == RedOp::max) {
            return pick_first<Op == RedOp::min>(widen(a), widen(b)) ? a : b;
        } else if constexpr (Op == RedOp::prod) {
            return narrow<T>(widen(a) * widen(b));
        } else {  // sum, mean, square_add all add
            return narrow<T>(widen(a) + widen(b));
        }
    } else if constexpr (is_integer_v<T>) {
        using U = typename unsigned_of<T>::type;
        if constexpr (Op == RedOp::min) return b < a ? b : a;
        else if constexpr (Op == RedOp::max) return a < b ? b : a;
        else if constexpr (Op == RedOp::prod) return T(U(a) * U(b));
        else if constexpr (Op == RedOp::bit_and) return T(a & b);
        else if constexpr (Op == RedOp::bit_or) return T(a | b);
        else if constexpr (Op == RedOp::bit_xor) return T(a ^ b);
        else return T(U(a) + U(b));  // sum, square_add
    } else {  // bool
        if constexpr (Op == RedOp::logical_and) return a && b;
        else return a || b;
    }
}

// ---- the vector form of combine ------------------------------------------------------------
// On hosts with 16-byte SIMD (x86-64 SSE2, Arm NEON) and GCC / Clang, combine runs float
// add / multiply and every integer operator on 16-byte vectors (GCC vector extensions), four
// (or two) elements at a time, with the same per-element expression as apply(): the same IEEE
// operation, the same canonical NaN, the same wrap-around and the same selections, so the bits
// are identical to the scalar loop (tests/collectives/ops_test.cpp compares them). Why explicit:
// the scalar loop does not vectorise — dst may alias a or b, and -O2's cost model does not
// version a loop for aliasing; the NaN check makes it a branch per element. Elements are loaded
// and stored with memcpy (any alignment). Other targets (the RISC-V device cores, which have no
// vector unit) keep the scalar loop. Define KCCL_COLL_SIMD=0 to force the scalar loop.
#if !defined(KCCL_COLL_SIMD)
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__SSE2__) || defined(__ARM_NEON) || defined(__aarch64__))
#define KCCL_COLL_SIMD 1
#else
#define KCCL_COLL_SIMD 0
#endif
#endif

#if KCCL_COLL_SIMD
namespace simd {
typedef float f32x4 __attribute__((vector_size(16)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef uint64_t u64x2 __attribute__((vector_size(16)));
typedef int64_t i64x2 __attribute__((vector_size(16)));

template <class T> struct vec;
template <> struct vec<float> { using type = f32x4; using bits = u32x4; };
template <> struct vec<uint32_t> { using type = u32x4; using bits = u32x4; };
template <> struct vec<int32_t> { using type = i32x4; using bits = u32x4; };
template <> struct vec<uint64_t> { using type = u64x2; using bits = u64x2; };
template <> struct vec<int64_t> { using type = i64x2; using bits = u64x2; };

/// True when combine<T, Op> has a vector form (float min / max keep the scalar NaN rules, the
/// low-precision types their rounding, bool its byte rule).
template <class T, RedOp Op>
constexpr bool has_vec = (std::is_same<T, float>::value && (Op == RedOp::sum || Op == RedOp::mean ||
                                                            Op == RedOp::square_add || Op == RedOp::prod)) ||
                         (is_integer_v<T> && sizeof(T) >= 4);

/// apply() on a vector: `V` lanes of T, the same expression per lane.
template <class T, RedOp Op, class V = typename vec<T>::type>
__attribute__((always_inline)) inline V vapply(V x, V y) noexcept {
    using B = typename vec<T>::bits;
    if constexpr (std::is_same<T, float>::value) {
        const V r = Op == RedOp::prod ? x * y : x + y;
        B u;
        __builtin_memcpy(&u, &r, sizeof u);
        // is_nan(r) ? canonical NaN : r, lane by lane (narrow<float>)
        const B m = (B)((u & 0x7FFFFFFFu) > 0x7F800000u);
        u = (u & ~m) | (m & 0x7FC00000u);
        V out;
        __builtin_memcpy(&out, &u, sizeof out);
        return out;
    } else {
        const B a = (B)x, b = (B)y;  // wrap-around arithmetic in the unsigned lanes
        if constexpr (Op == RedOp::min) {
            const B m = (B)(y < x);  // b < a ? b : a
            return (V)((b & m) | (a & ~m));
        } else if constexpr (Op == RedOp::max) {
            const B m = (B)(x < y);  // a < b ? b : a
            return (V)((b & m) | (a & ~m));
        } else if constexpr (Op == RedOp::prod) {
            return (V)(a * b);
        } else if constexpr (Op == RedOp::bit_and) {
            return (V)(a & b);
        } else if constexpr (Op == RedOp::bit_or) {
            return (V)(a | b);
        } else if constexpr (Op == RedOp::bit_xor) {
            return (V)(a ^ b);
        } else {  // sum, square_add
            return (V)(a + b);
        }
    }
}

/// dst[i] = apply(a[i], b[i]) for i < n, 16 bytes at a time, the rest element by element.
/// dst may equal a or b (each vector is loaded before it is stored), never overlap them partly.
template <class T, RedOp Op>
inline void combine(T* dst, const T* a, const T* b, uint32_t n) noexcept {
    using V = typename vec<T>::type;
    constexpr uint32_t L = uint32_t(sizeof(V) / sizeof(T));
    uint32_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        V x0, y0, x1, y1;
        __builtin_memcpy(&x0, a + i, sizeof(V));
        __builtin_memcpy(&y0, b + i, sizeof(V));
        __builtin_memcpy(&x1, a + i + L, sizeof(V));
        __builtin_memcpy(&y1, b + i + L, sizeof(V));
        const V r0 = vapply<T, Op>(x0, y0), r1 = vapply<T, Op>(x1, y1);
        __builtin_memcpy(dst + i, &r0, sizeof(V));
        __builtin_memcpy(dst + i + L, &r1, sizeof(V));
    }
    for (; i < n; ++i) dst[i] = apply<T, Op>(a[i], b[i]);
}
}  // namespace simd
#endif

}  // namespace detail

template <class T, RedOp Op>
struct Reducer {
    static_assert(is_supported_type_v<T>,
                  "Collectives reduce only float, bfloat16, half, int32_t, uint32_t, int64_t, uint64_t "
                  "and bool; convert the tensor to one of those types first.");
    static_assert(Op != RedOp::mean || is_floating_v<T>,
                  "The mean operator is defined only on floating types (float, bfloat16, half), as in "
                  "GCL; use sum and divide yourself for integers.");
    static_assert(!(Op == RedOp::logical_and || Op == RedOp::logical_or) || is_bool_v<T>,
                  "The logical_and and logical_or operators are defined only on bool, as in GCL; use "
                  "bit_and or bit_or for integers, or min or max for floating types.");
    static_assert(!(Op == RedOp::bit_and || Op == RedOp::bit_or || Op == RedOp::bit_xor) ||
                      is_integer_v<T>,
                  "The bitwise operators bit_and, bit_or and bit_xor are defined only on integer types "
                  "(int32_t, uint32_t, int64_t, uint64_t); use logical_and or logical_or for bool.");
    static_assert(!is_bool_v<T> || Op == RedOp::logical_and || Op == RedOp::logical_or,
                  "bool supports only logical_and and logical_or (GCL has no bool arithmetic): use "
                  "logical_or instead of sum or max, and logical_and instead of prod or min.");

    using value_type = T;
    static constexpr RedOp op = Op;
    static constexpr bool has_prepare = Op == RedOp::square_add;
    static constexpr bool has_finalize = Op == RedOp::mean;

    static T apply(T a, T b) noexcept { return detail::apply<T, Op>(a, b); }

    static void combine(T* dst, const T* a, const T* b, uint32_t n) noexcept {
        if constexpr (is_bool_v<T>) {
            // L1 is bytes: a bool element is true when its byte is nonzero. Read the bytes, never
            // a bool object, so bytes the caller did not write (dirty L1 in a padded chunk) are
            // not undefined behaviour; the result is always stored as 0 or 1.
            const unsigned char* ua = reinterpret_cast<const unsigned char*>(a);
            const unsigned char* ub = reinterpret_cast<const unsigned char*>(b);
            unsigned char* ud = reinterpret_cast<unsigned char*>(dst);
            for (uint32_t i = 0; i < n; ++i)
                ud[i] = Op == RedOp::logical_and ? (ua[i] != 0 && ub[i] != 0) : (ua[i] != 0 || ub[i] != 0);
        } else {
#if KCCL_COLL_SIMD
            if constexpr (detail::simd::has_vec<T, Op>) {
                detail::simd::combine<T, Op>(dst, a, b, n);
                return;
            }
#endif
            for (uint32_t i = 0; i < n; ++i) dst[i] = detail::apply<T, Op>(a[i], b[i]);
        }
    }

    static void prepare(T* dst, const T* src, uint32_t n) noexcept {
        if constexpr (Op == RedOp::square_add) {
            for (uint32_t i = 0; i < n; ++i) dst[i] = detail::apply<T, RedOp::prod>(src[i], src[i]);
        } else {
            if (dst != src) {
                if constexpr (is_bool_v<T>) {  // bytes, not bool objects (see combine)
                    const unsigned char* us = reinterpret_cast<const unsigned char*>(src);
                    unsigned char* ud = reinterpret_cast<unsigned char*>(dst);
                    for (uint32_t i = 0; i < n; ++i) ud[i] = us[i] != 0;
                } else {
                    for (uint32_t i = 0; i < n; ++i) dst[i] = src[i];
                }
            }
        }
    }

    static void finalize(T* dst, uint32_t n, uint32_t ranks) noexcept {
        if constexpr (Op == RedOp::mean) {
            const float d = float(ranks);
            for (uint32_t i = 0; i < n; ++i) dst[i] = detail::narrow<T>(detail::widen(dst[i]) / d);
        } else {
            (void)dst; (void)n; (void)ranks;
        }
    }
};

/// Red, combined on the Tensix compute engine (kccl::hal::compute_reduce) rather than by the
/// RISC-V: what tt-metal's reduce_scatter and all_reduce do (a compute kernel's add_tiles). The
/// arithmetic, the order and so the bits are Red's; only where the combine runs (and what the
/// timing model charges for it) changes.
template <class Red>
struct OnComputeEngine : Red {
    static constexpr bool on_compute_engine = true;
};

namespace detail {
template <class Red, class = void>
struct on_compute_engine : std::false_type {};
template <class Red>
struct on_compute_engine<Red, std::enable_if_t<Red::on_compute_engine>> : std::true_type {};
}  // namespace detail

/// True when Red combines on the compute engine (OnComputeEngine<...>).
template <class Red>
inline constexpr bool on_compute_engine_v = detail::on_compute_engine<Red>::value;

}  // namespace kccl::coll

// kccl/collectives/types.hpp — the element types collectives reduce and move.
//
// Contract
//   * `bfloat16` and `half` are 2-byte trivially copyable structs holding the IEEE bits
//     (`bits`). They are device-safe: C++17, no heap, no library calls, constexpr-free bit
//     casts through __builtin_memcpy (what tt-metal's RISC-V GCC and host GCC/Clang both lower to
//     a register move).
//   * Conversion from float rounds to nearest, ties to even; overflow gives +-inf; a NaN stays a
//     NaN (quiet, same sign, the payload's top bits kept); half's subnormals are produced and read
//     exactly. Conversion to float is exact (every bfloat16 and half value is a float).
//   * `DataType` names the eight element types at run time (benchmark flags, tables);
//     `dtype_of<T>` maps a type to its enum, `dtype_name` gives the nccl-tests-style name.
//   * Traits: `is_floating_v<T>` (float, bfloat16, half), `is_integer_v<T>` (int32, uint32,
//     int64, uint64; bool is NOT an integer here), `is_low_precision_v<T>` (bfloat16, half: these
//     combine in float, see ops.hpp).
#pragma once

#include <stdint.h>
#include <type_traits>

namespace kccl::coll {

namespace detail {
inline uint32_t float_bits(float f) noexcept {
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}
inline float bits_float(uint32_t u) noexcept {
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}
}  // namespace detail

/// Brain floating point: float's sign and 8-bit exponent, 7 mantissa bits.
struct bfloat16 {
    uint16_t bits;

    /// Round to nearest even; NaN stays NaN (quiet bit set so truncating the payload cannot
    /// turn it into an infinity).
    static bfloat16 from_float(float f) noexcept {
        const uint32_t u = detail::float_bits(f);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bfloat16{uint16_t((u >> 16) | 0x0040u)};
        const uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);  // carries into the exponent
        return bfloat16{uint16_t(rounded >> 16)};                 // (and to inf) as it should
    }
    float to_float() const noexcept { return detail::bits_float(uint32_t(bits) << 16); }
};

/// IEEE 754 binary16: 5-bit exponent (bias 15), 10 mantissa bits, subnormals below 2^-14.
struct half {
    uint16_t bits;

    static half from_float(float f) noexcept {
        const uint32_t u = detail::float_bits(f);
        const uint32_t sign = (u >> 16) & 0x8000u;
        const uint32_t ax = u & 0x7FFFFFFFu;
        if (ax >= 0x7F800000u) {  // inf or NaN
            if (ax == 0x7F800000u) return half{uint16_t(sign | 0x7C00u)};
            return half{uint16_t(sign | 0x7E00u | ((ax >> 13) & 0x3FFu))};
        }
        // 65520 is halfway between 65504 (largest half, odd mantissa) and 2^16: ties go up to inf.
        if (ax >= 0x477FF000u) return half{uint16_t(sign | 0x7C00u)};
        if (ax < 0x38800000u) {  // |f| < 2^-14: a half subnormal (in units of 2^-24) or zero
            const uint32_t e = ax >> 23;
            if (e < 102u) return half{uint16_t(sign)};  // < 2^-25: rounds to zero
            const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;  // value = m * 2^(e-150)
            const uint32_t shift = 126u - e;                   // 14..24
            uint32_t r = m >> shift;
            const uint32_t rem = m & ((1u << shift) - 1u);
            const uint32_t halfway = 1u << (shift - 1u);
            if (rem > halfway || (rem == halfway && (r & 1u))) ++r;  // may become 0x400: 2^-14
            return half{uint16_t(sign | r)};
        }
        uint32_t r = (ax >> 13) - (112u << 10);  // rebias 127 -> 15, keep 10 mantissa bits
        const uint32_t rem = ax & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // carry may bump the exponent
        return half{uint16_t(sign | r)};
    }
    float to_float() const noexcept {
        const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
        uint32_t e = (bits >> 10) & 0x1Fu;
        uint32_t m = bits & 0x3FFu;
        if (e == 0x1Fu) return detail::bits_float(sign | 0x7F800000u | (m << 13));
        if (e == 0) {
            if (m == 0) return detail::bits_float(sign);
            e = 113u;  // normalise the subnormal: value = m * 2^-24
            while (!(m & 0x400u)) { m <<= 1; --e; }
            return detail::bits_float(sign | (e << 23) | ((m & 0x3FFu) << 13));
        }
        return detail::bits_float(sign | ((e + 112u) << 23) | (m << 13));
    }
};

static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable<bfloat16>::value,
              "bfloat16 must be a 2-byte trivially copyable struct so it can travel in packets.");
static_assert(sizeof(half) == 2 && std::is_trivially_copyable<half>::value,
              "half must be a 2-byte trivially copyable struct so it can travel in packets.");

enum class DataType : uint8_t { f32, bf16, f16, i32, u32, i64, u64, boolean };

template <class T> struct dtype_of;
template <> struct dtype_of<float>    { static constexpr DataType value = DataType::f32; };
template <> struct dtype_of<bfloat16> { static constexpr DataType value = DataType::bf16; };
template <> struct dtype_of<half>     { static constexpr DataType value = DataType::f16; };
template <> struct dtype_of<int32_t>  { static constexpr DataType value = DataType::i32; };
template <> struct dtype_of<uint32_t> { static constexpr DataType value = DataType::u32; };
template <> struct dtype_of<int64_t>  { static constexpr DataType value = DataType::i64; };
template <> struct dtype_of<uint64_t> { static constexpr DataType value = DataType::u64; };
template <> struct dtype_of<bool>     { static constexpr DataType value = DataType::boolean; };

/// nccl-tests spells float "float", bfloat16 "bfloat16", half "half", int32 "int32", ...
constexpr const char* dtype_name(DataType t) noexcept {
    switch (t) {
        case DataType::f32: return "float";
        case DataType::bf16: return "bfloat16";
        case DataType::f16: return "half";
        case DataType::i32: return "int32";
        case DataType::u32: return "uint32";
        case DataType::i64: return "int64";
        case DataType::u64: return "uint64";
        case DataType::boolean: return "bool";
    }
    return "?";
}
constexpr uint32_t dtype_size(DataType t) noexcept {
    switch (t) {
        case DataType::f32: case DataType::i32: case DataType::u32: return 4;
        case DataType::bf16: case DataType::f16: return 2;
        case DataType::i64: case DataType::u64: return 8;
        case DataType::boolean: return 1;
    }
    return 0;
}

template <class T> struct is_supported_type : std::false_type {};
template <> struct is_supported_type<float> : std::true_type {};
template <> struct is_supported_type<bfloat16> : std::true_type {};
template <> struct is_supported_type<half> : std::true_type {};
template <> struct is_supported_type<int32_t> : std::true_type {};
template <> struct is_supported_type<uint32_t> : std::true_type {};
template <> struct is_supported_type<int64_t> : std::true_type {};
template <> struct is_supported_type<uint64_t> : std::true_type {};
template <> struct is_supported_type<bool> : std::true_type {};
template <class T> constexpr bool is_supported_type_v = is_supported_type<T>::value;

template <class T> constexpr bool is_low_precision_v =
    std::is_same<T, bfloat16>::value || std::is_same<T, half>::value;
template <class T> constexpr bool is_floating_v = std::is_same<T, float>::value || is_low_precision_v<T>;
template <class T> constexpr bool is_integer_v =
    std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
    std::is_same<T, int64_t>::value || std::is_same<T, uint64_t>::value;
template <class T> constexpr bool is_bool_v = std::is_same<T, bool>::value;

}  // namespace kccl::coll

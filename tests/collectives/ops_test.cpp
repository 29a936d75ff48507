// Element types and reduction operators (include/collectives/types.hpp, ops.hpp) against plain
// independent references:
//   * every bfloat16 / half bit pattern decoded from its fields with ldexp in double;
//   * rounding float -> bfloat16 / half by searching the sorted table of representable values for
//     the nearest (ties to the even bit pattern), not by the bit tricks the library uses;
//   * operators computed in double (or in unsigned 64-bit arithmetic for integers) and rounded
//     with that table: for bfloat16 and half one rounding of the exact result (double rounding
//     through float is innocuous for +, *, / since 24 >= 2p + 2), so the library's "combine in
//     float, round once" must match it bit for bit.
// GCL's worked examples (Graphcore's GCL documentation, section 3.1) are literal vectors. The validity rules are
// compile-fail checks: tests/collectives/compile_fail/ and scripts/compile_fail.sh (ctest
// gate.collectives_compile_fail).
#include <catch2/catch.hpp>

#include <collectives/groups.hpp>
#include <collectives/host/groups.hpp>
#include <collectives/ops.hpp>
#include <collectives/types.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

using namespace kccl::coll;

namespace {

uint32_t fbits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float bitsf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// A 16-bit float format decoded from its fields: exponent bits E, mantissa bits M.
template <int E, int M>
struct Format16 {
    static constexpr int bias = (1 << (E - 1)) - 1;
    static constexpr uint32_t exp_mask = (1u << E) - 1;
    /// Exact value (double) of a bit pattern; NaN for NaNs.
    static double decode(uint16_t b) {
        const bool neg = b >> 15;
        const uint32_t e = (b >> M) & exp_mask;
        const uint32_t m = b & ((1u << M) - 1);
        double v;
        if (e == exp_mask) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
        else if (e == 0) v = std::ldexp(double(m), 1 - bias - M);
        else v = std::ldexp(double(m + (1u << M)), int(e) - bias - M);
        return neg ? -v : v;
    }
    struct Entry { double v; uint16_t bits; };
    /// Non-negative finite values in increasing order, then "infinity" placed at the value the
    /// next binade would start at (so rounding to it follows the same ties-to-even rule).
    static const std::vector<Entry>& table() {
        static const std::vector<Entry> t = [] {
            std::vector<Entry> v;
            for (uint32_t b = 0; b < (exp_mask << M); ++b) v.push_back({decode(uint16_t(b)), uint16_t(b)});
            v.push_back({std::ldexp(1.0, int(exp_mask) - bias), uint16_t(exp_mask << M)});
            return v;
        }();
        return t;
    }
    /// Nearest representable value to x (not NaN), ties to the even bit pattern.
    static uint16_t round(double x) {
        if (std::isnan(x)) return uint16_t((exp_mask << M) | (1u << (M - 1)));  // a quiet NaN
        const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
        const double a = std::fabs(x);
        const auto& t = table();
        if (a >= t.back().v) return sign | t.back().bits;
        auto it = std::lower_bound(t.begin(), t.end(), a, [](const Entry& e, double y) { return e.v < y; });
        if (it->v == a) return sign | it->bits;
        const Entry hi = *it, lo = *(it - 1);
        const double dl = a - lo.v, dh = hi.v - a;
        if (dl < dh) return sign | lo.bits;
        if (dh < dl) return sign | hi.bits;
        return sign | ((lo.bits & 1) ? hi.bits : lo.bits);
    }
};
using BF = Format16<8, 7>;
using HF = Format16<5, 10>;

template <class T> using Fmt = std::conditional_t<std::is_same_v<T, bfloat16>, BF, HF>;

/// Floats near every rounding boundary of format F: each representable value, each midpoint
/// between neighbours, and the floats one ulp either side of both; plus specials and randoms.
template <class F>
std::vector<float> boundary_floats() {
    std::vector<float> out;
    const auto& t = F::table();
    for (size_t i = 0; i + 1 < t.size(); ++i) {
        const double v = t[i].v, mid = (t[i].v + t[i + 1].v) / 2;
        for (double d : {v, mid}) {
            const float f = float(d);
            if (double(f) != d) continue;  // midpoints of tiny half subnormals are floats; all are
            for (float g : {f, std::nextafter(f, 0.f), std::nextafter(f, INFINITY)})
                if (std::isfinite(g)) { out.push_back(g); out.push_back(-g); }
        }
    }
    uint64_t s = 42;
    for (int i = 0; i < 200000; ++i) {
        const float f = bitsf(uint32_t(splitmix(s)));
        if (!std::isnan(f)) out.push_back(f);
    }
    for (float f : {0.f, -0.f, INFINITY, -INFINITY, std::numeric_limits<float>::max(),
                    -std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                    std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                    65504.f, 65519.99f, 65520.f, 65536.f, 1e-8f, 2.9802322e-8f, 5.9604645e-8f})
        out.push_back(f);
    return out;
}

template <class T>
void check_type_conversions() {
    using F = Fmt<T>;
    // Exhaustive: every bit pattern converts to float exactly and back to itself; NaNs stay NaN.
    for (uint32_t b = 0; b < 0x10000; ++b) {
        const T x{uint16_t(b)};
        const float f = x.to_float();
        const double ref = F::decode(uint16_t(b));
        if (std::isnan(ref)) {
            REQUIRE(std::isnan(f));
            const T back = T::from_float(f);
            REQUIRE(std::isnan(F::decode(back.bits)));
            REQUIRE((back.bits & 0x8000) == (b & 0x8000));
            continue;
        }
        INFO("bits " << b);
        REQUIRE(double(f) == ref);
        REQUIRE(std::signbit(f) == bool(b & 0x8000));
        REQUIRE(T::from_float(f).bits == b);
    }
    // Rounding: every boundary and a spread of random floats against the table search.
    for (float f : boundary_floats<F>()) {
        INFO("float bits 0x" << std::hex << fbits(f));
        REQUIRE(T::from_float(f).bits == F::round(double(f)));
    }
    // NaNs of every payload shape (signalling, payload only in the low bits) stay NaN with sign.
    for (uint32_t payload : {1u, 2u, 0x1FFFu, 0xFFFFu, 0x10000u, 0x200000u, 0x400000u, 0x7FFFFFu})
        for (uint32_t sign : {0u, 0x80000000u}) {
            const T h = T::from_float(bitsf(sign | 0x7F800000u | payload));
            REQUIRE(std::isnan(F::decode(h.bits)));
            REQUIRE(uint32_t(h.bits & 0x8000) == sign >> 16);
        }
}

}  // namespace

TEST_CASE("bfloat16: exact to float, nearest-even from float, NaN/inf/denormal edges", "[collectives][types]") {
    check_type_conversions<bfloat16>();
    // Literal edges.
    CHECK(bfloat16::from_float(1.0f).bits == 0x3F80);
    CHECK(bfloat16::from_float(bitsf(0x3F808000)).bits == 0x3F80);  // tie, even stays
    CHECK(bfloat16::from_float(bitsf(0x3F818000)).bits == 0x3F82);  // tie, odd rounds up
    CHECK(bfloat16::from_float(bitsf(0x7F7FFFFF)).bits == 0x7F80);  // FLT_MAX rounds to inf
    CHECK(bfloat16::from_float(bitsf(0x00000001)).bits == 0x0000);  // float denormal -> +0
    CHECK(bfloat16::from_float(bitsf(0x00018000)).bits == 0x0002);  // bf16 denormal, tie up to even
    CHECK(bfloat16::from_float(bitsf(0x7F800001)).bits == 0x7FC0);  // signalling NaN, low payload
}

TEST_CASE("half: exact to float, nearest-even from float, NaN/inf/subnormal edges", "[collectives][types]") {
    check_type_conversions<half>();
    CHECK(half::from_float(1.0f).bits == 0x3C00);
    CHECK(half::from_float(65504.f).bits == 0x7BFF);
    CHECK(half::from_float(65519.99f).bits == 0x7BFF);
    CHECK(half::from_float(65520.f).bits == 0x7C00);
    CHECK(half::from_float(5.9604645e-8f).bits == 0x0001);   // 2^-24, smallest subnormal
    CHECK(half::from_float(2.9802322e-8f).bits == 0x0000);   // 2^-25: tie, rounds to even 0
    CHECK(half::from_float(2.9802326e-8f).bits == 0x0001);   // just above the tie
    CHECK(half::from_float(-6.1035156e-5f).bits == 0x8400);  // -2^-14, smallest normal
    CHECK(half(half{0x03FF}).to_float() == std::ldexp(1023.0f, -24));
}

#if defined(__FLT16_MAX__)
TEST_CASE("half: agrees with the compiler's _Float16 conversions", "[collectives][types]") {
    for (float f : boundary_floats<HF>()) {
        const _Float16 h = static_cast<_Float16>(f);
        uint16_t b; std::memcpy(&b, &h, 2);
        INFO("float bits 0x" << std::hex << fbits(f));
        REQUIRE(half::from_float(f).bits == b);
    }
}
#endif

TEST_CASE("bfloat16: every float rounds as the double reference says (all 2^32)", "[collectives][types][long]") {
    // Reference by distances in double to the truncated value and the next one up.
    uint64_t bad = 0, first = 0, checked = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
        const float f = bitsf(uint32_t(u));
        if (std::isnan(f) || std::isinf(f)) continue;
        const uint32_t lo = uint32_t(u) & 0xFFFF0000u, hi = lo + 0x10000u;
        const double dl = std::fabs(double(f) - double(bitsf(lo)));
        const double dh = std::fabs(double(bitsf(hi & 0x7FFFFFFF) == INFINITY ? std::ldexp(1.0, 128) * (f < 0 ? -1 : 1) : bitsf(hi)) - double(f));
        const uint16_t want = uint16_t((dl < dh || (dl == dh && !((lo >> 16) & 1))) ? lo >> 16 : hi >> 16);
        if (bfloat16::from_float(f).bits != want && bad++ == 0) first = u;
        ++checked;
    }
    INFO("first wrong float 0x" << std::hex << first);
    CHECK(bad == 0);
    CHECK(checked == 0xFF000000ull);  // every finite float: 2^32 minus the 2^24 inf/NaN patterns
}

// ---------------------------------------------------------------------------------------------
// Operators

namespace {

template <class T> T from_double(double x) {
    if (std::isnan(x)) {  // the library's canonical quiet NaN
        if constexpr (std::is_same_v<T, bfloat16>) return bfloat16{0x7FC0};
        else if constexpr (std::is_same_v<T, half>) return half{0x7E00};
        else return bitsf(0x7FC00000u);
    }
    if constexpr (std::is_same_v<T, bfloat16>) return bfloat16{BF::round(x)};
    else if constexpr (std::is_same_v<T, half>) return half{HF::round(x)};
    else return T(x);  // float: one rounding from double (innocuous for +, *, /)
}
template <class T> double to_double(T x) {
    if constexpr (std::is_same_v<T, bfloat16>) return BF::decode(x.bits);
    else if constexpr (std::is_same_v<T, half>) return HF::decode(x.bits);
    else return double(x);
}
template <class T> uint64_t raw(T x) {
    uint64_t r = 0; std::memcpy(&r, &x, sizeof x); return r;
}

/// Reference for one element, written independently of ops.hpp.
template <class T>
T ref_apply(RedOp op, T a, T b) {
    if constexpr (is_floating_v<T>) {
        const double x = to_double(a), y = to_double(b);
        switch (op) {
            case RedOp::min: case RedOp::max: {
                if (std::isnan(x) && std::isnan(y)) return raw(a) <= raw(b) ? a : b;
                if (std::isnan(x)) return a;
                if (std::isnan(y)) return b;
                if (x == y) {  // -0 < +0
                    const bool a_neg = std::signbit(x), b_neg = std::signbit(y);
                    if (op == RedOp::min) return a_neg ? a : (b_neg ? b : a);
                    return !a_neg ? a : (!b_neg ? b : a);
                }
                return (op == RedOp::min) == (x < y) ? a : b;
            }
            case RedOp::prod: return from_double<T>(x * y);
            default: return from_double<T>(x + y);
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        return op == RedOp::logical_and ? (a && b) : (a || b);
    } else {
        const uint64_t x = uint64_t(a), y = uint64_t(b);  // sign-extends; wrap then truncate
        switch (op) {
            case RedOp::min: return a < b ? a : b;
            case RedOp::max: return a < b ? b : a;
            case RedOp::prod: return T(x * y);
            case RedOp::bit_and: return T(x & y);
            case RedOp::bit_or: return T(x | y);
            case RedOp::bit_xor: return T(x ^ y);
            default: return T(x + y);
        }
    }
}

template <class T> T random_value(uint64_t& s) {
    const uint64_t r = splitmix(s);
    if constexpr (std::is_same_v<T, bool>) return r & 1;
    else if constexpr (is_low_precision_v<T>) {
        // Mostly moderate values, some specials and raw bit patterns.
        switch (r % 8) {
            case 0: return T{uint16_t(r >> 16)};
            case 1: { const uint16_t sp[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x7C00, 0xFC00, 0x7F80, 0xFF80};
                      return T{sp[(r >> 8) % 8]}; }
            default: return T::from_float(float(int64_t(r >> 40) - (1 << 23)) / 4096.f);
        }
    } else if constexpr (std::is_same_v<T, float>) {
        switch (r % 8) {
            case 0: return bitsf(uint32_t(r >> 16));
            case 1: { const float sp[] = {0.f, -0.f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3e38f, -3e38f};
                      return sp[(r >> 8) % 8]; }
            default: return float(int64_t(r >> 40) - (1 << 23)) / 4096.f;
        }
    } else {
        return T(r);
    }
}

template <class T> bool same_bits(T a, T b) { return raw(a) == raw(b); }  // NaNs included

/// A plain array (std::vector<bool> has no data()).
template <class T> struct Array {
    explicit Array(size_t n) : p(new T[n]()), n(n) {}
    Array(const Array& o) : Array(o.n) { std::copy(o.p.get(), o.p.get() + n, p.get()); }
    T& operator[](size_t i) { return p[i]; }
    T* data() { return p.get(); }
    std::unique_ptr<T[]> p;
    size_t n;
};

template <class T, RedOp Op>
void check_operator() {
    using R = Reducer<T, Op>;
    static_assert(std::is_same_v<typename R::value_type, T>);
    constexpr uint32_t n = 4099;
    Array<T> a(n), b(n), d(n);
    uint64_t s = 1234 + uint64_t(Op) * 77 + sizeof(T);
    for (uint32_t i = 0; i < n; ++i) { a[i] = random_value<T>(s); b[i] = random_value<T>(s); }
    R::combine(d.data(), a.data(), b.data(), n);
    for (uint32_t i = 0; i < n; ++i) {
        INFO(redop_name(Op) << " " << dtype_name(dtype_of<T>::value) << " element " << i << " a=" << raw(a[i]) << " b=" << raw(b[i]) << " got=" << raw(d[i]) << " want=" << raw(ref_apply<T>(Op, a[i], b[i])));
        REQUIRE(same_bits(d[i], ref_apply<T>(Op, a[i], b[i])));
    }
    // In place (dst aliases a), as the executor's reduce into the output uses it.
    Array<T> a2 = a;
    R::combine(a2.data(), a2.data(), b.data(), n);
    for (uint32_t i = 0; i < n; ++i) REQUIRE(same_bits(a2[i], d[i]));
    // In place into the second operand (dst aliases b), as recv_reduce_send's reduce into a view.
    Array<T> b2 = b;
    R::combine(b2.data(), a.data(), b2.data(), n);
    for (uint32_t i = 0; i < n; ++i) REQUIRE(same_bits(b2[i], d[i]));
    // Every short length and misaligned starts (the vector form's tails and unaligned loads):
    // each element as the reference says, nothing written past n.
    for (uint32_t off = 0; off < 3; ++off)
        for (uint32_t len = 0; len <= 40; ++len) {
            Array<T> e(len + 1);
            const T guard = random_value<T>(s);
            e[len] = guard;
            R::combine(e.data(), a.data() + off, b.data() + 2 * off, len);
            for (uint32_t i = 0; i < len; ++i) {
                INFO(redop_name(Op) << " " << dtype_name(dtype_of<T>::value) << " off " << off << " len " << len << " element " << i);
                REQUIRE(same_bits(e[i], ref_apply<T>(Op, a[off + i], b[2 * off + i])));
            }
            REQUIRE(same_bits(e[len], guard));
        }
    // prepare / finalize
    Array<T> p(n);
    R::prepare(p.data(), a.data(), n);
    for (uint32_t i = 0; i < n; ++i) {
        const T want = Op == RedOp::square_add ? ref_apply<T>(RedOp::prod, a[i], a[i]) : a[i];
        REQUIRE(same_bits(p[i], want));
    }
    for (uint32_t ranks : {1u, 3u, 8u}) {
        Array<T> f = a;
        R::finalize(f.data(), n, ranks);
        for (uint32_t i = 0; i < n; ++i) {
            if constexpr (is_floating_v<T>) {
                const T want = Op == RedOp::mean ? from_double<T>(to_double(a[i]) / ranks) : a[i];
                REQUIRE(same_bits(f[i], want));
            } else {
                REQUIRE(same_bits(f[i], a[i]));
            }
        }
    }
}

template <class T, RedOp... Ops> void check_ops() { (check_operator<T, Ops>(), ...); }

}  // namespace

TEST_CASE("operators: every valid type x operator against the independent reference", "[collectives][ops]") {
    constexpr auto S = RedOp::sum, M = RedOp::mean, P = RedOp::prod, MN = RedOp::min, MX = RedOp::max,
                   SQ = RedOp::square_add, BA = RedOp::bit_and, BO = RedOp::bit_or, BX = RedOp::bit_xor;
    check_ops<float, S, M, P, MN, MX, SQ>();
    check_ops<bfloat16, S, M, P, MN, MX, SQ>();
    check_ops<half, S, M, P, MN, MX, SQ>();
    check_ops<int32_t, S, P, MN, MX, SQ, BA, BO, BX>();
    check_ops<uint32_t, S, P, MN, MX, SQ, BA, BO, BX>();
    check_ops<int64_t, S, P, MN, MX, SQ, BA, BO, BX>();
    check_ops<uint64_t, S, P, MN, MX, SQ, BA, BO, BX>();
    check_ops<bool, RedOp::logical_and, RedOp::logical_or>();
}

TEST_CASE("operators: the run-time validity table matches the compile-time one", "[collectives][ops]") {
    auto row = [](auto tag) {
        using T = decltype(tag);
        constexpr DataType t = dtype_of<T>::value;
        CHECK(is_valid_op(t, RedOp::sum) == is_valid_op_v<T, RedOp::sum>);
        CHECK(is_valid_op(t, RedOp::mean) == is_valid_op_v<T, RedOp::mean>);
        CHECK(is_valid_op(t, RedOp::prod) == is_valid_op_v<T, RedOp::prod>);
        CHECK(is_valid_op(t, RedOp::min) == is_valid_op_v<T, RedOp::min>);
        CHECK(is_valid_op(t, RedOp::max) == is_valid_op_v<T, RedOp::max>);
        CHECK(is_valid_op(t, RedOp::square_add) == is_valid_op_v<T, RedOp::square_add>);
        CHECK(is_valid_op(t, RedOp::logical_and) == is_valid_op_v<T, RedOp::logical_and>);
        CHECK(is_valid_op(t, RedOp::logical_or) == is_valid_op_v<T, RedOp::logical_or>);
        CHECK(is_valid_op(t, RedOp::bit_and) == is_valid_op_v<T, RedOp::bit_and>);
        CHECK(is_valid_op(t, RedOp::bit_or) == is_valid_op_v<T, RedOp::bit_or>);
        CHECK(is_valid_op(t, RedOp::bit_xor) == is_valid_op_v<T, RedOp::bit_xor>);
    };
    row(float{}); row(bfloat16{}); row(half{}); row(int32_t{}); row(uint32_t{}); row(int64_t{});
    row(uint64_t{}); row(bool{});
    // GCL's rules, literally.
    CHECK_FALSE(is_valid_op_v<int32_t, RedOp::mean>);
    CHECK(is_valid_op_v<half, RedOp::mean>);
    CHECK_FALSE(is_valid_op_v<int32_t, RedOp::logical_and>);
    CHECK(is_valid_op_v<bool, RedOp::logical_or>);
    CHECK_FALSE(is_valid_op_v<float, RedOp::bit_xor>);
    CHECK_FALSE(is_valid_op_v<bool, RedOp::bit_and>);
    CHECK_FALSE(is_valid_op_v<bool, RedOp::sum>);
    CHECK(is_valid_op_v<uint32_t, RedOp::sum>);
}

TEST_CASE("operators: GCL's worked examples (GCL documentation, 3.1) on two replicas", "[collectives][ops]") {
    const int32_t in0[4] = {1, 2, 3, 4}, in1[4] = {5, 6, 7, 8};
    int32_t out[4];
    auto run = [&](auto red, std::initializer_list<int32_t> want) {
        using R = decltype(red);
        int32_t p0[4], p1[4];
        R::prepare(p0, in0, 4);
        R::prepare(p1, in1, 4);
        R::combine(out, p0, p1, 4);
        R::finalize(out, 4, 2);
        CHECK(std::vector<int32_t>(out, out + 4) == std::vector<int32_t>(want));
    };
    run(Reducer<int32_t, RedOp::sum>{}, {6, 8, 10, 12});
    run(Reducer<int32_t, RedOp::prod>{}, {5, 12, 21, 32});
    run(Reducer<int32_t, RedOp::min>{}, {1, 2, 3, 4});
    run(Reducer<int32_t, RedOp::max>{}, {5, 6, 7, 8});
    run(Reducer<int32_t, RedOp::square_add>{}, {26, 40, 58, 80});
    {
        const float f0[4] = {1, 2, 3, 4}, f1[4] = {5, 6, 7, 8};
        float o[4];
        Reducer<float, RedOp::mean>::combine(o, f0, f1, 4);
        Reducer<float, RedOp::mean>::finalize(o, 4, 2);
        CHECK(std::vector<float>(o, o + 4) == std::vector<float>{3, 4, 5, 6});
    }
    {
        const bool b0[4] = {true, false, true, false}, b1[4] = {false, true, true, false};
        bool o[4];
        Reducer<bool, RedOp::logical_and>::combine(o, b0, b1, 4);
        CHECK(std::vector<bool>(o, o + 4) == std::vector<bool>{false, false, true, false});
        Reducer<bool, RedOp::logical_or>::combine(o, b0, b1, 4);
        CHECK(std::vector<bool>(o, o + 4) == std::vector<bool>{true, true, true, false});
    }
}

TEST_CASE("operators: min/max NaN and signed-zero rules are order independent", "[collectives][ops]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    using Mn = Reducer<float, RedOp::min>;
    using Mx = Reducer<float, RedOp::max>;
    CHECK(std::isnan(Mn::apply(nan, 1.f)));
    CHECK(std::isnan(Mn::apply(1.f, nan)));
    CHECK(std::isnan(Mx::apply(-INFINITY, nan)));
    CHECK(fbits(Mn::apply(0.f, -0.f)) == 0x80000000u);
    CHECK(fbits(Mn::apply(-0.f, 0.f)) == 0x80000000u);
    CHECK(fbits(Mx::apply(0.f, -0.f)) == 0u);
    CHECK(fbits(Mx::apply(-0.f, 0.f)) == 0u);
    // bfloat16: a signalling-NaN operand's bits come back unchanged (selected, not converted).
    using Bm = Reducer<bfloat16, RedOp::min>;
    CHECK(Bm::apply(bfloat16{0x7F81}, bfloat16{0x3F80}).bits == 0x7F81);
    CHECK(Bm::apply(bfloat16{0x3F80}, bfloat16{0xFF81}).bits == 0xFF81);
    // Two NaNs: the same one whichever comes first; arithmetic NaNs are canonical.
    CHECK(Bm::apply(bfloat16{0xFF81}, bfloat16{0x7FC1}).bits == 0x7FC1);
    CHECK(Bm::apply(bfloat16{0x7FC1}, bfloat16{0xFF81}).bits == 0x7FC1);
    CHECK(fbits(Reducer<float, RedOp::sum>::apply(bitsf(0xFFC00001u), bitsf(0x7FC00002u))) == 0x7FC00000u);
    CHECK(fbits(Reducer<float, RedOp::sum>::apply(bitsf(0x7FC00002u), bitsf(0xFFC00001u))) == 0x7FC00000u);
    CHECK(Reducer<half, RedOp::prod>::apply(half{0x7C00}, half{0x0000}).bits == 0x7E00);  // inf * 0
    // Integer wrap-around is defined.
    CHECK(Reducer<int32_t, RedOp::sum>::apply(INT32_MAX, 1) == INT32_MIN);
    CHECK(Reducer<int64_t, RedOp::prod>::apply(INT64_MIN, -1) == INT64_MIN);
    CHECK(Reducer<uint32_t, RedOp::square_add>::apply(0xFFFFFFFFu, 2u) == 1u);
}

// ---------------------------------------------------------------------------------------------
// Communication groups: GCL's tables 3.1-3.3 (16 replicas) as literal vectors.


using kccl::coll::host::BadGroup;
using kccl::coll::host::group_table;
using Table = std::vector<std::vector<uint32_t>>;

TEST_CASE("groups: GCL's tables for 16 replicas", "[collectives][groups]") {
    CHECK(group_table(CommGroup::orthogonal(4), 16) ==
          Table{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});   // Table 3.1
    CHECK(group_table(CommGroup::consecutive(4), 16) ==
          Table{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});   // Table 3.2
    CHECK(group_table(CommGroup::all(), 16) ==
          Table{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}});         // Table 3.3
    // The general formulas of 3.2.1 / 3.2.2 on other shapes.
    CHECK(group_table(CommGroup::orthogonal(2), 6) == Table{{0, 3}, {1, 4}, {2, 5}});
    CHECK(group_table(CommGroup::consecutive(3), 6) == Table{{0, 1, 2}, {3, 4, 5}});
    CHECK(group_table(CommGroup::orthogonal(1), 3) == Table{{0}, {1}, {2}});
    CHECK(group_table(CommGroup::consecutive(8), 8) == group_table(CommGroup::all(), 8));
}

TEST_CASE("groups: group_of / rank_in_group invert member for every replica", "[collectives][groups]") {
    for (uint32_t n = 1; n <= 24; ++n)
        for (uint32_t k = 1; k <= n; ++k) {
            if (n % k) continue;
            for (CommGroup g : {CommGroup::consecutive(k), CommGroup::orthogonal(k), CommGroup::all()}) {
                std::vector<int> seen(n, 0);
                const auto t = group_table(g, n);
                for (uint32_t grp = 0; grp < t.size(); ++grp)
                    for (uint32_t i = 0; i < t[grp].size(); ++i) {
                        const uint32_t r = t[grp][i];
                        REQUIRE(r < n);
                        ++seen[r];
                        REQUIRE(group_of(g, n, r) == grp);
                        REQUIRE(rank_in_group(g, n, r) == i);
                        if (i) REQUIRE(t[grp][i - 1] < r);  // replica order inside a group
                    }
                for (uint32_t r = 0; r < n; ++r) REQUIRE(seen[r] == 1);  // a partition
            }
        }
}

TEST_CASE("groups: a bad size is a named error with the allowed sizes", "[collectives][groups]") {
    CHECK(validate(CommGroup::consecutive(3), 16) == GroupError::not_a_divisor);
    CHECK(validate(CommGroup::orthogonal(0), 16) == GroupError::zero_size);
    CHECK(validate(CommGroup::orthogonal(32), 16) == GroupError::larger_than_replicas);
    CHECK(validate(CommGroup::all(), 0) == GroupError::no_replicas);
    CHECK(validate(CommGroup::consecutive(16), 16) == GroupError::ok);
    try {
        group_table(CommGroup::consecutive(3), 16);
        FAIL("consecutive(3) over 16 replicas was accepted");
    } catch (const BadGroup& e) {
        CHECK(e.error == GroupError::not_a_divisor);
        CHECK_THAT(e.what(), Catch::Contains("consecutive(3)") && Catch::Contains("does not divide") &&
                                 Catch::Contains("1, 2, 4, 8, 16"));
    }
    CHECK_THROWS_AS(group_table(CommGroup::orthogonal(0), 4), BadGroup);
    CHECK_THROWS_WITH(group_table(CommGroup::orthogonal(5), 4), Catch::Contains("larger than the number of replicas"));
}

// kccl/testing/inputs.hpp — seeded inputs and the plain host reference for the collectives'
// tests and tools (target kccl::testing).
//
// input_value(seed, op, reduces, rank, i) is element i of rank's input: exactly predictable and
// chosen so every reduction order gives the same exact value (small integers for floating sums,
// powers of two for products, any bits for integers and for data only moved, selections — NaNs
// and signed zeros included — for min/max), so the reference does not need to know the method's
// order. reference_reduce folds every rank's element by the operator's definition; check_outputs
// compares every rank's output of a collective (laid out as emulation/collective.hpp's Layout)
// with it. hash(seed, rank, i) is the seeded hash every input generator of the tests and tools
// draws from.
#pragma once

#include <collectives/executor.hpp>
#include <collectives/ops.hpp>
#include <collectives/types.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kccl::testing {

using namespace kccl::coll;

inline uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
inline uint64_t hash(uint64_t seed, uint32_t rank, uint32_t i) { return mix(seed ^ mix((uint64_t(rank) << 32) | i)); }

inline float bitsf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
template <class T> uint64_t raw(T x) { uint64_t r = 0; std::memcpy(&r, &x, sizeof x); return r; }

template <class T> T from_float(float f) {
    if constexpr (is_low_precision_v<T>) return T::from_float(f); else return f;
}
template <class T> double to_double(T x) {
    if constexpr (is_low_precision_v<T>) return x.to_float(); else return double(x);
}

/// Input element i of `rank`: exactly predictable, chosen per operator (see the file comment).
template <class T>
T input_value(uint64_t seed, RedOp op, bool reduces, uint32_t rank, uint32_t i) {
    const uint64_t h = hash(seed, rank, i);
    if constexpr (std::is_same_v<T, bool>) {
        return (h >> 7) & 1;
    } else if constexpr (is_integer_v<T>) {
        return T(h);
    } else {
        if (!reduces) {  // moved, not combined: any bits, NaNs included
            if constexpr (std::is_same_v<T, float>) return bitsf(uint32_t(h));
            else return T{uint16_t(h)};
        }
        const uint32_t r = uint32_t(h >> 8);
        const bool rare = (h & 0xFF) == 0;  // 1 in 256: an infinity
        switch (op) {
            case RedOp::sum:
            case RedOp::mean: {
                if (rare) return from_float<T>((h >> 9) & 1 ? INFINITY : -INFINITY);
                static const auto small = [] {  // -8 .. 8, converted once (large tensors call this per element)
                    std::array<T, 17> v{};
                    for (int k = 0; k < 17; ++k) v[size_t(k)] = from_float<T>(float(k - 8));
                    return v;
                }();
                return small[r % 17];
            }
            case RedOp::square_add: return from_float<T>(float(int(r % 9) - 4));
            case RedOp::prod: {
                if (rare) return from_float<T>((h >> 9) & 1 ? INFINITY : 0.f);
                const float v[] = {0.5f, 1.f, 2.f, -0.5f, -1.f, -2.f};
                return from_float<T>(v[r % 6]);
            }
            default: {  // min / max: NaNs (varied payloads), signed zeros, infinities, values
                switch (r % 16) {
                    case 0: return std::is_same_v<T, float> ? T(bitsf(0x7FC00000u | (r & 0xFFFF) | ((h >> 40) & 1) << 31))
                                                             : from_float<T>(bitsf(0x7F800000u | ((r & 7) + 1) << 16 | (r & 1) << 31));
                    case 1: return from_float<T>(0.f);
                    case 2: return from_float<T>(-0.f);
                    case 3: return from_float<T>(-INFINITY);
                    default: return from_float<T>(float(int(r % 4001) - 2000) / 8.f);
                }
            }
        }
    }
}

/// Reduction of xs (all ranks' elements) by the operator's definition.
template <class T>
T reference_reduce(RedOp op, const std::vector<T>& xs) {
    const uint32_t p = uint32_t(xs.size());
    if constexpr (std::is_same_v<T, bool>) {
        bool acc = op == RedOp::logical_and;
        for (bool x : xs) acc = op == RedOp::logical_and ? (acc && x) : (acc || x);
        return acc;
    } else if constexpr (is_integer_v<T>) {
        uint64_t acc = 0;
        switch (op) {
            case RedOp::sum: for (T x : xs) acc += uint64_t(x); return T(acc);
            case RedOp::square_add: for (T x : xs) acc += uint64_t(x) * uint64_t(x); return T(acc);
            case RedOp::prod: acc = 1; for (T x : xs) acc *= uint64_t(x); return T(acc);
            case RedOp::bit_and: acc = ~0ull; for (T x : xs) acc &= uint64_t(x); return T(acc);
            case RedOp::bit_or: for (T x : xs) acc |= uint64_t(x); return T(acc);
            case RedOp::bit_xor: for (T x : xs) acc ^= uint64_t(x); return T(acc);
            case RedOp::min: return *std::min_element(xs.begin(), xs.end());
            case RedOp::max: return *std::max_element(xs.begin(), xs.end());
            default: return T{};  // not valid on integers
        }
    } else {
        if (op == RedOp::min || op == RedOp::max) {
            // Total order of keys: NaNs first (fewest bits first), then by value, -0 before +0.
            auto better = [&](T a, T b) {  // is a selected over b?
                const double x = to_double(a), y = to_double(b);
                if (std::isnan(x) || std::isnan(y)) {
                    if (std::isnan(x) && std::isnan(y)) return raw(a) < raw(b);
                    return std::isnan(x);
                }
                if (x == y) return op == RedOp::min ? std::signbit(x) && !std::signbit(y) : !std::signbit(x) && std::signbit(y);
                return op == RedOp::min ? x < y : x > y;
            };
            T best = xs[0];
            for (T x : xs) if (better(x, best)) best = x;
            return best;
        }
        double acc = op == RedOp::prod ? 1.0 : 0.0;
        for (T x : xs) {
            const double v = to_double(x);
            if (op == RedOp::prod) acc *= v;
            else if (op == RedOp::square_add) acc += v * v;
            else acc += v;
        }
        if (op == RedOp::mean) acc /= p;
        if (std::isnan(acc)) return kccl::coll::detail::canonical_nan<T>();
        return from_float<T>(float(acc));  // exact sums; the mean's quotient rounds once (to float, then T)
    }
}


/// Compares every rank's output of layout L (emulation/collective.hpp's Layout; out(r): host
/// pointer to rank r's output buffer) with the reference; returns the number of wrong elements
/// and a description of the first few.
template <class T, class Layout, class OutOf>
std::pair<uint64_t, std::string> check_outputs(const Layout& L, RedOp redop, uint64_t seed, OutOf&& out) {
    using namespace kccl::coll;
    constexpr uint32_t eb = sizeof(T);
    const uint32_t p = L.shape.ranks, F = L.frag, n = L.count, root = L.shape.root;
    const bool reduces = op_reduces(L.shape.op);
    auto in = [&](uint32_t r, uint32_t i) { return input_value<T>(seed, redop, reduces, r, i); };
    std::ostringstream bad;
    uint64_t nbad = 0;
    std::vector<decltype(out(0u))> outs(p);  // each rank's output, looked up once (not per element)
    for (uint32_t r = 0; r < p; ++r) outs[r] = out(r);
    auto expect = [&](uint32_t r, uint64_t at, T want) {
        T got;
        std::memcpy(&got, outs[r] + size_t(at) * eb, eb);
        if (raw(got) != raw(want) && nbad++ < 5)
            bad << " rank " << r << " out[" << at << "]: got 0x" << std::hex << raw(got) << " want 0x" << raw(want) << std::dec << ";";
    };
    std::vector<T> xs(p);
    auto reduced = [&](uint32_t i) {
        for (uint32_t q = 0; q < p; ++q) xs[q] = in(q, i);
        return reference_reduce<T>(redop, xs);
    };
    switch (L.shape.op) {
        case Op::all_gather:
            for (uint32_t r = 0; r < p; ++r)
                for (uint32_t f = 0; f < p; ++f)
                    for (uint32_t j = 0; j < n; ++j) expect(r, uint64_t(f) * F + j, in(f, j));
            break;
        case Op::gather:
            for (uint32_t f = 0; f < p; ++f)
                for (uint32_t j = 0; j < n; ++j) expect(root, uint64_t(f) * F + j, in(f, j));
            break;
        case Op::reduce_scatter:
            for (uint32_t r = 0; r < p; ++r)
                for (uint32_t j = 0; j < F; ++j) {
                    const uint64_t i = uint64_t(r) * F + j;
                    if (i < n) expect(r, j, reduced(uint32_t(i)));
                    else { T z; std::memset(&z, 0, sizeof z); expect(r, j, z); }  // GCL's zero padding
                }
            break;
        case Op::all_reduce:
            for (uint32_t i = 0; i < n; ++i) {
                const T want = reduced(i);
                for (uint32_t r = 0; r < p; ++r) expect(r, i, want);
            }
            break;
        case Op::reduce:
            for (uint32_t i = 0; i < n; ++i) expect(root, i, reduced(i));
            break;
        case Op::broadcast:
            for (uint32_t r = 0; r < p; ++r)
                for (uint32_t i = 0; i < n; ++i) expect(r, i, in(root, i));
            break;
        case Op::scatter:
            for (uint32_t r = 0; r < p; ++r)
                for (uint32_t j = 0; j < F && uint64_t(r) * F + j < n; ++j) expect(r, j, in(root, r * F + j));
            break;
        case Op::all_to_all:
            for (uint32_t r = 0; r < p; ++r)
                for (uint32_t f = 0; f < p; ++f)
                    for (uint32_t j = 0; j < F && uint64_t(r) * F + j < n; ++j) expect(r, uint64_t(f) * F + j, in(f, r * F + j));
            break;
        case Op::send_recv:
            for (uint32_t i = 0; i < n; ++i) expect(L.shape.peer, i, in(root, i));
            break;
        case Op::barrier: break;
    }
    return {nbad, bad.str()};
}

}  // namespace kccl::testing

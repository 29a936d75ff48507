// kccl/wafer/wafer.hpp — the routed PE fabric's device API: send, receive, relay and advance
// on host-configured routes (the wafer-scale PE fabric of the Cerebras WSE: colors, routers,
// switch positions; docs/routes.md for the vocabulary, docs/wafer.md for the mapping to CSL).
//
// WHAT IT IS
//   Device code (a PE kernel) is a template over a backend type F and calls only the operations
//   below on an `F& f` handle it is given. A backend provides, as member functions:
//     uint32_t arg(uint32_t i)                                 the i-th 32-bit kernel argument
//     uint8_t* mem(uint32_t offset, uint32_t bytes)            the PE's local memory
//     void fabric_send(Route r, const uint32_t* src, uint32_t n)
//     void fabric_recv(Route r, uint32_t* dst, uint32_t n, Combine c)
//     void fabric_relay(Route in, Route out, const uint32_t* local, uint32_t n, Combine c)
//     void fabric_advance(Route r)
//     void fabric_exchange(Route out, const uint32_t* src, uint32_t n_out,
//                          Route in, uint32_t* dst, uint32_t n_in, Combine c)
//   The emulation's backend is kccl::emu::wafer::Pe (emulation/include/emulation/wafer/).
//   A route handle comes from the kernel's arguments (`route_arg(f, i)`); device code never
//   builds routes, the host's grid builder does (include/wafer/host/grid.hpp).
//
// OPERATIONS (one 32-bit word = one wavelet; element types of 4 bytes: float, int32, uint32)
//   send(f, r, src, n)          n elements of src leave on route r, one per cycle.
//   recv(f, r, dst, n, op)      n elements arriving on r, in order, combined into dst:
//                               dst[i] = op(dst[i], received[i]) (copy: dst[i] = received[i]).
//   relay(f, in, out, local, n, op)
//                               element i arriving on `in` is combined with local[i] and the
//                               result leaves on `out`: out[i] = op(local[i], in[i]). Word by
//                               word: element i leaves as soon as it has arrived; the vector is
//                               never staged in local memory (the CSL form is one DSD operation
//                               with a fabin source and a fabout destination).
//   advance(f, r)               every router on route r, in turn, moves to its next switch
//                               position for r's color (the CSL control wavelet).
//   exchange(f, out, src, n_out, in, dst, n_in, op)
//                               send and receive at the same time (a PE sends one wavelet and
//                               receives one per cycle): n_out elements of src leave on `out`
//                               while n_in arriving on `in` are combined into dst; returns when
//                               both are done. src and dst must not overlap. (CSL: a fabout and
//                               a fabin DSD operation on two microthreads.)
//
// PROMISES (what device code may rely on — and nothing more)
//   F1  Per source, per route, in order: the elements one PE sends on one route arrive in the
//       order sent. There is no order across routes, nor between two sources on one route.
//   F2  `send` returns when `src` may be reused; it says nothing about arrival. `recv` returns
//       when all n elements have been combined into dst; `relay` when all n have left.
//   F3  Buffering inside the fabric is bounded (a few wavelets per router queue and color: the
//       profile's router_queue_wavelets): a sender may block until a receiver consumes. A
//       pattern must never rely on the fabric holding a whole message. (The emulation enforces
//       the bound in program mode, and with one-wavelet queues in its adversarial mode, where a
//       pattern relying on more deadlocks with a report.)
//   F4  `advance(r)` acts at each router after every earlier element sent on r has passed it.
//       A stream arriving at a router whose position does not accept it waits there, in order,
//       and continues once an advance makes it accepted; it is never dropped.
//   F5  Two streams reaching one router on one color in the same cycle from different inputs
//       is undefined on hardware; the emulation reports it (PE, color, cycle). So is a route
//       that delivers more elements than the receiver asks for by the end of the run.
//
// OPERATORS
//   kCopy and the coll::RedOp sum, max, min (supports(RedOp)), over float, int32_t and uint32_t
//   (coll::DataType f32, i32, u32: supports(DataType)), with kccl's reduction rules
//   (include/collectives/ops.hpp: integers wrap, a NaN wins min/max, -0 < +0).
//
// Device-safe: C++17, freestanding, no heap, no exceptions.
#pragma once

#include <collectives/ops.hpp>
#include <collectives/types.hpp>
#include <stdint.h>
#include <type_traits>

namespace kccl::wafer {

/// A route handle: the color the routers forward it on. Made by the host (grid builder) and
/// passed to the kernel as an argument.
struct Route {
    uint32_t color = 0;
};

/// How a received element meets the local one: reduced with a coll::RedOp the wafer supports
/// (supports(RedOp): sum, max, min), or kCopy: the received element replaces it.
inline constexpr coll::RedOp kCopy = coll::RedOp(0xFF);
/// The reductions the wafer's PEs combine with: sum, max, min.
constexpr bool supports(coll::RedOp op) noexcept { return op == coll::RedOp::sum || op == coll::RedOp::max || op == coll::RedOp::min; }
/// The element types the wafer's PEs combine: the 4-byte f32, i32, u32 (one wavelet each).
constexpr bool supports(coll::DataType t) noexcept {
    return t == coll::DataType::f32 || t == coll::DataType::i32 || t == coll::DataType::u32;
}
/// "copy" or the reduction's name.
constexpr const char* op_name(coll::RedOp op) noexcept { return op == kCopy ? "copy" : coll::redop_name(op); }

/// A run-time operator on one element type (what the backend applies word by word).
struct Combine {
    coll::RedOp op = kCopy;
    coll::DataType type = coll::DataType::u32;
};

namespace detail {
template <class T>
inline uint32_t combine_as(uint32_t a, uint32_t b, coll::RedOp op) noexcept {
    T x, y;
    __builtin_memcpy(&x, &a, 4);
    __builtin_memcpy(&y, &b, 4);
    T r = y;
    switch (op) {
        case coll::RedOp::sum: r = coll::detail::apply<T, coll::RedOp::sum>(x, y); break;
        case coll::RedOp::max: r = coll::detail::apply<T, coll::RedOp::max>(x, y); break;
        case coll::RedOp::min: r = coll::detail::apply<T, coll::RedOp::min>(x, y); break;
        default: r = y; break;  // kCopy
    }
    uint32_t out;
    __builtin_memcpy(&out, &r, 4);
    return out;
}
}  // namespace detail

/// One element: `mine` is the local (or destination) word, `in` the received one; copy gives `in`.
inline uint32_t combine_word(Combine c, uint32_t mine, uint32_t in) noexcept {
    switch (c.type) {
        case coll::DataType::f32: return detail::combine_as<float>(mine, in, c.op);
        case coll::DataType::i32: return detail::combine_as<int32_t>(mine, in, c.op);
        case coll::DataType::u32: return detail::combine_as<uint32_t>(mine, in, c.op);
        default: return in;
    }
}

template <class T>
constexpr bool is_fabric_type_v = std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>;

/// The route handle in kernel argument i.
template <class F>
inline Route route_arg(F& f, uint32_t i) {
    return Route{f.arg(i)};
}

template <class F, class T>
inline void send(F& f, Route r, const T* src, uint32_t n) {
    static_assert(is_fabric_type_v<T>, "wafer::send moves 32-bit elements: float, int32_t or uint32_t (one wavelet each).");
    f.fabric_send(r, reinterpret_cast<const uint32_t*>(src), n);
}

template <class F, class T>
inline void recv(F& f, Route r, T* dst, uint32_t n, coll::RedOp op = kCopy) {
    static_assert(is_fabric_type_v<T>, "wafer::recv combines 32-bit elements: float, int32_t or uint32_t (one wavelet each).");
    f.fabric_recv(r, reinterpret_cast<uint32_t*>(dst), n, Combine{op, coll::dtype_of<T>::value});
}

template <class F, class T>
inline void relay(F& f, Route in, Route out, const T* local, uint32_t n, coll::RedOp op) {
    static_assert(is_fabric_type_v<T>, "wafer::relay combines 32-bit elements: float, int32_t or uint32_t (one wavelet each).");
    f.fabric_relay(in, out, reinterpret_cast<const uint32_t*>(local), n, Combine{op, coll::dtype_of<T>::value});
}

template <class F>
inline void advance(F& f, Route r) {
    f.fabric_advance(r);
}

template <class F, class T>
inline void exchange(F& f, Route out, const T* src, uint32_t n_out, Route in, T* dst, uint32_t n_in, coll::RedOp op) {
    static_assert(is_fabric_type_v<T>, "wafer::exchange moves 32-bit elements: float, int32_t or uint32_t (one wavelet each).");
    f.fabric_exchange(out, reinterpret_cast<const uint32_t*>(src), n_out, in, reinterpret_cast<uint32_t*>(dst), n_in, Combine{op, coll::dtype_of<T>::value});
}

}  // namespace kccl::wafer

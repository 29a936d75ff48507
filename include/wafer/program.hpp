// kccl/wafer/program.hpp — a PE kernel that runs a list of fabric steps from its arguments, so
// that a pattern is written once on the host (which routes to configure, which steps each PE
// takes) and every PE runs the same device code.
//
// Contract
//   * Arguments: arg 0 = the element type (coll::DataType), arg 1 = the number of steps S, then S
//     steps of 3 words each:
//       word 0   kind | op << 8 | color_a << 16 | color_b << 24
//       word 1   byte offset in the PE's memory
//       word 2   element count n
//     kinds:  send     n elements at offset leave on color_a
//             recv     n elements arriving on color_a are combined (op) into offset
//             relay    n elements arriving on color_a, combined (op) with those at offset, leave on color_b
//             advance  the routers on color_a move to their next switch position
//             exchange n_out elements at offset_out leave on color_a while n_in arriving on
//                      color_b are combined (op) into offset_in; word 1 = offset_out | offset_in << 16,
//                      word 2 = n_out | n_in << 16 (a PE's 48 KiB fit in 16 bits)
//   * `encode_step` / `decode_step` are the one definition of the encoding (host and device).
//   * Device-safe: C++17, freestanding, no heap.
#pragma once

#include <wafer/wafer.hpp>
#include <stdint.h>

namespace kccl::wafer {

enum class StepKind : uint8_t { send = 0, recv = 1, relay = 2, advance = 3, exchange = 4 };
inline constexpr uint32_t step_words = 3;

struct Step {
    StepKind kind = StepKind::send;
    coll::RedOp op = kCopy;
    uint32_t color_a = 0, color_b = 0;
    uint32_t offset = 0, n = 0;
};

constexpr uint32_t encode_step_word0(const Step& s) noexcept {
    return uint32_t(s.kind) | uint32_t(s.op) << 8 | (s.color_a & 0xFFu) << 16 | (s.color_b & 0xFFu) << 24;
}
constexpr Step decode_step(uint32_t w0, uint32_t w1, uint32_t w2) noexcept {
    Step s;
    s.kind = StepKind(w0 & 0xFFu);
    s.op = coll::RedOp((w0 >> 8) & 0xFFu);
    s.color_a = (w0 >> 16) & 0xFFu;
    s.color_b = (w0 >> 24) & 0xFFu;
    s.offset = w1;
    s.n = w2;
    return s;
}

template <class T, class F>
inline void run_step_as(F& f, const Step& s) {
    if (s.kind == StepKind::exchange) {
        const uint32_t n_out = s.n & 0xFFFFu, n_in = s.n >> 16;
        const T* src = reinterpret_cast<const T*>(f.mem(s.offset & 0xFFFFu, n_out * 4u));
        T* dst = reinterpret_cast<T*>(f.mem(s.offset >> 16, n_in * 4u));
        return exchange(f, Route{s.color_a}, src, n_out, Route{s.color_b}, dst, n_in, s.op);
    }
    T* data = reinterpret_cast<T*>(f.mem(s.offset, s.n * 4u));
    switch (s.kind) {
        case StepKind::send: send(f, Route{s.color_a}, data, s.n); break;
        case StepKind::recv: recv(f, Route{s.color_a}, data, s.n, s.op); break;
        case StepKind::relay: relay(f, Route{s.color_a}, Route{s.color_b}, data, s.n, s.op); break;
        case StepKind::advance: advance(f, Route{s.color_a}); break;
        case StepKind::exchange: break;
    }
}

/// Step i of the program in f's arguments, run with the device verbs (wafer.hpp) on the element
/// type arg 0 names. The one step interpreter: run_steps below, and the emulation's program mode
/// (which runs a step again from its start when a verb must wait).
template <class F>
inline void run_step(F& f, uint32_t i) {
    const Step s = decode_step(f.arg(2 + i * step_words), f.arg(3 + i * step_words), f.arg(4 + i * step_words));
    switch (coll::DataType(f.arg(0))) {
        case coll::DataType::f32: run_step_as<float>(f, s); break;
        case coll::DataType::i32: run_step_as<int32_t>(f, s); break;
        case coll::DataType::u32: run_step_as<uint32_t>(f, s); break;
        default: break;  // the wafer combines 4-byte types only (supports(DataType))
    }
}

/// The kernel: runs the steps in its arguments.
template <class F>
inline void run_steps(F& f) {
    const uint32_t count = f.arg(1);
    for (uint32_t i = 0; i < count; ++i) run_step(f, i);
}

}  // namespace kccl::wafer

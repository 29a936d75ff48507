// kccl/ipcq/trace.hpp — optional per-operation trace of an IPCQ core.
//
// WHAT IT IS
//   kccl::ipcq::Queues<H, Dirs, Policy, Tracer> calls `(*tracer)(event)` after every completed
//   send and recv when it was given a non-null Tracer*. `TraceLog<Clock>` is a ready tracer that
//   stores (rank, time, op, dir, nbytes, seq) records into caller-owned storage (no heap; on
//   hardware the storage can be L1). The contract has no clock, so the time source is a functor
//   `uint64_t Clock::operator()()` supplied by the caller (a cycle counter on hardware,
//   steady_clock in the emulation). Records beyond `capacity` are counted in `dropped`.
#pragma once

#include <hal/config.hpp>

#include <stdint.h>

namespace kccl::ipcq {

enum class TraceOp : uint32_t { send = 0, recv = 1 };

struct TraceEvent {
    TraceOp op;
    uint32_t rank;
    uint32_t dir;
    uint32_t nbytes;
    uint32_t seq;  ///< sequence number of the message on its link (0-based)
};

struct TraceRecord {
    uint64_t time;
    TraceEvent event;
};

/// The default: no tracing, no cost.
struct NoTrace {
    void operator()(const TraceEvent&) const {}
};

template <class Clock>
struct TraceLog {
    TraceRecord* records = nullptr;
    uint32_t capacity = 0;
    uint32_t count = 0;
    uint32_t dropped = 0;
    Clock clock{};

    void operator()(const TraceEvent& e) {
        if (count < capacity) records[count++] = TraceRecord{static_cast<uint64_t>(clock()), e};
        else ++dropped;
    }
};

}  // namespace kccl::ipcq

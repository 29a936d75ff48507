// kccl/emulation/signals.hpp — what each core has signalled, for the hang dump.
//
// Every core keeps a small log of the words it has signalled in the current run: each semaphore
// increment, inline write and Ethernet send it issued (a semaphore multicast: one entry per
// destination, named sem_inc_mcast / sem_set_mcast), by destination core and byte range, with a
// count. When a run hangs, the dump looks up, for every waiting core, who has ever signalled the
// word it waits on (and whether those cores have finished), and which cores running the same
// kernel never did — the signature of a worker that returned with its signal never sent.
//
// Written only by the owning core (relaxed atomics, so the watchdog thread may read it while
// the core runs); at most kMax distinct (destination, range, operation) entries, then `full`.
#pragma once

#include <atomic>
#include <cstdint>

namespace kccl::emu::detail {

struct CoreState;

/// The operation that signalled: a multicast one is named as such (each destination of a
/// multicast records one signal).
enum class SignalOp : uint8_t { sem_inc, inline_write, eth_send, sem_inc_mcast, sem_set_mcast };

inline const char* to_string(SignalOp o) {
    switch (o) {
        case SignalOp::sem_inc: return "sem_inc";
        case SignalOp::inline_write: return "noc_inline_write32";
        case SignalOp::eth_send: return "eth_send";
        case SignalOp::sem_inc_mcast: return "sem_inc_mcast";
        case SignalOp::sem_set_mcast: return "sem_set_mcast";
    }
    return "?";
}

struct SignalLog {
    static constexpr uint32_t kMax = 32;
    struct Entry {
        std::atomic<const CoreState*> dst{nullptr};
        std::atomic<uint32_t> begin{0}, end{0};
        std::atomic<uint32_t> count{0};
        std::atomic<SignalOp> op{SignalOp::sem_inc};
    };
    Entry entries[kMax];
    std::atomic<uint32_t> size{0};
    std::atomic<bool> full{false};
    uint32_t last = 0;  ///< owner only: the entry recorded last (a stream signals one word)

    /// Records one signal of [begin, end) of `dst` (the owning core only). Ethernet sends to one
    /// peer share one entry whose range covers them all (an EDM cycles through its buffers).
    void record(const CoreState* dst, uint32_t begin, uint32_t end, SignalOp op) noexcept {
        Entry& l = entries[last];
        if (l.dst.load(std::memory_order_relaxed) == dst && l.op.load(std::memory_order_relaxed) == op &&
            (op == SignalOp::eth_send ? begin >= l.begin.load(std::memory_order_relaxed) && end <= l.end.load(std::memory_order_relaxed)
                                      : l.begin.load(std::memory_order_relaxed) == begin)) [[likely]] {
            l.count.store(l.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            return;
        }
        record_slow(dst, begin, end, op);
    }
    [[gnu::noinline]] void record_slow(const CoreState* dst, uint32_t begin, uint32_t end, SignalOp op) noexcept {
        const uint32_t n = size.load(std::memory_order_relaxed);
        for (uint32_t i = 0; i < n; ++i) {
            Entry& e = entries[i];
            if (e.dst.load(std::memory_order_relaxed) == dst && e.op.load(std::memory_order_relaxed) == op &&
                (op == SignalOp::eth_send || e.begin.load(std::memory_order_relaxed) == begin)) {
                if (begin < e.begin.load(std::memory_order_relaxed)) e.begin.store(begin, std::memory_order_relaxed);
                if (end > e.end.load(std::memory_order_relaxed)) e.end.store(end, std::memory_order_relaxed);
                e.count.store(e.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
                last = i;
                return;
            }
        }
        if (n == kMax) {
            full.store(true, std::memory_order_relaxed);
            return;
        }
        Entry& e = entries[n];
        e.dst.store(dst, std::memory_order_relaxed);
        e.begin.store(begin, std::memory_order_relaxed);
        e.end.store(end, std::memory_order_relaxed);
        e.op.store(op, std::memory_order_relaxed);
        e.count.store(1, std::memory_order_relaxed);
        size.store(n + 1, std::memory_order_release);
        last = n;
    }
    /// Forgets everything (the launcher, before a run).
    void clear() noexcept {
        for (auto& e : entries) {
            e.dst.store(nullptr, std::memory_order_relaxed);
            e.count.store(0, std::memory_order_relaxed);
        }
        size.store(0, std::memory_order_relaxed);
        full.store(false, std::memory_order_relaxed);
        last = 0;
    }
};

}  // namespace kccl::emu::detail

// kccl/emulation/hal/delivery_timed.hpp — the timed delivery policy of kccl::emu::Hal.
//
// Fiber engine with a timing model (RunOptions::timing): every operation charges its issue cost
// to the core's virtual clock; a NoC write, inline write, increment or Ethernet send takes its
// source bytes when issued and lands in an event the scheduler runs at the model's arrival time
// (timing.hpp); a NoC read takes its data at once and noc_read_barrier() waits for the modelled
// completion; noc_write_barrier() advances the clock to the last write's arrival. A busy Ethernet
// tx queue (E2) makes the sender wait until its last packet has left. The model keeps each
// path's arrivals in issue order, so N1 and E1-E3 hold by construction.
#pragma once

#include "../hal.hpp"

namespace kccl::emu {

inline void Hal::deliver_notify(detail::Scheduler* s, detail::CoreState* d) {
    d->fiber_epoch.store(d->fiber_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s->on_write(d);
}

/// A NoC write (source bytes taken now), inline write or increment landing at the model's time.
inline void Hal::timed_write(Op op, detail::CoreState* d, uint32_t off, uint32_t bytes, const uint8_t* src, NocOp kind,
                 uint32_t value) {
    const vtime_t t0 = sched_->now();
    sched_->charge(op, bytes);
    const vtime_t t1 = sched_->now();
    const vtime_t arr = model_->noc_arrival(me_->coord, d->coord, bytes, t1);
    write_done_ = std::max(write_done_, arr);
    detail::Scheduler* s = sched_;
    uint8_t* dst = d->mem + off;
    if (kind == NocOp::write) {
        sched_->at(arr, [s, d, dst, data = std::vector<uint8_t>(src, src + bytes)] {
            std::memcpy(dst, data.data(), data.size());
            deliver_notify(s, d);
        });
    } else {
        sched_->at(arr, [s, d, dst, kind, value] {
            std::atomic_ref<uint32_t> w(*reinterpret_cast<uint32_t*>(dst));
            if (kind == NocOp::inc) w.fetch_add(value, std::memory_order_release);
            else w.store(value, std::memory_order_release);
            deliver_notify(s, d);
        });
    }
    if (trace_) trace_flow(to_string(op), t0, t1, d, arr, bytes);
}

inline void Hal::timed_eth_send(uint32_t q, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, detail::CoreState* peer) {
    // A busy queue makes the sender wait (E2) until its last packet has left.
    const vtime_t t0 = sched_->now();
    sched_->advance_to(model_->eth_txq_free(me_->coord, q));
    sched_->charge(Op::eth_send, bytes);
    const vtime_t t1 = sched_->now();
    const vtime_t arr = model_->eth_arrival(me_->coord, q, bytes, t1);
    detail::Scheduler* s = sched_;
    uint8_t* dst = peer->mem + dst_l1;
    sched_->at(arr, [s, peer, dst, data = std::vector<uint8_t>(mem_ + src_l1, mem_ + src_l1 + bytes)] {
        const size_t n = data.size();
        if (n > 16) std::memcpy(dst, data.data(), n - 16);
        detail::store_word16_release(dst + n - 16, data.data() + n - 16);
        deliver_notify(s, peer);
    });
    if (trace_) trace_flow("eth_send", t0, t1, peer, arr, bytes);
}

inline void Hal::trace_flow(const char* what, vtime_t t0, vtime_t t1, detail::CoreState* d, vtime_t arr, uint32_t bytes) {
    detail::IgnoreScope ig;
    trace_->slice(track_, what, t0, t1, "{\"to\":\"" + d->name() + "\",\"bytes\":" + std::to_string(bytes) + "}");
    const uint64_t f = trace_->flow_begin(track_, t1);
    trace_->flow_end(f, trace_->track(d->coord, d->name()), arr);
}

inline void Hal::timed_read(detail::CoreState* s, uint32_t off, uint32_t dst_l1, uint32_t bytes) {
    // The data is taken now; the barrier waits for the modelled completion.
    sched_->charge(Op::noc_read, bytes);
    read_done_ = std::max(read_done_, model_->noc_read_done(me_->coord, s->coord, bytes, sched_->now()));
    std::memcpy(mem_ + dst_l1, s->mem + off, bytes);
}

inline bool Hal::timed_txq_busy(uint32_t queue) {
    sched_->charge(Op::eth_txq_check, 0);
    const vtime_t free_at = model_->eth_txq_free(me_->coord, queue);
    if (sched_->now() >= free_at) return false;
    txq_until_ = std::max(txq_until_, free_at);  // an idle() after this sleeps until then
    return true;
}

}  // namespace kccl::emu

// kccl/emulation/hal/multicast.hpp — NoC multicast in kccl::emu::Hal (contract: MULTICAST, M1-M3).
//
// noc_write_mcast, sem_set_mcast and sem_inc_mcast check their rectangle (named errors: empty or
// inverted, outside the chip's NoC grid, a non-Tensix core inside, a wrong num_dests, a sender
// inside without loopback / outside with it, a loopback write whose source and destination
// overlap without being the same range) and then become ONE delivery per destination core:
//   immediate    every destination written before the call returns (row by row);
//   adversarial  one in-flight operation per destination, marked `mcast` and stamped with the
//                core's flush epoch (the number of noc_writes_flushed / noc_write_barrier calls so
//                far). MulticastAware (below) wraps the ordering profile: a multicast operation
//                and any other operation of the same core to the same destination are ordered
//                only if their epochs differ (a flush or barrier between them, M1); otherwise the
//                profile decides. So the adversary may land a semaphore multicast before the data
//                multicast issued just before it, and reaches the destinations in any order (M2).
//   timed        one injection at the sender's NoC port, then an arrival per destination by its
//                hop distance (TimingModel::noc_mcast_arrivals; docs/emulation-timing.md).
// The race detector sees a write (or a semaphore word) at every destination, on multicast lanes
// of their own, which a flush joins with the core's other lanes to the same destination
// (race.hpp).
#pragma once

#include "../hal.hpp"
#include "multicast_ordering.hpp"

namespace kccl::emu {


inline void Hal::noc_write_mcast(uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1, uint32_t bytes,
                                 uint32_t num_dests, bool loopback, const char* file_, uint32_t line_) {
    mcast(NocOp::write, "noc_write_mcast", src_l1, rect, dst_l1, bytes, 0, num_dests, loopback, {file_, line_});
}

inline void Hal::sem_set_mcast(uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1, uint32_t num_dests,
                               bool loopback, const char* file_, uint32_t line_) {
    mcast(NocOp::inline32, "sem_set_mcast", src_l1, rect, dst_l1, 4, 0, num_dests, loopback, {file_, line_});
}

inline void Hal::sem_inc_mcast(hal::NocRect rect, uint32_t dst_l1, uint32_t n, uint32_t num_dests,
                               const char* file_, uint32_t line_) {
    mcast(NocOp::inc, "sem_inc_mcast", 0, rect, dst_l1, 4, n, num_dests, /*loopback=*/false, {file_, line_});
}

inline void Hal::mcast_targets(const char* op, hal::NocRect r, uint32_t dst_l1, uint32_t bytes, uint32_t num_dests,
                               bool loopback) {
    const auto rect_s = [&] {
        return "rectangle (" + std::to_string(r.x0) + "," + std::to_string(r.y0) + ")..(" + std::to_string(r.x1) +
               "," + std::to_string(r.y1) + ")";
    };
    if (r.x1 < r.x0 || r.y1 < r.y0)
        fail(op, "empty or inverted " + rect_s() +
                     ": a multicast rectangle is (x0,y0)..(x1,y1) inclusive with x0 <= x1 and y0 <= y1 (the corner "
                     "order each NoC needs is the backend's business)");
    const Chip& chip = cluster_->chip(me_->coord.chip);
    mcast_dsts_.clear();
    for (uint32_t y = r.y0; y <= r.y1; ++y)
        for (uint32_t x = r.x0; x <= r.x1; ++x) {
            detail::CoreState* d = x > kCoordMax || y > kCoordMax ? nullptr : chip.find(x, y);
            if (!d)
                fail(op, rect_s() + " has core (" + std::to_string(x) + "," + std::to_string(y) +
                             ") outside the NoC grid of chip " + std::to_string(me_->coord.chip) + "; " +
                             chip.describe_grid());
            if (d->kind != CoreKind::worker)
                fail(op, rect_s() + " contains " + d->name() +
                             ", which is not a Tensix (worker) core: NoC multicast reaches only Tensix cores "
                             "(tt-metal's multicast API); " + chip.describe_grid());
            if (uint64_t(dst_l1) + bytes > d->mem_size)
                fail(op, "range [" + detail::hex(dst_l1) + ", " + detail::hex(uint64_t(dst_l1) + bytes) + ") on " +
                             d->name() + " exceeds its memory of " + std::to_string(d->mem_size) + " bytes");
            mcast_dsts_.push_back(d);
        }
    const bool inside = r.contains(me_->coord.x, me_->coord.y);
    if (loopback && !inside)
        fail(op, "loopback multicast, but the sender " + me_->name() + " is outside the " + rect_s() +
                     ": loopback writes the sender as one of the destinations, so it must be inside");
    if (!loopback && inside)
        fail(op, "the sender " + me_->name() + " is inside the " + rect_s() +
                     " without loopback: a multicast sender cannot be one of its own destinations (tt-metal); use "
                     "loopback, or a rectangle without the sender" +
                     (std::string(op) == "sem_inc_mcast" ? " (sem_inc_mcast has no loopback form)" : ""));
    const uint32_t cores = r.cores();
    if (num_dests != cores)
        fail(op, "num_dests is " + std::to_string(num_dests) + " but the " + rect_s() + " holds " +
                     std::to_string(cores) + " core(s)" + (loopback ? ", the sender included" : "") +
                     "; allowed: num_dests == the number of cores in the rectangle");
}

inline void Hal::mcast(NocOp kind, const char* op, uint32_t src_l1, hal::NocRect rect, uint32_t dst_l1,
                       uint32_t bytes, uint32_t value, uint32_t num_dests, bool loopback, Loc loc) {
    step();
    if (kind != NocOp::inc) check_local(src_l1, bytes, op);
    if (kind != NocOp::write) {
        if (kind == NocOp::inline32) check_word_aligned(src_l1, op);
        check_word_aligned(dst_l1, op);
    }
    mcast_targets(op, rect, dst_l1, bytes, num_dests, loopback);
    if (kind == NocOp::write && loopback && src_l1 != dst_l1 && src_l1 < dst_l1 + bytes && dst_l1 < src_l1 + bytes)
        fail(op, "loopback write: the source [" + detail::hex(src_l1) + ", " + detail::hex(uint64_t(src_l1) + bytes) +
                     ") and the destination [" + detail::hex(dst_l1) + ", " + detail::hex(uint64_t(dst_l1) + bytes) +
                     ") overlap on the sender; allowed: the same range, or disjoint ranges");
    // sem_set_mcast sends the word at src_l1: read now (any time before the next flush is legal,
    // N3; the race detector reports a store into it before the flush).
    if (kind == NocOp::inline32)
        value = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(mem_ + src_l1)).load(std::memory_order_acquire);
    // Strict adversary, N7: the NoC reads the source once for every destination; with unfenced
    // stores over it, at random it reads the bytes from before them (a data multicast's source,
    // a semaphore multicast's word).
    std::vector<uint8_t> stale;
    if (adv_ && strict_ && kind != NocOp::inc && !unfenced_.empty() && stale_read(src_l1, bytes, stale) &&
        kind == NocOp::inline32)
        std::memcpy(&value, stale.data(), 4);
    if (race_) {
        if (kind == NocOp::write) race_->mcast_write(me_, src_l1, mcast_dsts_, dst_l1, bytes, loc);
        else race_->mcast_word(me_, src_l1, mcast_dsts_, dst_l1, kind == NocOp::inc, loc);
    }
    if (kind != NocOp::write)
        for (detail::CoreState* d : mcast_dsts_)
            me_->signals.record(d, dst_l1, dst_l1 + 4,
                                kind == NocOp::inc ? detail::SignalOp::sem_inc_mcast : detail::SignalOp::sem_set_mcast);
    if (timed_) {
        timed_mcast(kind, src_l1, dst_l1, bytes, value);
    } else if (adv_) {
        for (detail::CoreState* d : mcast_dsts_) {
            if (kind == NocOp::write && d == me_ && src_l1 == dst_l1) continue;  // writes the same bytes
            PendingNoc p{kind, d, dst_l1, bytes, src_l1, value, 0, {}};
            if (kind == NocOp::write) p.snapshot = stale;  // empty: the source is read as it lands
            p.mcast = true;
            enqueue(std::move(p));
        }
    } else {
        for (detail::CoreState* d : mcast_dsts_) {
            switch (kind) {
                case NocOp::write:
                    if (!(d == me_ && src_l1 == dst_l1)) immediate_write(d, dst_l1, src_l1, bytes);
                    break;
                case NocOp::inline32: immediate_inline32(d, dst_l1, value); break;
                case NocOp::inc: immediate_inc(d, dst_l1, value); break;
            }
        }
    }
    me_->bump_progress();
}

/// Timed: one issue cost and one injection; each destination's copy lands at its own arrival.
inline void Hal::timed_mcast(NocOp kind, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes, uint32_t value) {
    const vtime_t t0 = sched_->now();
    sched_->charge(kind == NocOp::write ? Op::noc_write : kind == NocOp::inc ? Op::sem_inc : Op::noc_inline_write, bytes);
    const vtime_t t1 = sched_->now();
    std::vector<CoreCoord> at;
    at.reserve(mcast_dsts_.size());
    for (detail::CoreState* d : mcast_dsts_) at.push_back(d->coord);
    std::vector<vtime_t> arr(at.size());
    model_->noc_mcast_arrivals(me_->coord, at.data(), at.size(), bytes, t1, arr.data());
    detail::Scheduler* s = sched_;
    std::shared_ptr<const std::vector<uint8_t>> data;
    if (kind == NocOp::write) data = std::make_shared<const std::vector<uint8_t>>(mem_ + src_l1, mem_ + src_l1 + bytes);
    for (size_t k = 0; k < mcast_dsts_.size(); ++k) {
        detail::CoreState* d = mcast_dsts_[k];
        write_done_ = std::max(write_done_, arr[k]);
        uint8_t* dst = d->mem + dst_l1;
        if (kind == NocOp::write) {
            sched_->at(arr[k], [s, d, dst, data] {
                std::memmove(dst, data->data(), data->size());
                deliver_notify(s, d);
            });
        } else {
            sched_->at(arr[k], [s, d, dst, kind, value] {
                std::atomic_ref<uint32_t> w(*reinterpret_cast<uint32_t*>(dst));
                if (kind == NocOp::inc) w.fetch_add(value, std::memory_order_release);
                else w.store(value, std::memory_order_release);
                deliver_notify(s, d);
            });
        }
        if (trace_) trace_flow(kind == NocOp::write ? "noc_write_mcast" : kind == NocOp::inc ? "sem_inc_mcast" : "sem_set_mcast",
                               t0, t1, d, arr[k], bytes);
    }
}

}  // namespace kccl::emu

// kccl/emulation/hal/delivery_adversarial.hpp — the adversarial delivery policy of kccl::emu::Hal.
//
// Adversarial mode (RunOptions::adversary.enabled, seeded): deliveries are delayed and split as
// far as the contract allows, so a protocol that relies on an ordering the contract does not
// promise fails:
//   * NoC writes, inline writes and semaphore increments are queued in issue order and land in
//     any order the ordering profile allows (ordering.hpp; by default N1: one FIFO per
//     destination core — the next operation to a destination starts landing only after the
//     previous one has landed completely; across destinations in random order, N6. The strict
//     profile, ordering_strict.hpp, also lands an increment or inline write before a write to
//     the same core issued before it unless a flush separates them). They land
//     at `noc_write_barrier()` (N2), at random delivery steps of the issuing core, and when its
//     kernel returns. A write lands in up to 8 pieces (4-byte multiples) in random order,
//     possibly over several delivery steps, each piece reading its source when it lands: until a
//     write has landed, any subset of its bytes may be visible. `noc_writes_flushed()` snapshots
//     the sources but does not land the writes. At most kAdvNocDepth operations are in flight
//     per core; issuing one more first performs a delivery step (NoC backpressure).
//   * NoC reads are queued and land at `noc_read_barrier()` (N4) or at random moments.
//   * Strict profile only (N7): a NoC write (or a noc_write_mcast, or a sem_set_mcast's source
//     word) whose source overlaps stores the core declared with note_write and has not fenced
//     (l1_store_fence) sends, at random, the bytes as they were before those stores (taken when
//     the core got the l1_ptr pointer it stored through); a multicast sends the same bytes to
//     every destination.
//   * Ethernet sends are queued per tx queue and delivered 16-byte word by word in address order,
//     each word one 16-byte release store (E3), interleaving the two queues at random (E2),
//     reading the source at delivery time (E1);
//     `eth_txq_busy` reports busy at random while a queue holds commands.
//   * The issuing core performs deliveries whenever it calls into the backend, and drains them
//     all before it sleeps and when its kernel returns, so nothing is ever lost (at kernel end
//     step by step with yields between, Hal::drain: the others observe the in-between states).
//   The random choices come from a per-core xorshift seeded by (seed, core): a failing seed is
//   reported and can be replayed (on the thread engine, thread interleaving itself is still up
//   to the OS; the fiber engine replays exactly).
#pragma once

#include "../hal.hpp"
#include "multicast_ordering.hpp"

namespace kccl::emu {

inline bool Hal::coin(uint32_t percent) {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return (rng_ % 100) < percent;
}

inline uint32_t Hal::pick(uint32_t n) {
    coin(0);
    return uint32_t(rng_ % n);
}

inline void Hal::start_hold() {
    const AdversaryOptions& a = run_->adversary;
    if (sched_) {
        // Deterministic engine: hold for a seeded number of scheduling rounds, not host time.
        hold_left_ = 0;
        if (has_pending() && a.max_hold.count() > 0 && coin(a.hold_percent))
            hold_left_ = 1 + pick(uint32_t(std::min<int64_t>(a.max_hold.count(), kMaxHoldRounds)));
        return;
    }
    hold_until_ = {};
    if (has_pending() && a.max_hold.count() > 0 && coin(a.hold_percent))
        hold_until_ = std::chrono::steady_clock::now() +
                      std::chrono::microseconds(1 + pick(uint32_t(a.max_hold.count())));
}

inline bool Hal::holding() const {
    if (sched_) return hold_left_ > 0;
    return hold_until_ != std::chrono::steady_clock::time_point{} &&
           std::chrono::steady_clock::now() < hold_until_;
}

void Hal::step_slow() {
    if (sched_) {
        polls_since_op_ = 0;
        // Deliver first, then maybe switch: the others may react to what just landed before
        // this core's operation takes effect (the window a wrong ordering needs).
        if (has_pending() && coin(run_->adversary.deliver_percent)) deliver_one();
        sched_->point();
        // Deterministic engine: the delay is a yield (the others run meanwhile).
        if (coin(run_->adversary.delay_percent)) {
            check_abort();
            sched_->yield();
        }
        return;
    }
    if (!adv_) return;
    if (coin(run_->adversary.delay_percent)) {
        if (coin(50)) std::this_thread::yield();
        else for (uint32_t i = pick(2000); i; --i) cpu_relax();
    }
    if (has_pending() && coin(run_->adversary.deliver_percent)) deliver_one();
}

inline void Hal::deliver_one() {
    uint32_t kinds[3];
    uint32_t n = 0;
    if (!noc_.empty()) kinds[n++] = 0;
    if (!reads_.empty()) kinds[n++] = 1;
    if (!eth_[0].empty() || !eth_[1].empty()) kinds[n++] = 2;
    if (n == 0) return;
    switch (kinds[pick(n)]) {
        case 0: deliver_noc_step(); break;
        case 1: land_read(); break;
        default: {
            uint32_t q = eth_[0].empty() ? 1 : eth_[1].empty() ? 0 : pick(2);
            deliver_eth_step(q);
        }
    }
    me_->bump_progress();
}

inline void Hal::enqueue(PendingNoc op) {
    while (noc_.size() >= kAdvNocDepth) deliver_noc_step();
    op.flushes = flushes_;
    // A multicast's source was read once for all its destinations (Hal::mcast).
    if (op.kind == NocOp::write && !op.mcast && !unfenced_.empty()) stale_source(op);
    noc_.push_back(std::move(op));
}

/// l1_ptr (strict adversary): remember a small range as it is now, before the caller stores.
inline void Hal::remember_pre_store(uint32_t l1, uint32_t bytes) {
    if (bytes == 0 || bytes > kPreStoreMaxBytes) return;
    for (auto it = pre_store_.begin(); it != pre_store_.end(); ++it)
        if (it->l1 == l1 && it->old.size() == bytes) {
            pre_store_.erase(it);  // taken again: the older copy is at least as stale; keep the newest slot order
            break;
        }
    if (pre_store_.size() == kPreStoreSlots) pre_store_.pop_front();
    // The model's snapshot, not a load of the kernel's: taking a pointer reads nothing, and the
    // range may hold bytes another core is writing (a descriptor array, a mailbox). Outside
    // TSan's view on the fiber engine, where cores are TSan fibers without switch edges.
    detail::IgnoreScope ig;
    pre_store_.push_back({l1, std::vector<uint8_t>(mem_ + l1, mem_ + l1 + bytes)});
}

/// note_write (strict adversary): the bytes of [l1, l1 + bytes) that differ from a remembered
/// pre-store copy were stored and are not fenced: a NoC write may still read the old values.
inline void Hal::note_store(uint32_t l1, uint32_t bytes) {
    detail::IgnoreScope ig;  // the model comparing its snapshots (remember_pre_store)
    for (const StoreRange& p : pre_store_) {
        const uint32_t b = std::max(l1, p.l1), e = std::min<uint32_t>(l1 + bytes, p.l1 + uint32_t(p.old.size()));
        if (b >= e || std::memcmp(mem_ + b, p.old.data() + (b - p.l1), e - b) == 0) continue;
        if (unfenced_.size() == kUnfencedMax) unfenced_.erase(unfenced_.begin());
        unfenced_.push_back({b, std::vector<uint8_t>(p.old.begin() + (b - p.l1), p.old.begin() + (e - p.l1))});
    }
}

/// l1_store_fence (strict adversary): stores to [l1, l1 + bytes) are in L1; remembered copies of
/// those bytes take their current values (a later store's pre-store value is the fenced one).
inline void Hal::fence_stores(uint32_t l1, uint32_t bytes) {
    const uint32_t end = l1 + bytes;
    std::erase_if(unfenced_, [&](const StoreRange& u) { return u.l1 < end && l1 < u.l1 + uint32_t(u.old.size()); });
    for (StoreRange& p : pre_store_) {
        const uint32_t b = std::max(l1, p.l1), e = std::min<uint32_t>(end, p.l1 + uint32_t(p.old.size()));
        if (b < e) std::memcpy(p.old.data() + (b - p.l1), mem_ + b, e - b);
    }
}

/// A NoC operation issued while its source [src, src + bytes) overlaps unfenced stores (strict,
/// N7): at random (true) it reads its source now, with the pre-store bytes in place of the stored
/// ones, into `out`. Used by noc_write, noc_write_mcast (one read for all destinations) and
/// sem_set_mcast (its source word).
inline bool Hal::stale_read(uint32_t src, uint32_t bytes, std::vector<uint8_t>& out) {
    bool overlaps = false;
    for (const StoreRange& u : unfenced_)
        overlaps = overlaps || (u.l1 < src + bytes && src < u.l1 + uint32_t(u.old.size()));
    if (!overlaps || !coin(kStaleSourcePercent)) return false;
    out.assign(mem_ + src, mem_ + src + bytes);
    for (const StoreRange& u : unfenced_) {
        const uint32_t b = std::max(src, u.l1), e = std::min<uint32_t>(src + bytes, u.l1 + uint32_t(u.old.size()));
        if (b < e) std::memcpy(out.data() + (b - src), u.old.data() + (b - u.l1), e - b);
    }
    return true;
}

/// A NoC write issued while its source overlaps unfenced stores (strict, N7): at random it reads
/// its source now, with the pre-store bytes in place of the stored ones.
inline void Hal::stale_source(PendingNoc& op) {
    std::vector<uint8_t> old;
    if (stale_read(op.src, op.bytes, old)) op.snapshot = std::move(old);
}

inline void Hal::piece_range(uint32_t bytes, uint32_t k, uint32_t& begin, uint32_t& end) {
    const uint32_t n = pieces(bytes);
    const uint32_t per = ((bytes / n) + 3) & ~3u;  // a multiple of 4, n * per >= bytes
    begin = std::min(bytes, k * per);
    end = k + 1 == n ? bytes : std::min(bytes, (k + 1) * per);
}

/// One delivery step of the NoC: picks an in-flight operation at random and lands (part of) the
/// earliest operation the ordering profile puts before it (ordering.hpp; N1: the OLDEST
/// operation to the same destination). A write lands a random number of its remaining pieces,
/// in random order; the operation leaves the queue once it has landed completely.
inline void Hal::deliver_noc_step() {
    const size_t p = pick(uint32_t(noc_.size()));
    const size_t i = strict_ ? detail::next_to_land<detail::MulticastAware<detail::StrictOrdering>>(noc_, p)
                             : detail::next_to_land<detail::MulticastAware<detail::NocOrdering>>(noc_, p);
    PendingNoc& op = noc_[i];
    detail::CoreState* d = op.dst;
    bool done = true;
    switch (op.kind) {
        case NocOp::inc:
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + op.dst_off))
                .fetch_add(op.value, std::memory_order_release);
            break;
        case NocOp::inline32:
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(d->mem + op.dst_off))
                .store(op.value, std::memory_order_release);
            break;
        case NocOp::write: {
            const uint32_t n = pieces(op.bytes);
            uint32_t remaining[kAdvMaxPieces];
            uint32_t r = 0;
            for (uint32_t k = 0; k < n; ++k)
                if (!(op.landed >> k & 1)) remaining[r++] = k;
            // Land the remaining pieces in random order: all of them (kAdvWholeWritePercent),
            // or a random 1..r-1 of them, the rest in later steps (other cores run between).
            const uint32_t now = r == 1 || coin(kAdvWholeWritePercent) ? r : 1 + pick(r - 1);
            for (uint32_t count = now; count; --count) {
                const uint32_t j = pick(r);
                const uint32_t k = remaining[j];
                remaining[j] = remaining[--r];
                uint32_t b, e;
                piece_range(op.bytes, k, b, e);
                const uint8_t* src = op.snapshot.empty() ? mem_ + op.src : op.snapshot.data();
                if (e > b) std::memcpy(d->mem + op.dst_off + b, src + b, e - b);
                op.landed |= 1u << k;
            }
            done = r == 0;
            break;
        }
    }
    notify(d);
    if (done) noc_.erase(noc_.begin() + std::ptrdiff_t(i));
}

inline void Hal::land_read() {
    PendingRead r = reads_.front();
    reads_.pop_front();
    std::memcpy(mem_ + r.dst, r.src->mem + r.src_off, r.bytes);
}

inline void Hal::deliver_eth_step(uint32_t q) {
    PendingEth& c = eth_[q].front();
    uint32_t words = 1 + pick(run_->adversary.max_words_per_step);
    for (; words && c.done < c.bytes; --words, c.done += 16) {
        uint8_t* d = c.peer->mem + c.dst + c.done;
        const uint8_t* s = mem_ + c.src + c.done;
        // Every word is one 16-byte release store, in address order: a receiver polling
        // ANY word of a packet in flight sees all words before it (E3), race-free.
        detail::store_word16_release(d, s);
    }
    notify(c.peer);
    if (c.done == c.bytes) eth_[q].pop_front();
}

inline void Hal::adversarial_eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes,
                                      detail::CoreState* peer) {
    // A busy queue makes the sender wait (E2); here: deliver until it has room.
    while (eth_[queue].size() >= kAdvQueueDepth) deliver_eth_step(queue);
    eth_[queue].push_back({src_l1, dst_l1, bytes, 0, peer});
}

/// noc_writes_flushed(): every write in flight has read its source (N3) — take the source bytes
/// now; the writes still land later.
inline void Hal::snapshot_sources() {
    for (auto& w : noc_)
        if (w.kind == NocOp::write && w.snapshot.empty())
            w.snapshot.assign(mem_ + w.src, mem_ + w.src + w.bytes);
}

}  // namespace kccl::emu

// kccl/emulation/hal/checks.hpp — kccl::emu::Hal's checks of bad input.
//
// An address out of range, an unaligned semaphore, an unaligned or link-less eth_send, a NoC
// address of another chip or of no core, a runtime-arg index out of range: each throws
// EmulationError naming the core, the operation and the bound (the launcher turns it into a
// failed run). The checks are on every operation's path: the fast test is inline and the message
// is built out of line (cold).
#pragma once

#include "../hal.hpp"

namespace kccl::emu {

[[noreturn]] inline void Hal::fail(const char* op, const std::string& what) const {
    throw EmulationError(me_->name() + ": " + op + ": " + what);
}

// The checks are on every operation's path: the message is built out of line.
inline void Hal::check_local(uint32_t l1, uint32_t bytes, const char* op) const {
    if (uint64_t(l1) + bytes > mem_size_) [[unlikely]]
        local_range_error(l1, bytes, op);
}

void Hal::local_range_error(uint32_t l1, uint32_t bytes, const char* op) const {
    fail(op, "L1 range [" + detail::hex(l1) + ", " + detail::hex(uint64_t(l1) + bytes) +
                 ") exceeds this core's L1 of " + std::to_string(mem_size_) +
                 " bytes (allowed: addr + bytes <= " + std::to_string(mem_size_) + ")");
}

inline void Hal::check_word_aligned(uint32_t off, const char* op) const {
    if (off % 4) [[unlikely]]
        alignment_error(off, op);
}

void Hal::alignment_error(uint32_t off, const char* op) const {
    fail(op, "semaphore address " + detail::hex(off) + " is not 4-byte aligned");
}

/// A semaphore word of this core's L1: in range and 4-byte aligned, tested with ONE compare
/// (every semaphore operation's path): rotating l1 right by 2 gives the word index of an
/// aligned address and a value >= 2^30 (> any word count) for a misaligned one.
[[gnu::always_inline]] inline std::atomic_ref<uint32_t> Hal::word(uint32_t l1, const char* op) {
    if (((l1 >> 2) | (l1 << 30)) >= mem_words_) [[unlikely]]
        word_error(l1, op);
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(mem_ + l1));
}

void Hal::word_error(uint32_t l1, const char* op) const {
    check_local(l1, 4, op);
    check_word_aligned(l1, op);
    fail(op, "semaphore address " + detail::hex(l1) + " was refused");
}

[[gnu::always_inline]] inline Hal::Resolved Hal::resolve(noc_addr_t a, uint32_t bytes, const char* op) const {
    const uint32_t off = uint32_t(a);
    // A kernel addresses the same few cores over and over: the cores found are kept in a
    // small direct-mapped cache keyed by the address's upper half (tag, chip, x, y, all
    // checked when the core was found); slot (x + 2y) mod 8 keeps the four mesh neighbours
    // of a core apart.
    // First the core found last (a stream addresses one peer: payload, then its flag), then
    // the cache.
    const uint64_t key = a >> 32;
    if (key == last_key_ && uint64_t(off) + bytes <= last_->mem_size) [[likely]]
        return {last_, off};
    return resolve_cached(a, bytes, op);
}

[[gnu::always_inline]] inline Hal::Resolved Hal::resolve_cached(noc_addr_t a, uint32_t bytes, const char* op) const {
    const uint32_t off = uint32_t(a);
    const uint64_t key = a >> 32;
    const uint32_t i = resolve_slot(key);
    if (key == resolved_key_[i] && uint64_t(off) + bytes <= resolved_[i]->mem_size) [[likely]] {
        last_key_ = key;
        last_ = resolved_[i];
        return {resolved_[i], off};
    }
    return resolve_lookup(a, bytes, op);
}

Hal::Resolved Hal::resolve_lookup(noc_addr_t a, uint32_t bytes, const char* op) const {
    const uint32_t off = uint32_t(a);
    const uint32_t chip = addr_chip(a);
    if ((a >> 63) && chip == me_->coord.chip) [[likely]] {
        detail::CoreState* d = cluster_->chip(chip).find(addr_x(a), addr_y(a));
        if (d && uint64_t(off) + bytes <= d->mem_size) [[likely]] {
            const uint32_t i = resolve_slot(a >> 32);
            resolved_key_[i] = a >> 32;
            resolved_[i] = d;
            last_key_ = a >> 32;
            last_ = d;
            return {d, off};
        }
    }
    resolve_error(a, bytes, op);
}

void Hal::noc_addr_error(uint32_t x, uint32_t y) const {
    fail("noc_addr", "core (" + std::to_string(x) + "," + std::to_string(y) + ") on chip " +
                         std::to_string(me_->coord.chip) +
                         " does not fit the NoC address encoding: x and y are 10 bits, the chip id 8 bits "
                         "(allowed: x <= " + std::to_string(kCoordMax) + ", y <= " + std::to_string(kCoordMax) +
                         ", chip <= " + std::to_string(kChipMax) + ")");
}

/// Names what is wrong with a NoC address `resolve` refused.
void Hal::resolve_error(noc_addr_t a, uint32_t bytes, const char* op) const {
    if (!(a >> 63))
        fail(op, "NoC address " + detail::hex(a) + " was not made by noc_addr() (tag bit missing)");
    const uint32_t chip = addr_chip(a), x = addr_x(a), y = addr_y(a), off = uint32_t(a);
    if (chip != me_->coord.chip)
        fail(op, "NoC address names chip " + std::to_string(chip) + " core (" + std::to_string(x) +
                     "," + std::to_string(y) + ") but this core is on chip " +
                     std::to_string(me_->coord.chip) +
                     "; the NoC reaches only the same chip, other chips only over Ethernet links");
    const Chip& c = cluster_->chip(chip);
    detail::CoreState* d = c.find(x, y);
    if (!d)
        fail(op, "NoC address names core (" + std::to_string(x) + "," + std::to_string(y) +
                     ") which does not exist on chip " + std::to_string(chip) + "; " + c.describe_grid());
    if (uint64_t(off) + bytes > d->mem_size)
        fail(op, "range [" + detail::hex(off) + ", " + detail::hex(uint64_t(off) + bytes) + ") on " +
                     d->name() + " exceeds its memory of " + std::to_string(d->mem_size) +
                     " bytes (allowed: addr + bytes <= " + std::to_string(d->mem_size) + ")");
    fail(op, "NoC address " + detail::hex(a) + " was refused");
}

inline void Hal::check_queue(uint32_t q, const char* op) const {
    if (q >= hal::eth_tx_queues) [[unlikely]]
        queue_error(q, op);
}

void Hal::queue_error(uint32_t q, const char* op) const {
    fail(op, "tx queue " + std::to_string(q) + " does not exist (queues are 0 and 1)");
}

inline detail::CoreState* Hal::check_eth_send(uint32_t q, uint32_t src, uint32_t dst, uint32_t bytes) const {
    const detail::CoreState* peer = me_->link_peer;
    // One test on the path; the message is built out of line.
    if (q < hal::eth_tx_queues && me_->kind == CoreKind::ethernet && peer && bytes != 0 &&
        ((bytes | src | dst) % 16) == 0 && uint64_t(src) + bytes <= mem_size_ &&
        uint64_t(dst) + bytes <= peer->mem_size) [[likely]]
        return me_->link_peer;
    eth_send_error(q, src, dst, bytes);
}

void Hal::eth_send_error(uint32_t q, uint32_t src, uint32_t dst,
                                                            uint32_t bytes) const {
    check_queue(q, "eth_send");
    if (me_->kind != CoreKind::ethernet)
        fail("eth_send", "only Ethernet cores can send over Ethernet; this is a " +
                             std::string(to_string(me_->kind)) + " core");
    if (!me_->link_peer)
        fail("eth_send", "this Ethernet core has no link (see Cluster::links_between for linked cores)");
    if (bytes == 0 || bytes % 16 || src % 16 || dst % 16)
        fail("eth_send", "src " + detail::hex(src) + ", dst " + detail::hex(dst) + " and bytes " +
                             std::to_string(bytes) +
                             " must all be multiples of 16 (one Ethernet word), bytes > 0");
    check_local(src, bytes, "eth_send (source)");
    if (uint64_t(dst) + bytes > me_->link_peer->mem_size)
        fail("eth_send", "destination range [" + detail::hex(dst) + ", " + detail::hex(uint64_t(dst) + bytes) +
                             ") exceeds the L1 of " + me_->link_peer->name() + " (" +
                             std::to_string(me_->link_peer->mem_size) + " bytes)");
    fail("eth_send", "refused");
}

}  // namespace kccl::emu

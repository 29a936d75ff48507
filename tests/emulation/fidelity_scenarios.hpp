// Kernels of the fidelity tests (tests/emulation/fidelity_test.cpp): the microbenchmarks of
// tt-metal's "Basic Ethernet Multichip" guide and the Cerebras thesis's PE patterns, written against the
// contract so they run on any engine; the timed engine with a TimingModel gives their modelled
// time. They use only semaphore waits and sends, so the modelled time is the model's, not the
// host's.
#pragma once

#include <emulation/emulation.hpp>

#include <cstdint>
#include <cstring>

namespace kccl::test::fidelity {

// Ethernet-core L1 layout (the same on every Ethernet core).
inline constexpr uint32_t kFlitSrc = 0x100;  // the 16-byte word this core sends
inline constexpr uint32_t kFlitIn = 0x140;   // where the peer's flit lands (word 0 = sequence)
inline constexpr uint32_t kNocSem = 0x180;   // ring: the receiver's NoC signal to the sender
inline constexpr uint32_t kCreditSrc = 0x1c0;
inline constexpr uint32_t kCreditIn = 0x200;
inline constexpr uint32_t kBuffers = 0x1000;  // stream buffers: [payload | 16-byte sync word]

/// Single link round trip (Ethernet guide, "Single Ethernet Link Round-Trip Latency"): a 16-byte flit
/// whose word 0 carries the sequence number; the responder waits for it and answers the same way.
/// Args: 0 role (0 initiator, 1 responder), 1 round trips.
template <class H>
uint64_t eth_ping(H& hal) {
    const bool initiator = hal.arg(0) == 0;
    const uint32_t n = hal.arg(1);
    for (uint32_t i = 1; i <= n; ++i) {
        if (!initiator) hal.sem_wait_min(kFlitIn, i);
        std::memcpy(hal.l1_ptr(kFlitSrc, 4), &i, 4);
        hal.eth_send(0, kFlitSrc, kFlitIn, 16);
        if (initiator) hal.sem_wait_min(kFlitIn, i);
    }
    return 0;
}

/// Ring ping (Ethernet guide, "Ring Ping Latency", the formulation that merges packet and payload
/// signal): on every chip a Receiver Ethernet core (link from the previous chip) and a Sender
/// Ethernet core (link to the next chip). The Receiver, on the flit's arrival, signals the Sender
/// over the NoC (one inline write carrying the lap); the Sender sends the flit on. Chip 0's
/// Receiver is the master: it starts each lap by signalling its Sender and waits for the flit to
/// come back around. Args: 0 role (0 receiver, 1 sender, 2 master receiver), 1 laps, 2-3 the
/// Sender's NoC x, y (receivers only).
template <class H>
uint64_t ring_ping(H& hal) {
    const uint32_t role = hal.arg(0), laps = hal.arg(1);
    for (uint32_t lap = 1; lap <= laps; ++lap) {
        if (role == 1) {
            hal.sem_wait_min(kNocSem, lap);
            std::memcpy(hal.l1_ptr(kFlitSrc, 4), &lap, 4);
            hal.eth_send(0, kFlitSrc, kFlitIn, 16);
        } else {
            if (role == 0) hal.sem_wait_min(kFlitIn, lap);
            hal.noc_inline_write32(hal.noc_addr(hal.arg(2), hal.arg(3), kNocSem), lap);
            if (role == 2) hal.sem_wait_min(kFlitIn, lap);
        }
    }
    return 0;
}

/// A flow-controlled stream over one link, one direction, the way an EDM channel moves data:
/// packet p goes to buffer (p-1) % B as ONE eth_send of [payload | sync word = p]; the receiver
/// waits for the sync word and returns a cumulative credit (16 B) from its own credit word; the
/// sender reuses a buffer only once its previous packet is credited. Args: 0 role (0 sender,
/// 1 receiver), 1 payload bytes (multiple of 16), 2 buffers, 3 packets.
template <class H>
uint64_t eth_stream(H& hal) {
    const bool sender = hal.arg(0) == 0;
    const uint32_t payload = hal.arg(1), buffers = hal.arg(2), total = hal.arg(3);
    const uint32_t stride = payload + 16;
    auto buffer = [&](uint32_t p) { return kBuffers + (p - 1) % buffers * stride; };
    if (sender) {
        for (uint32_t p = 1; p <= total; ++p) {
            if (p > buffers) hal.sem_wait_min(kCreditIn, p - buffers);
            const uint32_t b = buffer(p);
            std::memcpy(hal.l1_ptr(b + payload, 4), &p, 4);
            hal.eth_send(0, b, b, stride);
        }
        hal.sem_wait_min(kCreditIn, total);  // everything delivered and credited
        return 0;
    }
    for (uint32_t p = 1; p <= total; ++p) {
        hal.sem_wait_min(buffer(p) + payload, p);
        std::memcpy(hal.l1_ptr(kCreditSrc, 4), &p, 4);
        hal.eth_send(0, kCreditSrc, kCreditIn, 16);
    }
    return 0;
}

// ---- Cerebras thesis: a row of PEs (workers (i, 0), i < P) ------------------------------------

inline constexpr uint32_t kVec = 0x1000;   // PE P-1's B-element vector (host input)
inline constexpr uint32_t kRecv = 0x8000;  // where element k from the right neighbour lands: kRecv + 4k
inline constexpr uint32_t kDone = 0x7ff0;  // PE 0's "stored" word (its T_store = 1 cycle)

// Both kernels touch no L1 through l1_ptr (whose cost would shift the start of the sender):
// values live in registers or travel by NoC, waits are semaphore waits, and PE 0's final store
// is one sem_set (one cycle on the wafer model).

/// T_message: PE P-1 sends its B-element vector (prepared by the host, last element nonzero) to
/// PE 0 in one noc_write (B wavelets); PE 0 waits for the last element (the last wavelet lands
/// last) and stores (one cycle). Args: 0 P, 1 B, 2 last element's value.
template <class H>
uint64_t pe_message(H& hal) {
    const uint32_t p = hal.arg(0), b = hal.arg(1);
    if (hal.core_x() == p - 1) {
        hal.noc_write(kVec, hal.noc_addr(0, 0, kRecv), 4 * b);
    } else if (hal.core_x() == 0) {
        hal.sem_wait_min(kRecv + 4 * (b - 1), hal.arg(2));
        hal.sem_set(kDone, 1);
    }
    return 0;
}

/// PE i's own element k in the chain reduce (never 0, so an arrived sum is never 0).
inline uint32_t chain_element(uint32_t pe, uint32_t k, uint32_t b) { return pe * b + k + 1; }

/// T_chain: reduce onto PE 0 along the row, one wavelet per element (the Cerebras thesis, Figure 5.2).
/// PE P-1 sends element k to PE P-2; PE i waits for element k from PE i+1, adds its own and
/// sends the sum on (one inline write: one wavelet); PE 0 waits for element k, adds its own and
/// stores (sem_set: one cycle). Host: every PE's landing words at kRecv set to 0. Args: 0 P,
/// 1 B. Returns PE 0's checksum (the sum of the reduced vector).
template <class H>
uint64_t pe_chain(H& hal) {
    const uint32_t p = hal.arg(0), b = hal.arg(1), me = hal.core_x();
    uint64_t sum = 0;
    for (uint32_t k = 0; k < b; ++k) {
        uint32_t v = chain_element(me, k, b);
        if (me + 1 < p) {
            hal.sem_wait_min(kRecv + 4 * k, 1);
            v += hal.sem_read(kRecv + 4 * k);
        }
        if (me > 0) {
            hal.noc_inline_write32(hal.noc_addr(me - 1, 0, kRecv + 4 * k), v);
        } else {
            hal.sem_set(kRecv + 4 * k, v);  // the store
            sum += v;
        }
    }
    return sum;
}

}  // namespace kccl::test::fidelity

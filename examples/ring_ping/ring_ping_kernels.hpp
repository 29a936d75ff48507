// ring_ping_kernels.hpp — device kernels of the ring round-trip ping (tt-metal's
// BasicEthernetGuide, "Example Multi-Chip Program Implementation Walkthrough"), written against
// the kccl device contract only.
//
// Per chip i of a ring of N chips, two Ethernet cores run kernels:
//   receiver R_i  on the core linked to chip i-1: takes the packet off the link and forwards it
//                 over the NoC to S_i; on chip 0 it is the master that injects the packet and
//                 times the laps;
//   sender   S_i  on the core linked to chip i+1: takes the packet from R_i and sends it over the
//                 link to R_{i+1}.
// A lap: R_0 -NoC-> S_0 -eth-> R_1 -NoC-> S_1 -eth-> ... -eth-> R_0. One unmeasured lap flushes
// the path (programs start at different times); then `laps` measured laps.
//
// Protocol (all counters count up by lap, so no semaphore is ever cleared and no clear can race):
//   handshake   S_i sends a 16-byte word to R_{i+1}'s kHandshake; R_{i+1} answers into S_i's
//               kHandshakeAck (the side with the sender channel is the master, as in tt-metal's
//               CCL guide).
//   NoC hop     R_i: noc_write(buffer -> S_i buffer), noc_writes_flushed, then sem_inc(S_i
//               kForwardSem) — same destination, after a flush, so the increment lands after the
//               data (contract N1, also under the strict profile).
//   eth hop     S_i: write the sync word {bytes, 0, lap, 0} right after the payload and send
//               payload + sync word in ONE eth_send (sync word last: contract E3). R_{i+1} waits
//               for the sync word's lap field.
//   completion  R_{i+1}, once its NoC forward has read the buffer (noc_writes_flushed), sends
//               the lap number from its own source word into S_i's kDone; S_i waits for it before
//               its next send and before it returns (teardown: no credit left in flight).
//
// Dirty L1 (hardware never zeroes it): kHandshake and kForwardSem can be written by another core
// before this kernel starts, so the host initialises them to 0 (tt-metal: CreateSemaphore;
// emulation: Launcher::init_word). Every other word a kernel polls it clears itself before the
// handshake lets anyone write it: S_i clears kHandshakeAck and kDone, R_i its sync word.
//
// L1 layout, identical on every Ethernet core used:
//   kHandshake 16 B | kHandshakeAck 16 B | kForwardSem 16 B | kDone 16 B | kSrcWord 16 B |
//   kBuffer: payload (page bytes) + 16-byte sync word
//
// Runtime args
//   receiver: 0 is_master, 1 sender_x, 2 sender_y, 3 laps, 4 page_bytes
//   sender:   0 laps, 1 page_bytes
#pragma once

#include <hal/contract.hpp>

#include <stdint.h>

namespace ring_ping {

inline constexpr uint32_t kHandshake = 0x1000;
inline constexpr uint32_t kHandshakeAck = 0x1010;
inline constexpr uint32_t kForwardSem = 0x1020;
inline constexpr uint32_t kDone = 0x1030;
inline constexpr uint32_t kSrcWord = 0x1040;
inline constexpr uint32_t kBuffer = 0x1100;
/// Offset of the lap field inside the 16-byte sync word {bytes_sent, receiver_ack, lap, reserved}.
inline constexpr uint32_t kSyncLap = 8;

/// Largest page that fits the ERISC L1 left after kBuffer (256 KiB ERISC L1).
inline constexpr uint32_t kMaxPage = 128 * 1024;

namespace detail {
template <class H>
void send_word(H& hal, uint32_t dst, uint32_t value) {
    // kSrcWord is reused only after the previous word is known to have arrived (every word sent
    // here is answered before the next one is sent), as contract E1 requires.
    volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(kSrcWord, 16));
    w[0] = value;
    w[1] = 0;
    w[2] = value;
    w[3] = 0;
    hal.eth_send(0, kSrcWord, dst, 16);
}
}  // namespace detail

/// S_i. Returns the number of packets sent.
template <class H>
uint32_t sender(H& hal) {
    const uint32_t laps = hal.arg(0) + 1;  // + the unmeasured lap
    const uint32_t page = hal.arg(1);

    // Nothing can write these before R_{i+1} has seen the handshake.
    hal.sem_set(kHandshakeAck, 0);
    hal.sem_set(kDone, 0);
    // Handshake: this side owns the sender channel, so it is the master.
    detail::send_word(hal, kHandshake, 1);
    hal.sem_wait_min(kHandshakeAck, 1);

    volatile uint32_t* sync = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(kBuffer + page, 16));
    for (uint32_t lap = 1; lap <= laps; ++lap) {
        hal.sem_wait_min(kForwardSem, lap);  // R_i has written the payload into kBuffer
        sync[0] = page;
        sync[1] = 0;
        sync[2] = lap;
        sync[3] = 0;
        while (hal.eth_txq_busy(0)) hal.idle();
        hal.eth_send(0, kBuffer, kBuffer, page + 16);
        hal.sem_wait_min(kDone, lap);  // R_{i+1} has the packet and no longer needs kBuffer
    }
    return laps;
}

/// R_i. `now` returns a monotonic time stamp (nanoseconds on the emulation, cycles on hardware).
/// The master returns the elapsed time of the measured laps; the others return 0.
template <class H, class Now>
uint64_t receiver(H& hal, Now now) {
    const bool master = hal.arg(0) != 0;
    const uint32_t sx = hal.arg(1), sy = hal.arg(2);
    const uint32_t laps = hal.arg(3) + 1;
    const uint32_t page = hal.arg(4);
    const auto to_sender_buffer = hal.noc_addr(sx, sy, kBuffer);
    const auto to_sender_sem = hal.noc_addr(sx, sy, kForwardSem);

    // Nothing can write the sync word before S_{i-1} has the answer to its handshake.
    volatile uint32_t* sync = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(kBuffer + page, 16));
    for (uint32_t f = 0; f < 4; ++f) sync[f] = 0;
    hal.sem_wait_min(kHandshake, 1);
    detail::send_word(hal, kHandshakeAck, 1);

    uint64_t t0 = 0;
    for (uint32_t lap = 1; lap <= laps; ++lap) {
        if (master) {
            if (lap == 2) t0 = now();  // lap 1 flushed the ring; time the rest
            hal.noc_write(kBuffer, to_sender_buffer, page);
            hal.noc_writes_flushed();  // the data has left before the increment (N1, strict profile)
            hal.sem_inc(to_sender_sem, 1);
            hal.sem_wait_min(kBuffer + page + kSyncLap, lap);  // the packet is back
        } else {
            hal.sem_wait_min(kBuffer + page + kSyncLap, lap);
            hal.noc_write(kBuffer, to_sender_buffer, page);
            hal.noc_writes_flushed();  // kBuffer has been read: the upstream may overwrite it, and the
                                       // increment lands after the data (N1, strict profile)
            hal.sem_inc(to_sender_sem, 1);
        }
        detail::send_word(hal, kDone, lap);
    }
    const uint64_t t1 = now();
    return master ? t1 - t0 : 0;
}

}  // namespace ring_ping

/// Shim gate entry (docs/hardware-shim.md): instantiates both kernels for a backend.
template <class H>
void kccl_gate_instantiate(H& hal) {
    ring_ping::sender(hal);
    ring_ping::receiver(hal, [] { return uint64_t(0); });
}

// examples/mcast_broadcast/mcast_broadcast_kernels.hpp — a broadcast on a Tensix grid by NoC
// multicast (contract MULTICAST, M1-M3): a root core sends a buffer to the same L1 address of
// every core of a rectangle, chunk by chunk, and each receiver consumes chunk c as soon as it has
// arrived. The same kernel runs on the emulation (tests/hal/multicast_test.cpp) and is compiled for
// the tt-metal Tensix cores by scripts/shim_gate.sh (kccl_gate_instantiate below).
//
// Protocol, per chunk c (root):
//   noc_write_mcast(chunk c)           the data, to every receiver
//   noc_writes_flushed()               M1: without it the flag below may land before the data
//                                      (tt-metal saw exactly that on Blackhole); it also releases
//                                      the flag word sent for chunk c-1 (N3)
//   word = c + 1; sem_set_mcast(word)  every receiver's flag := c + 1
// and a noc_write_barrier() at the end. A receiver waits for flag >= c + 1, then reads chunk c.
// The flag only grows, so a receiver that falls behind sees a later value and still finds every
// chunk up to it in place. The host initialises every receiver's flag to 0 (contract P2).
//
// Runtime args: 0 root x, 1 root y, 2..5 the rectangle x0 y0 x1 y1, 6 the buffer's L1 address
// (the root's source = every receiver's destination), 7 bytes, 8 chunk bytes (> 0),
// 9 the flag's L1 address (a receiver word), 10 a root L1 word the flag value is sent from.
// The root may be inside the rectangle (it then multicasts with loopback) or outside it.
#pragma once

#include <hal/contract.hpp>

#include <stdint.h>

namespace mcast_broadcast {

template <class H>
void broadcast(H& hal) {
    static_assert(kccl::hal::check_multicast<H>(), "the broadcast needs a backend with NoC multicast");
    const uint32_t root_x = hal.arg(0), root_y = hal.arg(1);
    const kccl::hal::NocRect rect{hal.arg(2), hal.arg(3), hal.arg(4), hal.arg(5)};
    const uint32_t buf = hal.arg(6), bytes = hal.arg(7), chunk = hal.arg(8), flag = hal.arg(9), word = hal.arg(10);
    const uint32_t chunks = (bytes + chunk - 1) / chunk;
    if (hal.core_x() == root_x && hal.core_y() == root_y) {
        const bool loopback = rect.contains(root_x, root_y);
        for (uint32_t c = 0; c < chunks; ++c) {
            const uint32_t off = c * chunk;
            const uint32_t b = bytes - off < chunk ? bytes - off : chunk;
            hal.noc_write_mcast(buf + off, rect, buf + off, b, rect.cores(), loopback);
            hal.noc_writes_flushed();
            *reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(word, 4)) = c + 1;
            kccl::hal::note_write(hal, word, 4);
            kccl::hal::l1_store_fence(hal, word, 4);  // N7: the NoC reads the word next
            hal.sem_set_mcast(word, rect, flag, rect.cores(), loopback);
        }
        hal.noc_write_barrier();
        return;
    }
    for (uint32_t c = 0; c < chunks; ++c) {
        hal.sem_wait_min(flag, c + 1);
        const uint32_t off = c * chunk;
        // Chunk c is in place: a consumer would use it here.
        kccl::hal::note_read(hal, buf + off, bytes - off < chunk ? bytes - off : chunk);
    }
}

}  // namespace mcast_broadcast

template <class H>
void kccl_gate_instantiate(H& hal) {
    mcast_broadcast::broadcast(hal);
}

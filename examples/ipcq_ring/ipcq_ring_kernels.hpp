// ipcq_ring_kernels.hpp — a ring all-gather step written against kccl::ipcq::Queues only: every
// rank passes the block it received from the west on to the east, world-1 times, so that every
// rank ends with every rank's block. The same kernel runs on the emulation (tests/ipcq) and is
// compiled for the tt-metal RISC-V cores by scripts/shim_gate.sh (kccl_gate_instantiate below).
//
// Runtime args: 0 IPCQ block address (from the host plan), 1 world size, 2 block bytes,
//               3 L1 address of the output (world * block bytes; this rank's block already in place)
#pragma once

#include <ipcq/ipcq.hpp>

#include <stdint.h>

namespace ipcq_ring {

template <class H>
void all_gather(H& hal) {
    kccl::ipcq::Queues<H, kccl::ipcq::Nsew> q(hal, hal.arg(0));
    const uint32_t world = hal.arg(1), bytes = hal.arg(2), out = hal.arg(3);
    const uint32_t me = q.rank();
    for (uint32_t step = 0; step + 1 < world; ++step) {
        // Send the block that arrived last step (our own at step 0), receive the next one.
        const uint32_t send_block = (me + world - step) % world;
        const uint32_t recv_block = (me + world - step - 1) % world;
        q.send(kccl::ipcq::Nsew::E, out + send_block * bytes, bytes);
        q.recv(kccl::ipcq::Nsew::W, out + recv_block * bytes, bytes);
    }
    q.quiesce();
}

}  // namespace ipcq_ring

template <class H>
void kccl_gate_instantiate(H& hal) {
    ipcq_ring::all_gather(hal);
}

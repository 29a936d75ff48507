// kccl/hal/tt_metal.hpp — the hardware shim: the device contract mapped onto tt-metal by name.
//
// What it is: `kccl::hal::TtMetal`, an empty handle whose members forward to the tt-metal
// dataflow API (`noc_async_write`, `noc_semaphore_inc`, `eth_send_packet`, `run_routing`, ...).
// A kernel written as `template <class H> void kernel(H& hal)` runs on hardware as
// `kccl::hal::TtMetal hal; kernel(hal);`.
//
// Who includes it: tt-metal device kernels (Tensix data-movement or ERISC). Before including it,
// the kernel must have the dataflow API declared — by default this header includes
// KCCL_TT_METAL_DATAFLOW_HEADER ("dataflow_api.h"); define KCCL_TT_METAL_NO_INCLUDE to include
// the API yourself (ERISC kernels use "eth/dataflow_api.h" plus "tunneling.h").
//
// How the contract's guarantees map (see contract.hpp):
//   N1  noc_async_write and noc_semaphore_inc use the default NoC and VC: same path per
//       destination, landing in issue order (seed 000: "safe to send a semaphore_inc immediately
//       following the noc_async_write").
//   N2  noc_write_barrier -> noc_async_write_barrier (acks received) and also
//       noc_async_atomic_barrier so that semaphore increments count as landed writes;
//       noc_writes_flushed -> noc_async_writes_flushed.
//   E1-E3 eth_send -> eth_send_packet in 16-byte words; the Ethernet subsystem sends words in
//       address order and writes the receiver's L1 in that order.
//   W1  idle() does nothing on hardware: spinning is free on a dedicated RISC-V core, and
//       run_routing is only called through context_switch() by loops that count idle iterations.
//
// Pointer width: hardware L1 addresses are 32-bit physical addresses, so l1_ptr is a cast.
#pragma once

#include "config.hpp"
#include "contract.hpp"

#ifndef KCCL_TT_METAL_NO_INCLUDE
#ifndef KCCL_TT_METAL_DATAFLOW_HEADER
#define KCCL_TT_METAL_DATAFLOW_HEADER "dataflow_api.h"
#endif
#include KCCL_TT_METAL_DATAFLOW_HEADER
#endif

namespace kccl::hal {

struct TtMetal {
    // identity: tt-metal keeps this core's coordinates per NoC in my_x[] / my_y[].
    KCCL_FORCEINLINE uint32_t core_x() const { return my_x[noc_index]; }
    KCCL_FORCEINLINE uint32_t core_y() const { return my_y[noc_index]; }

    KCCL_FORCEINLINE noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t l1) const {
        return get_noc_addr(x, y, l1);
    }
    KCCL_FORCEINLINE uint8_t* l1_ptr(uint32_t l1, uint32_t /*bytes*/) const {
        return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(l1));
    }

    KCCL_FORCEINLINE void noc_write(uint32_t src_l1, noc_addr_t dst, uint32_t bytes) {
        noc_async_write(src_l1, dst, bytes);
    }
    KCCL_FORCEINLINE void noc_read(noc_addr_t src, uint32_t dst_l1, uint32_t bytes) {
        noc_async_read(src, dst_l1, bytes);
    }
    KCCL_FORCEINLINE void noc_write_barrier() {
        noc_async_write_barrier();
        noc_async_atomic_barrier();
    }
    KCCL_FORCEINLINE void noc_read_barrier() { noc_async_read_barrier(); }
    KCCL_FORCEINLINE void noc_writes_flushed() { noc_async_writes_flushed(); }
    KCCL_FORCEINLINE void noc_inline_write32(noc_addr_t dst, uint32_t value) {
        noc_inline_dw_write(dst, value);
    }

    KCCL_FORCEINLINE void sem_inc(noc_addr_t dst, uint32_t n) { noc_semaphore_inc(dst, n); }
    KCCL_FORCEINLINE void sem_set(uint32_t local_l1, uint32_t value) {
        noc_semaphore_set(sem_ptr(local_l1), value);
    }
    KCCL_FORCEINLINE void sem_wait(uint32_t local_l1, uint32_t value) {
        noc_semaphore_wait(sem_ptr(local_l1), value);
    }
    KCCL_FORCEINLINE void sem_wait_min(uint32_t local_l1, uint32_t value) {
        noc_semaphore_wait_min(sem_ptr(local_l1), value);
    }
    KCCL_FORCEINLINE uint32_t sem_read(uint32_t local_l1) const { return *sem_ptr(local_l1); }

    KCCL_FORCEINLINE void eth_send(uint32_t queue, uint32_t src_l1, uint32_t dst_l1, uint32_t bytes) {
        // eth_send_packet takes addresses and sizes in 16-byte words.
        eth_send_packet(queue, src_l1 >> 4, dst_l1 >> 4, bytes >> 4);
    }
    KCCL_FORCEINLINE bool eth_txq_busy(uint32_t queue) const {
        return internal_::eth_txq_is_busy(queue);
    }
    KCCL_FORCEINLINE void context_switch() { run_routing(); }

    KCCL_FORCEINLINE uint32_t arg(uint32_t index) const {
        return get_arg_val<uint32_t>(static_cast<int>(index));
    }
    KCCL_FORCEINLINE void idle() {}

private:
    static KCCL_FORCEINLINE volatile uint32_t* sem_ptr(uint32_t l1) {
        return reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(l1));
    }
};

static_assert(check_backend<TtMetal>(), "TtMetal must model the kccl device contract.");

}  // namespace kccl::hal

// pipeline_kernels.hpp — the README's kernel example: a producer forwards n pages through one
// buffer on a consumer core, with a counting credit semaphore (no clears, so no clear races).
//
// Producer args: 0 n, 1 page bytes, 2 consumer x, 3 consumer y
// Consumer args: 0 n, 1 page bytes, 2 producer x, 3 producer y. Returns the checksum of all pages.
// L1: 0x100 data semaphore (consumer), 0x104 credit semaphore (producer), 0x2000 staging page
// (producer), 0x4000 landing page (consumer).
#pragma once

#include <hal/contract.hpp>

#include <stdint.h>

namespace pipeline {

template <class H>
void fill_page(H& hal, uint32_t bytes, uint32_t page) {
    uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(0x2000, bytes));
    for (uint32_t i = 0; i < bytes / 4; ++i) w[i] = page * 0x10001u + i;
}

template <class H>
void forward_pages(H& hal) {
    const uint32_t n = hal.arg(0), bytes = hal.arg(1);
    const auto dst_buf = hal.noc_addr(hal.arg(2), hal.arg(3), /*l1=*/0x4000);
    const auto dst_sem = hal.noc_addr(hal.arg(2), hal.arg(3), /*l1=*/0x100);
    for (uint32_t i = 1; i <= n; ++i) {
        hal.sem_wait_min(/*credit*/ 0x104, i - 1);  // the consumer freed the buffer
        fill_page(hal, bytes, i);                   // your data
        kccl::hal::l1_store_fence(hal, 0x2000, bytes);  // the stores reach L1 before the NoC reads them
        hal.noc_write(0x2000, dst_buf, bytes);
        hal.noc_writes_flushed();                   // the page has left; 0x2000 may be rewritten
        hal.sem_inc(dst_sem, 1);                    // same destination, after a flush: lands after the data
    }
}

template <class H>
uint32_t consume_pages(H& hal) {
    const uint32_t n = hal.arg(0), bytes = hal.arg(1);
    const auto credit = hal.noc_addr(hal.arg(2), hal.arg(3), 0x104);
    uint32_t sum = 0;
    for (uint32_t i = 1; i <= n; ++i) {
        hal.sem_wait_min(0x100, i);  // page i has landed
        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(0x4000, bytes));
        for (uint32_t k = 0; k < bytes / 4; ++k) sum += w[k];
        hal.sem_inc(credit, 1);  // give the buffer back
    }
    return sum;
}

}  // namespace pipeline

template <class H>
void kccl_gate_instantiate(H& hal) {
    pipeline::forward_pages(hal);
    (void)pipeline::consume_pages(hal);
}

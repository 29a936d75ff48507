// A Tensix kernel that uses the shim's multicast operations (contract MULTICAST): the data
// multicast, the flush M1 requires, the semaphore multicast, both with and without loopback; the
// increment multicast where tt-metal declares it (current layout).
// gate-kind: brisc
// gate-layouts: legacy current
#include "hal/tt_metal.hpp"

static_assert(kccl::hal::has_multicast_v<kccl::hal::TtMetal>, "TtMetal must provide multicast on Tensix.");

void kernel_main() {
    kccl::hal::TtMetal hal;
    const kccl::hal::NocRect rect{1, 1, 4, 3};
    hal.noc_write_mcast(0x20000, rect, 0x20000, 2048, rect.cores(), false);
    hal.noc_writes_flushed();
    hal.sem_set_mcast(0x10000, rect, 0x10010, rect.cores(), false);
    hal.noc_write_mcast(0x20000, rect, 0x20000, 2048, rect.cores(), true);
    hal.noc_writes_flushed();
    hal.sem_set_mcast(0x10000, rect, 0x10010, rect.cores(), true);
#if KCCL_TT_METAL_LAYOUT == 2
    hal.sem_inc_mcast(rect, 0x10020, 1, rect.cores());
#endif
    hal.noc_write_barrier();

    // tt-metal's own kernels spell the calls like this (linked, path reserve, NoC 1 order).
    const uint64_t mc = get_noc_multicast_addr(4, 3, 1, 1, 0x20000, 1);
    noc_async_write_multicast(0x20000, mc, 2048, 12, true, true);
    noc_async_write_multicast<NOC_MAX_BURST_SIZE + 1>(0x20000, mc, 2048, 12, false, true, noc_index);
    noc_semaphore_set_multicast_loopback_src(0x10000, get_noc_multicast_addr(1, 1, 4, 3, 0x10010), 12, false);
    noc_async_write_barrier();
}

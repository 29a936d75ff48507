// The other direction: code written the way tt-metal's own kernels call the API must compile
// against the stub (a stub with simplified, non-template signatures rejects every line below).
// gate-kind: erisc
// gate-layouts: legacy current
#include "hal/tt_metal.hpp"

void kernel_main() {
    const uint32_t sem = static_cast<uint32_t>(get_semaphore<ProgrammableCoreType::ACTIVE_ETH>(0));
    volatile tt_l1_ptr uint32_t* sem_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem);
    noc_semaphore_set(sem_ptr, 0);
    const uint64_t peer = get_noc_addr(1, 1, 0x20000);
    noc_async_write<NOC_MAX_BURST_SIZE + 1, true, /*posted=*/true>(0x20000, peer, 64, noc_index,
                                                                   NOC_UNICAST_WRITE_VC);
    noc_semaphore_inc</*posted=*/false>(get_noc_addr(1, 1, sem), 1, noc_index, NOC_UNICAST_WRITE_VC);
    noc_inline_dw_write<InlineWriteDst::DEFAULT, false, true>(peer, 7);
    noc_async_write_barrier();
    while (eth_txq_is_busy() || internal_::eth_txq_is_busy(1)) {
        run_routing();
    }
    internal_::eth_send_packet</*ctx_switch=*/false>(0, 0x20000 >> 4, 0x20000 >> 4, 4);
    eth_noc_semaphore_wait(sem_ptr, 1, /*wait_min=*/16);
    (void)get_arg_val<uint32_t>(0);
}

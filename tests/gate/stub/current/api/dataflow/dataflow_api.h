// tests/gate/stub/current/api/dataflow/dataflow_api.h — stands for tt_metal/hw/inc/api/dataflow/dataflow_api.h (after the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../../shared/kccl_stub_dataflow.h"

// Only in the current API: an atomic increment of one semaphore word on every core of a rectangle
// (no loopback form).
template <bool posted = false>
void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t num_dests, uint8_t noc_id = noc_index,
                                 uint8_t vc = NOC_MULTICAST_WRITE_VC);

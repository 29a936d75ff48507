// tests/gate/stub/shared/kccl_stub_eth_dataflow.h — tt-metal's Ethernet dataflow_api.h,
// declarations only. ERISC builds only.
#pragma once

#include "kccl_stub_erisc_guard.h"
#include "kccl_stub_dataflow.h"
#include "kccl_stub_tunneling.h"

#include <stdint.h>

// Queue 0 only.
bool eth_txq_is_busy();

// Semaphore waits for ERISC kernels: spin with invalidate_l1_cache(), and call run_routing() every
// (wait_min + 1) polls, so a blocked Ethernet core still services its link.
void eth_noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val, uint32_t wait_min = 0);
void eth_noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val, uint32_t wait_min = 0);

void eth_send_bytes(uint32_t src_addr, uint32_t dst_addr, uint32_t num_bytes,
                    uint32_t num_bytes_per_send = 16, uint32_t num_bytes_per_send_word_size = 1);
void eth_wait_for_bytes(uint32_t num_bytes, uint32_t wait_min = 0);
void eth_wait_for_receiver_done(uint32_t wait_min = 0);
void eth_receiver_channel_done(uint32_t channel);
bool eth_bytes_are_available_on_channel(uint8_t channel);

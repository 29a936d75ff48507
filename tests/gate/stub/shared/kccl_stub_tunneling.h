// tests/gate/stub/shared/kccl_stub_tunneling.h — tt-metal's tunneling.h (Ethernet tx queues and the
// link firmware), declarations only. ERISC builds only.
#pragma once

#include "kccl_stub_erisc_guard.h"

#include <stdint.h>

namespace internal_ {
// Queues one Ethernet send of num_words 16-byte words from local L1 (src_word_addr, in words) to
// the linked core's L1 (dest_word_addr, in words). While the queue is busy it waits, and with
// ctx_switch it gives the link firmware a turn on every wait iteration. There is NO global
// eth_send_packet anywhere in tt-metal.
template <bool ctx_switch = true>
void eth_send_packet(uint32_t q_num, uint32_t src_word_addr, uint32_t dest_word_addr, uint32_t num_words);

// True while tx queue q_num cannot take a new command.
bool eth_txq_is_busy(uint32_t q_num);
}  // namespace internal_

// Hands the core to the base (link) firmware for a moment: link retraining, routing.
void run_routing();

// tests/gate/stub/dataflow_api.h — declaration-only stand-in for the tt-metal dataflow API.
//
// Written for kccl's hardware-shim gate (scripts/shim_gate.sh, docs/hardware-shim.md). It
// declares, with the signatures kccl::hal::TtMetal calls, the tt-metal device functions the shim
// forwards to, so include/hal/tt_metal.hpp and every kernel built on it can be compiled for
// rv32 without a tt-metal checkout. Nothing here is defined: the gate only compiles (-c) and
// inspects the object's symbol table, where these appear as undefined references.
//
// It is NOT a copy of tt-metal's header and carries none of its implementation; keep it in step
// with the signatures used by include/hal/tt_metal.hpp and nothing more.
#pragma once

#include <stdint.h>

// This core's NoC. tt-metal fixes it per kernel at compile time; the gate uses NoC 0.
constexpr uint8_t noc_index = 0;

// This core's coordinates, indexed by NoC.
extern uint8_t my_x[];
extern uint8_t my_y[];

// --- addresses ---------------------------------------------------------------------------------
uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr, uint8_t noc = noc_index);
uint64_t get_noc_addr(uint32_t local_addr, uint8_t noc = noc_index);

// --- NoC data movement -------------------------------------------------------------------------
void noc_async_write(uint32_t src_l1, uint64_t dst_noc, uint32_t size, uint8_t noc = noc_index);
void noc_async_read(uint64_t src_noc, uint32_t dst_l1, uint32_t size, uint8_t noc = noc_index);
void noc_async_write_barrier(uint8_t noc = noc_index);
void noc_async_read_barrier(uint8_t noc = noc_index);
void noc_async_writes_flushed(uint8_t noc = noc_index);
void noc_async_atomic_barrier(uint8_t noc = noc_index);
void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index);

// --- semaphores --------------------------------------------------------------------------------
void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc = noc_index);
void noc_semaphore_set(volatile uint32_t* sem, uint32_t val);
void noc_semaphore_wait(volatile uint32_t* sem, uint32_t val);
void noc_semaphore_wait_min(volatile uint32_t* sem, uint32_t val);
uint32_t get_semaphore(uint32_t id);

// --- runtime arguments -------------------------------------------------------------------------
// Primary template only: a use instantiates an undefined function, i.e. an undefined symbol.
template <typename T>
T get_arg_val(int arg_idx);

// --- Ethernet (ERISC) --------------------------------------------------------------------------
// Addresses and sizes of eth_send_packet are in 16-byte Ethernet words.
void eth_send_packet(uint32_t q, uint32_t src_word, uint32_t dst_word, uint32_t n_words);
void eth_send_bytes(uint32_t src, uint32_t dst, uint32_t n, uint32_t per_send = 16,
                    uint32_t per_send_words = 1);
void eth_wait_for_bytes(uint32_t n, uint32_t wait_min = 0);
void eth_wait_for_receiver_done(uint32_t wait_min = 0);
void eth_receiver_channel_done(uint32_t ch);
bool eth_bytes_are_available_on_channel(uint8_t ch);
void run_routing();

namespace internal_ {
bool eth_txq_is_busy(uint32_t q);
}  // namespace internal_

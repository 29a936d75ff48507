// tests/gate/stub/shared/kccl_stub_dataflow.h — the Tensix/common part of the tt-metal device API,
// declarations only. Reached only through the layout headers (legacy/dataflow_api.h,
// current/api/dataflow/dataflow_api.h); see ../README.md. Written for kccl from the API's public
// signatures; carries none of tt-metal's implementation.
#pragma once

#include <stddef.h>
#include <stdint.h>

// --- attributes and build defines --------------------------------------------------------------
// tt-metal marks pointers into local L1 with this SFPI-GCC attribute (risc_attribs.h).
#define tt_l1_ptr __attribute__((rvtt_l1_ptr))

#ifndef NOC_INDEX
#error "tt-metal's JIT build always defines NOC_INDEX for kernels (and NOC_MODE, PROCESSOR_INDEX); so must the gate"
#endif

#if defined(KERNEL_BUILD)
// A kernel's NoC is fixed when it is compiled.
constexpr uint8_t noc_index = NOC_INDEX;
#else
// Firmware keeps it in a variable.
extern uint8_t noc_index;
#endif

// This core's coordinates per NoC: firmware variables.
extern uint8_t my_x[];
extern uint8_t my_y[];

// --- constants the templates and defaults use (values are placeholders) ------------------------
constexpr uint32_t NOC_MAX_BURST_SIZE = 8192;
constexpr uint32_t NOC_UNICAST_WRITE_VC = 1;
constexpr uint32_t NOC_MULTICAST_WRITE_VC = 4;
constexpr uint32_t NOC_DEFAULT_READ_VC = 0;  // kccl's name for the read default; value only

enum class ProgrammableCoreType : uint8_t { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2 };
enum class InlineWriteDst : uint8_t { DEFAULT = 0, L1 = 1, REG = 2 };

// --- cache ---------------------------------------------------------------------------------------
// Every tt-metal poll calls this once per iteration: a fence on Blackhole (L1 data cache), a no-op
// on Wormhole.
void invalidate_l1_cache();

// --- addresses -----------------------------------------------------------------------------------
uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index);
uint64_t get_noc_addr(uint32_t addr, uint8_t noc = noc_index);
// A rectangle of cores (start and end corners, inclusive) and one L1 address on each of them.
uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end, uint32_t noc_y_end,
                                uint32_t addr, uint8_t noc = noc_index);

// --- NoC data movement ---------------------------------------------------------------------------
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                     uint8_t noc = noc_index, uint32_t vc = NOC_UNICAST_WRITE_VC);

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                    uint8_t noc = noc_index, uint32_t vc = NOC_DEFAULT_READ_VC);

// Multicast: num_dests is the number of cores in the rectangle (the sender included for the
// loopback_src variants). linked: this and the next command form one packet sequence.
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                               uint32_t num_dests, bool linked = false, bool multicast_path_reserve = true,
                               uint8_t noc = noc_index);
void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                            uint32_t size, uint32_t num_dests, bool linked = false,
                                            bool multicast_path_reserve = true, uint8_t noc = noc_index);

void noc_async_write_barrier(uint8_t noc = noc_index);
void noc_async_read_barrier(uint8_t noc = noc_index);
void noc_async_writes_flushed(uint8_t noc = noc_index);
void noc_async_atomic_barrier(uint8_t noc_idx = noc_index);

template <InlineWriteDst dst_type = InlineWriteDst::DEFAULT, bool posted = false, bool flush = true>
void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index,
                         uint8_t vc = NOC_UNICAST_WRITE_VC, uint32_t customized_src_addr = 0);

// --- semaphores ----------------------------------------------------------------------------------
template <bool posted = false>
void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index,
                       uint8_t vc = NOC_UNICAST_WRITE_VC);
void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val);
void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t num_dests,
                                 bool linked = false, bool multicast_path_reserve = true, uint8_t noc = noc_index);
void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                              uint32_t num_dests, bool linked = false,
                                              bool multicast_path_reserve = true, uint8_t noc = noc_index);
// Both spin with invalidate_l1_cache() on every iteration.
void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val);
void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val);

template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
uintptr_t get_semaphore(uint32_t semaphore_id);

// --- runtime arguments ---------------------------------------------------------------------------
// tt-metal's body static_asserts sizeof(T) == 4; here only the primary template is declared, so a
// use is an undefined symbol.
template <typename T>
T get_arg_val(int arg_idx);
template <typename T>
T get_common_arg_val(int arg_idx);

// kccl/fabric/worker.hpp — the worker side of the chip fabric: a connection to the local router
// (the collective link over the fabric is collectives/link_fabric.hpp).
//
//   // the raw API (tt-metal: WorkerToFabricEdmSender open / wait_for_empty_write_slot /
//   // send_payload_flush_* / close, with a PACKET_HEADER_TYPE written by the worker)
//   kccl::fabric::Connection c = link.connection(dir);
//   c.open(hal);  uint32_t slot = c.reserve(hal);  c.write(hal, header_l1, header_bytes, payload_l1, n);  c.close(hal);
//
// CONNECTION: the worker is the only producer of its router's sender channel 0. `reserve` waits
// until a slot is free (sent - credits < slots; the router increments the worker's credit
// semaphore when the peer has freed a packet), `write` NoC-writes header and payload into the slot
// and increments the channel's fill semaphore (same destination core, so the data lands first:
// contract N1). `close` waits until every slot is back, so no late credit lands after the kernel.
// Per direction, messages arrive in order: one route per (source, destination) pair and one
// virtual channel per direction (router.hpp, ORDERING).
//
// STATUS: the worker writes what it waits for into a status block of its L1 (wstatus::); the
// emulation's dump hooks decode it (host/builder.hpp: describe_worker).
//
// C++17, freestanding, no heap.
#pragma once

#include "header.hpp"
#include "router.hpp"

#include <common/window.hpp>
#include <hal/contract.hpp>

#include <stdint.h>
#include <string.h>

namespace kccl::fabric {

/// The most chips a group over the fabric may have (the worker keeps per-peer state for each).
inline constexpr uint32_t max_link_ranks = 64;

/// Worker kernel arguments (host::FabricPlan::worker_args writes them).
namespace wargs {
inline constexpr uint32_t magic = 0, rank = 1, ranks = 2, chip = 3, header_bytes = 4, max_message = 5, slots = 6,
                          worker_base = 7, router_base = 8, router_rx_slots = 9, router_tx_slots = 10,
                          router_xy = 11 /* 4 words */, router_max_payload = 15, peer_stride = 16, initial_counter = 17,
                          tensix_lo = 18, tensix_hi = 19 /* the chip's Tensix rectangle: x | y << 16 */, first_peer = 20;
// per peer, from first_peer + q * peer_stride:
inline constexpr uint32_t p_xy = 0, p_dir = 1, p_routing = 2, p_route = 3, p_cmds = 4;
}
inline constexpr uint32_t worker_args_magic = 0x46574B52u;  // "FWKR"
inline constexpr uint32_t message_magic = 0x4D534746u;      // "FGSM"

/// The worker's status block: what it waits for (read by the host's dump hooks).
namespace wstatus {
inline constexpr uint32_t magic = 0, kind = 1, a = 2, b = 3, c = 4;
enum Kind : uint32_t { running = 0, router_slot = 1, peer_credit = 2, arrival = 3, last_packets = 4, router_close = 5, finished = 6 };
}
inline constexpr uint32_t worker_status_magic = 0x57544652u;  // "RFTW"

/// The worker's L1 layout (the same on every worker of a fabric).
struct WorkerLayout {
    uint32_t base = 0, ranks = 0, slots = 0, max_message = 0, header_bytes = header_base_bytes;
    constexpr uint32_t status() const { return base; }
    constexpr uint32_t router_credit(uint32_t d) const { return base + status_bytes + 16u * d; }
    constexpr uint32_t done() const { return router_credit(num_dirs); }
    constexpr uint32_t arrival(uint32_t q) const { return done() + 16u + 16u * q; }
    constexpr uint32_t credit(uint32_t q) const { return arrival(ranks) + 16u * q; }
    constexpr uint32_t stage(uint32_t i) const { return credit(ranks) + i * (header_max_bytes + 16u); }
    constexpr uint32_t rx_slot_bytes() const { return 16u + ((max_message + 15u) & ~15u); }
    constexpr uint32_t rx_slot(uint32_t src, uint32_t i) const { return stage(2) + (src * slots + i) * rx_slot_bytes(); }
    constexpr uint32_t end() const { return rx_slot(ranks, 0); }
};

/// A worker's connection to one router of its chip (that router's sender channel 0).
struct Connection {
    uint32_t dir = 0, router_xy = no_router, slot_base = 0, slots = 0, slot_bytes = 0, fill_sem = 0, credit_sem = 0,
             status = 0;
    uint32_t sent = 0, idx = 0;
    bool opened = false;

    bool present() const { return router_xy != no_router; }
    template <class H>
    void open(H&) { opened = true; }
    template <class H>
    bool slot_free(H& hal) const { return CreditWindow{slots}.has_space(sent, hal.sem_read(credit_sem)); }
    /// Waits for a free slot of the router's channel; returns its L1 address on the router.
    template <class H>
    uint32_t reserve(H& hal) {
        if (!slot_free(hal)) {
            note(hal, wstatus::router_slot, dir, sent, slots);
            while (!slot_free(hal)) hal.idle();
            note(hal, wstatus::running, 0, 0, 0);
        }
        return slot_base + idx * slot_bytes;
    }
    /// Writes a packet into the reserved slot: `header_bytes` from header_l1, then `n` payload bytes
    /// from payload_l1 (none if n == 0), then announces it to the router.
    template <class H>
    void write(H& hal, uint32_t header_l1, uint32_t header_bytes, uint32_t payload_l1, uint32_t n) {
        const uint32_t x = router_xy & 0xFFFFu, y = router_xy >> 16;
        const uint32_t slot = slot_base + idx * slot_bytes;
        kccl::hal::l1_store_fence(hal, header_l1, header_bytes);  // the header was just stored (N7)
        hal.noc_write(header_l1, hal.noc_addr(x, y, slot), header_bytes);
        if (n) hal.noc_write(payload_l1, hal.noc_addr(x, y, slot + header_bytes), n);
        hal.noc_writes_flushed();  // the packet before its announcement (contract N1, strict profile)
        hal.sem_inc(hal.noc_addr(x, y, fill_sem), 1);
        idx = idx + 1 == slots ? 0 : idx + 1;
        ++sent;
    }
    /// Waits until the router has given back every slot.
    template <class H>
    void close(H& hal) {
        if (hal.sem_read(credit_sem) != sent) {
            note(hal, wstatus::router_close, dir, sent, slots);
            while (hal.sem_read(credit_sem) != sent) hal.idle();
        }
        opened = false;
    }
    template <class H>
    void note(H& hal, uint32_t kind, uint32_t a, uint32_t b, uint32_t c) const {
        volatile uint32_t* s = reinterpret_cast<volatile uint32_t*>(hal.l1_ptr(status, status_bytes));
        s[wstatus::kind] = kind;
        s[wstatus::a] = a;
        s[wstatus::b] = b;
        s[wstatus::c] = c;
    }
};

}  // namespace kccl::fabric

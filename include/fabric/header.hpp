// kccl/fabric/header.hpp — the chip fabric's packet header: routing fields, NoC command,
// validation. Shared by the router (router.hpp), the worker side (worker.hpp) and the host
// builder (host/builder.hpp).
//
// WHAT IT IS
//   tt-metal's fabric moves packets between chips through router kernels on the Ethernet cores.
//   Every packet starts with a header written by its source worker: where it goes (routing
//   fields) and what the last router does with the payload on the destination chip (a NoC
//   command). The words below follow the vocabulary of docs/routes.md: a *route* is host
//   configured (the worker copies it from its kernel arguments), *multicast* is a header range
//   or a write-and-forward path.
//
// LAYOUT (header_bytes: 48 for 1D routing, 64..128 for 2D — tt-metal's figures: "48 B for 1D
// routing, 80 to 128 B for 2D", mesh_header_bytes; always a multiple of the 16-byte Ethernet word)
//   w0  magic (bits 0-15) | NocCmd (16-23) | Routing (24-30) | last-packet flag (bit 31)
//   w1  payload bytes (after the header)
//   w2  route   1D unicast: hops still to go (>= 1 when sent)
//               1D multicast: start (hops to the first destination) | range << 16 (destinations)
//               2D: index of the next route byte | route bytes in use (destination + commands) << 16
//   w3  target core x | y << 16       (on the destination chip; NoC addresses are made there)
//   w4  target L1 address
//   w5  semaphore core x | y << 16    (atomic increment, fused write + increment)  scatter: chunk 1 L1
//                                                            NoC multicast: rectangle corner x1 | y1 << 16
//       (NoC multicast: w3 is the rectangle's corner x0 | y0 << 16, w4 the L1 address in every core)
//   w6  semaphore L1 address                                                       scatter: chunk 2 L1
//   w7  value: increment, or the inline-written word                              scatter: chunk 3 L1
//   w8  scatter: chunk 0 bytes | chunk 1 bytes << 16
//   w9  scatter: chunk 2 bytes | chunk count << 16 (the last chunk takes the rest of the payload)
//   w10 source: chip | packet number << 8 (diagnostics)
//   w11 check: a fold of w0..w10 and the route commands; a header whose check does not match was
//       never written by a worker (L1 is never zeroed: garbage or an old packet) and is a named
//       error at the first router that reads it.
//   2D only: bytes 48..51 the destination, chip | mesh << 16 (tt-metal's dst_start_chip_id and
//   dst_start_mesh_id: every router compares the mesh with its routing table, route_table());
//   bytes 52 .. header_bytes: one route command per hop (RouteCmd), header_bytes - 52 commands at
//   most (the builder rejects a route that needs more: "header too small"). The route word counts
//   the destination's 4 bytes with the commands, so command k is route byte 4 + k.
//
// ROUTING (what each router does with a packet that arrives from the Ethernet)
//   1D unicast     hops -= 1; 0: execute the NoC command here; else forward in the direction of
//                  travel (the router on the opposite side of the chip).
//   1D multicast   start > 1: start -= 1 and forward; start == 1: execute here, range -= 1, and
//                  forward while range > 0.
//   2D             read the routing table (this chip's mesh) and check the destination's mesh;
//                  then the command at `index`: forward to a direction, execute here (deliver),
//                  or both (write-and-forward, for multicast along a path); index += 1.
//   The first hop is chosen by the source: the worker writes into the router facing it.
//
// C++17, freestanding, no heap.
#pragma once

#include <common/direction.hpp>
#include <hal/config.hpp>
#include <hal/contract.hpp>

#include <stdint.h>

namespace kccl::fabric {

/// What the destination router does with the payload (tt-metal's NOC_UNICAST_WRITE,
/// NOC_UNICAST_INLINE_WRITE, NOC_UNICAST_ATOMIC_INC, NOC_FUSED_UNICAST_ATOMIC_INC,
/// NOC_UNICAST_SCATTER_WRITE, NOC_MULTICAST_WRITE).
enum class NocCmd : uint8_t {
    unicast_write = 1,    ///< payload -> target core's L1
    inline_write = 2,     ///< `value` -> one 32-bit word of the target (no payload)
    atomic_inc = 3,       ///< semaphore += value (no payload)
    fused_write_inc = 4,  ///< payload -> target, then semaphore += value (ordered: lands after the data)
    scatter_write = 5,    ///< payload cut in up to 4 chunks, each to its own L1 address of the target core
    /// payload -> the same L1 address of every Tensix core of a rectangle on the destination chip
    /// (w3: x0 | y0 << 16, w5: x1 | y1 << 16, w4: the L1 address): one noc_write_mcast by the
    /// delivering router, which then waits until it has landed everywhere (noc_write_barrier)
    /// before it executes anything else. Combines with chip-level multicast (multicast_1d,
    /// write-and-forward): the same rectangle on every chip that delivers.
    multicast_write = 6,
};
constexpr bool valid_cmd(uint32_t c) { return c >= 1 && c <= 6; }

enum class Routing : uint8_t { unicast_1d = 1, multicast_1d = 2, path_2d = 3 };
constexpr bool valid_routing(uint32_t r) { return r >= 1 && r <= 3; }

/// A 2D route command: low 2 bits the exit direction, `cmd_forward` set if the packet goes on,
/// `cmd_deliver` set if the NoC command is executed on this chip.
inline constexpr uint8_t cmd_forward = 0x10, cmd_deliver = 0x20;
constexpr uint8_t route_forward(uint32_t d) { return uint8_t(cmd_forward | (d & 3u)); }
constexpr uint8_t route_deliver() { return cmd_deliver; }
constexpr uint8_t route_deliver_and_forward(uint32_t d) { return uint8_t(cmd_deliver | cmd_forward | (d & 3u)); }

inline constexpr uint32_t header_magic = 0xFAB1u;
inline constexpr uint32_t header_base_bytes = 48;   ///< the 1D header (tt-metal: 48 B)
inline constexpr uint32_t header_max_bytes = 128;   ///< the largest 2D header (tt-metal: up to 128 B)
inline constexpr uint32_t route_dest_bytes = 4;     ///< 2D: the destination word before the route commands
/// The 2D destination word: chip | mesh << 16 (the fabric is one mesh, `fabric_mesh_id`).
constexpr uint32_t route_dest(uint32_t chip, uint32_t mesh) { return (chip & 0xFFFFu) | (mesh << 16); }
inline constexpr uint32_t fabric_mesh_id = 0;
/// tt-metal's 2D header size for a mesh whose longest route is `max_hops` hops: its mesh header
/// (HybridMeshPacketHeader, 61 bytes of fields and a route buffer of one byte per hop) comes in
/// four sizes, 80, 96, 112 and 128 bytes for routes of up to 19, 35, 51 and 67 hops, and its host
/// takes the smallest that holds the mesh's (rows - 1) + (cols - 1) hops; 0 beyond 67 hops. Each
/// size holds this header's destination word and route commands for those hops (one per hop and the deliver).
constexpr uint32_t mesh_header_bytes(uint32_t max_hops) {
    return max_hops <= 19 ? 80u : max_hops <= 35 ? 96u : max_hops <= 51 ? 112u : max_hops <= 67 ? 128u : 0u;
}
static_assert(mesh_header_bytes(19) - 52 >= 19 + 1 && mesh_header_bytes(35) - 52 >= 35 + 1 &&
                  mesh_header_bytes(51) - 52 >= 51 + 1 && mesh_header_bytes(67) - 52 >= 67 + 1,
              "Each of tt-metal's 2D header sizes must hold this header's destination and route commands for its routes.");
inline constexpr uint32_t max_scatter_chunks = 4;   ///< tt-metal's scatter write: at most 4 chunks
inline constexpr uint32_t flag_last = 1u << 31;     ///< a route's last packet (the router counts them to end)

namespace hw {  // word indices
inline constexpr uint32_t kind = 0, payload = 1, route = 2, dst_xy = 3, dst_l1 = 4, sem_xy = 5, sem_l1 = 6, value = 7,
                          scatter01 = 8, scatter2n = 9, source = 10, check = 11, words = 12;
inline constexpr uint32_t dest = 12;  ///< 2D only: the destination word (the first route bytes)
}

constexpr uint32_t make_kind(NocCmd c, Routing r, bool last) {
    return header_magic | (uint32_t(c) << 16) | (uint32_t(r) << 24) | (last ? flag_last : 0u);
}
constexpr uint32_t kind_cmd(uint32_t w0) { return (w0 >> 16) & 0xFFu; }
constexpr uint32_t kind_routing(uint32_t w0) { return (w0 >> 24) & 0x7Fu; }
constexpr bool kind_last(uint32_t w0) { return (w0 & flag_last) != 0; }
constexpr uint32_t xy(uint32_t x, uint32_t y) { return x | (y << 16); }

/// The check word of a header: words 0..10 and `ncmds` route command bytes folded.
inline uint32_t header_check(const volatile uint32_t* w, const volatile uint8_t* cmds, uint32_t ncmds) {
    uint32_t h = 0x9E3779B9u;
    for (uint32_t i = 0; i < hw::check; ++i) h = (h ^ w[i]) * 0x01000193u + (h >> 15);
    for (uint32_t i = 0; i < ncmds; ++i) h = (h ^ cmds[i]) * 0x01000193u + (h >> 15);
    return h ^ 0xC0FFEEu;
}

/// The number of route bytes the check covers: the 2D destination and commands, 0 in 1D.
inline uint32_t header_cmd_count(const volatile uint32_t* w) {
    return kind_routing(w[hw::kind]) == uint32_t(Routing::path_2d) ? (w[hw::route] >> 16) : 0u;
}

/// The destination rectangle of a multicast_write header (w3: corner 0, w5: corner 1).
inline hal::NocRect mcast_rect_of(const volatile uint32_t* w) {
    return hal::NocRect{w[hw::dst_xy] & 0xFFFFu, w[hw::dst_xy] >> 16, w[hw::sem_xy] & 0xFFFFu, w[hw::sem_xy] >> 16};
}

/// Why a header is not valid (0: valid), checked against the router's header size.
enum class HeaderFault : uint32_t { none = 0, magic, check, command, routing, too_many_cmds, payload, mcast_rect, no_dest };
constexpr const char* fault_text(HeaderFault f) {
    return f == HeaderFault::magic     ? "no header magic (the slot was never written by a worker: uninitialised header)"
         : f == HeaderFault::check     ? "the check word does not match (a torn, stale or uninitialised header)"
         : f == HeaderFault::command   ? "an unknown NoC command"
         : f == HeaderFault::routing   ? "an unknown routing kind"
         : f == HeaderFault::too_many_cmds ? "more route commands than the header holds"
         : f == HeaderFault::payload   ? "a payload larger than the channel's packets"
         : f == HeaderFault::mcast_rect ? "a NoC multicast to an empty or inverted rectangle (allowed: x0 <= x1, y0 <= y1)"
         : f == HeaderFault::no_dest   ? "a 2D header without its destination word and a route command (allowed: at least 5 route bytes)"
                                       : "valid";
}

/// Validates the header at `w` (as 32-bit words; the route commands follow word 12).
inline HeaderFault validate_header(const volatile uint32_t* w, uint32_t header_bytes, uint32_t max_payload) {
    if ((w[hw::kind] & 0xFFFFu) != header_magic) return HeaderFault::magic;
    const uint32_t ncmds = header_cmd_count(w);
    if (ncmds > header_bytes - header_base_bytes) return HeaderFault::too_many_cmds;
    if (w[hw::check] != header_check(w, reinterpret_cast<const volatile uint8_t*>(w + hw::words), ncmds))
        return HeaderFault::check;  // before the field checks: a garbage header is named as one
    if (!valid_cmd(kind_cmd(w[hw::kind]))) return HeaderFault::command;
    if (!valid_routing(kind_routing(w[hw::kind]))) return HeaderFault::routing;
    if (kind_routing(w[hw::kind]) == uint32_t(Routing::path_2d) && ncmds < route_dest_bytes + 1) return HeaderFault::no_dest;
    if (w[hw::payload] > max_payload) return HeaderFault::payload;
    if (kind_cmd(w[hw::kind]) == uint32_t(NocCmd::multicast_write) && mcast_rect_of(w).cores() == 0)
        return HeaderFault::mcast_rect;
    return HeaderFault::none;
}

/// Writes the check word of the header at `w` (after every other field, route commands included).
inline void seal_header(volatile uint32_t* w) {
    w[hw::check] = header_check(w, reinterpret_cast<const volatile uint8_t*>(w + hw::words), header_cmd_count(w));
}

/// The fields a source writes (the worker side's raw API; FabricLink fills it for its messages).
struct HeaderFields {
    NocCmd cmd = NocCmd::unicast_write;
    Routing routing = Routing::unicast_1d;
    uint32_t payload = 0, route = 0, dst_xy = 0, dst_l1 = 0, sem_xy = 0, sem_l1 = 0, value = 1;
    uint32_t scatter01 = 0, scatter2n = 0, source = 0;
    bool last = false;
};

/// Writes a complete header at `h` (route commands: `ncmds` bytes from `cmd_byte(i)`) and seals it.
template <class CmdByte>
inline void write_header(volatile uint32_t* h, const HeaderFields& f, uint32_t ncmds, CmdByte cmd_byte) {
    h[hw::kind] = make_kind(f.cmd, f.routing, f.last);
    h[hw::payload] = f.payload;
    h[hw::route] = f.route;
    h[hw::dst_xy] = f.dst_xy;
    h[hw::dst_l1] = f.dst_l1;
    h[hw::sem_xy] = f.sem_xy;
    h[hw::sem_l1] = f.sem_l1;
    h[hw::value] = f.value;
    h[hw::scatter01] = f.scatter01;
    h[hw::scatter2n] = f.scatter2n;
    h[hw::source] = f.source;
    volatile uint8_t* cmds = reinterpret_cast<volatile uint8_t*>(h + hw::words);
    for (uint32_t i = 0; i < ncmds; ++i) cmds[i] = cmd_byte(i);
    seal_header(h);
}

// ---- the router's L1 layout (the same on every router of a fabric; host/builder.hpp fills it) --
// From `base` (16-byte aligned):
//   +0                       status block (status_words words): written by the router as it runs
//   +status_bytes            semaphores, 16 bytes apart: fill[c] (c < max_sender_channels),
//                            fwd_credit[d] (d < num_dirs), link credit inbox, link ack inbox (16-byte words)
//   then                     the credit and ack sources (16 bytes each)
//   then                     the routing table (16 bytes, written by the host): this chip's mesh,
//                            this chip (tt-metal's routing table in the router's L1, which its 2D
//                            router reads for every packet)
//   then                     receiver channel: rx_slots slots of slot_bytes
//   then                     sender channels 0 .. max_sender_channels-1: tx_slots slots each
// A slot: header_bytes + max_payload rounded up to 16, then a 16-byte sync word. A sender slot
// holds the packet (header, payload, padding to 16: `bytes`) from its start and the router writes
// the sync word right after it, so one eth_send carries both; it lands at the END of the receiver
// slot (at rx_slot + slot_bytes - 16 - bytes), so the sync word is always the slot's last 16
// bytes and tells the receiver where the packet starts (sync_field).
inline constexpr uint32_t max_sender_channels = 1 + num_dirs;  ///< 0: the local worker; 1 + d: from the router facing d
inline constexpr uint32_t status_words = 16;
inline constexpr uint32_t status_bytes = status_words * 4;
namespace st {  // status words
inline constexpr uint32_t magic = 0, phase = 1, rx_processed = 2, rx_last = 3, tx_sent = 4, tx_freed = 5, tx_last = 6,
                          wait_kind = 7, wait_channel = 8, wait_a = 9, wait_b = 10;
}
inline constexpr uint32_t status_magic = 0x52544652u;  // "RFTR"
enum class Phase : uint32_t { init = 1, handshake = 2, running = 3, draining = 4, done = 5 };
constexpr const char* phase_name(uint32_t p) {
    return p == 1 ? "initialising" : p == 2 ? "handshaking with its link peer" : p == 3 ? "running" : p == 4 ? "draining (all last packets seen)"
         : p == 5 ? "done" : "not started";
}

struct RouterLayout {
    uint32_t base = 0, header_bytes = header_base_bytes, max_payload = 0, rx_slots = 16, tx_slots = 8;
    /// Sender channels given slots in L1: max_sender_channels (2D: the local channel and one per
    /// upstream direction), or 2 on a 1D fabric, where a router has the local channel and exactly
    /// one pass-through channel (tt-metal's 1D router: "2 sender channels"), which then takes
    /// position 1 whatever its direction.
    uint32_t sender_positions = max_sender_channels;

    constexpr uint32_t slot_bytes() const { return header_bytes + ((max_payload + 15u) & ~15u) + 16u; }
    constexpr uint32_t status() const { return base; }
    constexpr uint32_t fill_sem(uint32_t c) const { return base + status_bytes + 16u * c; }
    constexpr uint32_t fwd_credit_sem(uint32_t d) const { return base + status_bytes + 16u * (max_sender_channels + d); }
    constexpr uint32_t credit_inbox() const { return base + status_bytes + 16u * (max_sender_channels + num_dirs); }
    constexpr uint32_t ack_inbox() const { return credit_inbox() + 16u; }
    constexpr uint32_t credit_src() const { return ack_inbox() + 16u; }
    constexpr uint32_t ack_src() const { return credit_src() + 16u; }
    constexpr uint32_t route_table() const { return ack_src() + 16u; }  ///< +0 mesh, +4 chip
    constexpr uint32_t rx_slot(uint32_t i) const { return route_table() + 16u + i * slot_bytes(); }
    constexpr uint32_t tx_slot(uint32_t c, uint32_t i) const {
        const uint32_t pos = sender_positions < max_sender_channels ? (c ? 1u : 0u) : c;
        return rx_slot(rx_slots) + (pos * tx_slots + i) * slot_bytes();
    }
    constexpr uint32_t end() const { return rx_slot(rx_slots) + sender_positions * tx_slots * slot_bytes(); }
    /// Where a packet of `bytes` (header + payload rounded to 16) starts in receiver slot i: it
    /// ends where the slot's sync word begins.
    constexpr uint32_t rx_packet(uint32_t i, uint32_t bytes) const { return rx_slot(i) + slot_bytes() - 16u - bytes; }
    constexpr uint32_t rx_sync(uint32_t i) const { return rx_slot(i) + slot_bytes() - 16u; }
};

/// The sync word of the n-th packet (n >= 1) on a link, sent behind a packet of `bytes` bytes
/// (word 1): the other words derived from n and bytes, so stale or garbage words match with
/// probability 2^-64 at most, and a stale word of packet n - rx_slots never matches.
inline constexpr uint32_t sync_magic = 0x53594E43u;  // "SYNC"
constexpr uint32_t sync_field(uint32_t n, uint32_t bytes, uint32_t f) {
    return f == 0 ? n : f == 1 ? bytes : f == 2 ? ~n : (n * 0x9E3779B9u) ^ sync_magic ^ (bytes * 0x85EBCA6Bu);
}

}  // namespace kccl::fabric

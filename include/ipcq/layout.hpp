// kccl/ipcq/layout.hpp — the L1 layout of one core's IPCQ block, shared by device and host.
//
// WHAT IT IS
//   The host builder (ipcq/host/plan.hpp) writes a block at an L1 address of every member core
//   and passes that address as a runtime argument; the device (ipcq/queues.hpp) reads its
//   configuration from there and keeps its live pointers there. Offsets only, no code.
//
//   block + 0                 BlockHeader (64 B)
//   block + 64 + d * 384      Record of direction d, for d < n_dirs:
//       + 0    RecordConfig (128 B, host-written, read-only for the device)
//       + 128  head mailbox   (64 B line) the peer's my_head, written by the PEER after the data
//       + 192  credit mailbox (64 B line) the peer's my_tail, written by the PEER after consuming
//       + 256  mirror         (64 B line) my_head, my_tail, peer_head_cache, peer_tail_cache,
//                             taken, head_slot, tail_slot, put epoch, windows opened — written by
//                             this core only, read by the pointer dump and by the next Queues
//                             constructor (resume)
//       + 320  window mailbox (64 B line) the base and count of the windows the PEER opened for
//                             this core's puts (Queues::open_window), written by the PEER
//   then (host-placed, addresses in RecordConfig): per rx direction the descriptor array
//   (n_slots x 16 B), per tx direction the descriptor shadow (n_slots x 16 B), the rx rings
//   (L1 placement) or one staging slot (DRAM placement), and optionally the tx rings.
//
//   Each 32-bit word written by another core sits on its own 64-byte line: one line per writer.
#pragma once

#include <hal/config.hpp>

#include <stdint.h>

namespace kccl::ipcq {

/// Where a core's rx slots live. The same kernel code runs with either.
enum class Placement : uint32_t { l1 = 0, dram = 1 };
/// How a blocked send/recv waits: re-check + idle() per poll, or the backend's
/// blocking semaphore wait. Both give identical results.
enum class Backpressure : uint32_t { poll = 0, sleep = 1 };

namespace layout {

inline constexpr uint32_t kMagic = 0x51435049u;  // "IPCQ"
/// 2: slot indices kept beside the counters (wrap-safe for any n_slots), counters start at
/// QueueConfig::initial_counter. 3: the window mailbox and put notices (Queues::put).
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kHeaderBytes = 64;
inline constexpr uint32_t kRecordBytes = 384;
inline constexpr uint32_t kDescBytes = 16;
/// NoC transfers and slots are kept 16-byte aligned (L1/NoC alignment on Wormhole).
inline constexpr uint32_t kAlign = 16;

// BlockHeader words (byte offsets from the block).
inline constexpr uint32_t kHdrMagic = 0, kHdrVersion = 4, kHdrDirs = 8, kHdrRank = 12, kHdrMode = 16,
                          kHdrStrict = 20, kHdrWorld = 24, kHdrMetaBytes = 28;

// Record layout (byte offsets from the record).
inline constexpr uint32_t kConfig = 0, kHeadMailbox = 128, kCreditMailbox = 192, kMirror = 256, kWindowMailbox = 320;
/// Window mailbox words: the windows the peer has opened (a count) and the base of its latest.
inline constexpr uint32_t kWindowCount = kWindowMailbox + 0, kWindowBase = kWindowMailbox + 4;

// RecordConfig words (byte offsets from the record).
inline constexpr uint32_t kCfgFlags = 0;        // kInstalled | kTx | kRx
inline constexpr uint32_t kCfgPeerX = 4, kCfgPeerY = 8, kCfgPeerDir = 12, kCfgPeerRank = 16;
inline constexpr uint32_t kCfgPeerRecord = 20;  // L1 address of the peer's record for peer_dir
inline constexpr uint32_t kCfgPeerDesc = 24;    // L1 address of the peer's rx descriptor array
inline constexpr uint32_t kCfgPeerRxX = 28, kCfgPeerRxY = 32, kCfgPeerRxBase = 36;  // peer's rx slots
inline constexpr uint32_t kCfgRxX = 40, kCfgRxY = 44, kCfgRxBase = 48;  // my rx slots (L1 or DRAM)
inline constexpr uint32_t kCfgSlots = 52, kCfgSlotBytes = 56, kCfgPlacement = 60;
inline constexpr uint32_t kCfgDesc = 64;    // my rx descriptor array (L1)
inline constexpr uint32_t kCfgShadow = 68;  // my tx descriptor shadow (L1)
inline constexpr uint32_t kCfgStage = 72;   // DRAM placement: my one-slot staging buffer (L1)
inline constexpr uint32_t kCfgTxRing = 76;  // optional tx ring (L1), 0 = none
inline constexpr uint32_t kCfgCreditBatch = 80;  // return credit every this many releases (>= 1)

inline constexpr uint32_t kInstalled = 1u, kTx = 2u, kRx = 4u;

// Mirror words (byte offsets from the record).
inline constexpr uint32_t kMyHead = kMirror + 0, kMyTail = kMirror + 4, kPeerHeadCache = kMirror + 8,
                          kPeerTailCache = kMirror + 12, kTaken = kMirror + 16;
/// Slot indices (0..n_slots-1) of my_head and my_tail. They advance with the counters and wrap
/// at n_slots, so `counter % n_slots` is never computed: that expression jumps at the 2^32
/// wrap of the counter unless n_slots is a power of two (two messages would share a slot).
inline constexpr uint32_t kHeadSlot = kMirror + 20, kTailSlot = kMirror + 24;
/// Windows this core has begun as a sender (its put epoch) and opened as a receiver.
inline constexpr uint32_t kPutEpoch = kMirror + 28, kOpened = kMirror + 32;

/// Byte offset of direction d's record from the block.
constexpr uint32_t record(uint32_t d) { return kHeaderBytes + d * kRecordBytes; }
/// Bytes of header + records for n directions.
constexpr uint32_t records_end(uint32_t n_dirs) { return kHeaderBytes + n_dirs * kRecordBytes; }
constexpr uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

}  // namespace layout

/// The 16-byte descriptor of one message, stored per rx slot: nbytes, data type code, shape.
/// dtype and shape are opaque to IPCQ; strict mode compares them. A put notice (Queues::put:
/// the payload was written straight into the receiver's L1) has rank == kPutNotice and the
/// landing address in dims[0] (low half) and dims[1] (high half).
struct MsgInfo {
    uint32_t nbytes = 0;
    uint16_t dtype = 0;
    uint16_t rank = 0;      ///< number of dims used in `dims` (0..4); kPutNotice for a put
    uint16_t dims[4] = {0, 0, 0, 0};
};
static_assert(sizeof(MsgInfo) == layout::kDescBytes, "MsgInfo must be exactly one 16-byte descriptor.");

/// MsgInfo::rank of a put notice (a real shape has at most 4 dims).
inline constexpr uint16_t kPutNotice = 0xFFFFu;
constexpr bool is_put_notice(const MsgInfo& i) { return i.rank == kPutNotice; }
constexpr uint32_t put_address(const MsgInfo& i) { return uint32_t(i.dims[0]) | uint32_t(i.dims[1]) << 16; }
constexpr MsgInfo put_notice(uint32_t nbytes, uint32_t l1) {
    MsgInfo i;
    i.nbytes = nbytes;
    i.rank = kPutNotice;
    i.dims[0] = uint16_t(l1 & 0xFFFFu);
    i.dims[1] = uint16_t(l1 >> 16);
    return i;
}

}  // namespace kccl::ipcq

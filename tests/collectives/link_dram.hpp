// tests/collectives/link_dram.hpp — the fidelity scenario's link adapter for scenarios whose tensors live in DRAM, page by page, as
// tt-metal's interleaved all_gather keeps them (its input and output tensors are DRAM buffers; a
// reader kernel fetches input pages with noc_async_read, a writer kernel stores received pages
// with noc_async_write, and a page that is forwarded to the next chip is read back from the output
// tensor after the writer's write barrier and semaphore — the "send reader" reads the output).
//
// DramTensorLink<Link> wraps any kccl link and adds that DRAM traffic around the collective's own
// messages, without changing the collective:
//   * a message received (recv / try_recv / recv_into) is written to DRAM, page by page (posted
//     writes, no barrier), appended to the direction's area of the DRAM output region (so after the
//     op DRAM holds every received byte, in arrival order per direction);
//   * a message sent from a received view (forwarding) first waits for those writes to commit
//     (noc_write_barrier, as tt-metal's writer does before it signals the sender reader) and reads
//     the pages back from DRAM into the view (noc_read per page, noc_read_barrier) — the same
//     bytes, so the data path is real;
//   * a message sent from anywhere else (the rank's own input) is read from the DRAM copy of the
//     input first (page by page, then a read barrier). The caller puts the input there.
// All DRAM accesses are NoC operations to the chip's DRAM endpoint; what they cost is the timing
// model's (emulation/timing.hpp, WormholeOptions::dram_*). A send that cannot go yet (no credit)
// does not repeat the DRAM read when it is retried.
//
// Differences from tt-metal that remain (docs/emulation-timing.md, "Small-tensor all_gather"): one worker
// core does the work of tt-metal's four data-movement RISCs, so a DRAM barrier stalls every lane of
// that worker; pages are not interleaved over 12 DRAM channels but go to the one emulated channel.
//
// C++17, freestanding, no heap (device code: it runs inside the emulated worker).
#pragma once

#include <collectives/link.hpp>

#include <stdint.h>

namespace kccl::coll {

/// Where a rank's tensors are in DRAM. Addresses are NoC addresses on the rank's own chip (made by
/// hal.noc_addr on the DRAM endpoint); `out_dir_bytes` bytes are reserved per direction.
struct DramTensors {
    uint64_t input = 0;          ///< NoC address of the DRAM copy of the input (input_l1's bytes)
    uint32_t input_l1 = 0;       ///< the L1 the input is sent from
    uint32_t input_bytes = 0;
    uint64_t output = 0;         ///< NoC address of the DRAM output tensor, laid out as the L1 output buffer
    uint32_t output_l1 = 0;      ///< the L1 output buffer (received data that lands there is stored at the same offset)
    uint32_t output_bytes = 0;
    uint64_t log = 0;            ///< NoC address of a DRAM area for messages received elsewhere (views):
    uint32_t log_dir_bytes = 0;  ///< direction d appends at log + d * log_dir_bytes
    uint32_t page_bytes = 4096;  ///< tt-metal's page of a tiled tensor: one 32 x 32 tile
};

template <class Link>
class DramTensorLink {
public:
    using hal_type = typename Link::hal_type;
    static constexpr uint32_t max_held_views = Link::max_held_views;
    static constexpr uint32_t max_dirs = 8;

    /// Starts the op: the rank's own fragment goes to its place in the DRAM output tensor (posted
    /// writes from the input; tt-metal's local copy), `own_offset` bytes into the output tensor.
    DramTensorLink(Link& link, const DramTensors& t, uint32_t own_offset) : l_(link), t_(t) {
        auto& h = l_.hal();
        for (uint32_t o = 0; o < t_.input_bytes; o += t_.page_bytes) {
            const uint32_t p = t_.input_bytes - o < t_.page_bytes ? t_.input_bytes - o : t_.page_bytes;
            h.noc_write(t_.input_l1 + o, t_.output + own_offset + o, p);
        }
    }
    DramTensorLink(const DramTensorLink&) = delete;
    DramTensorLink& operator=(const DramTensorLink&) = delete;

    hal_type& hal() { return l_.hal(); }
    uint32_t directions() const { return l_.directions(); }
    bool can_send(uint32_t d) const { return l_.can_send(d); }
    bool can_recv(uint32_t d) const { return l_.can_recv(d); }
    uint32_t max_message_bytes() const { return l_.max_message_bytes(); }
    uint32_t slots(uint32_t d) const { return l_.slots(d); }

    void send(uint32_t d, uint32_t src_l1, uint32_t n) {
        stage(d, src_l1, n);
        l_.send(d, src_l1, n);
        staged_[d & (max_dirs - 1)] = false;
    }
    bool try_send(uint32_t d, uint32_t src_l1, uint32_t n) {
        stage(d, src_l1, n);
        if (!l_.try_send(d, src_l1, n)) return false;
        staged_[d & (max_dirs - 1)] = false;
        return true;
    }
    coll::View recv(uint32_t d) {
        const coll::View v = l_.recv(d);
        store(d, v.l1, v.bytes);
        return v;
    }
    bool try_recv(uint32_t d, coll::View& out) {
        if (!l_.try_recv(d, out)) return false;
        store(d, out.l1, out.bytes);
        return true;
    }
    void release(const coll::View& v) { l_.release(v); }
    uint32_t recv_into(uint32_t d, uint32_t dst_l1, uint32_t capacity) {
        const uint32_t n = l_.recv_into(d, dst_l1, capacity);
        store(d, dst_l1, n);
        return n;
    }
    void quiesce() {
        l_.hal().noc_write_barrier();  // the output pages have committed before the op ends
        l_.quiesce();
    }
    uint32_t sent(uint32_t d) const { return l_.sent(d); }
    uint32_t received(uint32_t d) const { return l_.received(d); }

private:
    static constexpr uint32_t kRecords = 16;
    struct Record {
        uint32_t l1 = 0, bytes = 0;
        uint64_t dram = 0;
    };

    bool in_output(uint32_t l1, uint32_t n) const { return l1 >= t_.output_l1 && l1 + n <= t_.output_l1 + t_.output_bytes; }

    /// Pages of a received message to DRAM (posted writes): into the output tensor when the message
    /// landed in the output buffer, else appended to the direction's log. Remembered for forwarding.
    void store(uint32_t d, uint32_t l1, uint32_t n) {
        if (n == 0) return;
        const uint32_t k = d & (max_dirs - 1);
        uint64_t at;
        if (in_output(l1, n)) {
            at = t_.output + (l1 - t_.output_l1);
        } else {
            if (log_used_[k] + n > t_.log_dir_bytes) log_used_[k] = 0;  // the log wraps (only costs matter there)
            at = t_.log + uint64_t(k) * t_.log_dir_bytes + log_used_[k];
            log_used_[k] += (n + 15u) & ~15u;
        }
        auto& h = l_.hal();
        for (uint32_t o = 0; o < n; o += t_.page_bytes) {
            const uint32_t p = n - o < t_.page_bytes ? n - o : t_.page_bytes;
            h.noc_write(l1 + o, at + o, p);
        }
        rec_[next_rec_++ % kRecords] = Record{l1, n, at};
    }
    /// Before a send of [src_l1, +n): its pages come from DRAM (once per message) — a received
    /// message being forwarded after its DRAM writes committed, or the rank's own input.
    void stage(uint32_t d, uint32_t src_l1, uint32_t n) {
        const uint32_t k = d & (max_dirs - 1);
        if (staged_[k] || n == 0) return;
        auto& h = l_.hal();
        uint64_t from = 0;
        bool found = false;
        for (uint32_t i = 0; i < kRecords && !found; ++i) {  // newest first
            const Record& r = rec_[(next_rec_ + kRecords - 1 - i) % kRecords];
            if (r.bytes && src_l1 >= r.l1 && src_l1 + n <= r.l1 + r.bytes) {
                h.noc_write_barrier();  // the received pages have committed to DRAM
                from = r.dram + (src_l1 - r.l1);
                found = true;
            }
        }
        if (!found) {
            if (src_l1 < t_.input_l1 || src_l1 + n > t_.input_l1 + t_.input_bytes) return;  // not a tensor in DRAM
            from = t_.input + (src_l1 - t_.input_l1);
        }
        for (uint32_t o = 0; o < n; o += t_.page_bytes) {
            const uint32_t p = n - o < t_.page_bytes ? n - o : t_.page_bytes;
            h.noc_read(from + o, src_l1 + o, p);
        }
        h.noc_read_barrier();
        staged_[k] = true;
    }

    Link& l_;
    DramTensors t_;
    Record rec_[kRecords] = {};
    uint32_t next_rec_ = 0;
    uint32_t log_used_[max_dirs] = {};
    bool staged_[max_dirs] = {};
};

}  // namespace kccl::coll

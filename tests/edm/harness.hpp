// End-to-end EDM harness: two chips, one link, an EDM on each end, channels in both directions,
// sender and receiver workers per channel. Every payload carries its sequence number and a
// checksum, and its full content is a function of (channel, message) computed here, independently
// of the code under test: receivers count every word that differs. Nothing lost, duplicated,
// reordered or corrupted <=> every receiver reports 0 errors and the expected message count.
#pragma once

#include "emulation/util.hpp"

#include <edm/edm.hpp>
#include <edm/host/builder.hpp>
#include <edm/worker.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kccl::test::edm_harness {

namespace edm = kccl::edm;

struct Scenario {
    uint32_t channels = 1;
    uint32_t buffers = 2;
    uint32_t packet_bytes = 256;
    uint32_t workers = 1;  // per channel end
    edm::Sharing sharing = edm::Sharing::not_shared;
    uint32_t messages = 100;
    bool end_with_terminate = false;  // WORKER_INITIATED: terminate after the messages instead of send_last
    std::string describe() const {
        return "channels=" + std::to_string(channels) + " buffers=" + std::to_string(buffers) +
               " packet=" + std::to_string(packet_bytes) + " workers=" + std::to_string(workers) +
               " sharing=" + (sharing == edm::Sharing::round_robin ? "rr" : "ns") +
               " messages=" + std::to_string(messages) + (end_with_terminate ? " terminate" : "");
    }
};

/// Word i of message m of channel c. Word 0 is the sequence number, word 1 a checksum of the
/// rest; the rest is a hash.
inline uint32_t content(uint32_t c, uint32_t m, uint32_t i, uint32_t words) {
    auto h = [](uint32_t c_, uint32_t m_, uint32_t i_) {
        uint32_t x = c_ * 0x9E3779B1u ^ m_ * 0x85EBCA77u ^ i_ * 0xC2B2AE3Du;
        x ^= x >> 15;
        x *= 0x2C1B3C6Du;
        return x ^ (x >> 12);
    };
    if (i == 0) return m;
    if (i == 1) {
        uint32_t sum = 0;
        for (uint32_t k = 2; k < words; ++k) sum += h(c, m, k);
        return sum;
    }
    return h(c, m, i);
}

// L1 addresses on worker cores.
inline constexpr uint32_t kWorkerSem = 0x100;
inline constexpr uint32_t kStage = 0x1000;

/// The part [off, off + bytes) of the packet that worker k of W writes (NOT_SHARED splits the
/// packet in 16-byte-aligned slices; the last worker takes the rest).
inline void slice(uint32_t packet, uint32_t W, uint32_t k, uint32_t& off, uint32_t& bytes) {
    const uint32_t per = (packet / W) & ~15u;
    off = per * k;
    bytes = k + 1 == W ? packet - off : per;
}

template <class Config>
struct Result {
    RunReport report;
    uint64_t errors = 0;
    uint64_t received = 0;
    uint64_t expected_received = 0;
    uint32_t context_switches = 0;
};

/// Runs the scenario on `cluster` (a 2-chip cluster with a link between chips 0 and 1). The
/// kernel on each core can be wrapped by `programs` consecutive programs (back to back on the
/// same cores, as a following op would be).
/// Runs on each Ethernet core after its EDM program(s) returned: models the next op on that
/// core. Its return value counts as errors.
using AfterEdm = std::function<uint64_t(emu::Hal&, int side)>;

template <class Config>
Result<Config> run(Cluster& cluster, const Scenario& s, const RunOptions& opt, uint32_t programs = 1,
                   AfterEdm after_edm = {}) {
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    const auto& chip = cluster.chip(0).spec();
    const uint32_t need = 2 * s.channels * s.workers;
    REQUIRE(need <= chip.grid_w * chip.grid_h);

    // Channel c: even -> a sends, odd -> b sends. Worker cores are assigned in order per chip.
    edm::host::EdmEnd a, b;
    std::vector<std::vector<CoreCoord>> send_workers(s.channels), recv_workers(s.channels);
    uint32_t next_core[2] = {0, 0};
    auto take = [&](uint32_t chip_i) {
        const uint32_t n = next_core[chip_i]++;
        return cluster.chip(chip_i).worker(n % chip.grid_w, n / chip.grid_w);
    };
    for (uint32_t c = 0; c < s.channels; ++c) {
        const bool a_sends = c % 2 == 0;
        edm::host::ChannelSpec tx, rx;
        tx.buffers = rx.buffers = s.buffers;
        tx.packet_bytes = rx.packet_bytes = s.packet_bytes;
        tx.sharing = rx.sharing = s.sharing;
        tx.message_count = rx.message_count = s.messages + (s.end_with_terminate ? 1 : 0);
        for (uint32_t k = 0; k < s.workers; ++k) {
            CoreCoord w = take(a_sends ? 0 : 1);
            send_workers[c].push_back(w);
            tx.workers.push_back({w.x, w.y, kWorkerSem});
            CoreCoord r = take(a_sends ? 1 : 0);
            recv_workers[c].push_back(r);
            rx.workers.push_back({r.x, r.y, kWorkerSem});
        }
        if (a_sends) {
            a.add_sender(tx);
            b.add_receiver(rx);
        } else {
            a.add_receiver(rx);
            b.add_sender(tx);
        }
    }
    const auto plan = edm::host::build_link(a, b, {0x1000, chip.eth_l1_bytes - 0x1000},
                                            edm::host::Limits::of<Config>());

    Launcher L(cluster);
    Result<Config> res;
    constexpr bool wi = Config::termination == edm::Termination::worker_initiated;
    std::vector<uint32_t> eth_cs(2, 0);
    for (int side = 0; side < 2; ++side) {
        const CoreCoord eth = side == 0 ? eth_a : eth_b;
        auto args = plan.edm_args(side == 0 ? edm::host::Side::a : edm::host::Side::b);
        L.add(eth, [programs, after_edm, side](auto& hal) {
            uint64_t cs = 0;
            for (uint32_t p = 0; p < programs; ++p) {
                edm::Edm<Config> edm;
                const edm::Status st = edm.run(hal);
                if (st != edm::Status::ok) return uint64_t(1000000 + uint32_t(st));
                cs += edm.context_switches();
            }
            if (after_edm) cs += uint64_t(after_edm(hal, side)) << 32;
            return cs;
        }, args);
    }
    const uint32_t words = s.packet_bytes / 4;
    for (uint32_t c = 0; c < s.channels; ++c) {
        const bool a_sends = c % 2 == 0;
        const auto tx_side = a_sends ? edm::host::Side::a : edm::host::Side::b;
        const auto rx_side = a_sends ? edm::host::Side::b : edm::host::Side::a;
        const CoreCoord tx_eth = a_sends ? eth_a : eth_b, rx_eth = a_sends ? eth_b : eth_a;
        for (uint32_t k = 0; k < s.workers; ++k) {
            // Sender worker k of channel c.
            L.add(send_workers[c][k], [=](auto& hal) {
                for (uint32_t p = 0; p < programs; ++p) {
                    edm::SenderAdapter<Config> tx(edm::load_worker_channel(hal, 0));
                    const bool rr = s.sharing == edm::Sharing::round_robin;
                    uint32_t off = 0, bytes = s.packet_bytes;
                    if (!rr) slice(s.packet_bytes, s.workers, k, off, bytes);
                    for (uint32_t m = rr ? k : 0; m < s.messages; m += rr ? s.workers : 1) {
                        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kStage, s.packet_bytes));
                        for (uint32_t i = off / 4; i < (off + bytes) / 4; ++i) w[i - off / 4] = content(c + 100 * p, m, i, words);
                        const bool last = wi && !s.end_with_terminate && m + 1 == s.messages;
                        tx.send(hal, kStage, bytes, off, last ? edm::Signal::last : edm::Signal::next);
                    }
                    if (wi && s.end_with_terminate && (rr ? s.messages % s.workers == k : true)) tx.terminate(hal);
                    tx.close(hal);
                }
                return uint64_t(0);
            }, plan.worker_args(tx_side, c, k, tx_eth.x, tx_eth.y));
            // Receiver worker k of channel c: checks every word of every message it gets.
            L.add(recv_workers[c][k], [=](auto& hal) {
                uint64_t errors = 0, got = 0;
                for (uint32_t p = 0; p < programs; ++p) {
                    edm::ReceiverAdapter<Config> rx(edm::load_worker_channel(hal, 0));
                    const bool rr = s.sharing == edm::Sharing::round_robin;
                    uint32_t m = rr ? k : 0;
                    for (;; m += rr ? s.workers : 1) {
                        if (!wi && m >= s.messages) break;
                        const edm::Signal sig = rx.recv(hal, kStage, s.packet_bytes);
                        if (sig == edm::Signal::terminate) break;
                        ++got;
                        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(kStage, s.packet_bytes));
                        for (uint32_t i = 0; i < words; ++i) errors += w[i] != content(c + 100 * p, m, i, words);
                        if (sig == edm::Signal::last) break;
                    }
                    rx.close(hal);
                }
                return errors << 32 | got;
            }, plan.worker_args(rx_side, c, k, rx_eth.x, rx_eth.y));
        }
    }
    res.report = L.run(opt);
    if (!res.report.ok()) return res;
    for (int side = 0; side < 2; ++side) {
        const uint64_t v = res.report.at(side == 0 ? eth_a : eth_b).value;
        if ((v & 0xffffffff) >= 1000000) res.errors += 1000000;  // EDM rejected its args
        else res.context_switches += uint32_t(v);
        res.errors += v >> 32;  // what the following op found corrupted
    }
    for (uint32_t c = 0; c < s.channels; ++c)
        for (uint32_t k = 0; k < s.workers; ++k) {
            const uint64_t v = res.report.at(recv_workers[c][k]).value;
            res.errors += v >> 32;
            res.received += v & 0xffffffff;
            const bool rr = s.sharing == edm::Sharing::round_robin;
            uint64_t mine = rr ? (s.messages + s.workers - 1 - k) / s.workers : s.messages;
            res.expected_received += mine * programs;
        }
    return res;
}

/// A 2-chip cluster with room for 8 channels x 4 workers on each side.
inline emu::ClusterSpec two_chips() {
    emu::ChipSpec c;
    c.grid_w = 8;
    c.grid_h = 8;
    c.eth_cores = 2;
    c.worker_l1_bytes = 160 * 1024;
    c.eth_l1_bytes = 256 * 1024;
    return emu::topology::line(2, 1, c);
}

}  // namespace kccl::test::edm_harness

// End-to-end EDM harness: two chips, one link, an EDM on each end, channels in both directions,
// sender and receiver workers per channel. Every payload carries its sequence number and a
// checksum, and its full content is a function of (channel, message) computed here, independently
// of the code under test: receivers count every word that differs. Nothing lost, duplicated,
// reordered or corrupted <=> every receiver reports 0 errors and the expected message count.
#pragma once

#include "util.hpp"

#include <edm/edm.hpp>
#include <edm/host/builder.hpp>
#include <edm/worker.hpp>

#include <atomic>
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
    bool flip = false;                // channel c is sent by end a when c is even (odd when flipped)
    uint32_t region_base = 0x1000;    // start of the channel region on both Ethernet cores
    uint32_t initial_counter = 0;     // the EDMs' message counters start here (ChannelSpec::initial_counter)
    std::string describe() const {
        return "channels=" + std::to_string(channels) + " buffers=" + std::to_string(buffers) +
               " packet=" + std::to_string(packet_bytes) + " workers=" + std::to_string(workers) +
               " sharing=" + (sharing == edm::Sharing::round_robin ? "rr" : "ns") +
               " messages=" + std::to_string(messages) + (end_with_terminate ? " terminate" : "") +
               (flip ? " flipped" : "") + " region=" + std::to_string(region_base) +
               (initial_counter ? " initial_counter=" + std::to_string(initial_counter) : std::string());
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
/// The reserved area on the Ethernet cores (the same in every program), below every region.
inline constexpr uint32_t kReserved = 0x800;

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
    uint64_t errors = 0;             ///< words that differ from content(), over all programs
    uint64_t length_errors = 0;      ///< receives whose reported message length was not the packet size
    uint64_t received = 0;
    uint64_t expected_received = 0;
    uint64_t next_op_errors = 0;     ///< what the `next_op` program found corrupted
    uint32_t context_switches = 0;
};

/// Runs on each Ethernet core as one more program after the EDM programs (the next op on that
/// core). Its return value counts as next_op_errors.
using AfterEdm = std::function<uint64_t(emu::Hal&, int side)>;

/// Runs the scenarios as consecutive programs of one launch on `cluster` (a 2-chip cluster with a
/// link between chips 0 and 1): each chip starts program p+1 as soon as its own kernels of
/// program p have returned, independently of the other chip, as on hardware. Layouts may change
/// from one program to the next (packet size, direction, channel count, region base).
template <class Config>
Result<Config> run_programs(Cluster& cluster, const std::vector<Scenario>& programs, const RunOptions& opt,
                            AfterEdm next_op = {}) {
    const auto [eth_a, eth_b] = cluster.links_between(0, 1).at(0);
    const auto& chip = cluster.chip(0).spec();
    constexpr bool wi = Config::termination == edm::Termination::worker_initiated;

    Launcher L(cluster);
    Result<Config> res;
    struct Receivers {
        std::vector<std::vector<CoreCoord>> cores;  // [channel][worker]
    };
    std::vector<Receivers> rx_cores(programs.size());
    for (uint32_t p = 0; p < programs.size(); ++p) {
        const Scenario& s = programs[p];
        if (p) L.next_program();
        REQUIRE(2 * s.channels * s.workers <= chip.grid_w * chip.grid_h);
        edm::host::EdmEnd a, b;
        std::vector<std::vector<CoreCoord>> send_workers(s.channels), recv_workers(s.channels);
        uint32_t next_core[2] = {0, 0};
        auto take = [&](uint32_t chip_i) {
            const uint32_t n = next_core[chip_i]++;
            return cluster.chip(chip_i).worker(n % chip.grid_w, n / chip.grid_w);
        };
        auto a_sends = [&](uint32_t c) { return (c % 2 == 0) != s.flip; };
        for (uint32_t c = 0; c < s.channels; ++c) {
            edm::host::ChannelSpec tx, rx;
            tx.buffers = rx.buffers = s.buffers;
            tx.packet_bytes = rx.packet_bytes = s.packet_bytes;
            tx.sharing = rx.sharing = s.sharing;
            tx.message_count = rx.message_count = s.messages + (s.end_with_terminate ? 1 : 0);
            tx.initial_counter = rx.initial_counter = s.initial_counter;
            for (uint32_t k = 0; k < s.workers; ++k) {
                CoreCoord w = take(a_sends(c) ? 0 : 1);
                send_workers[c].push_back(w);
                tx.workers.push_back({w.x, w.y, kWorkerSem});
                CoreCoord r = take(a_sends(c) ? 1 : 0);
                recv_workers[c].push_back(r);
                rx.workers.push_back({r.x, r.y, kWorkerSem});
            }
            if (a_sends(c)) {
                a.add_sender(tx);
                b.add_receiver(rx);
            } else {
                a.add_receiver(rx);
                b.add_sender(tx);
            }
        }
        const auto plan = edm::host::build_link(a, b, {s.region_base, chip.eth_l1_bytes - s.region_base, kReserved},
                                                edm::host::Limits::of<Config>());
        for (int side = 0; side < 2; ++side) {
            const auto sd = side == 0 ? edm::host::Side::a : edm::host::Side::b;
            for (const auto& w : plan.worker_semaphores(sd)) L.init_word(cluster.chip(side).worker(w.x, w.y), w.sem_addr, 0);
            L.add(side == 0 ? eth_a : eth_b, [](auto& hal) {
                edm::Edm<Config> edm;
                const edm::Status st = edm.run(hal);
                return st == edm::Status::ok ? uint64_t(edm.context_switches()) : uint64_t(1000000 + uint32_t(st));
            }, plan.edm_args(sd));
        }
        const uint32_t words = s.packet_bytes / 4;
        for (uint32_t c = 0; c < s.channels; ++c) {
            const auto tx_side = a_sends(c) ? edm::host::Side::a : edm::host::Side::b;
            const auto rx_side = a_sends(c) ? edm::host::Side::b : edm::host::Side::a;
            const CoreCoord tx_eth = a_sends(c) ? eth_a : eth_b, rx_eth = a_sends(c) ? eth_b : eth_a;
            const uint32_t tag = c + 100 * p;
            for (uint32_t k = 0; k < s.workers; ++k) {
                // Sender worker k of channel c.
                L.add(send_workers[c][k], [=](auto& hal) {
                    edm::SenderAdapter<Config> tx(edm::load_worker_channel(hal, 0));
                    const bool rr = s.sharing == edm::Sharing::round_robin;
                    uint32_t off = 0, bytes = s.packet_bytes;
                    if (!rr) slice(s.packet_bytes, s.workers, k, off, bytes);
                    for (uint32_t m = rr ? k : 0; m < s.messages; m += rr ? s.workers : 1) {
                        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(kStage, s.packet_bytes));
                        for (uint32_t i = off / 4; i < (off + bytes) / 4; ++i) w[i - off / 4] = content(tag, m, i, words);
                        const bool last = wi && !s.end_with_terminate && m + 1 == s.messages;
                        tx.send(hal, kStage, bytes, off, last ? edm::Signal::last : edm::Signal::next);
                    }
                    if (wi && s.end_with_terminate && (rr ? s.messages % s.workers == k : true)) tx.terminate(hal);
                    tx.close(hal);
                    return uint64_t(0);
                }, plan.worker_args(tx_side, c, k, tx_eth.x, tx_eth.y));
                // Receiver worker k of channel c: checks every word and the length of every message.
                L.add(recv_workers[c][k], [=](auto& hal) {
                    uint64_t errors = 0, got = 0, bad_length = 0;
                    edm::ReceiverAdapter<Config> rx(edm::load_worker_channel(hal, 0));
                    const bool rr = s.sharing == edm::Sharing::round_robin;
                    for (uint32_t m = rr ? k : 0;; m += rr ? s.workers : 1) {
                        if (!wi && m >= s.messages) break;
                        const edm::Received msg = rx.recv(hal, kStage, s.packet_bytes);
                        if (msg.signal == edm::Signal::terminate) break;
                        ++got;
                        bad_length += msg.bytes != s.packet_bytes;
                        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(kStage, s.packet_bytes));
                        for (uint32_t i = 0; i < words; ++i) errors += w[i] != content(tag, m, i, words);
                        if (msg.signal == edm::Signal::last) break;
                    }
                    rx.close(hal);
                    return errors << 40 | bad_length << 20 | got;
                }, plan.worker_args(rx_side, c, k, rx_eth.x, rx_eth.y));
            }
        }
        rx_cores[p].cores = recv_workers;
        for (uint32_t c = 0; c < s.channels; ++c)
            for (uint32_t k = 0; k < s.workers; ++k) {
                const bool rr = s.sharing == edm::Sharing::round_robin;
                res.expected_received += rr ? (s.messages + s.workers - 1 - k) / s.workers : s.messages;
            }
    }
    const uint32_t P = uint32_t(programs.size());
    if (next_op) {
        L.next_program();
        L.add(eth_a, [next_op](auto& hal) { return next_op(hal, 0); });
        L.add(eth_b, [next_op](auto& hal) { return next_op(hal, 1); });
    }
    res.report = L.run(opt);
    if (!res.report.ok()) return res;
    for (uint32_t p = 0; p < P; ++p) {
        for (const CoreCoord e : {eth_a, eth_b}) {
            const uint64_t v = res.report.at(e, p).value;
            if (v >= 1000000) res.errors += 1000000;  // EDM rejected its args
            else res.context_switches += uint32_t(v);
        }
        for (const auto& ch : rx_cores[p].cores)
            for (const CoreCoord r : ch) {
                const uint64_t v = res.report.at(r, p).value;
                res.errors += v >> 40;
                res.length_errors += (v >> 20) & 0xfffff;
                res.received += v & 0xfffff;
            }
    }
    if (next_op)
        for (const CoreCoord e : {eth_a, eth_b}) res.next_op_errors += res.report.at(e, P).value;
    return res;
}

/// One scenario, `programs` times back to back (the same layout each time).
template <class Config>
Result<Config> run(Cluster& cluster, const Scenario& s, const RunOptions& opt, uint32_t programs = 1,
                   AfterEdm next_op = {}) {
    return run_programs<Config>(cluster, std::vector<Scenario>(programs, s), opt, std::move(next_op));
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

// ---- what the mutation tests share --------------------------------------------------------------

/// The EDM protocol mutations (edm::DefaultConfig's compile-time switches), one Config each; the
/// mutation tests assert that each makes its specific failure show.
namespace mutations {
struct SyncWordFirst : edm::DefaultConfig {
    static constexpr bool mutation_sync_word_first = true;
};
struct NotifyBeforeClear : edm::DefaultConfig {
    static constexpr bool mutation_notify_before_clear = true;
};
struct SharedAckSource : edm::DefaultConfig {
    static constexpr bool mutation_shared_ack_source = true;
};
struct TeardownWithoutWait : edm::DefaultConfig {
    static constexpr bool mutation_teardown_without_wait = true;
};
struct EdmSlotFromCounter : edm::DefaultConfig {
    static constexpr bool mutation_slot_from_counter = true;
};
struct EndMarker : edm::DefaultConfig {
    static constexpr auto termination = edm::Termination::worker_initiated;
    static constexpr bool mutation_end_marker = true;
};
}  // namespace mutations

/// `channels` channels (0: chip 0 -> chip 1, 1: back) of `buffers` slots of `bytes`-byte packets,
/// `messages` messages each, one worker per channel end.
inline Scenario small(uint32_t channels, uint32_t buffers, uint32_t bytes, uint32_t messages) {
    return Scenario{.channels = channels, .buffers = buffers, .packet_bytes = bytes, .messages = messages};
}

// In small(...) scenarios on two_chips() channel 0 goes from chip 0 to chip 1 (sender worker
// chip 0 (0,0), receiver worker chip 1 (0,0)) and channel 1 back (sender chip 1 (1,0), receiver
// chip 0 (1,0)); every worker's semaphore is at kWorkerSem = 0x100; the EDMs run on eth 0 (0,8)
// of each chip. These are the names and waits the watchdog dump shows for them.
struct ChannelCores {
    const char* sender;
    const char* receiver;
    const char* receiver_edm;
};
inline constexpr ChannelCores kChannels[2] = {
    {"chip 0 worker (0,0)", "chip 1 worker (0,0)", "chip 1 eth 0 (0,8)"},
    {"chip 1 worker (1,0)", "chip 0 worker (1,0)", "chip 0 eth 0 (0,8)"},
};
inline const std::string kGrantWait = ": sem_wait L1 0x100 expected == 1, current 0";     // sender worker: no slot granted
inline const std::string kDataWait = ": sem_wait_min L1 0x100 expected >= 1, current 0";  // receiver worker: no message
/// The EDM on `eth` still runs its poll loop: asleep in idle(), or between two idle() calls (a
/// sample that falls into the loop body itself; rare, but the dump must not depend on it).
inline bool edm_polling(const std::string& dump, const std::string& eth) {
    return dump.find(eth + ": idle in a poll loop") != std::string::npos ||
           dump.find(eth + ": running (not blocked in the backend)") != std::string::npos;
}

/// The next op on both Ethernet cores after the EDM programs, for the "asynchronous program
/// completion" problem (tt-metal BasicEthernetGuide): side a fills [base, base + bytes) of its
/// L1 (the EDM's region), waits until side b has drained (everything b sent has been
/// delivered) and returns how many words changed: a late completion of the EDM program lands
/// there. `b_done` must outlive the run and start false.
inline AfterEdm next_op_overwrite_count(std::atomic<bool>& b_done, uint32_t base = 0x1000, uint32_t bytes = 0x4000) {
    return [&b_done, base, bytes](emu::Hal& hal, int side) -> uint64_t {
        if (side == 1) {
            hal.drain();  // everything side b sent has been delivered
            b_done.store(true, std::memory_order_release);
            return 0;
        }
        hal.drain();  // on hardware the tx queue drains whether or not the kernel still runs
        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(base, bytes));
        for (uint32_t i = 0; i < bytes / 4; ++i) w[i] = 0xA5A5A5A5u;
        while (!b_done.load(std::memory_order_acquire)) hal.idle();  // idle() notices an abort
        uint64_t bad = 0;
        for (uint32_t i = 0; i < bytes / 4; ++i) bad += hal.sem_read(base + 4 * i) != 0xA5A5A5A5u;
        return bad;
    };
}

}  // namespace kccl::test::edm_harness

// kccl/emulation/cluster.hpp — an emulated cluster: chips, cores with their own memory, links.
//
// A Cluster is built from a ClusterSpec and owns every core's memory for its lifetime, so L1
// contents persist from one Launcher::run to the next on the same cluster (as on hardware, where
// a later program on the same cores sees what an earlier one left behind — the stale-credit
// scenario of seed 004).
//
// Memory is mapped lazily (anonymous, zero-filled pages): a Galaxy with 64 workers per chip costs
// only the pages that are touched.
//
// Host access to memory (`write`, `read`, `l1`) is for setting up and inspecting a run; it must
// not be used while a run is in progress.
#pragma once

#include "topology.hpp"
#include "wait.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <sys/mman.h>

namespace kccl::emu {

namespace detail {

/// What a core is blocked on, for the watchdog's dump. Written by the core (relaxed), read by
/// the watchdog.
enum class WaitKind : uint32_t { none, sem_eq, sem_min, idle, txq, finished, not_started };

struct alignas(64) CoreState {
    // Immutable after construction.
    CoreKind kind{};
    CoreCoord coord{};
    uint32_t eth_index = 0;        ///< index among the chip's Ethernet cores (ethernet only)
    uint8_t* mem = nullptr;
    uint32_t mem_size = 0;
    CoreState* link_peer = nullptr;  ///< the Ethernet core at the other end of this core's link

    /// Bumped by every agent that writes into this core's memory; slept on by this core.
    EventCount events;

    // Written by the owning thread only, read by the watchdog.
    alignas(64) std::atomic<uint64_t> progress{0};
    std::atomic<WaitKind> wait_kind{WaitKind::none};
    std::atomic<uint32_t> wait_addr{0};
    std::atomic<uint32_t> wait_value{0};
    std::atomic<uint32_t> last_poll_addr{UINT32_MAX};  ///< last sem_read, shown for idle loops

    void bump_progress() noexcept {
        progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::string name() const {
        std::string s = "chip " + std::to_string(coord.chip) + " " + to_string(kind);
        if (kind == CoreKind::ethernet) s += " " + std::to_string(eth_index);
        return s + " (" + std::to_string(coord.x) + "," + std::to_string(coord.y) + ")";
    }
};

struct Mapping {
    void* base = nullptr;
    size_t bytes = 0;
    Mapping() = default;
    explicit Mapping(size_t n) : bytes(n) {
        if (n == 0) return;
        base = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
        if (base == MAP_FAILED)
            throw EmulationError("emulation: cannot map " + std::to_string(n) + " bytes of core memory");
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() {
        if (base && base != MAP_FAILED) ::munmap(base, bytes);
    }
};

}  // namespace detail

class Chip {
public:
    uint32_t index() const { return index_; }
    const ChipSpec& spec() const { return spec_; }
    /// NoC coordinate of worker (x, y) / Ethernet core i / the DRAM endpoint.
    CoreCoord worker(uint32_t x, uint32_t y) const { return {index_, x, y}; }
    CoreCoord eth(uint32_t i) const { return {index_, i, spec_.grid_h}; }
    CoreCoord dram() const { return {index_, 0, spec_.grid_h + 1}; }

    /// Core at NoC coordinates (x, y), or nullptr.
    detail::CoreState* find(uint32_t x, uint32_t y) const {
        if (x >= table_w_ || y >= table_h_) return nullptr;
        return table_[y * table_w_ + x];
    }
    std::string describe_grid() const {
        std::string s = "workers are (x<" + std::to_string(spec_.grid_w) + ", y<" +
                        std::to_string(spec_.grid_h) + "), ethernet cores (0.." +
                        std::to_string(spec_.eth_cores - 1) + ", " + std::to_string(spec_.grid_h) + ")";
        if (spec_.dram_bytes) s += ", dram (0, " + std::to_string(spec_.grid_h + 1) + ")";
        return s;
    }

private:
    friend class Cluster;
    uint32_t index_ = 0;
    ChipSpec spec_{};
    uint32_t table_w_ = 0, table_h_ = 0;
    std::vector<detail::CoreState*> table_;
};

class Cluster {
public:
    explicit Cluster(ClusterSpec spec) : spec_(std::move(spec)) {
        const ChipSpec& cs = spec_.chip;
        if (spec_.num_chips == 0) throw EmulationError("Cluster: a cluster needs at least 1 chip");
        if (cs.grid_w == 0 || cs.grid_h == 0)
            throw EmulationError("Cluster: worker grid must be at least 1x1");
        if (cs.eth_cores > 64)
            throw EmulationError("Cluster: at most 64 Ethernet cores per chip, got " +
                                 std::to_string(cs.eth_cores));
        for (uint32_t b : {cs.worker_l1_bytes, cs.eth_l1_bytes})
            if (b == 0 || b % 16)
                throw EmulationError("Cluster: L1 sizes must be non-zero multiples of 16 bytes, got " +
                                     std::to_string(b));
        if (cs.dram_bytes % 16)
            throw EmulationError("Cluster: dram_bytes must be a multiple of 16, got " +
                                 std::to_string(cs.dram_bytes));

        const size_t per_chip = size_t(cs.grid_w) * cs.grid_h * cs.worker_l1_bytes +
                                size_t(cs.eth_cores) * cs.eth_l1_bytes + cs.dram_bytes;
        memory_ = std::make_unique<detail::Mapping>(per_chip * spec_.num_chips);
        uint8_t* next = static_cast<uint8_t*>(memory_->base);

        chips_.resize(spec_.num_chips);
        for (uint32_t c = 0; c < spec_.num_chips; ++c) {
            Chip& chip = chips_[c];
            chip.index_ = c;
            chip.spec_ = cs;
            chip.table_w_ = std::max(cs.grid_w, cs.eth_cores);
            chip.table_h_ = cs.grid_h + 2;
            chip.table_.assign(size_t(chip.table_w_) * chip.table_h_, nullptr);
            auto add = [&](CoreKind kind, uint32_t x, uint32_t y, uint32_t bytes, uint32_t eth) {
                auto st = std::make_unique<detail::CoreState>();
                st->kind = kind;
                st->coord = {c, x, y};
                st->eth_index = eth;
                st->mem = next;
                st->mem_size = bytes;
                next += bytes;
                chip.table_[size_t(y) * chip.table_w_ + x] = st.get();
                cores_.push_back(std::move(st));
            };
            for (uint32_t y = 0; y < cs.grid_h; ++y)
                for (uint32_t x = 0; x < cs.grid_w; ++x) add(CoreKind::worker, x, y, cs.worker_l1_bytes, 0);
            for (uint32_t e = 0; e < cs.eth_cores; ++e)
                add(CoreKind::ethernet, e, cs.grid_h, cs.eth_l1_bytes, e);
            if (cs.dram_bytes) add(CoreKind::dram, 0, cs.grid_h + 1, cs.dram_bytes, 0);
        }

        for (const LinkSpec& l : spec_.links) {
            auto end = [&](uint32_t chip, uint32_t eth) -> detail::CoreState* {
                if (chip >= spec_.num_chips)
                    throw EmulationError("Cluster: link names chip " + std::to_string(chip) +
                                         " but the cluster has " + std::to_string(spec_.num_chips));
                if (eth >= cs.eth_cores)
                    throw EmulationError("Cluster: link names Ethernet core " + std::to_string(eth) +
                                         " of chip " + std::to_string(chip) + " but chips have " +
                                         std::to_string(cs.eth_cores));
                detail::CoreState* s = chips_[chip].find(eth, cs.grid_h);
                if (s->link_peer)
                    throw EmulationError("Cluster: " + s->name() +
                                         " is on two links (an Ethernet core has at most one)");
                return s;
            };
            if (l.chip_a == l.chip_b)
                throw EmulationError("Cluster: a link joins two different chips, got chip " +
                                     std::to_string(l.chip_a) + " to itself");
            detail::CoreState* a = end(l.chip_a, l.eth_a);
            detail::CoreState* b = end(l.chip_b, l.eth_b);
            a->link_peer = b;
            b->link_peer = a;
        }
    }

    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    const ClusterSpec& spec() const { return spec_; }
    uint32_t num_chips() const { return spec_.num_chips; }
    const Chip& chip(uint32_t i) const { return chips_.at(i); }

    /// The Ethernet core at the other end of `eth`'s link.
    CoreCoord link_peer(CoreCoord eth) const {
        const detail::CoreState& s = state(eth, "link_peer");
        if (!s.link_peer) throw EmulationError("Cluster::link_peer: " + s.name() + " has no link");
        return s.link_peer->coord;
    }
    /// All links between chips a and b, as (eth core on a, eth core on b), in Ethernet-core order.
    std::vector<std::pair<CoreCoord, CoreCoord>> links_between(uint32_t a, uint32_t b) const {
        std::vector<std::pair<CoreCoord, CoreCoord>> out;
        const Chip& ca = chip(a);
        for (uint32_t e = 0; e < ca.spec().eth_cores; ++e) {
            const detail::CoreState* s = ca.find(e, ca.spec().grid_h);
            if (s->link_peer && s->link_peer->coord.chip == b) out.emplace_back(s->coord, s->link_peer->coord);
        }
        return out;
    }

    /// Host view of a core's memory (set up before a run, inspect after it).
    std::span<uint8_t> l1(CoreCoord c) {
        detail::CoreState& s = state(c, "l1");
        return {s.mem, s.mem_size};
    }
    void write(CoreCoord c, uint32_t addr, const void* src, size_t bytes) {
        auto m = l1(c);
        check_host_range(c, addr, bytes, m.size(), "write");
        std::memcpy(m.data() + addr, src, bytes);
    }
    void read(CoreCoord c, uint32_t addr, void* dst, size_t bytes) {
        auto m = l1(c);
        check_host_range(c, addr, bytes, m.size(), "read");
        std::memcpy(dst, m.data() + addr, bytes);
    }
    uint32_t read32(CoreCoord c, uint32_t addr) {
        uint32_t v;
        read(c, addr, &v, 4);
        return v;
    }
    void write32(CoreCoord c, uint32_t addr, uint32_t v) { write(c, addr, &v, 4); }
    /// Zeroes every core's memory (a fresh power-on).
    void clear_memory() {
        for (auto& s : cores_) std::memset(s->mem, 0, s->mem_size);
    }

    // For the launcher and backend.
    detail::CoreState& state(CoreCoord c, const char* what) const {
        if (c.chip >= spec_.num_chips)
            throw EmulationError(std::string(what) + ": chip " + std::to_string(c.chip) +
                                 " does not exist (cluster has " + std::to_string(spec_.num_chips) +
                                 " chips)");
        detail::CoreState* s = chips_[c.chip].find(c.x, c.y);
        if (!s)
            throw EmulationError(std::string(what) + ": no core at " + to_string(c) + "; " +
                                 chips_[c.chip].describe_grid());
        return *s;
    }
    const std::vector<std::unique_ptr<detail::CoreState>>& cores() const { return cores_; }

private:
    static void check_host_range(CoreCoord c, uint32_t addr, size_t bytes, size_t size, const char* op) {
        if (size_t(addr) + bytes > size)
            throw EmulationError(std::string("Cluster::") + op + ": range [" + std::to_string(addr) +
                                 ", " + std::to_string(size_t(addr) + bytes) + ") is outside " +
                                 to_string(c) + "'s memory of " + std::to_string(size) + " bytes");
    }

    ClusterSpec spec_;
    std::unique_ptr<detail::Mapping> memory_;
    std::vector<Chip> chips_;
    std::vector<std::unique_ptr<detail::CoreState>> cores_;
};

}  // namespace kccl::emu

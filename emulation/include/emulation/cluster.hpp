// kccl/emulation/cluster.hpp — an emulated cluster: chips, cores with their own memory, links.
//
// A Cluster is built from a ClusterSpec and owns every core's memory for its lifetime, so L1
// contents persist from one Launcher::run to the next on the same cluster (as on hardware, where
// a later program on the same cores sees what an earlier one left behind — the stale-credit
// scenario of tt-metal's BasicEthernetGuide, "Asynchronous Program Completion Problem").
//
// Memory is mapped lazily (anonymous, zero-filled pages): a Galaxy with 64 workers per chip costs
// only the pages that are touched.
//
// Dirty L1: hardware never zeroes L1. A core's memory is "pristine" until its first run; a run
// with dirty L1 (RunOptions::dirty_l1, on by default in adversarial mode) fills the pristine
// memory of every core it launches a kernel on with seeded garbage before the kernels start —
// except the ranges the host wrote with `write`/`write32` (the program's inputs). Later runs keep
// whatever the previous program left. `scramble_memory(seed)` fills every core with garbage at
// once; `clear_memory()` zeroes every core (both leave the cores non-pristine).
//
// Host access to memory (`write`, `read`, `l1`) is for setting up and inspecting a run; it must
// not be used while a run is in progress. `l1()` hands out raw memory the cluster cannot track,
// so it makes the core non-pristine (its zeroes are then kept).
#pragma once

#include "signals.hpp"
#include "topology.hpp"
#include "wait.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include <sys/mman.h>

namespace kccl::emu {

namespace detail {

/// Host work counter (per host thread): one per core or kernel each host-side pass of the
/// launcher and the fiber scheduler visits — grouping kernels, entering a program, an idle
/// sweep, the hang dump, RunReport::at. A test asserts that it grows linearly with the number of
/// cores (a count, not a time: it cannot be flaky); it costs an increment per visit.
/// (An atomic although per thread: the fiber engine's cores are fibers of one thread, which
/// ThreadSanitizer treats as threads of their own.)
inline std::atomic<uint64_t>& host_visit_counter() noexcept {
    thread_local std::atomic<uint64_t> n{0};
    return n;
}
inline void count_host_visits(uint64_t n = 1) noexcept { host_visit_counter().fetch_add(n, std::memory_order_relaxed); }
/// Visits counted on this thread so far.
inline uint64_t host_visits() noexcept { return host_visit_counter().load(std::memory_order_relaxed); }

/// What a core is blocked on, for the watchdog's dump. Written by the core (relaxed), read by
/// the watchdog.
enum class WaitKind : uint32_t { none, sem_eq, sem_min, idle, txq, finished, not_started, next_program };

struct alignas(64) CoreState {
    // Immutable after construction.
    CoreKind kind{};
    CoreCoord coord{};
    uint32_t eth_index = 0;        ///< index among the chip's Ethernet cores (ethernet only)
    uint8_t* mem = nullptr;
    uint32_t mem_size = 0;
    CoreState* link_peer = nullptr;  ///< the Ethernet core at the other end of this core's link

    // Fiber engine (one host thread): on the first cache line with mem and mem_size, so that a
    // write into this core from another (resolve, copy, notify) touches one line of its state
    // (a 4096-core mesh is bound by cache misses, not instructions).
    /// Bumped by every write into this core's memory (the fiber engine's eventcount epoch).
    std::atomic<uint32_t> fiber_epoch{0};
    /// This core's fiber is parked (mirrors the scheduler's task state, so that a write into this
    /// core's memory skips the scheduler unless the core waits). Touched only by the engine's one
    /// thread, inside the scheduler's TSan ignore regions.
    uint8_t sched_parked = 0;

    /// Bumped by every agent that writes into this core's memory; slept on by this core.
    EventCount events;

    // Written by the owning thread only, read by the watchdog.
    alignas(64) std::atomic<uint64_t> progress{0};
    /// The word bump_progress() counts in: `progress` (thread engine, no run), or on the fiber
    /// engine the run's total of every core's progress (one host thread writes it), so the
    /// deadlock check and the watchdog read one word, not one per core, and an operation costs
    /// one increment, not two.
    std::atomic<uint64_t>* progress_word = &progress;
    std::atomic<WaitKind> wait_kind{WaitKind::none};
    std::atomic<uint32_t> wait_addr{0};
    std::atomic<uint32_t> wait_value{0};  ///< (next_program: the program this core waits to start)
    std::atomic<uint32_t> last_poll_addr{UINT32_MAX};  ///< last sem_read, shown for idle loops
    /// Fiber engine: this core's task in the running scheduler (UINT32_MAX outside a fiber run).
    uint32_t sched_task = UINT32_MAX;

    /// The words this core signalled in the current run (written by this core; the hang dump).
    SignalLog signals;

    // Host-side only (never touched while a run is in progress).
    bool pristine = true;  ///< never run, never scrambled or cleared: still the zeroes of mmap
    std::vector<std::pair<uint32_t, uint32_t>> host_written;  ///< [begin, end) the host wrote while pristine

    void bump_progress() noexcept {
        progress_word->store(progress_word->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::string name() const {
        std::string s = "chip " + std::to_string(coord.chip) + " " + to_string(kind);
        if (kind == CoreKind::ethernet) s += " " + std::to_string(eth_index);
        return s + " (" + std::to_string(coord.x) + "," + std::to_string(coord.y) + ")";
    }
};

/// Fills `s`'s memory with garbage from `seed` (a pure function of seed, core and offset), except
/// the ranges the host wrote while the core was pristine. Leaves the core non-pristine.
inline void fill_garbage(CoreState& s, uint64_t seed) {
    uint64_t x = seed ^ (uint64_t(s.coord.chip) << 48) ^ (uint64_t(s.coord.x) << 32) ^ (uint64_t(s.coord.y) << 16) ^
                 0x6A09E667F3BCC909ull;
    auto next = [&x] {  // splitmix64 step
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    std::vector<std::pair<uint32_t, uint32_t>> keep = std::move(s.host_written);
    std::vector<uint8_t> saved;
    for (auto [b, e] : keep) saved.insert(saved.end(), s.mem + b, s.mem + e);
    // The first 4 KiB are splitmix64 words; every later 4 KiB block is that block XOR a splitmix64
    // key of its own: no two blocks alike, and the fill runs at memory speed (a splitmix64 step per
    // word took a third of a dirty-L1 collective run's time).
    constexpr uint32_t kBlockWords = 512;
    uint64_t block[kBlockWords];
    for (uint64_t& w : block) w = next();
    const uint32_t words = s.mem_size / 8;
    for (uint32_t base = 0; base < words; base += kBlockWords) {
        const uint64_t key = base ? next() : 0;
        const uint32_t n = std::min(kBlockWords, words - base);
        uint8_t* dst = s.mem + size_t(base) * 8;
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t v = block[i] ^ key;
            std::memcpy(dst + size_t(i) * 8, &v, 8);
        }
    }
    size_t at = 0;
    for (auto [b, e] : keep) {
        std::memcpy(s.mem + b, saved.data() + at, e - b);
        at += e - b;
    }
    s.host_written.clear();
    s.pristine = false;
}

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
        if (spec_.num_chips > max_chips)
            throw EmulationError("Cluster: " + std::to_string(spec_.num_chips) + " chips requested; at most " +
                                 std::to_string(max_chips) + " are allowed (chip ids are 8 bits in a NoC address)");
        if (cs.eth_cores > 64)
            throw EmulationError("Cluster: at most 64 Ethernet cores per chip, got " +
                                 std::to_string(cs.eth_cores));
        if (cs.grid_w > max_noc_coord + 1 || uint64_t(cs.grid_h) + 2 > max_noc_coord + 1)
            throw EmulationError("Cluster: worker grid " + std::to_string(cs.grid_w) + " x " + std::to_string(cs.grid_h) +
                                 " does not fit the NoC coordinates (x and y are 0.." + std::to_string(max_noc_coord) +
                                 "; allowed: grid_w <= " + std::to_string(max_noc_coord + 1) + ", grid_h <= " +
                                 std::to_string(max_noc_coord - 1) + ", the last two rows being Ethernet and DRAM)");
        for (uint32_t b : {cs.worker_l1_bytes, cs.eth_l1_bytes})
            if (b == 0 || b % 16)
                throw EmulationError("Cluster: L1 sizes must be non-zero multiples of 16 bytes, got " +
                                     std::to_string(b));
        if (cs.dram_bytes % 16)
            throw EmulationError("Cluster: dram_bytes must be a multiple of 16, got " +
                                 std::to_string(cs.dram_bytes));

        const size_t per_chip = size_t(cs.grid_w) * cs.grid_h * cs.worker_l1_bytes +
                                size_t(cs.eth_cores) * cs.eth_l1_bytes + cs.dram_bytes;
        // Memory is reserved, not committed (MAP_NORESERVE), but the address space is real.
        constexpr size_t max_total = size_t(1) << 44;  // 16 TiB of address space
        if (per_chip > max_total / spec_.num_chips)
            throw EmulationError("Cluster: " + std::to_string(spec_.num_chips) + " chips of " +
                                 std::to_string(per_chip) + " bytes of memory each exceed the " +
                                 std::to_string(max_total >> 40) + " TiB of address space the emulation reserves");
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
    const Chip& chip(uint32_t i) const {
        if (i >= chips_.size())
            throw EmulationError("Cluster::chip(" + std::to_string(i) + "): chip does not exist; this cluster has " +
                                 std::to_string(chips_.size()) + " chips (0.." + std::to_string(chips_.size() - 1) + ")");
        return chips_[i];
    }

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
        s.pristine = false;
        s.host_written.clear();
        return {s.mem, s.mem_size};
    }
    /// Host write (a program input): kept when a dirty-L1 run fills the core with garbage.
    void write(CoreCoord c, uint32_t addr, const void* src, size_t bytes) {
        detail::CoreState& s = state(c, "write");
        check_host_range(c, addr, bytes, s.mem_size, "write");
        std::memcpy(s.mem + addr, src, bytes);
        if (s.pristine && bytes) s.host_written.emplace_back(addr, uint32_t(addr + bytes));
    }
    void read(CoreCoord c, uint32_t addr, void* dst, size_t bytes) {
        const detail::CoreState& s = state(c, "read");
        check_host_range(c, addr, bytes, s.mem_size, "read");
        std::memcpy(dst, s.mem + addr, bytes);
    }
    uint32_t read32(CoreCoord c, uint32_t addr) {
        uint32_t v;
        read(c, addr, &v, 4);
        return v;
    }
    void write32(CoreCoord c, uint32_t addr, uint32_t v) { write(c, addr, &v, 4); }
    /// Zeroes every core's memory. The pages are handed back to the system (they read as zero
    /// and cost nothing until touched again), so clearing a wafer-sized cluster does not commit
    /// every core's whole L1.
    void clear_memory() {
        const bool dropped = memory_->base && ::madvise(memory_->base, memory_->bytes, MADV_DONTNEED) == 0;
        for (auto& s : cores_) {
            if (!dropped) std::memset(s->mem, 0, s->mem_size);
            s->pristine = false;
            s->host_written.clear();
        }
    }
    /// Fills every core's memory with garbage from `seed` (what a program finds on hardware after
    /// an unknown earlier workload), keeping what the host wrote into still-pristine cores.
    void scramble_memory(uint64_t seed) {
        for (auto& s : cores_) detail::fill_garbage(*s, seed);
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

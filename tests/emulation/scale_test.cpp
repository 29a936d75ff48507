// Host-side scale of the emulation: setting up, launching, detecting a deadlock, dumping and
// reporting visit each core a bounded number of times (counted by kccl::emu::detail::host_visits,
// so the check is a count, never a time, and cannot be flaky); and a kernel frame far larger
// than its fiber stack is a named error of its core, not a bare SIGSEGV.
//
// The counter is incremented inside the launcher's and the scheduler's per-core passes (grouping
// kernels by core, entering a program, idle sweeps, the hang dump, RunReport::at), so a pass that
// went back to scanning every core per kernel, per chip or per sweep shows here as a count
// growing with the square of the cores. Wall time per core is measured by
// benchmarks/emulation/setup_bench.cpp.
#include "emulation/child_process.hpp"
#include "emulation/util.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kccl::test;
namespace topo = kccl::emu::topology;
using kccl::emu::detail::host_visits;

namespace {

constexpr uint32_t kFlag = 0x100, kScratch = 0x200, kNever = 0x300;

/// `chips` chips of 8 x 4 workers: every worker runs a kernel in two programs.
kccl::emu::ChipSpec grid_chip() {
    kccl::emu::ChipSpec c;
    c.grid_w = 8;
    c.grid_h = 4;
    c.eth_cores = 0;
    c.worker_l1_bytes = 4096;
    c.eth_l1_bytes = 16;
    return c;
}

/// Host visits of: adding two programs of kernels on every worker of `chips` chips, running them,
/// and reading every core's result through RunReport::at.
uint64_t visits_launch_and_report(uint32_t chips) {
    Cluster c(topo::custom(chips, grid_chip()));
    const uint64_t v0 = host_visits();
    Launcher L(c);
    std::vector<CoreCoord> cores;
    for (uint32_t chip = 0; chip < chips; ++chip)
        for (uint32_t y = 0; y < 4; ++y)
            for (uint32_t x = 0; x < 8; ++x) cores.push_back(c.chip(chip).worker(x, y));
    for (uint32_t p = 0; p < 2; ++p) {
        if (p) L.next_program();
        for (uint32_t i = 0; i < cores.size(); ++i) {
            L.add(cores[i], [i, p](auto&) -> uint64_t { return i * 2 + p; });
            L.init_word(cores[i], kFlag, p);
        }
    }
    const RunReport r = L.run(normal());
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.cores.size() == 2 * cores.size());
    for (uint32_t i = 0; i < cores.size(); ++i)
        for (uint32_t p = 0; p < 2; ++p) REQUIRE(r.at(cores[i], p).value == i * 2 + p);
    return host_visits() - v0;
}

/// Host visits of a run where one core polls (idle()) `n` times while the n - 1 others wait on a
/// semaphore it sets at the end: every poll is an idle sweep with only that core to wake. One
/// chip of 32 * `chips` workers (the poller reaches every core over the NoC).
uint64_t visits_one_poller(uint32_t chips) {
    kccl::emu::ChipSpec spec = grid_chip();
    spec.grid_w = chips == 4 ? 16 : 32;
    spec.grid_h = chips * 32 / spec.grid_w;
    Cluster c(topo::single_chip(spec));
    host_zero(c, kFlag, 4);
    const uint32_t n = chips * 32;
    const uint64_t v0 = host_visits();
    Launcher L(c);
    std::vector<CoreCoord> cores;
    for (uint32_t y = 0; y < spec.grid_h; ++y)
        for (uint32_t x = 0; x < spec.grid_w; ++x) cores.push_back(c.chip(0).worker(x, y));
    REQUIRE(cores.size() == n);
    L.add(cores[0], [n, &cores](auto& h) -> uint64_t {
        for (uint32_t i = 0; i < n; ++i) {
            h.noc_inline_write32(h.noc_addr(0, 0, kScratch), i);  // progress: not a deadlock
            h.idle();
        }
        for (uint32_t k = 1; k < cores.size(); ++k) h.noc_inline_write32(h.noc_addr(cores[k].x, cores[k].y, kFlag), 1);
        return n;
    });
    for (uint32_t k = 1; k < cores.size(); ++k)
        L.add(cores[k], [](auto& h) -> uint64_t {
            h.sem_wait(kFlag, 1);
            return 1;
        });
    const RunReport r = L.run(normal());
    KCCL_REQUIRE_OK(r);
    REQUIRE(r.at(cores[0]).value == n);
    return host_visits() - v0;
}

/// Host visits of a run that deadlocks: one core polls forever, the others wait for a semaphore
/// nobody sets; the report must name the deadlock and dump every core.
uint64_t visits_deadlock(uint32_t chips) {
    Cluster c(topo::custom(chips, grid_chip()));
    host_zero(c, kNever, 4);
    const uint64_t v0 = host_visits();
    Launcher L(c);
    uint32_t n = 0;
    for (uint32_t chip = 0; chip < chips; ++chip)
        for (uint32_t y = 0; y < 4; ++y)
            for (uint32_t x = 0; x < 8; ++x, ++n) {
                if (n == 0)
                    L.add(c.chip(chip).worker(x, y), [](auto& h) {
                        for (;;) {
                            (void)h.sem_read(kNever);
                            h.idle();
                        }
                    });
                else
                    L.add(c.chip(chip).worker(x, y), [](auto& h) { h.sem_wait(kNever, 1); });
            }
    const RunReport r = L.run(normal());
    REQUIRE(r.deadlock);
    REQUIRE_THAT(r.watchdog_dump, Catch::Contains("chip " + std::to_string(chips - 1) + " worker (7,3)") &&
                                      Catch::Contains("expected == 1, current 0") && Catch::Contains("idle in a poll loop"));
    return host_visits() - v0;
}

/// Checks that `f(chips)` grows linearly: 4x the cores costs at most 4.5x the visits (a pass
/// over every core per kernel, chip or sweep would cost 16x), and at most `per_core` per core.
template <class F>
void require_linear(F f, uint64_t per_core) {
    const uint64_t small = f(4), large = f(16);  // 128 and 512 cores
    INFO("host visits: " << small << " for 128 cores, " << large << " for 512 cores");
    REQUIRE(small > 0);
    REQUIRE(large * 2 <= small * 9);
    REQUIRE(large <= per_core * 512);
}

}  // namespace

TEST_CASE("scale: launching two programs and reading every result visit each core a bounded number of times",
          "[emulation][scale]") {
    require_linear(&visits_launch_and_report, 16);
}

TEST_CASE("scale: idle sweeps visit only the polling cores, not every core", "[emulation][scale]") {
    // One poller and n - 1 waiters: n sweeps. A sweep over every core would be n^2 visits.
    require_linear(&visits_one_poller, 16);
}

TEST_CASE("scale: detecting a deadlock and dumping it visit each core a bounded number of times", "[emulation][scale]") {
    // 1000 fruitless sweeps of the one poller, then one dump of every core.
    const uint64_t small = visits_deadlock(4), large = visits_deadlock(16);
    INFO("host visits: " << small << " for 128 cores, " << large << " for 512 cores");
    REQUIRE(large - small <= 16 * (512 - 128));  // the cores' part; the sweeps do not grow with them
}

#if !KCCL_EMU_ASAN  // ASan reports stack overflows itself
namespace {

/// A kernel whose frame is 256 KiB (4x its stack): the lowest byte is written first, far
/// below the stack; then it waits for a semaphore nobody sets (if the overflow went unnoticed
/// the run would end as a deadlock and the child would exit 0).
template <class H>
[[gnu::noinline]] uint64_t huge_frame(H& h) {
    volatile uint8_t frame[256 * 1024];
    frame[0] = 1;
    h.sem_wait(kNever, 1);
    return frame[0] + frame[sizeof frame - 1];
}

void huge_frame_run(RunOptions::StackGuard guard) {
    Cluster c(topo::single_chip(small_chip()));
    host_zero(c, kNever, 4);
    Launcher L(c);
    L.add(c.chip(0).worker(3, 1), [](auto& h) { return huge_frame(h); });
    RunOptions o = normal();
    o.stack_size = 64 * 1024;
    o.stack_guard = guard;
    (void)L.run(o);
    std::_Exit(0);  // reached only if the overflow went unnoticed
}

}  // namespace

TEST_CASE("fiber engine: a 256 KiB frame on a 64 KiB guarded stack is a named error of its core", "[emulation][engine][errors]") {
    auto [status, err] = in_child([] { huge_frame_run(RunOptions::StackGuard::on); });
    INFO(err);
    REQUIRE(status == 3);
    REQUIRE_THAT(err, Catch::Contains("stack overflow in the kernel on chip 0 worker (3,1)") &&
                          Catch::Contains("its fiber stack has 65536 bytes"));
}

TEST_CASE("fiber engine: a 256 KiB frame on a 64 KiB unguarded stack is a named error of its core", "[emulation][engine][errors]") {
    // No guard region (runs of more than RunOptions::kGuardedCoresMax cores): the frame runs into
    // whatever lies below; named by the fault handler (stack pointer below the stack) or at the
    // core's next switch (its frame is still below its stack).
    auto [status, err] = in_child([] { huge_frame_run(RunOptions::StackGuard::off); });
    INFO(err);
    REQUIRE(status == 3);
    REQUIRE_THAT(err, Catch::Contains("stack overflow in the kernel on chip 0 worker (3,1)") &&
                          Catch::Contains("its fiber stack has 65536 bytes"));
}
#endif

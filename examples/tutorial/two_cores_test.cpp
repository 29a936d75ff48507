// Tutorial step 1 (docs/tutorial.md): a kernel that forwards pages from one core to another,
// run on an emulated chip in normal and adversarial mode. Exit code 0: every page arrived.
#include <emulation/emulation.hpp>

#include <cstdint>
#include <cstdio>

// Device code: a template over the backend H, calling only the contract (hal/contract.hpp).
// L1: 0x100 "page landed" semaphore (receiver), 0x104 "buffer free" credit (sender),
// 0x2000 staging page (sender), 0x4000 landing page (receiver).
template <class H>
void send_pages(H& hal) {
    const uint32_t n = hal.arg(0), bytes = hal.arg(1);
    const auto dst_buf = hal.noc_addr(hal.arg(2), hal.arg(3), 0x4000);
    const auto dst_sem = hal.noc_addr(hal.arg(2), hal.arg(3), 0x100);
    for (uint32_t i = 1; i <= n; ++i) {
        hal.sem_wait_min(0x104, i - 1);  // the receiver freed its buffer
        uint32_t* w = reinterpret_cast<uint32_t*>(hal.l1_ptr(0x2000, bytes));
        for (uint32_t k = 0; k < bytes / 4; ++k) w[k] = i * 1000 + k;
        kccl::hal::l1_store_fence(hal, 0x2000, bytes);  // the stores reach L1 before the NoC reads them
        hal.noc_write(0x2000, dst_buf, bytes);
        hal.noc_writes_flushed();        // the page has left; the staging page may be rewritten
        hal.sem_inc(dst_sem, 1);         // same destination as the data, after a flush: lands after it
    }
}

template <class H>
uint64_t receive_pages(H& hal) {
    const uint32_t n = hal.arg(0), bytes = hal.arg(1);
    const auto credit = hal.noc_addr(hal.arg(2), hal.arg(3), 0x104);
    uint64_t sum = 0;
    for (uint32_t i = 1; i <= n; ++i) {
        hal.sem_wait_min(0x100, i);      // page i has landed
        const uint32_t* w = reinterpret_cast<const uint32_t*>(hal.l1_ptr(0x4000, bytes));
        for (uint32_t k = 0; k < bytes / 4; ++k) sum += w[k];
        hal.sem_inc(credit, 1);          // give the buffer back
    }
    return sum;                          // the kernel's value in the run report
}

int main() {
    const uint32_t n = 32, bytes = 1024;
    uint64_t want = 0;                   // what the receiver must see, computed here
    for (uint32_t i = 1; i <= n; ++i)
        for (uint32_t k = 0; k < bytes / 4; ++k) want += i * 1000 + k;

    for (bool adversarial : {false, true}) {
        kccl::emu::Cluster cluster(kccl::emu::topology::n300());
        kccl::emu::Launcher launch(cluster);
        const auto a = cluster.chip(0).worker(0, 0), b = cluster.chip(0).worker(1, 0);
        for (auto core : {a, b})         // semaphores start at 0; all other L1 is garbage
            for (uint32_t sem : {0x100u, 0x104u}) launch.init_word(core, sem, 0);
        launch.add(a, [](auto& hal) { send_pages(hal); }, {n, bytes, 1, 0});
        launch.add(b, [](auto& hal) { return receive_pages(hal); }, {n, bytes, 0, 0});
        kccl::emu::RunOptions options;
        options.watchdog = std::chrono::seconds(5);
        options.adversary.enabled = adversarial;
        options.adversary.seed = 7;
        const auto report = launch.run(options);
        if (!report.ok()) {
            std::printf("FAILED:\n%s", report.summary().c_str());
            return 1;
        }
        if (report.at(b).value != want) {
            std::printf("FAILED: receiver saw %llu, want %llu\n", (unsigned long long)report.at(b).value,
                        (unsigned long long)want);
            return 1;
        }
        std::printf("%s mode: %u pages arrived intact\n", adversarial ? "adversarial" : "normal", n);
    }
    return 0;
}

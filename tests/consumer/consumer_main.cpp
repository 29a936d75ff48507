// tests/consumer/consumer_main.cpp — a downstream program that uses kccl as a dependency.
//
// Built by tests/consumer/find_package (against an installed kccl) and
// tests/consumer/add_subdirectory (against the source tree); see scripts/consumer_test.sh.
// It includes the device contract the way a consumer does (<hal/contract.hpp>, found through
// the kccl::kccl target's include directories) and checks, at compile time, that a minimal
// backend models the contract and that non-backends are rejected.
#include <hal/contract.hpp>

#include <cstdint>
#include <cstdio>

namespace {

// A do-nothing backend with every operation of the contract.
struct MockBackend {
    uint32_t core_x() const { return 1; }
    uint32_t core_y() const { return 2; }
    kccl::hal::noc_addr_t noc_addr(uint32_t x, uint32_t y, uint32_t l1) const {
        return (kccl::hal::noc_addr_t{x} << 48) | (kccl::hal::noc_addr_t{y} << 32) | l1;
    }
    uint8_t* l1_ptr(uint32_t, uint32_t) const { return nullptr; }
    void noc_write(uint32_t, kccl::hal::noc_addr_t, uint32_t) {}
    void noc_read(kccl::hal::noc_addr_t, uint32_t, uint32_t) {}
    void noc_write_barrier() {}
    void noc_read_barrier() {}
    void noc_writes_flushed() {}
    void noc_inline_write32(kccl::hal::noc_addr_t, uint32_t) {}
    void sem_inc(kccl::hal::noc_addr_t, uint32_t) {}
    void sem_set(uint32_t, uint32_t) {}
    void sem_wait(uint32_t, uint32_t) {}
    void sem_wait_min(uint32_t, uint32_t) {}
    uint32_t sem_read(uint32_t) const { return 0; }
    void eth_send(uint32_t, uint32_t, uint32_t, uint32_t) {}
    bool eth_txq_busy(uint32_t) const { return false; }
    void context_switch() {}
    uint32_t arg(uint32_t i) const { return i; }
    void idle() {}
};

// Everything but idle(): must not count as a backend.
struct NoIdle {
    uint32_t core_x() const { return 0; }
    uint32_t core_y() const { return 0; }
};

static_assert(kccl::hal::is_backend_v<MockBackend>, "a complete backend models the contract");
static_assert(kccl::hal::check_backend<MockBackend>(), "check_backend accepts it");
static_assert(kccl::hal::is_backend<MockBackend>::value, "trait spelling agrees");
static_assert(!kccl::hal::is_backend_v<int>, "int is not a backend");
static_assert(!kccl::hal::is_backend_v<NoIdle>, "a partial backend is not a backend");
#if KCCL_HAS_CONCEPTS
static_assert(kccl::hal::Backend<MockBackend> && !kccl::hal::Backend<int>, "concept agrees");
#endif

template <class H>
uint32_t use(H& hal) {
    static_assert(kccl::hal::check_backend<H>());
    return static_cast<uint32_t>(hal.noc_addr(hal.core_x(), hal.core_y(), hal.arg(7)) & 0xffu);
}

}  // namespace

int main() {
    MockBackend hal;
    if (use(hal) != 7) {
        std::puts("kccl consumer: FAIL");
        return 1;
    }
    std::printf("kccl consumer: OK (C++%ld, concepts %d)\n", static_cast<long>(__cplusplus / 100 % 100),
                KCCL_HAS_CONCEPTS);
    return 0;
}

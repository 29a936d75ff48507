// The contract trait accepts the emulation backend and rejects types that miss an operation.
#include <emulation/hal.hpp>
#include <hal/contract.hpp>

#include <catch2/catch.hpp>

namespace {
struct Mock {
    uint32_t core_x() { return 0; }
    uint32_t core_y() { return 0; }
    kccl::hal::noc_addr_t noc_addr(uint32_t, uint32_t, uint32_t) { return 0; }
    uint8_t* l1_ptr(uint32_t, uint32_t) { return nullptr; }
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
    uint32_t sem_read(uint32_t) { return 0; }
    void eth_send(uint32_t, uint32_t, uint32_t, uint32_t) {}
    bool eth_txq_busy(uint32_t) { return false; }
    void context_switch() {}
    uint32_t arg(uint32_t) { return 0; }
    void idle() {}
};
struct MissingIdle : Mock {
    void idle() = delete;
};
struct WrongReadType : Mock {
    void sem_read(uint32_t) {}  // must return the value
};
}  // namespace

TEST_CASE("is_backend_v accepts models of the contract and rejects the rest", "[hal]") {
    STATIC_REQUIRE(kccl::hal::is_backend_v<Mock>);
    STATIC_REQUIRE(kccl::hal::is_backend_v<kccl::emu::Hal>);
    STATIC_REQUIRE(kccl::hal::check_backend<Mock>());
    STATIC_REQUIRE_FALSE(kccl::hal::is_backend_v<int>);
    STATIC_REQUIRE_FALSE(kccl::hal::is_backend_v<MissingIdle>);
    STATIC_REQUIRE_FALSE(kccl::hal::is_backend_v<WrongReadType>);
    STATIC_REQUIRE_FALSE(kccl::hal::detail::has_idle<MissingIdle>::value);
    STATIC_REQUIRE(kccl::hal::detail::has_noc_write<MissingIdle>::value);
#if KCCL_HAS_CONCEPTS
    STATIC_REQUIRE(kccl::hal::Backend<Mock>);
    STATIC_REQUIRE_FALSE(kccl::hal::Backend<MissingIdle>);
#endif
}

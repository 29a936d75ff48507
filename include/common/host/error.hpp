// kccl/common/host/error.hpp — the one base of every exception kccl's host code throws.
//
// kccl::Error carries a category (kccl::Errc) and a message that names what was wrong and what is
// allowed. Each machine's builder and planner keeps its own named type (edm::host::ConfigError,
// coll::host::PlanError, emu::EmulationError, ...), a thin subclass with its category, so a caller
// can catch one machine's errors by name, every kccl error as kccl::Error, or switch on
// category(). kccl::Error derives from std::invalid_argument: the errors are raised for inputs
// (options, configurations, plans, a kernel's use of the contract) that the caller can fix, and
// code written against the standard types keeps catching them (docs/host-api.md, "Errors").
// Host code (C++17, exceptions).
#pragma once

#include <stdexcept>
#include <stdint.h>
#include <string>

namespace kccl {

/// What kind of input was wrong.
enum class Errc : uint8_t {
    usage,      ///< a tool's command line or an API call's arguments
    config,     ///< a machine's build configuration (EDM channels, fabric routers, the wafer's grid)
    plan,       ///< a collective's or group's plan (sizes, ranks, methods, schedules)
    topology,   ///< the cores and links a plan runs on
    emulation,  ///< a contract violation or bad setting found by the emulation while it runs
    internal,   ///< a broken invariant of kccl itself
};

constexpr const char* errc_name(Errc c) {
    constexpr const char* names[] = {"usage", "config", "plan", "topology", "emulation", "internal"};
    return names[uint32_t(c)];
}

class Error : public std::invalid_argument {
public:
    Error(Errc c, const std::string& what) : std::invalid_argument(what), errc_(c) {}
    Errc category() const noexcept { return errc_; }

private:
    Errc errc_;
};

/// A named error type of one category: `struct ConfigError : ErrorOf<Errc::config> { using ErrorOf::ErrorOf; };`
template <Errc C>
struct ErrorOf : Error {
    explicit ErrorOf(const std::string& what) : Error(C, what) {}
};

}  // namespace kccl

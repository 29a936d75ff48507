// Every exception type of kccl's host code is a kccl::Error (common/host/error.hpp) of its
// category, and stays catchable as std::invalid_argument.
#include <catch2/catch.hpp>

#include <collectives/host/groups.hpp>
#include <collectives/host/plan.hpp>
#include <collectives/host/tensor_plan.hpp>
#include <common/host/error.hpp>
#include <edm/host/builder.hpp>
#include <emulation/topology.hpp>
#include <emulation/wafer/wafer.hpp>
#include <fabric/host/builder.hpp>
#include <ipcq/host/plan.hpp>
#include <ipcq/host/topology.hpp>
#include <wafer/host/model_sim.hpp>

#include "tools/coll_perf_args.hpp"

#include <stdexcept>
#include <string>

namespace {
template <class E>
void check_category(const E& thrown, kccl::Errc want) {
    try {
        throw thrown;
    } catch (const kccl::Error& e) {
        CHECK(e.category() == want);
        CHECK(std::string(e.what()) == "the message");
    }
    CHECK_THROWS_AS(throw thrown, std::invalid_argument);
    CHECK_THROWS_AS(throw thrown, E);
}
}  // namespace

TEST_CASE("errors: every host error type is a kccl::Error of its category", "[emulation][errors]") {
    using kccl::Errc;
    const std::string m = "the message";
    check_category(kccl::coll::host::PlanError(m), Errc::plan);
    check_category(kccl::coll::host::TensorPlanError(m), Errc::plan);
    check_category(kccl::coll::host::BadGroup(kccl::coll::GroupError::zero_size, m), Errc::plan);
    check_category(kccl::ipcq::host::PlanError(m), Errc::plan);
    check_category(kccl::ipcq::host::TopologyError(m), Errc::topology);
    check_category(kccl::edm::host::ConfigError(m), Errc::config);
    check_category(kccl::fabric::host::FabricError(m), Errc::config);
    check_category(kccl::emu::EmulationError(m), Errc::emulation);
    check_category(kccl::emu::wafer::WaferError(m), Errc::emulation);
    check_category(kccl::wafer::host::ModelSimError(m), Errc::emulation);
    check_category(kccl::coll_perf::UsageError(m), Errc::usage);
    check_category(kccl::Error(Errc::internal, m), Errc::internal);
    CHECK(std::string(kccl::errc_name(Errc::topology)) == "topology");
    CHECK(std::string(kccl::errc_name(Errc::internal)) == "internal");
}

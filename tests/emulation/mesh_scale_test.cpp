// Scale: a 64 x 64 IPCQ torus (4096 cores, one fiber each, on one host thread) where every core
// exchanges checked messages with all four neighbours (benchmarks/emulation/mesh_scenario.hpp;
// benchmarks/emulation/mesh_bench.cpp measures its rate and the memory per core).
#include "benchmarks/emulation/mesh_scenario.hpp"

#include <catch2/catch.hpp>

namespace sc = kccl::scenario;

TEST_CASE("scale: 64x64 IPCQ mesh, 4096 cores, all four neighbours, every word checked", "[scale][ipcq]") {
    sc::MeshSpec s;
    s.rows = s.cols = 64;
    s.rounds = 6;
    sc::Mesh mesh(s);
    kccl::emu::RunOptions o;
    o.watchdog = std::chrono::milliseconds(60000);
    const kccl::emu::RunReport r = mesh.launch->run(o);
    INFO(r.summary().substr(0, 4000));
    REQUIRE(r.ok());
    REQUIRE(r.engine == kccl::emu::Engine::fibers);
    CHECK(r.cores.size() == 4096);
    CHECK(mesh.bad_cores(r) == 0);
}

TEST_CASE("scale: the mesh check catches one wrong word from one core", "[scale][ipcq]") {
    // Control of the check above: rank 9 of a 4x4 torus (row 2, col 1) flips one bit of its first
    // message east; exactly its east neighbour, rank 10, must report exactly one wrong word.
    sc::MeshSpec s;
    s.rows = s.cols = 4;
    s.rounds = 2;
    s.corrupt_rank = 9;
    sc::Mesh mesh(s);
    const kccl::emu::RunReport r = mesh.launch->run(kccl::emu::RunOptions{});
    REQUIRE(r.ok());
    CHECK(mesh.bad_cores(r) == 1);
    CHECK(r.at(mesh.cores[10]).value == 1);
}

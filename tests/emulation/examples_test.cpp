// The examples' kernels run and deliver exactly what they should, in both modes.
#include "util.hpp"

#include "examples/pipeline/pipeline_kernels.hpp"

using namespace kccl::test;

TEST_CASE("README pipeline example: every page arrives / in normal and adversarial mode", "[examples]") {
    const uint32_t n = 64, bytes = 2048;
    uint32_t expected = 0;  // computed independently of the kernels
    for (uint32_t i = 1; i <= n; ++i)
        for (uint32_t k = 0; k < bytes / 4; ++k) expected += i * 0x10001u + k;
    for (bool adv : {false, true}) {
        Cluster cluster(kccl::emu::topology::n300(small_chip()));
        Launcher launch(cluster);
        for (uint32_t x : {0u, 1u})  // the example's semaphores start at 0 (tt-metal: CreateSemaphore)
            for (uint32_t sem : {0x100u, 0x104u}) launch.init_word(cluster.chip(0).worker(x, 0), sem, 0);
        launch.add(cluster.chip(0).worker(0, 0), [](auto& hal) { pipeline::forward_pages(hal); }, {n, bytes, 1, 0});
        launch.add(cluster.chip(0).worker(1, 0), [](auto& hal) { return pipeline::consume_pages(hal); }, {n, bytes, 0, 0});
        auto report = launch.run(adv ? adversarial(3) : normal());
        KCCL_REQUIRE_OK(report);
        REQUIRE(report.at(cluster.chip(0).worker(1, 0)).value == expected);
    }
}

// pipeline — the README's kernel example as a program: a producer core forwards pages through one
// buffer on a consumer core (pipeline_kernels.hpp) on an emulated n300, in normal mode and in
// adversarial mode (random schedules, dirty L1), and checks the consumer's checksum against one
// computed here from the page pattern.
//
//   pipeline [--pages N] [--bytes B] [--seed S]
//
// Exits 0 when every page arrived in both modes, 1 otherwise, 2 on a bad option.
#include "pipeline_kernels.hpp"

#include <emulation/emulation.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace emu = kccl::emu;

namespace {

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "pipeline: %s\n", msg.c_str());
    std::exit(2);
}

uint64_t parse_uint(const char* opt, const char* v, uint64_t lo, uint64_t hi, const char* allowed) {
    if (!v) usage_error(std::string(opt) + " needs a value (allowed: " + allowed + ")");
    uint64_t x = 0;
    if (!*v) usage_error(std::string(opt) + " '' is not a non-negative decimal integer (allowed: " + allowed + ")");
    for (const char* p = v; *p; ++p) {
        if (*p < '0' || *p > '9')
            usage_error(std::string(opt) + " '" + v + "' is not a non-negative decimal integer (allowed: " + allowed + ")");
        if (x > (UINT64_MAX - uint64_t(*p - '0')) / 10) x = UINT64_MAX;  // saturate: out of range below
        else x = x * 10 + uint64_t(*p - '0');
    }
    if (x < lo || x > hi) usage_error(std::string(opt) + " '" + v + "' is out of range (allowed: " + allowed + ")");
    return x;
}

}  // namespace

int main(int argc, char** argv) {
    uint32_t pages = 64, bytes = 2048;
    uint64_t seed = 3;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        // The landing page is at L1 0x4000 and the staging page at 0x2000: at most 8 KiB a page.
        if (!std::strcmp(a, "--pages")) pages = uint32_t(parse_uint(a, v, 1, 1000000, "1..1000000")), ++i;
        else if (!std::strcmp(a, "--bytes")) {
            bytes = uint32_t(parse_uint(a, v, 4, 8192, "a multiple of 4 in 4..8192"));
            if (bytes % 4) usage_error(std::string("--bytes '") + v + "' is out of range (allowed: a multiple of 4 in 4..8192)");
            ++i;
        } else if (!std::strcmp(a, "--seed")) seed = parse_uint(a, v, 0, UINT64_MAX, "0..18446744073709551615"), ++i;
        else usage_error(std::string("unknown option '") + a + "' (allowed: --pages N, --bytes B, --seed S)");
    }

    uint32_t expected = 0;  // the consumer's checksum, from the page pattern of pipeline::fill_page
    for (uint32_t i = 1; i <= pages; ++i)
        for (uint32_t k = 0; k < bytes / 4; ++k) expected += i * 0x10001u + k;

    for (bool adversarial : {false, true}) {
        emu::Cluster cluster(emu::topology::n300());
        const emu::CoreCoord producer = cluster.chip(0).worker(0, 0), consumer = cluster.chip(0).worker(1, 0);
        emu::Launcher launch(cluster);
        // The semaphores start at 0 (tt-metal: CreateSemaphore); all other L1 is not initialised.
        for (auto core : {producer, consumer})
            for (uint32_t sem : {0x100u, 0x104u}) launch.init_word(core, sem, 0);
        launch.add(producer, [](auto& hal) { pipeline::forward_pages(hal); }, {pages, bytes, consumer.x, consumer.y});
        launch.add(consumer, [](auto& hal) { return pipeline::consume_pages(hal); }, {pages, bytes, producer.x, producer.y});
        emu::RunOptions run;
        run.watchdog = std::chrono::seconds(10);
        run.adversary.enabled = adversarial;
        run.adversary.seed = seed;
        const emu::RunReport report = launch.run(run);
        const char* mode = adversarial ? "adversarial" : "normal";
        if (!report.ok()) {
            std::fprintf(stderr, "pipeline: %s run failed\n%s", mode, report.summary().c_str());
            return 1;
        }
        const uint32_t got = uint32_t(report.at(consumer).value);
        if (got != expected) {
            std::fprintf(stderr, "pipeline: %s run: checksum 0x%08x, expected 0x%08x\n", mode, got, expected);
            return 1;
        }
        std::printf("kccl pipeline: %u pages of %u bytes, %s mode: checksum 0x%08x, every page arrived\n",
                    pages, bytes, mode, got);
    }
    return 0;
}

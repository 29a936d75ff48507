// ring_ping — the first kccl demo: a ring round-trip ping on an emulated ring of chips, after the
// "Ring Ping Latency" microbenchmark and the "Example Multi-Chip Program Implementation
// Walkthrough" of tt-metal's Ethernet multichip guide
// (github.com/tenstorrent/tt-metal, tech_reports/EthernetMultichip/BasicEthernetGuide.md).
//
//   ring_ping [--chips N] [--laps N] [--bytes B] [--adversarial SEED] [--skew-us US] [--help]
//
// Builds a ring of N chips, puts a receiver and a sender kernel (ring_ping_kernels.hpp) on two
// Ethernet cores of every chip, runs one unmeasured lap and N measured laps, checks that the
// payload came back intact, and prints laps, bytes, wall time per lap and per hop.
// Every option is checked against its range (kLimits below); a bad one exits 2 with a message
// naming the option, the value and the allowed range. --help exits 0.
#include "ring_ping_kernels.hpp"

#include <emulation/emulation.hpp>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace emu = kccl::emu;

namespace {

struct Options {
    uint32_t chips = 8;
    uint32_t laps = 1000;
    uint32_t bytes = 16;
    bool adversarial = false;
    uint64_t seed = 1;
    uint32_t skew_us = 0;
};

/// One option's allowed values: lo..hi, and a multiple of `step`.
struct Limit {
    const char* flag;
    uint64_t lo, hi, step;
    const char* why;  ///< where the bounds come from, printed with a range error
};

// --chips: the emulation's NoC addresses carry an 8-bit chip index (emulation/hal.hpp encode()),
//   so a ring of more than 256 chips would alias chip 256 with chip 0.
// --laps: at least one measured lap; the cap keeps the lap counters (32-bit, +1 unmeasured lap)
//   far from wrapping and a run finite (256 chips: ~10 ms per lap on 2 cores).
// --bytes: one 16-byte Ethernet word at least, whole words, and the page plus its 16-byte sync
//   word must fit the 256 KiB ERISC L1 after kBuffer (ring_ping::kMaxPage).
// --skew-us: a random start delay per chip of up to 1 s; longer only makes the run wait.
constexpr Limit kChips{"--chips", 2, 256, 1, "the emulation's NoC addresses hold an 8-bit chip index"};
constexpr Limit kLaps{"--laps", 1, 1000000, 1, "at least one measured lap, at most a million"};
constexpr Limit kBytes{"--bytes", 16, ring_ping::kMaxPage, 16,
                       "whole 16-byte Ethernet words that fit the ERISC L1 with the sync word"};
constexpr Limit kSeed{"--adversarial", 0, UINT64_MAX, 1, "any 64-bit seed"};
constexpr Limit kSkew{"--skew-us", 0, 1000000, 1, "a start delay per chip of at most 1 s"};

void print_usage(std::FILE* f) {
    std::fprintf(f,
                 "usage: ring_ping [--chips N] [--laps N] [--bytes B] [--adversarial SEED] [--skew-us US]\n"
                 "  --chips N           chips in the ring, 2..256 (default 8)\n"
                 "  --laps N            measured laps, 1..1000000 (default 1000)\n"
                 "  --bytes B           payload bytes per hop, a multiple of 16 in 16..%u (default 16)\n"
                 "  --adversarial SEED  adversarial mode with this seed, 0..18446744073709551615\n"
                 "  --skew-us US        random start delay per chip, 0..1000000 us (default 0)\n"
                 "  -h, --help          this text\n",
                 ring_ping::kMaxPage);
}

[[noreturn]] void help() {
    std::printf(
        "ring_ping — kccl's demo: a packet travels round an emulated ring of chips.\n"
        "\n"
        "Each chip of the ring runs two kernels on two of its Ethernet cores, written against the\n"
        "kccl device contract only (the same code compiles for a tt-metal ERISC):\n"
        "  a receiver takes the packet off the link from the previous chip and forwards it over\n"
        "  the chip's NoC to the sender, which sends it over the link to the next chip.\n"
        "Chip 0's receiver injects the packet, runs one unmeasured lap, then the measured laps,\n"
        "and times them; at the end the payload is checked byte for byte. The emulation runs every\n"
        "core as a thread; --adversarial reorders and delays what the hardware does not promise\n"
        "to keep in order, so a protocol bug shows up as a failed run or corrupted payload, and a\n"
        "watchdog turns a hang into a dump of what every core waits for.\n"
        "\n"
        "It prints the laps, bytes per hop, wall time, time per lap and per hop. Emulated times are\n"
        "host threads, not hardware: tt-metal's ring ping measured ~650-690 ns per hop on an 8-chip\n"
        "Wormhole ring (github.com/tenstorrent/tt-metal,\n"
        "tech_reports/EthernetMultichip/BasicEthernetGuide.md, \"Ring Ping Latency\").\n"
        "\n");
    print_usage(stdout);
    std::printf("\nExit status: 0 success, 1 the run failed or the payload came back corrupted,\n"
                "2 a bad option.\n");
    std::exit(0);
}

[[noreturn]] void usage_error(const std::string& why) {
    std::fprintf(stderr, "ring_ping: %s\n", why.c_str());
    print_usage(stderr);
    std::exit(2);
}

std::string range_text(const Limit& l) {
    std::string r = std::to_string(l.lo) + ".." + std::to_string(l.hi);
    if (l.step > 1) r = "a multiple of " + std::to_string(l.step) + " in " + r;
    return r;
}

/// Strict decimal: only digits (no sign, no space, no trailing junk), no overflow, within `l`.
uint64_t number(const Limit& l, const char* v) {
    if (!v) usage_error(std::string(l.flag) + " needs a value (allowed: " + range_text(l) + ")");
    const std::string shown = std::string("'") + v + "'";
    bool digits = *v != '\0';
    bool overflow = false;
    uint64_t n = 0;
    for (const char* c = v; *c && digits; ++c) {
        if (*c < '0' || *c > '9') digits = false;
        else if (n > (UINT64_MAX - uint64_t(*c - '0')) / 10) overflow = true;
        else if (!overflow) n = n * 10 + uint64_t(*c - '0');
    }
    if (!digits)
        usage_error(std::string(l.flag) + " " + shown + " is not a non-negative decimal integer (allowed: " +
                    range_text(l) + ")");
    if (overflow || n < l.lo || n > l.hi || n % l.step)
        usage_error(std::string(l.flag) + " " + shown + " is out of range (allowed: " + range_text(l) +
                    "; " + l.why + ")");
    return n;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) help();
        else if (!std::strcmp(a, "--chips")) o.chips = uint32_t(number(kChips, v)), ++i;
        else if (!std::strcmp(a, "--laps")) o.laps = uint32_t(number(kLaps, v)), ++i;
        else if (!std::strcmp(a, "--bytes")) o.bytes = uint32_t(number(kBytes, v)), ++i;
        else if (!std::strcmp(a, "--adversarial")) o.adversarial = true, o.seed = number(kSeed, v), ++i;
        else if (!std::strcmp(a, "--skew-us")) o.skew_us = uint32_t(number(kSkew, v)), ++i;
        else usage_error(std::string("unknown option '") + a + "' (see --help)");
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);

    emu::ChipSpec chip;
    chip.grid_w = 1;  // only Ethernet cores run kernels here
    chip.grid_h = 1;
    emu::Cluster cluster(emu::topology::ring(opt.chips, 1, chip));

    // Sender S_i on a link to chip i+1; receiver R_{i+1} at its other end. With 2 chips both
    // links join the same pair, so skip a core already taken as a receiver.
    const uint32_t n = opt.chips;
    std::vector<emu::CoreCoord> sender(n), receiver(n);
    std::vector<bool> has_receiver(n, false);
    for (uint32_t i = 0; i < n; ++i) {
        for (auto [mine, theirs] : cluster.links_between(i, (i + 1) % n)) {
            if (has_receiver[i] && receiver[i] == mine) continue;
            sender[i] = mine;
            receiver[(i + 1) % n] = theirs;
            has_receiver[(i + 1) % n] = true;
            break;
        }
    }

    // The payload the master injects: a pattern checked when it comes back.
    std::vector<uint8_t> payload(opt.bytes);
    for (uint32_t b = 0; b < opt.bytes; ++b) payload[b] = uint8_t(b * 131 + 7);
    cluster.write(receiver[0], ring_ping::kBuffer, payload.data(), payload.size());

    auto now_ns = [] {
        return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count());
    };
    emu::Launcher launch(cluster);
    for (uint32_t i = 0; i < n; ++i) {
        // The semaphores another core may increment before this one starts (CreateSemaphore's
        // initial value on tt-metal); all other L1 is garbage with --adversarial (dirty L1).
        launch.init_word(receiver[i], ring_ping::kHandshake, 0);
        launch.init_word(sender[i], ring_ping::kForwardSem, 0);
        launch.add(sender[i], [](auto& hal) { return ring_ping::sender(hal); }, {opt.laps, opt.bytes});
        launch.add(receiver[i], [now_ns](auto& hal) { return ring_ping::receiver(hal, now_ns); },
                   {i == 0 ? 1u : 0u, sender[i].x, sender[i].y, opt.laps, opt.bytes});
    }

    emu::RunOptions run;
    run.watchdog = std::chrono::seconds(10);
    run.adversary.enabled = opt.adversarial;
    run.adversary.seed = opt.seed;
    run.random_skew_max = std::chrono::microseconds(opt.skew_us);
    const emu::RunReport report = launch.run(run);
    if (!report.ok()) {
        std::fprintf(stderr, "ring_ping: run failed\n%s", report.summary().c_str());
        return 1;
    }

    std::vector<uint8_t> back(opt.bytes);
    cluster.read(receiver[0], ring_ping::kBuffer, back.data(), back.size());
    if (back != payload) {
        std::fprintf(stderr, "ring_ping: the payload came back corrupted\n");
        return 1;
    }

    const double total_ns = double(report.at(receiver[0]).value);
    const double per_lap = total_ns / opt.laps;
    std::printf("kccl ring_ping: %u chips in a ring (%u hops per lap), %s mode\n", n, n,
                opt.adversarial ? "adversarial" : "normal");
    std::printf("  laps measured   %u (+1 unmeasured)\n", opt.laps);
    std::printf("  bytes per hop   %u payload + 16 sync\n", opt.bytes);
    std::printf("  wall time       %.3f ms\n", total_ns / 1e6);
    std::printf("  per lap         %.2f us\n", per_lap / 1e3);
    std::printf("  per hop         %.0f ns  (Wormhole hardware, 8 chips: ~650-690 ns per hop; tt-metal\n"
                "                  tech_reports/EthernetMultichip/BasicEthernetGuide.md, \"Ring Ping Latency\")\n",
                per_lap / n);
    std::printf("  payload         intact\n");
    return 0;
}

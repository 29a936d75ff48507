// The host builder: L1 layout (aligned, non-overlapping, identical on both ends), runtime args,
// and a named error for every invalid configuration.
#include <edm/host/builder.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

namespace edm = kccl::edm;
using edm::host::build_link;
using edm::host::ChannelSpec;
using edm::host::ConfigError;
using edm::host::EdmEnd;
using Catch::Contains;

namespace {
ChannelSpec spec(uint32_t buffers = 2, uint32_t bytes = 1024, uint32_t messages = 10, uint32_t workers = 1) {
    ChannelSpec c;
    c.buffers = buffers;
    c.packet_bytes = bytes;
    c.message_count = messages;
    for (uint32_t k = 0; k < workers; ++k) c.workers.push_back({k, 0, 0x100});
    return c;
}
}  // namespace

TEST_CASE("builder lays out L1 aligned and without overlap", "[edm][builder]") {
    EdmEnd a, b;
    for (uint32_t c = 0; c < 8; ++c) {
        ChannelSpec x = spec(3, 2048);
        x.workers[0].sem_addr = 0x100 + 16 * c;  // one semaphore per channel on the shared worker core
        if (c % 2) a.add_receiver(x), b.add_sender(x);
        else a.add_sender(x), b.add_receiver(x);
    }
    const auto plan = build_link(a, b, {0x4000, 150 * 1024, 0x3000});
    REQUIRE(plan.reserved_addr == 0x3000);
    REQUIRE(plan.begin_addr == 0x4000);
    REQUIRE(plan.a_is_master());  // channel 0 is a sender on end a
    std::vector<std::pair<uint32_t, uint32_t>> ranges{{plan.reserved_addr, plan.reserved_addr + edm::reserved_bytes}};
    for (const auto& l : plan.layout) {
        for (uint32_t addr : {l.edm_sem, l.signal_base, l.buffers_base, l.slot_bytes}) REQUIRE(addr % 16 == 0);
        REQUIRE(l.slot_bytes == 2048 + 16);
        ranges.push_back({l.edm_sem, l.edm_sem + 16});
        ranges.push_back({l.signal_base, l.signal_base + 32});
        ranges.push_back({l.buffers_base, l.buffers_base + 3 * l.slot_bytes});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) REQUIRE(ranges[i].first >= ranges[i - 1].second);
    REQUIRE(ranges[1].first == plan.begin_addr);  // the region starts after the reserved area here
    REQUIRE(ranges.back().second == plan.end_addr);
    REQUIRE(plan.end_addr <= 0x4000 + 150 * 1024);

    // args: both ends see the same addresses, opposite roles, one handshake master
    const auto ea = plan.edm_args(edm::host::Side::a), eb = plan.edm_args(edm::host::Side::b);
    REQUIRE(ea[edm::args::num_channels] == 8);
    REQUIRE(ea[edm::args::is_handshake_master] + eb[edm::args::is_handshake_master] == 1);
    const uint32_t c0 = edm::args::first_channel;
    REQUIRE(ea[c0 + edm::args::ch_is_sender] == 1);
    REQUIRE(eb[c0 + edm::args::ch_is_sender] == 0);
    REQUIRE(ea[c0 + edm::args::ch_buffers_base] == eb[c0 + edm::args::ch_buffers_base]);
    const auto w = plan.worker_args(edm::host::Side::b, 1, 0, 5, 9);
    REQUIRE(w[edm::args::w_edm_xy] == (5u | 9u << 16));
    REQUIRE(w[edm::args::w_buffers_base] == plan.layout[1].buffers_base);
    REQUIRE(w[edm::args::w_signal_addr] == plan.layout[1].signal_base);
}

TEST_CASE("builder rejects invalid configurations with a named error", "[edm][builder][errors]") {
    auto link = [](ChannelSpec sa, ChannelSpec sb, edm::host::L1Region r = {0x1000, 200 * 1024}) {
        EdmEnd a, b;
        a.add_sender(std::move(sa));
        b.add_receiver(std::move(sb));
        return build_link(a, b, r);
    };
    SECTION("does not fit L1") {
        // 48 (channel control: semaphore + 8 note slots) + 4 x (65536 + 16) = 262256
        REQUIRE_THROWS_WITH(link(spec(4, 65536), spec(4, 65536)),
                            Contains("needs 262256 bytes of L1 but the region has 204800"));
    }
    SECTION("misaligned") {
        REQUIRE_THROWS_WITH(link(spec(2, 1000), spec(2, 1000)), Contains("packet size 1000 must be a non-zero multiple of 16"));
        REQUIRE_THROWS_WITH(link(spec(), spec(), {0x1008, 4096}), Contains("must be multiples of 16"));
        auto s = spec();
        s.workers[0].sem_addr = 0x102;
        REQUIRE_THROWS_WITH(link(s, spec()), Contains("semaphore address 258 is not 4-byte aligned"));
    }
    SECTION("zero or too many channels") {
        EdmEnd a, b;
        REQUIRE_THROWS_WITH(build_link(a, b, {0x1000, 4096}), Contains("zero channels; at least 1 and at most 8"));
        for (int i = 0; i < 9; ++i) a.add_sender(spec(1, 16)), b.add_receiver(spec(1, 16));
        REQUIRE_THROWS_WITH(build_link(a, b, {0x1000, 100000}), Contains("9 channels; at most 8 are allowed"));
    }
    SECTION("packet larger than a buffer") {
        auto s = spec(2, 4096);
        s.buffer_bytes = 2048;
        REQUIRE_THROWS_WITH(link(s, s), Contains("packet of 4096 bytes is larger than its buffer of 2048 bytes"));
    }
    SECTION("too many or no workers / buffers") {
        REQUIRE_THROWS_WITH(link(spec(2, 64, 10, 9), spec(2, 64, 10, 1)), Contains("has 9 workers; 1..8 are allowed"));
        REQUIRE_THROWS_WITH(link(spec(2, 64, 10, 0), spec(2, 64, 10, 1)), Contains("has 0 workers"));
        REQUIRE_THROWS_WITH(link(spec(0, 64), spec(0, 64)), Contains("has 0 buffers; 1..16 are allowed"));
    }
    SECTION("message counts that differ between the two ends") {
        REQUIRE_THROWS_WITH(link(spec(2, 64, 100), spec(2, 64, 90)),
                            Contains("channel 0: message count 100 on end a differs from 90 on end b"));
        REQUIRE_THROWS_WITH(link(spec(2, 64, 0), spec(2, 64, 0)), Contains("message count 0"));
    }
    SECTION("ends that do not mirror each other") {
        EdmEnd a, b;
        a.add_sender(spec());
        b.add_sender(spec());
        REQUIRE_THROWS_WITH(build_link(a, b, {0x1000, 100000}), Contains("is a sender on both ends"));
        REQUIRE_THROWS_WITH(link(spec(2, 64), spec(3, 64)), Contains("differ between the ends"));
        EdmEnd c, d;
        c.add_sender(spec()).add_sender(spec());
        d.add_receiver(spec());
        REQUIRE_THROWS_WITH(build_link(c, d, {0x1000, 100000}), Contains("have 2 and 1 channels"));
    }
}

TEST_CASE("builder rejects ends that disagree, duplicate workers or semaphores, wide coordinates, a misplaced reserved area",
          "[edm][builder][errors]") {
    auto two = [](ChannelSpec sa, ChannelSpec sb, edm::host::L1Region r = {0x1000, 200 * 1024, 0x800}) {
        EdmEnd a, b;
        a.add_sender(std::move(sa));
        b.add_receiver(std::move(sb));
        return build_link(a, b, r);
    };
    ChannelSpec rr = spec();
    rr.sharing = edm::Sharing::round_robin;
    REQUIRE_THROWS_WITH(two(spec(), rr), Contains("sharing mode 0 on end a and 1 on end b; both ends of a channel must use the same"));
    ChannelSpec bad_sharing = spec();
    bad_sharing.sharing = edm::Sharing(7);
    REQUIRE_THROWS_WITH(two(bad_sharing, bad_sharing), Contains("has sharing mode 7; allowed: Sharing::not_shared (0) or Sharing::round_robin (1)"));
    ChannelSpec dup = spec(2, 256, 10, 2);
    dup.workers[1] = dup.workers[0];
    REQUIRE_THROWS_WITH(two(dup, spec(2, 256, 10, 2)), Contains("worker (0,0) is listed twice on this channel end"));
    ChannelSpec wide = spec();
    wide.workers[0].x = 65536;
    REQUIRE_THROWS_WITH(two(wide, spec()), Contains("must be at most 65535"));
    REQUIRE_THROWS_WITH(two(spec(), spec(), {0x1000, 4096, 0xFC0}), Contains("overlaps the channel region"));
    REQUIRE_THROWS_WITH(two(spec(), spec(), {0x1000, 4096, 0x808}), Contains("must be multiples of 16"));
    {
        EdmEnd a, b;  // two channels of end a name the same worker semaphore
        a.add_sender(spec()).add_sender(spec());
        b.add_receiver(spec()).add_receiver(spec());
        REQUIRE_THROWS_WITH(build_link(a, b, {0x1000, 100000, 0x800}),
                            Contains("semaphore 256 is already used by another channel of this end"));
    }
    const auto plan = two(spec(), spec());
    REQUIRE_THROWS_WITH(plan.worker_args(edm::host::Side::a, 0, 0, 70000, 1), Contains("at most 65535"));
    REQUIRE(plan.worker_semaphores(edm::host::Side::b).size() == 1);
}

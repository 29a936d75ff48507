// The trace writer alone: what it writes is valid trace-event JSON (read back with an independent
// reader), tracks are named, flows pair up, times convert to microseconds, the hash is stable and
// sees every change.
#include "emulation/trace.hpp"
#include "emulation/trace_check.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

using namespace kccl::emu;
using kccl::test::load_trace;
using kccl::test::parse_json;
using kccl::test::summarise_trace;

namespace {

// What an engine records for a 3-core exchange: each core sends to the next and waits.
void record_exchange(Trace& t, vtime_t skew = 0) {
    t.set_time_unit(1e12);  // ps
    const uint32_t a = t.track({0, 0, 0}, "chip 0 (0,0) worker");
    const uint32_t b = t.track({0, 1, 0}, "chip 0 (1,0) worker");
    const uint32_t c = t.track({1, 0, 8}, "chip 1 eth 0");
    CHECK(t.track({0, 0, 0}, "another name") == a);  // idempotent per core
    const uint32_t tr[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
        const vtime_t t0 = 1'000'000 * i + skew;
        t.slice(tr[i], "send", t0, t0 + 24'000, "{\"bytes\":64}");
        const uint64_t f = t.flow_begin(tr[i], t0 + 12'000);
        t.slice(tr[(i + 1) % 3], "wait", t0, t0 + 600'000);
        t.flow_end(f, tr[(i + 1) % 3], t0 + 600'000);
    }
    t.instant(a, "idle", 5'000'000);
    t.counter("link 0 busy", 0, 0.0);
    t.counter("link 0 busy", 2'000'000, 0.75);
}

std::string temp_path(const char* stem) {
    return (std::filesystem::temp_directory_path() / (std::string(stem) + "_" + std::to_string(::getpid()) + ".json"))
        .string();
}

}  // namespace

TEST_CASE("trace: written JSON loads back with named tracks, slices and paired flows", "[trace]") {
    Trace t;
    record_exchange(t);
    CHECK(t.events() == 3 * 4 + 1 + 2);
    const std::string path = temp_path("kccl_trace_test");
    std::string err;
    REQUIRE(t.write_json(path, &err));
    const auto s = load_trace(path);
    std::filesystem::remove(path);
    INFO(s.error);
    REQUIRE(s.error.empty());
    CHECK(s.track_names.size() == 3);
    CHECK(s.track_names.at({0, 1}) == "chip 0 (0,0) worker");  // first name kept
    CHECK(s.track_names.at({1, 3}) == "chip 1 eth 0");          // pid = chip
    CHECK(s.slices == 6);
    CHECK(s.slices_by_name.at("send") == 3);
    CHECK(s.slices_by_name.at("wait") == 3);
    CHECK(s.flows == 3);
    CHECK(s.instants == 1);
    CHECK(s.counters == 2);
    // The last wait ends at 2 us + 600 ns (ps converted to us).
    CHECK(s.max_end_us == Approx(2.6));
}

TEST_CASE("trace: timestamps are microseconds, exact for picoseconds, scaled for cycles", "[trace]") {
    Trace t;
    const uint32_t a = t.track({0, 0, 0}, "pe");
    t.slice(a, "x", 1'234'567'891, 1'234'567'892);  // ps
    auto root = parse_json(t.json());
    const auto& evs = root.at("traceEvents").arr;
    const auto& x = evs.back();
    CHECK(x.at("ph").s() == "X");
    CHECK(x.at("ts").n() == Approx(1234.567891).epsilon(1e-12));
    CHECK(x.at("dur").n() == Approx(0.000001).epsilon(1e-9));
    // Cycles at 1 MHz: one cycle = 1 us.
    Trace c;
    c.set_time_unit(1e6);
    const uint32_t p = c.track({0, 3, 4}, "pe (3,4)");
    c.slice(p, "wavelet", 10, 12);
    auto r2 = parse_json(c.json());
    CHECK(r2.at("traceEvents").arr.back().at("ts").n() == Approx(10.0));
    CHECK(r2.at("traceEvents").arr.back().at("dur").n() == Approx(2.0));
    CHECK(r2.at("otherData").at("ticks_per_second").n() == 1e6);
}

TEST_CASE("trace: names are escaped, bad input is refused with a named error", "[trace]") {
    Trace t;
    const uint32_t a = t.track({0, 0, 0}, "core \"zero\"\n\\");
    t.slice(a, "wait \"sem\"", 0, 10);
    auto s = summarise_trace(parse_json(t.json()));
    INFO(s.error);
    CHECK(s.error.empty());
    CHECK(s.track_names.at({0, 1}) == "core \"zero\"\n\\");
    CHECK(s.slices_by_name.at("wait \"sem\"") == 1);
    CHECK_THROWS_WITH(t.slice(7, "x", 0, 1), Catch::Contains("track 7 does not exist"));
    CHECK_THROWS_WITH(t.slice(a, "x", 5, 1), Catch::Contains("end 1 is before begin 5"));
    CHECK_THROWS_WITH(t.slice(a, "x", 0, 1, "bytes=4"), Catch::Contains("must be a JSON object"));
    CHECK_THROWS_WITH(t.flow_end(3, a, 0), Catch::Contains("flow id 3 was not returned"));
    CHECK_THROWS_WITH(t.set_time_unit(0), Catch::Contains("must be > 0"));
    CHECK_THROWS_WITH(t.counter("c", 0, std::nan("")), Catch::Contains("must be finite"));
    std::string err;
    CHECK_FALSE(t.write_json("/nonexistent-dir/x.json", &err));
    CHECK_THAT(err, Catch::Contains("/nonexistent-dir/x.json"));
}

TEST_CASE("trace: the checker catches an unpaired flow and an unnamed track", "[trace]") {
    // Control for the structural check itself: hand-written traces with one defect each.
    auto unpaired = summarise_trace(parse_json(
        R"({"traceEvents":[{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"a"}},)"
        R"({"ph":"s","name":"send","pid":0,"tid":1,"ts":1,"id":5,"cat":"flow"}]})"));
    CHECK_THAT(unpaired.error, Catch::Contains("flow 5") && Catch::Contains("has no end"));
    auto unnamed = summarise_trace(
        parse_json(R"({"traceEvents":[{"ph":"X","name":"w","pid":0,"tid":9,"ts":1,"dur":2}]})"));
    CHECK_THAT(unnamed.error, Catch::Contains("unnamed track"));
}

TEST_CASE("trace: the hash is stable for the same sequence and sees any change", "[trace]") {
    Trace a, b;
    record_exchange(a);
    record_exchange(b);
    CHECK(a.hash() == b.hash());
    CHECK(a.json() == b.json());
    Trace shifted;
    record_exchange(shifted, 1);  // every time one picosecond later
    CHECK(shifted.hash() != a.hash());
    Trace extra;
    record_exchange(extra);
    extra.instant(0, "idle", 5'000'000);
    CHECK(extra.hash() != a.hash());
    Trace renamed;
    renamed.track({0, 0, 0}, "x");
    Trace renamed2;
    renamed2.track({0, 0, 0}, "y");
    CHECK(renamed.hash() != renamed2.hash());
    a.clear();
    CHECK(a.events() == 0);
    CHECK(a.hash() == Trace{}.hash());
}

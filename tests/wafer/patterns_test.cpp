// The wafer pattern table (include/wafer/patterns.hpp): names round-trip, the table's columns
// say what the Cerebras WSE reduce/allreduce thesis says of each pattern, and run descriptions
// are checked with the error that names what is wrong.
//
//   scripts/dev_test.sh tests/wafer/patterns_test.cpp -- "[wafer][patterns]"
#include <wafer/patterns.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

using namespace kccl::wafer;

TEST_CASE("wafer patterns: names are unique and round-trip", "[wafer][patterns]") {
    std::set<std::string> seen;
    for (uint32_t i = 0; i < kPatternCount; ++i) {
        const Pattern p = Pattern(i);
        INFO(pattern_name(p));
        CHECK(seen.insert(pattern_name(p)).second);
        Pattern back = Pattern::scalar;
        REQUIRE(pattern_from_name(pattern_name(p), back));
        CHECK(back == p);
    }
    Pattern untouched = Pattern::jump;
    CHECK_FALSE(pattern_from_name("Chain", untouched));
    CHECK_FALSE(pattern_from_name("chai", untouched));
    CHECK_FALSE(pattern_from_name("", untouched));
    CHECK_FALSE(pattern_from_name(nullptr, untouched));
    CHECK(untouched == Pattern::jump);
    CHECK(std::string(pattern_name(Pattern(200))) == "unknown_pattern");
}

TEST_CASE("wafer patterns: the table lists the thesis's patterns", "[wafer][patterns]") {
    const char* expected[] = {"scalar",     "chain",           "tree",           "two_phase", "optimal",
                              "left_right", "ring",            "jump",           "reduce_2d", "bcast_1d",
                              "bcast_2d",   "allreduce_naive", "allreduce_ring", "butterfly", "allreduce_2d"};
    REQUIRE(kPatternCount == sizeof expected / sizeof expected[0]);
    for (uint32_t i = 0; i < kPatternCount; ++i) CHECK(std::string(kPatternTable[i].name) == expected[i]);
    CHECK(pattern_info(Pattern::reduce_2d).dim == Dim::two_d);
    CHECK(pattern_info(Pattern::bcast_2d).collective == kccl::coll::Op::broadcast);
    CHECK(pattern_info(Pattern::butterfly).takes(param_g));
    CHECK(pattern_info(Pattern::two_phase).takes(param_s));
    CHECK_FALSE(pattern_info(Pattern::chain).takes(param_root));
    CHECK(pattern_info(Pattern::ring).takes(param_root));
    char buf[512] = {};
    const uint32_t need = pattern_list(buf, sizeof buf, ',');
    CHECK(need == std::strlen(buf));
    CHECK(std::string(buf).rfind("scalar,chain,tree,", 0) == 0);
    char small[8] = {};
    CHECK(pattern_list(small, sizeof small) == need);
    CHECK(std::string(small) == "scalar ");
}

TEST_CASE("wafer patterns: check_args names what is wrong", "[wafer][patterns]") {
    PatternArgs a;
    CHECK(check_args(a, 1, 16) == ArgsError::ok);
    a.root = 3;
    CHECK(check_args(a, 1, 16) == ArgsError::root_not_taken);
    a.pattern = Pattern::jump;
    a.base[0] = Pattern::two_phase;
    a.s = 4;
    CHECK(check_args(a, 1, 16) == ArgsError::ok);
    a.s = 17;
    CHECK(check_args(a, 1, 16) == ArgsError::s_out_of_range);
    a.s = 0;
    a.root = 16;
    CHECK(check_args(a, 1, 16) == ArgsError::root_outside);
    a.root = 3;
    a.base[0] = Pattern::ring;  // jump needs a reduce to PE 0
    CHECK(check_args(a, 1, 16) == ArgsError::base_invalid);
    a.base[0] = Pattern::chain;
    a.g = 3;
    CHECK(check_args(a, 1, 16) == ArgsError::g_not_taken);
    CHECK(check_args(a, 4, 16) == ArgsError::two_d_needs_grid);

    PatternArgs d;  // allreduce_2d over allreduce_naive over jump over two_phase: the deepest chain
    d.pattern = Pattern::allreduce_2d;
    d.base[0] = Pattern::allreduce_naive;
    d.base[1] = Pattern::jump;
    d.base[2] = Pattern::two_phase;
    d.s = 3;
    CHECK(check_args(d, 8, 8) == ArgsError::ok);
    Pattern st[kMaxBaseDepth + 1] = {};
    REQUIRE(pattern_stack(d, st) == 4);
    CHECK(st[3] == Pattern::two_phase);
    d.base[0] = Pattern::chain;  // a reduce is not an allreduce
    CHECK(check_args(d, 8, 8) == ArgsError::base_invalid);
    d.base[0] = Pattern::butterfly;
    d.s = 0;
    d.g = 1;
    CHECK(check_args(d, 8, 8) == ArgsError::g_out_of_range);
    for (uint32_t e = 0; e <= uint32_t(ArgsError::g_not_taken); ++e)
        CHECK(std::string(args_error_text(ArgsError(e))) != "unknown error");
}

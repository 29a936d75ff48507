// Structural check of a Chrome / Perfetto trace-event JSON (what Trace::json writes), independent
// of the writer's code: every event is well formed, every slice and flow sits on a named track,
// every flow start has exactly one end that is not earlier, counters carry a value.
#pragma once

#include "json_reader.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace kccl::test {

struct TraceSummary {
    std::map<std::pair<long, long>, std::string> track_names;  ///< (pid, tid) -> thread name
    std::map<std::string, size_t> slices_by_name;
    size_t slices = 0, instants = 0, flows = 0, counters = 0;
    double max_end_us = 0;
    std::string error;  ///< empty when the trace is well formed
};

inline TraceSummary summarise_trace(const Json& root) {
    TraceSummary s;
    auto bad = [&s](const std::string& e) {
        if (s.error.empty()) s.error = e;
    };
    if (!root.has("traceEvents") || root.at("traceEvents").type != Json::Type::array) {
        bad("no traceEvents array");
        return s;
    }
    const auto& evs = root.at("traceEvents").arr;
    // First pass: metadata.
    for (const Json& e : evs) {
        if (!e.has("ph") || !e.has("pid") || !e.has("tid")) {
            bad("event without ph/pid/tid");
            continue;
        }
        if (e.at("ph").s() == "M" && e.at("name").s() == "thread_name")
            s.track_names[{long(e.at("pid").n()), long(e.at("tid").n())}] = e.at("args").at("name").s();
    }
    std::map<double, std::pair<double, int>> flow_begin;  // id -> (ts, count)
    std::map<double, std::pair<double, int>> flow_end;
    for (const Json& e : evs) {
        if (!e.has("ph")) continue;
        const std::string& ph = e.at("ph").s();
        if (ph == "M") continue;
        if (!e.has("ts") || !e.has("name")) {
            bad("event without ts/name");
            continue;
        }
        const double ts = e.at("ts").n();
        if (!(ts >= 0)) bad("negative ts");
        const std::pair<long, long> key{long(e.at("pid").n()), long(e.at("tid").n())};
        const bool on_track = s.track_names.count(key) != 0;
        if (ph == "X") {
            ++s.slices;
            ++s.slices_by_name[e.at("name").s()];
            if (!e.has("dur") || !(e.at("dur").n() >= 0)) bad("slice without a non-negative dur");
            if (!on_track) bad("slice on an unnamed track");
            if (e.has("dur")) s.max_end_us = std::max(s.max_end_us, ts + e.at("dur").n());
        } else if (ph == "i") {
            ++s.instants;
            if (!on_track) bad("instant on an unnamed track");
        } else if (ph == "s" || ph == "f") {
            if (!e.has("id")) {
                bad("flow event without id");
                continue;
            }
            if (!on_track) bad("flow event on an unnamed track");
            auto& m = ph == "s" ? flow_begin : flow_end;
            auto& slot = m[e.at("id").n()];
            slot.first = ts;
            ++slot.second;
        } else if (ph == "C") {
            ++s.counters;
            if (!e.has("args") || e.at("args").obj.empty()) bad("counter without a value");
        } else {
            bad("unknown phase '" + ph + "'");
        }
    }
    for (const auto& [id, b] : flow_begin) {
        auto it = flow_end.find(id);
        if (b.second != 1) bad("flow " + std::to_string(id) + " begins more than once");
        if (it == flow_end.end()) {
            bad("flow " + std::to_string(id) + " has no end");
            continue;
        }
        if (it->second.second != 1) bad("flow " + std::to_string(id) + " ends more than once");
        if (it->second.first < b.first) bad("flow " + std::to_string(id) + " ends before it begins");
        ++s.flows;
    }
    for (const auto& [id, e] : flow_end)
        if (!flow_begin.count(id)) bad("flow " + std::to_string(id) + " ends without a begin");
    return s;
}

inline TraceSummary load_trace(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    TraceSummary s;
    if (!f) {
        s.error = "cannot read " + path;
        return s;
    }
    try {
        return summarise_trace(parse_json(ss.str()));
    } catch (const std::exception& e) {
        s.error = e.what();
        return s;
    }
}

}  // namespace kccl::test

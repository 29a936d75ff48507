// kccl/emulation/trace.hpp — a run's trace in the Chrome / Perfetto trace-event JSON format.
//
// One track per core (pid = chip, tid = track id + 1, named by a thread_name metadata event),
// "X" complete slices for waits and sends, "i" instants, "s"/"f" flow events from a send to its
// delivery, and "C" counters. Timestamps are model ticks converted to microseconds with the
// unit set by set_time_unit (ticks per second), printed with 6 decimals (1 ps resolution).
// Open the file at https://ui.perfetto.dev or chrome://tracing (docs/emulation-traces.md).
//
// Who calls it: the fiber engine (RunOptions::trace) records a slice per wait and per send and a
// flow from each send to its delivery; tests and tools may record their own events. Not
// thread-safe: the fiber engine records from one host thread.
//
// hash() is a stable 64-bit FNV-1a hash of the recorded event sequence (kind, track, core, times,
// names, flow ids, counter values as IEEE bits): the same run recorded twice gives the same hash
// on any machine; the determinism tests compare it.
#pragma once

#include "topology.hpp"
#include "timing.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kccl::emu {

class Trace {
public:
    enum class Kind : uint8_t { slice, instant, flow_begin, flow_end, counter };

    struct Event {
        Kind kind;
        uint32_t track;     ///< slice / instant / flow; unused for counters
        vtime_t begin;      ///< slice begin, instant / flow / counter time
        vtime_t end;        ///< slice end
        uint64_t flow;      ///< flow id
        double value;       ///< counter value
        uint32_t name;      ///< index into names_
        uint32_t args;      ///< index into names_ (args JSON object), or no_args
    };
    struct TrackInfo {
        CoreCoord core;
        std::string name;
    };
    static constexpr uint32_t no_args = ~0u;

    /// Timestamps are written in microseconds: ts_us = ticks * 1e6 / ticks_per_second.
    void set_time_unit(double ticks_per_second) {
        if (!(ticks_per_second > 0))
            throw EmulationError("Trace::set_time_unit: ticks per second must be > 0, got " +
                                 std::to_string(ticks_per_second));
        ticks_per_second_ = ticks_per_second;
    }
    double ticks_per_second() const { return ticks_per_second_; }

    /// The track of `core` (created on first use with `name`); idempotent per core.
    uint32_t track(CoreCoord core, std::string_view name) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        auto it = by_core_.find(core);
        if (it != by_core_.end()) return it->second;
        const uint32_t id = uint32_t(tracks_.size());
        tracks_.push_back({core, std::string(name)});
        by_core_.emplace(core, id);
        return id;
    }

    /// A slice [begin, end] on a track; args_json, if given, is a JSON object ("{...}") shown with
    /// the slice.
    void slice(uint32_t track, std::string_view name, vtime_t begin, vtime_t end, std::string_view args_json = {}) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check_track(track, "slice");
        if (end < begin)
            throw EmulationError("Trace::slice '" + std::string(name) + "': end " + std::to_string(end) +
                                 " is before begin " + std::to_string(begin));
        if (!args_json.empty() && (args_json.front() != '{' || args_json.back() != '}'))
            throw EmulationError("Trace::slice '" + std::string(name) +
                                 "': args_json must be a JSON object \"{...}\", got " + std::string(args_json));
        events_.push_back({Kind::slice, track, begin, end, 0, 0.0, intern(name),
                           args_json.empty() ? no_args : intern(args_json)});
    }
    void instant(uint32_t track, std::string_view name, vtime_t at) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check_track(track, "instant");
        events_.push_back({Kind::instant, track, at, at, 0, 0.0, intern(name), no_args});
    }
    /// Start of a flow arrow (a send); returns its id for flow_end.
    uint64_t flow_begin(uint32_t track, vtime_t at) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check_track(track, "flow_begin");
        const uint64_t id = ++last_flow_;
        events_.push_back({Kind::flow_begin, track, at, at, id, 0.0, intern("send"), no_args});
        return id;
    }
    /// End of flow `id` (the delivery of that send) on the receiving core's track.
    void flow_end(uint64_t id, uint32_t track, vtime_t at) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        check_track(track, "flow_end");
        if (id == 0 || id > last_flow_)
            throw EmulationError("Trace::flow_end: flow id " + std::to_string(id) +
                                 " was not returned by flow_begin (ids are 1.." + std::to_string(last_flow_) + ")");
        events_.push_back({Kind::flow_end, track, at, at, id, 0.0, intern("send"), no_args});
    }
    void counter(std::string_view name, vtime_t at, double value) {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        if (!std::isfinite(value))
            throw EmulationError("Trace::counter '" + std::string(name) + "': value must be finite (JSON has no NaN/inf)");
        events_.push_back({Kind::counter, 0, at, at, 0, value, intern(name), no_args});
    }

    size_t events() const { return events_.size(); }
    const std::vector<Event>& event_list() const { return events_; }
    const std::vector<TrackInfo>& tracks() const { return tracks_; }
    std::string_view name_of(const Event& e) const { return names_[e.name]; }
    void clear() {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        events_.clear();
        tracks_.clear();
        by_core_.clear();
        names_.clear();
        name_ids_.clear();
        last_flow_ = 0;
    }

    /// Stable FNV-1a hash of the event sequence (and the tracks' cores and names).
    uint64_t hash() const {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        uint64_t h = 1469598103934665603ull;
        auto mix = [&h](const void* p, size_t n) {
            const auto* b = static_cast<const unsigned char*>(p);
            for (size_t i = 0; i < n; ++i) {
                h ^= b[i];
                h *= 1099511628211ull;
            }
        };
        auto mix64 = [&mix](uint64_t v) {
            unsigned char b[8];
            for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));  // little endian, fixed
            mix(b, 8);
        };
        auto mixs = [&](std::string_view s) {
            mix64(s.size());
            mix(s.data(), s.size());
        };
        mix64(tracks_.size());
        for (const TrackInfo& t : tracks_) {
            mix64(t.core.chip);
            mix64(t.core.x);
            mix64(t.core.y);
            mixs(t.name);
        }
        mix64(events_.size());
        for (const Event& e : events_) {
            mix64(uint64_t(e.kind));
            mix64(e.track);
            mix64(e.begin);
            mix64(e.end);
            mix64(e.flow);
            uint64_t bits;
            std::memcpy(&bits, &e.value, 8);
            mix64(bits);
            mixs(names_[e.name]);
            mixs(e.args == no_args ? std::string_view{} : std::string_view(names_[e.args]));
        }
        return h;
    }

    /// The whole trace as a JSON object {"traceEvents": [...], "displayTimeUnit": "ns", ...}.
    std::string json() const {
        [[maybe_unused]] detail::IgnoreScope tsan_ignore_;
        std::string out;
        out.reserve(128 + events_.size() * 96 + tracks_.size() * 96);
        out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"ticks_per_second\":";
        out += number(ticks_per_second_);
        out += "},\"traceEvents\":[\n";
        bool first = true;
        auto sep = [&] {
            if (!first) out += ",\n";
            first = false;
        };
        // Metadata: a process per chip, a thread per track.
        std::vector<bool> chip_named;
        for (size_t i = 0; i < tracks_.size(); ++i) {
            const TrackInfo& t = tracks_[i];
            if (t.core.chip >= chip_named.size()) chip_named.resize(t.core.chip + 1, false);
            if (!chip_named[t.core.chip]) {
                chip_named[t.core.chip] = true;
                sep();
                out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(t.core.chip) +
                       ",\"tid\":0,\"args\":{\"name\":\"chip " + std::to_string(t.core.chip) + "\"}}";
            }
            sep();
            out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(t.core.chip) +
                   ",\"tid\":" + std::to_string(i + 1) + ",\"args\":{\"name\":";
            escape(out, t.name);
            out += "}}";
            sep();
            out += "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + std::to_string(t.core.chip) +
                   ",\"tid\":" + std::to_string(i + 1) + ",\"args\":{\"sort_index\":" + std::to_string(i) + "}}";
        }
        for (const Event& e : events_) {
            sep();
            const std::string pid_tid = e.kind == Kind::counter
                                            ? std::string("\"pid\":0,\"tid\":0")
                                            : "\"pid\":" + std::to_string(tracks_[e.track].core.chip) +
                                                  ",\"tid\":" + std::to_string(e.track + 1);
            out += "{\"ph\":\"";
            switch (e.kind) {
                case Kind::slice: out += 'X'; break;
                case Kind::instant: out += 'i'; break;
                case Kind::flow_begin: out += 's'; break;
                case Kind::flow_end: out += 'f'; break;
                case Kind::counter: out += 'C'; break;
            }
            out += "\",\"name\":";
            escape(out, names_[e.name]);
            out += "," + pid_tid + ",\"ts\":" + ts(e.begin);
            switch (e.kind) {
                case Kind::slice:
                    out += ",\"dur\":" + dur(e.end - e.begin);
                    if (e.args != no_args) out += ",\"args\":" + names_[e.args];
                    break;
                case Kind::instant: out += ",\"s\":\"t\""; break;
                case Kind::flow_begin: out += ",\"cat\":\"flow\",\"id\":" + std::to_string(e.flow); break;
                case Kind::flow_end:
                    out += ",\"cat\":\"flow\",\"id\":" + std::to_string(e.flow) + ",\"bp\":\"e\"";
                    break;
                case Kind::counter: out += ",\"args\":{\"value\":" + number(e.value) + "}"; break;
            }
            out += '}';
        }
        out += "\n]}\n";
        return out;
    }

    bool write_json(const std::string& path, std::string* error) const {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        if (!f) {
            if (error) *error = "Trace::write_json: cannot open '" + path + "' for writing: " + std::strerror(errno);
            return false;
        }
        const std::string s = json();
        f.write(s.data(), std::streamsize(s.size()));
        f.close();
        if (!f) {
            if (error) *error = "Trace::write_json: writing '" + path + "' failed: " + std::strerror(errno);
            return false;
        }
        return true;
    }

private:
    void check_track(uint32_t track, const char* what) const {
        if (track >= tracks_.size())
            throw EmulationError(std::string("Trace::") + what + ": track " + std::to_string(track) +
                                 " does not exist (" + std::to_string(tracks_.size()) +
                                 " tracks; get ids from track())");
    }
    uint32_t intern(std::string_view s) {
        auto it = name_ids_.find(s);
        if (it != name_ids_.end()) return it->second;
        const uint32_t id = uint32_t(names_.size());
        names_.emplace_back(s);
        name_ids_.emplace(names_.back(), id);
        return id;
    }
    // Microseconds with 6 decimals from integer ticks, exact when ticks are ps.
    std::string ts(vtime_t ticks) const { return fixed_us(double(ticks) * 1e6 / ticks_per_second_, ticks); }
    std::string dur(vtime_t ticks) const { return ts(ticks); }
    std::string fixed_us(double us, vtime_t ticks) const {
        if (ticks_per_second_ == 1e12) {  // exact: ps -> us with 6 decimals
            std::string s = std::to_string(ticks / 1000000) + ".";
            std::string frac = std::to_string(ticks % 1000000);
            return s + std::string(6 - frac.size(), '0') + frac;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.6f", us);
        return buf;
    }
    static std::string number(double v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return buf;
    }
    static void escape(std::string& out, std::string_view s) {
        out += '"';
        for (char c : s) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\t': out += "\\t"; break;
                default:
                    if (static_cast<unsigned char>(c) < 0x20) {
                        char buf[8];
                        std::snprintf(buf, sizeof buf, "\\u%04x", c);
                        out += buf;
                    } else {
                        out += c;
                    }
            }
        }
        out += '"';
    }

    double ticks_per_second_ = 1e12;
    std::vector<TrackInfo> tracks_;
    std::map<CoreCoord, uint32_t> by_core_;
    std::vector<Event> events_;
    std::vector<std::string> names_;
    std::map<std::string, uint32_t, std::less<>> name_ids_;
    uint64_t last_flow_ = 0;
};

}  // namespace kccl::emu

// kccl/collectives/host/picture.hpp — pictures of a schedule, from the same description the
// executor and the checker run (host only, C++17).
//
//   mermaid(shape)  a Mermaid sequence diagram: one participant per rank, one arrow per message
//                   in the order the symbolic run delivered them. The label says when (t = the
//                   checker's logical send time), what (the chunk sent; "+" when the message
//                   carries a partial reduction; "*" on each arrow of a multicast, which is one
//                   message to several ranks) and on which lane when there are several.
//   table(shape)    a plain text grid: one row per time step, one column per rank, each cell the
//                   sends of that rank at that time ("->1 out[3]" = sends out[3] to rank 1;
//                   "->1,2 out[3]*" = one multicast to ranks 1 and 2).
// docs/collectives-algorithms.md embeds these (tests/collectives/schedule_test.cpp checks the docs are current).
#pragma once

#include <collectives/host/checker.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace kccl::coll::host {

namespace detail_picture {
inline std::string chunk_label(const Step& s) {
    // what travels: the destination chunk for receive-and-forward, else the source
    const ChunkRef c = (s.verb == Verb::recv_copy_send) ? s.dst : s.src;
    std::string t = c.buf == Buf::input ? "in" : c.buf == Buf::output ? "out" : "scr";
    t += "[" + std::to_string(c.chunk);
    if (s.count > 1) t += ".." + std::to_string(c.chunk + s.count - 1);
    t += "]";
    if (s.verb == Verb::recv_reduce_send || s.verb == Verb::recv_reduce_copy_send) t += "+";
    if (s.cast != Cast::unicast) t += "*";
    return t;
}
}  // namespace detail_picture

/// Runs the checker (unbounded channels) and renders the messages. Throws nothing; an invalid or
/// failing schedule renders as a note with the first error.
inline std::string mermaid(const Shape& sh) {
    CheckOptions o;
    o.record = true;
    const CheckResult r = check(sh, o);
    std::string m = "sequenceDiagram\n";
    for (uint32_t q = 0; q < sh.ranks; ++q) m += "    participant R" + std::to_string(q) + "\n";
    if (!r.ok) return m + "    Note over R0: " + (r.errors.empty() ? std::string("invalid") : r.errors[0].kind) + "\n";
    const bool many_lanes = lanes(sh) > 1;
    std::vector<Event> ev = r.events;
    std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
    for (const Event& e : ev) {
        for_each_send_peer(sh, e.rank, e.step, [&](uint32_t q) {
            m += "    R" + std::to_string(e.rank) + "->>R" + std::to_string(q) + ": t" + std::to_string(e.time) + " " +
                 detail_picture::chunk_label(e.step);
            if (many_lanes) m += " L" + std::to_string(e.lane);
            m += "\n";
        });
    }
    return m;
}

/// A text grid of the sends per time step and rank.
inline std::string table(const Shape& sh) {
    CheckOptions o;
    o.record = true;
    const CheckResult r = check(sh, o);
    if (!r.ok) return "(schedule fails: " + r.summary() + ")\n";
    std::vector<std::vector<std::string>> cell(r.time + 1, std::vector<std::string>(sh.ranks));
    for (const Event& e : r.events) {
        if (!verb_sends(e.step.verb)) continue;
        std::string& c = cell[e.time][e.rank];
        if (!c.empty()) c += " ";
        std::string to;
        for_each_send_peer(sh, e.rank, e.step, [&](uint32_t q) { to += (to.empty() ? "" : ",") + std::to_string(q); });
        c += "->" + to + " " + detail_picture::chunk_label(e.step);
    }
    std::string t = "| t |";
    for (uint32_t q = 0; q < sh.ranks; ++q) t += " rank " + std::to_string(q) + " |";
    t += "\n|---|";
    for (uint32_t q = 0; q < sh.ranks; ++q) t += "---|";
    t += "\n";
    for (uint32_t i = 0; i < cell.size(); ++i) {
        bool any = false;
        for (auto& c : cell[i]) any = any || !c.empty();
        if (!any) continue;
        t += "| " + std::to_string(i) + " |";
        for (auto& c : cell[i]) t += " " + c + " |";
        t += "\n";
    }
    return t;
}

}  // namespace kccl::coll::host

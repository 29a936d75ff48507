// kccl/collectives/host/groups.hpp — host side of communication groups: a checked table of every
// group's replicas, and a named error for a bad group size.
//
//   auto t = kccl::coll::host::group_table(CommGroup::orthogonal(4), 16);  // t[g] = replicas of g
//
// Throws kccl::coll::host::BadGroup (what(): the kind, k, N, the rule, and the allowed sizes) for
// any group validate() rejects.
#pragma once

#include <collectives/groups.hpp>
#include <common/host/error.hpp>

#include <string>
#include <vector>

namespace kccl::coll::host {

struct BadGroup : ErrorOf<Errc::plan> {
    GroupError error;
    BadGroup(GroupError e, const std::string& what) : ErrorOf(what), error(e) {}
};

inline std::string group_name(CommGroup g) {
    switch (g.kind) {
        case GroupKind::all: return "all()";
        case GroupKind::consecutive: return "consecutive(" + std::to_string(g.size) + ")";
        case GroupKind::orthogonal: return "orthogonal(" + std::to_string(g.size) + ")";
    }
    return "?";
}

/// Throws BadGroup unless g is a valid group of `replicas` replicas.
inline void check_group(CommGroup g, uint32_t replicas) {
    const GroupError e = validate(g, replicas);
    if (e == GroupError::ok) return;
    std::string allowed;
    for (uint32_t k = 1; k <= replicas; ++k)
        if (replicas % k == 0) allowed += (allowed.empty() ? "" : ", ") + std::to_string(k);
    throw BadGroup(e, "communication group " + group_name(g) + " over " + std::to_string(replicas) +
                          " replicas: " + group_error_message(e) +
                          (replicas ? " Allowed sizes for N=" + std::to_string(replicas) + ": " + allowed + "." : ""));
}

/// table[g][i] = replica that is rank i of group g.
inline std::vector<std::vector<uint32_t>> group_table(CommGroup g, uint32_t replicas) {
    check_group(g, replicas);
    std::vector<std::vector<uint32_t>> t(num_groups(g, replicas));
    for (uint32_t grp = 0; grp < t.size(); ++grp)
        for (uint32_t i = 0; i < group_size(g, replicas); ++i) t[grp].push_back(member(g, replicas, grp, i));
    return t;
}

}  // namespace kccl::coll::host

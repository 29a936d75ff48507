// kccl/collectives/groups.hpp — communication groups: which replicas (ranks of the whole job) run
// one collective together. GCL's three kinds (Graphcore's GCL documentation, section 3.2):
//
//   all()            one group of every replica                 N=16: {0..15}
//   consecutive(k)   N/k groups of k neighbours in replica order  {0,1,2,3} {4,5,6,7} ...
//   orthogonal(k)    N/k groups of k replicas with stride m=N/k   {0,4,8,12} {1,5,9,13} ...
//
// Contract
//   * `validate(g, N)` returns GroupError::ok or the named error (k == 0, k > N, k not dividing N,
//     N == 0); `group_error_message` gives a full sentence. Every other function requires a valid
//     group (KCCL_ASSERT on device builds with asserts; the host wrapper in host/groups.hpp throws
//     kccl::coll::host::BadGroup with the message instead).
//   * Within a group, members are numbered 0..k-1 in increasing replica order; that number is the
//     collective's rank, so a ring over a group visits its replicas in replica order.
//   * consecutive(N) == all(); orthogonal(1) and consecutive(1) give N singleton groups.
//   * C++17, freestanding, constexpr.
#pragma once

#include <hal/config.hpp>

#include <stdint.h>

namespace kccl::coll {

enum class GroupKind : uint8_t { all, consecutive, orthogonal };

struct CommGroup {
    GroupKind kind = GroupKind::all;
    uint32_t size = 0;  ///< k (ignored for all)

    static constexpr CommGroup all() { return {GroupKind::all, 0}; }
    static constexpr CommGroup consecutive(uint32_t k) { return {GroupKind::consecutive, k}; }
    static constexpr CommGroup orthogonal(uint32_t k) { return {GroupKind::orthogonal, k}; }
};

enum class GroupError : uint8_t { ok, no_replicas, zero_size, larger_than_replicas, not_a_divisor };

constexpr const char* group_error_message(GroupError e) {
    switch (e) {
        case GroupError::ok: return "The group is valid.";
        case GroupError::no_replicas: return "A communication group needs at least one replica.";
        case GroupError::zero_size:
            return "consecutive(k) and orthogonal(k) need a group size k of at least 1.";
        case GroupError::larger_than_replicas:
            return "The group size k is larger than the number of replicas; k must be at most N.";
        case GroupError::not_a_divisor:
            return "The group size k does not divide the number of replicas N; k must be a divisor "
                   "of N so that every replica is in exactly one group.";
    }
    return "?";
}

constexpr GroupError validate(CommGroup g, uint32_t replicas) {
    if (replicas == 0) return GroupError::no_replicas;
    if (g.kind == GroupKind::all) return GroupError::ok;
    if (g.size == 0) return GroupError::zero_size;
    if (g.size > replicas) return GroupError::larger_than_replicas;
    if (replicas % g.size != 0) return GroupError::not_a_divisor;
    return GroupError::ok;
}

/// k: replicas per group.
constexpr uint32_t group_size(CommGroup g, uint32_t replicas) {
    KCCL_ASSERT(validate(g, replicas) == GroupError::ok, "invalid communication group");
    return g.kind == GroupKind::all ? replicas : g.size;
}

/// N / k.
constexpr uint32_t num_groups(CommGroup g, uint32_t replicas) { return replicas / group_size(g, replicas); }

/// The group replica `r` belongs to.
constexpr uint32_t group_of(CommGroup g, uint32_t replicas, uint32_t r) {
    const uint32_t k = group_size(g, replicas), m = replicas / k;
    switch (g.kind) {
        case GroupKind::all: return 0;
        case GroupKind::consecutive: return r / k;
        case GroupKind::orthogonal: return r % m;
    }
    return 0;
}

/// Replica `r`'s rank inside its group (0..k-1, replica order).
constexpr uint32_t rank_in_group(CommGroup g, uint32_t replicas, uint32_t r) {
    const uint32_t k = group_size(g, replicas), m = replicas / k;
    switch (g.kind) {
        case GroupKind::all: return r;
        case GroupKind::consecutive: return r % k;
        case GroupKind::orthogonal: return r / m;
    }
    return 0;
}

/// The replica that is rank `i` of group `grp`.
constexpr uint32_t member(CommGroup g, uint32_t replicas, uint32_t grp, uint32_t i) {
    const uint32_t k = group_size(g, replicas), m = replicas / k;
    switch (g.kind) {
        case GroupKind::all: return i;
        case GroupKind::consecutive: return grp * k + i;
        case GroupKind::orthogonal: return grp + i * m;
    }
    return 0;
}

}  // namespace kccl::coll

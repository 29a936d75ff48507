// examples/mcast_broadcast/mcast_collective_kernels.hpp — a device kernel that runs the
// collectives' NoC-multicast broadcast (collectives/mcast_broadcast.hpp) on a rectangle of Tensix
// cores: every core of the group runs it. Compiled for the tt-metal Tensix cores by
// scripts/shim_gate.sh (kccl_gate_instantiate below); tests/collectives/mcast_broadcast_test.cpp
// runs the same protocol on the emulation.
//
// Runtime args: the plan's arguments (coll::host::plan_mcast_broadcast, mcast_bcast_args words),
// then root, input L1, output L1, bytes.
#pragma once

#include <collectives/mcast_broadcast.hpp>

#include <stdint.h>

namespace mcast_collective {

template <class H>
void broadcast(H& hal) {
    const kccl::coll::McastBcastArgs a = kccl::coll::load_mcast_bcast_args(hal, 0);
    const uint32_t own = kccl::coll::mcast_bcast_args;
    kccl::coll::mcast_broadcast(hal, a, hal.arg(own + 0), hal.arg(own + 1), hal.arg(own + 2), hal.arg(own + 3));
}

}  // namespace mcast_collective

template <class H>
void kccl_gate_instantiate(H& hal) {
    mcast_collective::broadcast(hal);
}

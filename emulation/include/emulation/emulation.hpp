// kccl/emulation/emulation.hpp — everything needed to run device kernels on an emulated cluster.
//
// Cluster + topologies (topology.hpp, cluster.hpp), the backend (hal.hpp), the launcher and
// watchdog (launcher.hpp), and the wait policy (wait.hpp). Host-only: C++20, threads, Linux.
#pragma once

#include "cluster.hpp"
#include "hal.hpp"
#include "launcher.hpp"
#include "topology.hpp"
#include "wait.hpp"

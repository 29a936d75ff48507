// kccl/emulation/emulation.hpp — everything needed to run device kernels on an emulated cluster.
//
// Cluster + topologies (topology.hpp, cluster.hpp), the backend (hal.hpp), the launcher and
// watchdog (launcher.hpp; fiber engine: engine/scheduler.hpp, fiber/context.hpp), timing models
// (timing.hpp), traces (trace.hpp) and the wait policy (wait.hpp). Host-only: C++20, Linux.
#pragma once

#include "cluster.hpp"
#include "hal.hpp"
#include "launcher.hpp"
#include "timing.hpp"
#include "topology.hpp"
#include "trace.hpp"
#include "wait.hpp"

// kccl/collectives/collectives.hpp — everything a kernel needs to run collectives: element types,
// reduction operators, communication groups, the schedule vocabulary, the link concept and its
// models (IPCQ, EDM, the chip fabric), the primitives, the executor and the per-worker slice runner. Algorithms live in
// collectives/algorithms/ (include the ones you run). Host-side builders are in collectives/host/.
#pragma once

#include "types.hpp"
#include "ops.hpp"
#include "groups.hpp"
#include "schedule.hpp"
#include "link.hpp"
#include "link_ipcq.hpp"
#include "link_edm.hpp"
#include "link_fabric.hpp"
#include "primitives.hpp"
#include "executor.hpp"
#include "sliced.hpp"

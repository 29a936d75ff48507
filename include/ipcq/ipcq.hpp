// kccl/ipcq/ipcq.hpp — everything device code needs for IPCQ: direction sets, the
// block layout, the trace hook and kccl::ipcq::Queues. Host builders live in ipcq/host/.
// See docs/ipcq.md for the API, memory layout, invariants and an author's cheat sheet.
#pragma once

#include "directions.hpp"
#include "layout.hpp"
#include "queues.hpp"
#include "trace.hpp"

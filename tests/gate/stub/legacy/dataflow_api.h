// tests/gate/stub/legacy/dataflow_api.h — stands for tt_metal/hw/inc/dataflow_api.h (before the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../shared/kccl_stub_dataflow.h"

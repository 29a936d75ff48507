// tests/gate/stub/current/api/dataflow/dataflow_api.h — stands for tt_metal/hw/inc/api/dataflow/dataflow_api.h (after the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../../shared/kccl_stub_dataflow.h"

// tests/gate/stub/current/internal/ethernet/dataflow_api.h — stands for tt_metal/hw/inc/internal/ethernet/dataflow_api.h (after the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../../shared/kccl_stub_eth_dataflow.h"

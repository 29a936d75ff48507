// tests/gate/stub/legacy/ethernet/dataflow_api.h — stands for tt_metal/hw/inc/ethernet/dataflow_api.h (before the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../shared/kccl_stub_eth_dataflow.h"

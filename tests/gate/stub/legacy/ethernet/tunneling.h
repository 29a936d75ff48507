// tests/gate/stub/legacy/ethernet/tunneling.h — stands for tt_metal/hw/inc/ethernet/tunneling.h (before the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../shared/kccl_stub_tunneling.h"

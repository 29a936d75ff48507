// tests/gate/stub/current/internal/ethernet/tunneling.h — stands for tt_metal/hw/inc/internal/ethernet/tunneling.h (after the late-2025 move).
// Declaration-only; see tests/gate/stub/README.md.
#pragma once

#include "../../../shared/kccl_stub_tunneling.h"

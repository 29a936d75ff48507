// tests/gate/stub/shared/kccl_stub_erisc_guard.h — tt-metal's Ethernet API exists only for
// active-Ethernet (ERISC) kernels. A Tensix build (COMPILE_FOR_BRISC / COMPILE_FOR_NCRISC) never
// sees it; the stub turns an attempt into a clear error instead of a silent success.
#pragma once

#if !defined(COMPILE_FOR_ERISC)
#error "kccl stub: the tt-metal Ethernet API is only available to active-Ethernet (ERISC) kernels, built with -DCOMPILE_FOR_ERISC; this is not an ERISC build"
#endif

// The examples that are device kernels only, instantiated on the emulation's HAL so that they
// compile against the installed package: built once per kernels header (KCCL_EXAMPLE_KERNELS, set by
// CMakeLists.txt), since each header has its own global kccl_gate_instantiate calling its kernels.
// (The source tree also compiles them for tt-metal's RISC-V cores and runs them in its tests.)
#include <emulation/emulation.hpp>

#include KCCL_EXAMPLE_KERNELS

template void kccl_gate_instantiate<kccl::emu::Hal>(kccl::emu::Hal&);

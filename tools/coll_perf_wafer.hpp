// coll_perf_wafer.hpp — the wafer-scale fabric mode of coll_perf (tools/coll_perf_wafer.cpp):
// `coll_perf --grid RxC ...` runs the reduce / allreduce / broadcast patterns of the Cerebras WSE
// reduce/allreduce thesis on the emulated PE fabric (emulation/wafer/) instead of the IPCQ / EDM
// collectives. The main tool only asks whether the command line wants this mode and hands over.
#pragma once

#include <string>

namespace kccl::coll_perf {

/// True if argv asks for the wafer fabric patterns (it contains --grid).
bool wafer_requested(int argc, char** argv);
/// Parses, checks and runs the fabric mode. Exit codes as coll_perf: 0 every row verified,
/// 1 a row failed or had wrong elements, 2 bad options (message on stderr). Never throws.
int wafer_main(int argc, char** argv);
/// Every fabric pattern's name, space-separated (coll_perf --help).
std::string wafer_patterns();

}  // namespace kccl::coll_perf

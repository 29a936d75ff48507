// coll_perf_fabric.hpp — coll_perf's `--transport fabric` (tools/coll_perf_fabric.cpp): the
// collectives over the chip fabric (include/fabric/, docs/fabric.md), where every rank is
// reachable, on any topology the emulation builds (line, ring, mesh, T3000, Galaxy).
#pragma once

namespace kccl::coll_perf {

/// True if the command line asks for `--transport fabric` (the fabric tool then parses it whole).
bool wants_fabric(int argc, char** argv);

/// The fabric tool's main: options, checks, table. Exit codes as coll_perf's: 0 every row ran and
/// verified, 1 a row failed or had wrong elements, 2 bad options (a message on stderr).
int fabric_main(int argc, char** argv, const char* prog);

}  // namespace kccl::coll_perf

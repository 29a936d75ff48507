// Forwarding header: the helpers are installed with the package (target kccl::testing,
// <testing/ipcq_harness.hpp>); the project's tests use that one copy.
#pragma once
#include "testing/include/testing/ipcq_harness.hpp"

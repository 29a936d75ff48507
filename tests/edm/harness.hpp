// Forwarding header: the helpers are installed with the package (target kccl::testing,
// <testing/edm_harness.hpp>); the project's tests use that one copy.
#pragma once
#include "testing/include/testing/edm_harness.hpp"

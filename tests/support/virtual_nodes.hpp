// Helpers of the tests that run real threads on a virtual topology (DESIGN.md §7).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "rt/rt.hpp"

namespace numart_test {

// A runtime configuration on the synthetic hwloc topology `spec` (for example
// "pack:2 [numa] core:2 pu:1": two nodes of two cores) with `workers` workers and `tune` as
// RT_TUNE would give it.
inline rt::config synthetic_nodes(const std::string& spec, int workers, const std::string& tune) {
  rt::config c;
  c.topology = rt::topology_source::synthetic(spec);
  c.workers = workers;
  c.tune = tune;
  return c;
}

// Polls `done` for up to 60 s (a liveness bound, not a timing expectation).
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

}  // namespace numart_test

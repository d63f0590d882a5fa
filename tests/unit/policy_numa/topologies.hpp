// Topologies of tests/data/topologies, loaded once per test binary.
#pragma once

#include <map>
#include <string>

#include "topology/topology.hpp"

namespace rt::policy::test {

inline const topo::topology& machine(const std::string& name) {
  static std::map<std::string, topo::topology> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache
             .emplace(name, topo::topology::load(topo::source::parse("xml:" + std::string(NUMART_TOPOLOGY_DIR) + "/" +
                                                                     name + ".xml")))
             .first;
  }
  return it->second;
}

}  // namespace rt::policy::test

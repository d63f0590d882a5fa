#include "policy/wake.hpp"

#include "core/satmath.hpp"

namespace rt::policy {

using core::sat_mul;

const char* to_string(numa_affine a) {
  switch (a) {
    case numa_affine::node_idle:
      return "node_idle";
    case numa_affine::balanced:
      return "balanced";
    case numa_affine::unbalanced:
      return "unbalanced";
  }
  return "?";
}

const char* to_string(affine_outcome a) {
  switch (a) {
    case affine_outcome::not_attempted:
      return "not_attempted";
    case affine_outcome::share_cache:
      return "share_cache";
    case affine_outcome::node_idle:
      return "node_idle";
    case affine_outcome::node_balanced:
      return "node_balanced";
    case affine_outcome::node_unbalanced:
      return "node_unbalanced";
    case affine_outcome::numa_preferred:
      return "numa_preferred";
    case affine_outcome::unchecked:
      return "unchecked";
  }
  return "?";
}

const char* to_string(wake_reason r) {
  switch (r) {
    case wake_reason::target_idle:
      return "target_idle";
    case wake_reason::prev_idle:
      return "prev_idle";
    case wake_reason::idle_scan:
      return "idle_scan";
    case wake_reason::busy_target:
      return "busy_target";
    case wake_reason::idlest:
      return "idlest";
  }
  return "?";
}

numa_affine numa_wake_affine(node_stats prev, node_stats this_node, std::uint64_t imbalance_pct, bool sync,
                             std::uint64_t task_load, std::uint64_t current_load) {
  // I-WAKE-3: every subtraction below saturates at 0, every product at the maximum.
  // Sync: subtract the (maximum possible) effect of the spawner's running task from its node.
  if (sync) core::lsub_positive(this_node.load, current_load);

  // In low-load situations, where this node is idle because of the sync discount, move the
  // task: moving to an idle node does not create a bad imbalance.
  if (this_node.load == 0) return numa_affine::node_idle;

  const std::uint64_t this_eff = sat_mul(sat_mul(kPercentScale, prev.capacity),
                                         core::sat_add(this_node.load, task_load));
  const std::uint64_t prev_eff = sat_mul(sat_mul(half_imbalance_scale(imbalance_pct), this_node.capacity),
                                         core::sub_positive(prev.load, task_load));
  return this_eff <= prev_eff ? numa_affine::balanced : numa_affine::unbalanced;
}

}  // namespace rt::policy

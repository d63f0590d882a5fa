#include "numa/context.hpp"

#include <stdexcept>
#include <string>

#include "numa/fault_sampler.hpp"

namespace rt::numa {

namespace detail {
constinit thread_local context_cells tls_context __attribute__((tls_model("initial-exec")));
}  // namespace detail

void enter_sampling(sample_ring* ring, int node) {
  if (ring == nullptr) throw std::invalid_argument("numa::enter_sampling: the sample ring is null");
  if (node < 0 || node > INT16_MAX)
    throw std::invalid_argument("numa::enter_sampling: node " + std::to_string(node) + " is outside [0, 32767]");
  auto& c = detail::tls_context;
  c.node.store(static_cast<std::int16_t>(node), sync::native::relaxed);
  c.running_group.store(nullptr, sync::native::relaxed);
  c.ring.store(ring, sync::native::release);  // I-SAMPLE-8: node before ring
  keep_fault_handler_first();
}

void leave_sampling() noexcept {
  auto& c = detail::tls_context;
  c.ring.store(nullptr, sync::native::release);
  c.running_group.store(nullptr, sync::native::relaxed);
}

}  // namespace rt::numa

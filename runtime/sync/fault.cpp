#include "sync/fault.hpp"

#include <thread>

#include "core/rng.hpp"
#include "sync/atomics.hpp"

namespace rt::sync::fault {

namespace {
// The armed plan: written by arm() before the runtimes under test start their threads, read
// by their points (the thread start orders it, so relaxed loads see it).
plan g_plan;
std::atomic<std::uint64_t> g_injected{0};
std::atomic<std::uint64_t> g_thread_seq{0};

core::rng& thread_rng() {
  thread_local core::rng r(g_plan.seed ^ (0x9e3779b97f4a7c15ull * (g_thread_seq.fetch_add(1) + 1)));
  return r;
}
}  // namespace

namespace detail {
std::atomic<bool> g_armed{false};

void hit(site s) noexcept {
  if (g_plan.at_point != nullptr) g_plan.at_point(s, g_plan.at_point_arg);
  core::rng& r = thread_rng();
  if (r.next_below(1000) >= g_plan.jitter_per_mille) return;
  g_injected.fetch_add(1, std::memory_order_relaxed);
  if (r.next_below(4) == 0) {
    std::this_thread::yield();
    return;
  }
  const std::uint64_t spins = r.next_below(g_plan.max_spin + 1u);
  for (std::uint64_t i = 0; i < spins; ++i) native::cpu_relax();
}

bool fail_thread_start(int worker) noexcept { return worker == g_plan.fail_thread_start; }
}  // namespace detail

void arm(const plan& p) noexcept {
  g_plan = p;
  g_injected.store(0, std::memory_order_relaxed);
  detail::g_armed.store(true, std::memory_order_relaxed);
}

void disarm() noexcept { detail::g_armed.store(false, std::memory_order_relaxed); }

std::uint64_t injected() noexcept { return g_injected.load(std::memory_order_relaxed); }

}  // namespace rt::sync::fault

// SIGUSR2 -> stats file: docs/observability.md, runtime/worker/stats_signal.hpp.
#include "worker/stats_signal.hpp"

#include <signal.h>

#include <cstdint>
#include <mutex>

#include "sync/futex.hpp"

namespace rt::detail {

namespace {

// g_generation: bumped by the handler and by a stopping watcher, so that a sleeping watcher's
// futex wait returns; the watchers sleep on it. g_signals: bumped by the handler only; a
// watcher writes when it moved, so that another runtime's watcher stopping writes nothing.
// Relaxed RMWs: the futex wake orders nothing, the watchers only compare counts.
sync::native::atomic<std::uint32_t> g_generation{0};
sync::native::atomic<std::uint32_t> g_signals{0};
struct sigaction g_previous {};

void on_sigusr2(int sig, siginfo_t* info, void* ctx) {
  g_signals.fetch_add(1, sync::native::relaxed);
  g_generation.fetch_add(1, sync::native::relaxed);
  sync::native_futex::wake_all(g_generation);
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr)
    g_previous.sa_sigaction(sig, info, ctx);
  else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != nullptr)
    g_previous.sa_handler(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigusr2;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, &g_previous);
  });
}

}  // namespace

stats_signal_watcher::stats_signal_watcher(std::function<void()> write) : write_(std::move(write)) {
  install_once();
  // Read here, not in the thread: a signal between the start of the thread and its first read
  // would otherwise be taken for the state to wait from, and lost.
  const std::uint32_t generation = g_generation.load(sync::native::relaxed);
  const std::uint32_t signals = g_signals.load(sync::native::relaxed);
  thread_ = std::thread([this, generation, signals] { run(generation, signals); });
}

stats_signal_watcher::~stats_signal_watcher() {
  stop_.store(true, sync::native::release);
  g_generation.fetch_add(1, sync::native::relaxed);
  sync::native_futex::wake_all(g_generation);
  thread_.join();
}

void stats_signal_watcher::run(std::uint32_t generation, std::uint32_t signals) {
  for (;;) {
    sync::native_futex::wait(g_generation, generation);
    generation = g_generation.load(sync::native::relaxed);
    if (stop_.load(sync::native::acquire)) return;
    const std::uint32_t now = g_signals.load(sync::native::relaxed);
    if (now == signals) continue;  // spurious, or another watcher stopping
    signals = now;
    write_();
  }
}

}  // namespace rt::detail

// SIGUSR2 writes the stats file (config::stats_on_signal, RT_STATS_SIGNAL=1; off by default;
// docs/observability.md). The handler only bumps a process-wide generation and wakes the
// watchers (a futex wake is async-signal-safe); each runtime that asked for it has a watcher
// thread that writes its stats file when the generation moves. A SIGUSR2 handler the process
// had before is still called, after the bump.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

#include "sync/atomics.hpp"

namespace rt::detail {

class stats_signal_watcher {
 public:
  // Installs the handler (once per process) and starts the thread, which calls `write` for
  // every SIGUSR2 (signals that arrive while it writes are folded into one more write).
  explicit stats_signal_watcher(std::function<void()> write);
  ~stats_signal_watcher();  // stops and joins the thread
  stats_signal_watcher(const stats_signal_watcher&) = delete;
  stats_signal_watcher& operator=(const stats_signal_watcher&) = delete;

 private:
  // The counts as the constructor read them, before the thread started: a SIGUSR2 that
  // arrives after the constructor and before the thread first waits is still written.
  void run(std::uint32_t generation, std::uint32_t signals);
  std::function<void()> write_;
  // 1 asks the thread to stop: written by the destructor (release), read by the thread
  // (acquire) after each wake-up.
  sync::native::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rt::detail

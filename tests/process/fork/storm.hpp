// Load for the fork tests: an outside thread that keeps a runtime's workers busy with a spawn
// storm (root tasks that each fan out into a task_group), and a gate that holds one task
// unfinished across the fork. Both keep a ledger so the parent can check afterwards that its
// runtime lost and duplicated nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "rt/rt.hpp"

namespace fork_test {

class storm {
 public:
  static constexpr std::uint64_t kFanout = 16;

  explicit storm(rt::runtime& r) : thread_([this, &r] { run(r); }) {}
  storm(const storm&) = delete;
  storm& operator=(const storm&) = delete;
  ~storm() { stop(); }

  // True once `leaves` leaf tasks have run; false if that did not happen within 20 s (a liveness
  // bound so that a stuck runtime fails the test instead of hanging it, not a speed check).
  bool wait_until_running(std::uint64_t leaves = 1000) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (leaves_.load() < leaves) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // After stop(): every root that was joined ran all its leaves exactly once.
  std::uint64_t roots() const { return roots_.load(); }
  std::uint64_t leaves() const { return leaves_.load(); }

 private:
  void run(rt::runtime& r) {
    while (!stop_.load()) {
      auto h = r.spawn([this] {
        rt::task_group g;
        for (std::uint64_t k = 0; k < kFanout; ++k) g.spawn([this] { leaves_.fetch_add(1); });
        g.wait();
      });
      h.join();
      roots_.fetch_add(1);
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> roots_{0};
  std::atomic<std::uint64_t> leaves_{0};
  std::thread thread_;
};

// A gate that tasks wait at until the parent opens it; `arrived` counts the waiters.
class gate {
 public:
  void pass() {
    arrived_.fetch_add(1);
    open_.wait(false);
  }
  void open() {
    open_.store(true);
    open_.notify_all();
  }
  // True once `n` tasks wait at the gate (liveness bound as in storm::wait_until_running).
  bool wait_for_arrivals(int n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived_.load() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

 private:
  std::atomic<bool> open_{false};
  std::atomic<int> arrived_{0};
};

}  // namespace fork_test

// Helpers for the sampling tests: page-aligned anonymous mappings, touching memory through
// volatile, and a thread that runs with a sampling context like a worker does.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "numa/context.hpp"
#include "numa/sample_ring.hpp"

namespace sampling_test {

inline std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// An anonymous read-write mapping of `pages` pages, unmapped on destruction.
class mapping {
 public:
  explicit mapping(std::size_t pages) : bytes_(pages * page()) {
    p_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) throw std::runtime_error("mmap failed");
  }
  ~mapping() { ::munmap(p_, bytes_); }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  char* data() const { return static_cast<char*>(p_); }
  char* page_at(std::size_t i) const { return data() + i * page(); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  void* p_;
};

inline char read_byte(const char* p) { return *static_cast<const volatile char*>(p); }
inline void write_byte(char* p, char v) { *static_cast<volatile char*>(p) = v; }

// Runs fn on a new thread that has a sampling context (ring, node, running group), as a
// worker running a task of `group` does.
inline void run_as_worker(rt::numa::sample_ring& ring, int node, const void* group, const std::function<void()>& fn) {
  std::thread t([&] {
    rt::numa::enter_sampling(&ring, node);
    rt::numa::set_running_group(group);
    fn();
    rt::numa::set_running_group(nullptr);
    rt::numa::leave_sampling();
  });
  t.join();
}

inline std::vector<rt::numa::sample> drain(rt::numa::sample_ring& ring) {
  std::vector<rt::numa::sample> out;
  ring.drain([&](const rt::numa::sample& s) { out.push_back(s); });
  return out;
}

}  // namespace sampling_test

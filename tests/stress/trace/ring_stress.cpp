// Concurrent producer and readers (docs/design/trace.md I-TRACE-1..5). The producer pushes
// numbered events whose every field derives from the number; readers snapshot the ring while it
// wraps and check each snapshot: consecutive numbers ending at the last published event, every
// field consistent (a torn copy would mix two events), and the drop count accounting for the
// rest. Runs as many threads as asked, oversubscribing the 2-core machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "trace/events.hpp"
#include "trace/json.hpp"
#include "trace/ring.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"

namespace {

using rt::trace::event;
using rt::trace::ring;

event numbered(std::uint64_t n) {
  return rt::trace::ev::spawn(n * 3 + 1, n, ~n, static_cast<int>(n & 0x7fff), static_cast<int>((n >> 15) & 0x7fff),
                              static_cast<rt::trace::wake_affine>(n % 3), static_cast<rt::trace::wake_path>(n % 6),
                              static_cast<int>(n % 1000));
}

bool consistent(const event& e) {
  const std::uint64_t n = e.a;
  const event want = numbered(n);
  return e.ts == want.ts && e.b == want.b && e.c == want.c && e.d == want.d && e.g == want.g && e.e == want.e && e.f == want.f &&
         e.what == want.what;
}

struct reader_stats {
  std::uint64_t snapshots = 0;
  std::uint64_t events_checked = 0;
  std::uint64_t torn_or_out_of_order = 0;
  std::uint64_t bad_accounting = 0;
};

void run(std::size_t capacity, std::uint64_t events, int readers) {
  ring r(capacity);
  std::atomic<bool> done{false};
  std::vector<reader_stats> stats(static_cast<std::size_t>(readers));
  std::vector<std::thread> threads;
  for (int i = 0; i < readers; ++i) {
    threads.emplace_back([&, i] {
      reader_stats& st = stats[static_cast<std::size_t>(i)];
      std::uint64_t last_written = 0;
      while (true) {
        // The snapshot after `done` is taken from a quiescent ring: it keeps a whole ring's worth.
        const bool last = done.load(std::memory_order_acquire);
        const ring::snapshot s = r.read();
        ++st.snapshots;
        if (s.written < last_written || s.events.size() > r.capacity() || s.dropped != s.written - s.events.size()) ++st.bad_accounting;
        last_written = s.written;
        for (std::size_t k = 0; k < s.events.size(); ++k) {
          ++st.events_checked;
          if (!consistent(s.events[k]) || (k > 0 && s.events[k].a != s.events[k - 1].a + 1)) ++st.torn_or_out_of_order;
        }
        if (!s.events.empty() && s.events.back().a + 1 != s.written) ++st.bad_accounting;
        if (last) break;
      }
    });
  }
  for (std::uint64_t n = 0; n < events; ++n) r.push(numbered(n));
  done.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();

  std::uint64_t checked = 0;
  for (const reader_stats& st : stats) {
    EXPECT_GE(st.snapshots, 1u);
    EXPECT_GE(st.events_checked, std::min<std::uint64_t>(events, r.capacity()));
    EXPECT_EQ(st.torn_or_out_of_order, 0u);
    EXPECT_EQ(st.bad_accounting, 0u);
    checked += st.events_checked;
  }
  EXPECT_GT(checked, 0u);
  const ring::snapshot final_snapshot = r.read();
  EXPECT_EQ(final_snapshot.written, events);
  ASSERT_EQ(final_snapshot.events.size(), std::min<std::uint64_t>(events, r.capacity()));
  EXPECT_EQ(final_snapshot.events.back().a, events - 1);
}

TEST(trace_ring_stress, one_reader_while_a_small_ring_wraps) { run(64, 2'000'000, 1); }
TEST(trace_ring_stress, three_readers_oversubscribed) { run(256, 2'000'000, 3); }
TEST(trace_ring_stress, large_ring_wrapping_a_few_times) { run(1 << 16, 400'000, 2); }

// Two workers emit task and spawn events while a third thread dumps the trace again and again:
// every dump is a complete numart trace, and every task slice in it belongs to a started task.
TEST(trace_recorder_stress, dumps_during_a_run_always_parse) {
  rt::trace::trace_layout layout;
  layout.worker_node = {0, 1};
  layout.node_package = {0, 1};
  rt::trace::recorder rec(layout, 1024);
  constexpr std::uint64_t kTasks = 200'000;
  std::atomic<int> running{2};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      rt::trace::ring& r = rec.for_worker(w);
      for (std::uint64_t i = 0; i < kTasks; ++i) {
        const std::uint64_t id = (static_cast<std::uint64_t>(w) << 32) | (i + 1);
        rt::trace::spawn(r, id, 7, w, w, rt::trace::wake_affine::none, rt::trace::wake_path::local, 0);
        rt::trace::task_start(r, id, 7, w);
        if (i % 64 == 0) rt::trace::park(r, rt::trace::park_reason::idle);
        if (i % 64 == 0) rt::trace::unpark(r, rt::trace::unpark_reason::woken, 1 - w);
        rt::trace::task_end(r, id, 7);
      }
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  int dumps = 0;
  std::string failure;
  do {
    std::ostringstream os;
    rec.write_chrome_json(os);
    try {
      const rt::trace::parsed_trace t = rt::trace::parse_trace(os.str());
      for (const auto& task : t.tasks) {
        if ((task.id >> 32) != static_cast<std::uint64_t>(task.worker)) failure = "a task slice on the wrong worker";
      }
    } catch (const rt::trace::format_error& e) {
      failure = e.what();
    }
    ++dumps;
  } while (running.load(std::memory_order_acquire) > 0 && failure.empty());
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(failure, "");
  EXPECT_GE(dumps, 1);
  std::ostringstream os;
  rec.write_chrome_json(os);
  const rt::trace::parsed_trace t = rt::trace::parse_trace(os.str());
  EXPECT_EQ(t.dropped, 2 * (kTasks * 3 + 2 * ((kTasks + 63) / 64)) - 2 * 1024);
  for (const auto& task : t.tasks) EXPECT_FALSE(task.open);
}

}  // namespace

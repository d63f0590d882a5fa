// A synthetic trace for 4 workers on 2 nodes (workers 0-1 on node 0 / package 0, workers 2-3 on
// node 1 / package 1), built with the recorder's own API and fixed timestamps, so that tests
// know every expected number. Also used by tests/process/trace_cli.
//
// Timeline (ns; the trace's origin is 100, its end 5000):
//   w0  runs root task 0x10 (jvm-1) 500-5000; inside it spawns 1..4 (jvm-1) at 1000/1100/1200/1300,
//       runs 4 at 1400-1900 and 3 at 2000-2500, runs 0x22 (jvm-2) 3500-3600, spawns 0x23 (jvm-2)
//       at 4600 and runs it 4700-4800 (jvm-2's home is node 0 by then)
//   w1  steals 2 from w0 (llc) at 1500, runs it 1510-2510; starts 0x40 (jvm-1) at 4500, still open
//   w2  parked 100-1590 (woken by w0); steals 1 from w0 (remote) at 1600, runs it 1610-2000;
//       runs 0x21 (jvm-2) 3200-3300; parks at 3350, still parked at the end
//   w3  parked 200-3000; spawns 0x21 at 3100 (affine, idle scan of 3, target w2) and hands it to
//       w2's mailbox at 3105; spawns 0x22 at 3400 (not affine, busy target w0, scan of 4)
//   balancer: moves jvm-2's home from node 1 to node 0 at 4000 (score 77), migrates 128 pages at 4100
#pragma once

#include <cstdint>

#include "trace/trace.hpp"

namespace trace_test {

inline constexpr std::uint64_t kJvm1 = 0x100;
inline constexpr std::uint64_t kJvm2 = 0x200;

inline rt::trace::trace_layout synthetic_layout() {
  rt::trace::trace_layout l;
  l.worker_node = {0, 0, 1, 1};
  l.node_package = {0, 1};
  l.name = "synthetic";
  return l;
}

inline void fill_synthetic(rt::trace::recorder& r) {
  namespace ev = rt::trace::ev;
  using rt::trace::park_reason;
  using rt::trace::steal_tier;
  using rt::trace::unpark_reason;
  using rt::trace::wake_affine;
  using rt::trace::wake_path;
  r.name_group(kJvm1, "jvm-1");
  r.name_group(kJvm2, "jvm-2");

  rt::trace::ring& w0 = r.for_worker(0);
  w0.push(ev::task_start(500, 0x10, kJvm1, 0));
  for (std::uint64_t t = 1; t <= 4; ++t) w0.push(ev::spawn(900 + 100 * t, t, kJvm1, 0, 0, wake_affine::none, wake_path::local, 0));
  w0.push(ev::task_start(1400, 4, kJvm1, 0));
  w0.push(ev::task_end(1900, 4, kJvm1));
  w0.push(ev::task_start(2000, 3, kJvm1, 0));
  w0.push(ev::task_end(2500, 3, kJvm1));
  w0.push(ev::task_start(3500, 0x22, kJvm2, 1));
  w0.push(ev::task_end(3600, 0x22, kJvm2));
  w0.push(ev::spawn(4600, 0x23, kJvm2, 0, 0, wake_affine::none, wake_path::local, 0));
  w0.push(ev::task_start(4700, 0x23, kJvm2, 0));
  w0.push(ev::task_end(4800, 0x23, kJvm2));
  w0.push(ev::task_end(5000, 0x10, kJvm1));

  rt::trace::ring& w1 = r.for_worker(1);
  w1.push(ev::steal(1500, 2, 0, steal_tier::llc));
  w1.push(ev::task_start(1510, 2, kJvm1, 0));
  w1.push(ev::task_end(2510, 2, kJvm1));
  w1.push(ev::task_start(4500, 0x40, kJvm1, 0));

  rt::trace::ring& w2 = r.for_worker(2);
  w2.push(ev::park(100, park_reason::idle));
  w2.push(ev::unpark(1590, unpark_reason::woken, 0));
  w2.push(ev::steal(1600, 1, 0, steal_tier::remote));
  w2.push(ev::task_start(1610, 1, kJvm1, 0));
  w2.push(ev::task_end(2000, 1, kJvm1));
  w2.push(ev::task_start(3200, 0x21, kJvm2, 1));
  w2.push(ev::task_end(3300, 0x21, kJvm2));
  w2.push(ev::park(3350, park_reason::idle));

  rt::trace::ring& w3 = r.for_worker(3);
  w3.push(ev::park(200, park_reason::idle));
  w3.push(ev::unpark(3000, unpark_reason::woken, -1));
  w3.push(ev::spawn(3100, 0x21, kJvm2, 2, 2, wake_affine::affine, wake_path::idle_scan, 3));
  w3.push(ev::mailbox_handoff(3105, 0x21, 2));
  w3.push(ev::spawn(3400, 0x22, kJvm2, 0, 0, wake_affine::not_affine, wake_path::busy_target, 4));

  rt::trace::ring& bal = r.balancer();
  bal.push(ev::balancer_move(4000, kJvm2, 1, 0, 77));
  bal.push(ev::page_migration(4100, kJvm2, 1, 0, 128));
}

}  // namespace trace_test

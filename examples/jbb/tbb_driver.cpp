// numart_jbb on oneTBB: the same warehouses, data, deck and chains; each transaction is a task
// enqueued into a tbb::task_arena (tbb::task_arena::enqueue), the next card enqueued when it ends.
//
// oneTBB knows no (virtual) NUMA nodes, so the node a transaction runs on is defined here:
//   --tbb-arenas default:  one arena of `workers` threads; a thread counts as node
//                          (this_task_arena::current_thread_index() mod nodes). Of the mappings we
//                          tried this is the fairest: threads spread evenly over the nodes,
//                          as numart's workers are.
//   --tbb-arenas per-node: one arena per node with as many threads as numart has workers there;
//                          a warehouse's chain runs in the arena of the node holding most of its
//                          data, and arena k's threads count as node k.
#include <memory>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "drivers.hpp"
#include "rt/rt.hpp"

namespace jbb {

namespace {

struct chain {
  tbb::task_arena* arena;
  int node;  // the arena's node, or -1: from the thread's slot index
  warehouse* wh;
  const machine* m;
  run_control* ctl;
};

void enqueue_next(chain c) {
  c.arena->enqueue([c] {
    const int node = c.node >= 0 ? c.node : tbb::this_task_arena::current_thread_index() % c.m->nodes;
    if (c.wh->step(node, *c.m, *c.ctl))
      enqueue_next(c);
    else
      c.ctl->chain_done();  // I-JBB-2: the chain's last access to run_control
  });
}

}  // namespace

run_result run_onetbb(workload& w, const options& o, rt::runtime& runtime, std::ostream& progress) {
  const int workers = runtime.workers();
  const machine& m = w.m();
  // `workers` TBB worker threads: the limit counts the (here idle) main thread as one.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(workers) + 1);

  std::vector<std::unique_ptr<tbb::task_arena>> arenas;
  std::vector<int> arena_of_node(static_cast<std::size_t>(m.nodes), -1);
  if (o.arenas == tbb_arenas::single) {
    arenas.push_back(std::make_unique<tbb::task_arena>(workers, 0));
  } else {
    std::vector<int> per_node(static_cast<std::size_t>(m.nodes), 0);
    for (int node : runtime.stats().worker_node)
      if (node >= 0 && node < m.nodes) ++per_node[static_cast<std::size_t>(node)];
    for (int n = 0; n < m.nodes; ++n) {
      if (per_node[static_cast<std::size_t>(n)] == 0) continue;  // a node without cores
      arena_of_node[static_cast<std::size_t>(n)] = static_cast<int>(arenas.size());
      arenas.push_back(std::make_unique<tbb::task_arena>(per_node[static_cast<std::size_t>(n)], 0));
    }
  }
  // The node whose arena runs data on node `n`: itself, or the nearest node with cores.
  const auto arena_node = [&](int n) {
    int best = -1;
    for (int k = 0; k < m.nodes; ++k)
      if (arena_of_node[static_cast<std::size_t>(k)] >= 0 && (best < 0 || m.dist(n, k) < m.dist(n, best))) best = k;
    return best;
  };

  run_control ctl(static_cast<std::ptrdiff_t>(w.warehouse_count()));
  for (int i = 0; i < w.instances(); ++i)
    for (int k = 0; k < w.warehouses_per_instance(); ++k) {
      warehouse& wh = w.at(i, k);
      if (o.arenas == tbb_arenas::single) {
        enqueue_next(chain{arenas.front().get(), -1, &wh, &m, &ctl});
      } else {
        const int node = arena_node(wh.data_node(m));
        enqueue_next(chain{arenas[static_cast<std::size_t>(arena_of_node[static_cast<std::size_t>(node)])].get(), node,
                           &wh, &m, &ctl});
      }
    }

  run_result r = measure(w, o, ctl, [](int) { return group_view{}; }, progress);
  r.runtime = "onetbb";
  r.detail = o.arenas == tbb_arenas::single ? "one arena, thread slot mod nodes = node" : "one arena per node";
  return r;
}

}  // namespace jbb

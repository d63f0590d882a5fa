// numart_jbb on numart: a "JVM" instance is an rt::group, each of its warehouses a member group
// (the kernel's task inside a numa_group); the warehouse's tables are regions of its group.
// Each transaction is a task of the warehouse's group; when it ends it spawns the next card.
#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "drivers.hpp"
#include "rt/rt.hpp"

namespace jbb {

namespace {

// Everything a transaction task needs: 40 bytes, so the closure lives inline in the task frame.
struct chain {
  rt::runtime* runtime;
  rt::group* group;
  warehouse* wh;
  const machine* m;
  run_control* ctl;
};

void spawn_next(chain c) {
  // The handle is dropped: the task is detached (docs/adr/0003-detached-handles.md). The chain
  // itself is the join: its last task calls run_control::chain_done().
  rt::join_handle<void> detached = c.runtime->spawn(*c.group, [c] {
    if (c.wh->step(rt::current_node().value, *c.m, *c.ctl))
      spawn_next(c);
    else
      c.ctl->chain_done();  // I-JBB-2: the chain's last access to run_control
  });
}

}  // namespace

bool balancing_on(const rt::runtime& runtime) {
  std::istringstream in(runtime.describe());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.size() > 2 ? line.substr(2) : std::string{});
    std::string name, value;
    words >> name >> value;
    if (name == "NUMA_BALANCING") return value == "on";
  }
  return false;
}

run_result run_numart(workload& w, const options& o, rt::runtime& runtime, std::ostream& progress) {
  const int n_inst = w.instances();
  const int n_wh = w.warehouses_per_instance();
  std::vector<std::unique_ptr<rt::group>> jvms;
  std::vector<std::vector<std::unique_ptr<rt::group>>> members(static_cast<std::size_t>(n_inst));
  for (int i = 0; i < n_inst; ++i) {
    jvms.push_back(std::make_unique<rt::group>(runtime, "jvm-" + std::to_string(i)));
    for (int k = 0; k < n_wh; ++k) {
      auto g = std::make_unique<rt::group>(*jvms.back(), "jvm-" + std::to_string(i) + "/wh-" + std::to_string(k));
      for (table& t : w.at(i, k).tables) rt::register_region(*g, t.base, t.bytes);
      members[static_cast<std::size_t>(i)].push_back(std::move(g));
    }
  }

  run_control ctl(static_cast<std::ptrdiff_t>(w.warehouse_count()));
  for (int i = 0; i < n_inst; ++i)
    for (int k = 0; k < n_wh; ++k)
      spawn_next(chain{&runtime, members[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)].get(), &w.at(i, k), &w.m(), &ctl});

  // An instance's placement. The instance group itself runs no task (its warehouses do), so
  // when it has no home worker, its home is the node most of its warehouses' groups live on.
  const auto view = [&](int i) {
    const rt::group& jvm = *jvms[static_cast<std::size_t>(i)];
    group_view v;
    v.known = true;
    v.home = jvm.home_node().value;
    v.preferred = jvm.preferred_node().value;
    for (rt::node_id n : jvm.active_nodes()) v.active.push_back(n.value);
    if (v.home < 0) {
      std::vector<int> homes(static_cast<std::size_t>(w.m().nodes), 0);
      for (const auto& g : members[static_cast<std::size_t>(i)]) {
        const int h = g->home_node().value;
        if (h >= 0 && h < w.m().nodes) ++homes[static_cast<std::size_t>(h)];
      }
      const auto best = std::max_element(homes.begin(), homes.end());
      if (*best > 0) v.home = static_cast<int>(best - homes.begin());
    }
    return v;
  };
  run_result r = measure(w, o, ctl, view, progress);

  for (int i = 0; i < n_inst; ++i)
    for (int k = 0; k < n_wh; ++k)
      for (table& t : w.at(i, k).tables)
        rt::unregister_region(*members[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)], t.base);
  members.clear();  // members before their parents
  jvms.clear();

  r.runtime = "numart";
  r.balancer = balancing_on(runtime);
  r.detail = r.balancer ? "balancer on" : "balancer off";
  return r;
}

}  // namespace jbb

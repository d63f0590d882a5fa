// rt::group (the numa_group analog) and rt::node_id.
#pragma once

#include <string>
#include <vector>

namespace rt {

class runtime;

// A logical NUMA node index of the runtime's topology.
struct node_id {
  int value = -1;
  constexpr node_id() = default;
  constexpr explicit node_id(int v) : value(v) {}
  friend constexpr bool operator==(node_id, node_id) = default;
};

namespace detail {
struct group_state;
}

// An affinity group: the tasks of one "JVM", tenant or data set. Spawns into a group are
// placed from the group's home worker; the balancer (or the user) sets its preferred node.
// Groups are cheap and thread-safe; a group belongs to the runtime that was current when it
// was created (the calling worker's, else the default runtime) or the one named explicitly,
// and must be destroyed before that runtime (its destructor unregisters its regions).
class group {
 public:
  explicit group(std::string name);
  group(runtime& owner, std::string name);
  // A member of `parent`'s NUMA group: the kernel's task inside a numa_group. The balancer
  // scores the parent over its members' samples (its preferred and active nodes) and places
  // each member, by its own samples, on one of the parent's active nodes. One level deep:
  // throws std::invalid_argument when `parent` is itself a member. The parent must outlive it.
  group(group& parent, std::string name);
  ~group();
  group(const group&) = delete;
  group& operator=(const group&) = delete;

  const std::string& name() const;
  int home_worker() const;            // -1 until a task of the group ran
  node_id home_node() const;          // node of the home worker, or node_id{} (-1)
  node_id preferred_node() const;     // node_id{} when none
  void set_preferred_node(node_id n); // by hand; the balancer also writes it
  std::vector<node_id> active_nodes() const;
  void set_active_nodes(const std::vector<node_id>& nodes);
  runtime& owner() const;
  group* parent() const;              // null for a top-level group
  detail::group_state* state() const { return state_; }

 private:
  detail::group_state* state_;
  group* parent_ = nullptr;
};

}  // namespace rt

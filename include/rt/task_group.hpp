// rt::task_group: a fork-join scope. spawn() adds tasks, wait() helps run them and rethrows the
// first exception once every task of the group has finished.
#pragma once

#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "rt/detail/task.hpp"
#include "rt/group.hpp"

namespace rt {

namespace detail {

inline constexpr std::size_t kTaskGroupStateSize = 192;

void task_group_init(task_group_state* s, runtime* rt);
void task_group_destroy(task_group_state* s) noexcept;
void task_group_wait(task_group_state* s);                 // helps; rethrows the first exception
void task_group_fail(task_group_state* s, std::exception_ptr e) noexcept;
void task_group_wait_noexcept(task_group_state* s) noexcept;

template <class F>
struct group_payload {
  task_group_state* owner;
  F fn;
  template <class G>
  group_payload(task_group_state* o, G&& g) : owner(o), fn(std::forward<G>(g)) {}
  static void run(void* p) noexcept {
    auto* self = static_cast<group_payload*>(p);
    try {
      std::move(self->fn)();
    } catch (...) {
      task_group_fail(self->owner, std::current_exception());
    }
  }
  static void drop(void* p, bool) noexcept { static_cast<group_payload*>(p)->~group_payload(); }
  static constexpr task_ops ops{&run, &drop, nullptr};
};

}  // namespace detail

class task_group {
 public:
  task_group() { detail::task_group_init(state(), nullptr); }
  explicit task_group(runtime& rt) { detail::task_group_init(state(), &rt); }
  // Waits for tasks still running (helping), without rethrowing: call wait() to see errors.
  ~task_group() {
    detail::task_group_wait_noexcept(state());
    detail::task_group_destroy(state());
  }
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  template <class F>
  void spawn(F&& f) {
    spawn_into(detail::spawn_target{}, std::forward<F>(f));
  }
  template <class F>
  void spawn(group& g, F&& f) {
    detail::spawn_target t;
    t.affinity = &g;
    spawn_into(t, std::forward<F>(f));
  }
  // Like rt::spawn_continuation: `f` continues the running task, which returns right after.
  template <class F>
  void spawn_continuation(F&& f) {
    detail::spawn_target t;
    t.continuation = true;
    spawn_into(t, std::forward<F>(f));
  }
  void wait() { detail::task_group_wait(state()); }

 private:
  template <class F>
  void spawn_into(detail::spawn_target t, F&& f) {
    using P = detail::group_payload<std::decay_t<F>>;
    static_assert(alignof(P) <= detail::kTaskAlign,
                  "rt::task_group::spawn: the closure needs more alignment than task frames give (kTaskAlign)");
    t.members = state();
    detail::task* task = detail::task_alloc(t, &P::ops, sizeof(P), alignof(P));
    try {
      ::new (detail::task_payload(task)) P(state(), std::forward<F>(f));
    } catch (...) {
      detail::task_abandon(task);
      throw;
    }
    detail::task_submit(task);
  }
  detail::task_group_state* state() noexcept { return reinterpret_cast<detail::task_group_state*>(storage_); }

  alignas(64) unsigned char storage_[detail::kTaskGroupStateSize];
};

}  // namespace rt

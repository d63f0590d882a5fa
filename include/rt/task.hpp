// rt::spawn and rt::join_handle<T>.
#pragma once

#include <exception>
#include <stdexcept>
#include <new>
#include <type_traits>
#include <utility>

#include "rt/detail/task.hpp"
#include "rt/group.hpp"

namespace rt {

namespace detail {

template <class T>
struct result_slot {
  union {
    T value;
    std::exception_ptr error;
  };
  unsigned char state = 0;  // 0 empty, 1 value, 2 error
  result_slot() noexcept {}
  ~result_slot() {}
};

template <>
struct result_slot<void> {
  std::exception_ptr error;
  unsigned char state = 0;
};

// The payload of a join_handle task: the result slot first (so join_handle<T> finds it at the
// payload's start without knowing F), the closure after it.
template <class F, class T>
struct handle_payload {
  result_slot<T> result;
  union {
    F fn;
  };
  explicit handle_payload(F&& f) : fn(std::move(f)) {}
  explicit handle_payload(const F& f) : fn(f) {}
  ~handle_payload() {}

  static void run(void* p) noexcept {
    auto* self = static_cast<handle_payload*>(p);
    try {
      if constexpr (std::is_void_v<T>) {
        std::move(self->fn)();
        self->result.state = 1;
      } else {
        ::new (static_cast<void*>(&self->result.value)) T(std::move(self->fn)());
        self->result.state = 1;
      }
    } catch (...) {
      if constexpr (std::is_void_v<T>) {
        self->result.error = std::current_exception();
      } else {
        ::new (static_cast<void*>(&self->result.error)) std::exception_ptr(std::current_exception());
      }
      self->result.state = 2;
    }
    self->fn.~F();
  }
  static void drop(void* p, bool ran) noexcept {
    auto* self = static_cast<handle_payload*>(p);
    if (!ran) {
      self->fn.~F();
    } else if constexpr (!std::is_void_v<T>) {
      if (self->result.state == 1) self->result.value.~T();
      if (self->result.state == 2) self->result.error.~exception_ptr();
    }
    self->~handle_payload();
  }
  static bool failed(void* p) noexcept { return static_cast<handle_payload*>(p)->result.state == 2; }
  static constexpr task_ops ops{&run, &drop, &failed};
};

// Allocates a frame, constructs the payload in it and submits it. Nothing is lost on failure:
// if the runtime is stopped, task_alloc throws before the closure is touched.
template <class Payload, class F>
task* spawn_payload(const spawn_target& target, F&& f) {
  static_assert(alignof(Payload) <= kTaskAlign,
                "rt::spawn: the closure (or its result) needs more alignment than task frames give (kTaskAlign)");
  task* t = task_alloc(target, &Payload::ops, sizeof(Payload), alignof(Payload));
  try {
    ::new (task_payload(t)) Payload(std::forward<F>(f));
  } catch (...) {
    task_abandon(t);
    throw;
  }
  task_submit(t);
  return t;
}

}  // namespace detail

// The result of rt::spawn. join() returns the task's value or rethrows its exception; on a
// worker it runs other tasks while it waits. Dropping a handle without joining detaches the
// task: it still runs, its result is destroyed, and an exception it threw is counted in
// rt::stats (detached_failures) and otherwise discarded (docs/adr/0003-detached-handles.md).
template <class T>
class [[nodiscard]] join_handle {
 public:
  join_handle() = default;
  explicit join_handle(detail::task* t) noexcept : t_(t) {}
  join_handle(join_handle&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  join_handle& operator=(join_handle&& o) noexcept {
    if (this != &o) {
      reset();
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  join_handle(const join_handle&) = delete;
  join_handle& operator=(const join_handle&) = delete;
  ~join_handle() { reset(); }

  bool valid() const noexcept { return t_ != nullptr; }
  // Lets the task run on without anyone joining it: what dropping the handle does, said
  // explicitly (docs/adr/0003-detached-handles.md).
  void detach() noexcept { reset(); }

  T join() {
    if (!t_) throw std::logic_error("rt::join_handle::join on an empty or already joined handle");
    detail::task* t = std::exchange(t_, nullptr);
    detail::task_wait(t);
    // Releases the frame however this function leaves, a throwing move of T included.
    struct release_guard {
      detail::task* t;
      ~release_guard() { detail::task_release(t, true); }
    } guard{t};
    auto& r = *static_cast<detail::result_slot<T>*>(result_ptr(t));
    if (r.state == 2) std::rethrow_exception(r.error);
    if constexpr (!std::is_void_v<T>) return T(std::move(r.value));
  }

 private:
  void reset() noexcept {
    if (t_) detail::task_release(std::exchange(t_, nullptr), false);
  }
  static void* result_ptr(detail::task* t) noexcept { return detail::task_payload(t); }

  detail::task* t_ = nullptr;
};

template <class F>
auto spawn_with(const detail::spawn_target& target, F&& f) {
  using Fn = std::decay_t<F>;
  using T = std::invoke_result_t<Fn&&>;
  using P = detail::handle_payload<Fn, T>;
  detail::task* t = detail::spawn_payload<P>(target, std::forward<F>(f));
  return join_handle<T>(t);
}

// Spawns on the calling worker's runtime, else on the default runtime (started on first use
// from the environment, rt::config::from_env()).
template <class F>
auto spawn(F&& f) {
  return spawn_with(detail::spawn_target{}, std::forward<F>(f));
}

// Spawns a task of affinity group `g`: placed through the wake path from the group's home.
template <class F>
auto spawn(group& g, F&& f) {
  detail::spawn_target t;
  t.affinity = &g;
  return spawn_with(t, std::forward<F>(f));
}

// Spawns `f` as the continuation of the running task, which returns right after: the wake
// path places it the way the kernel places an exec'd task (find_idlest with the running task's
// load discounted from its worker, UTIL_WITHOUT), so a chain of continuations stays on its
// worker while that worker has room instead of hopping to whichever worker is idle. One kept
// on its worker waits for the running task to return and no other worker can take it
// meanwhile (docs/design/wake-path.md I-WAKE-10): work done after this call delays it. From a
// thread that is not a worker it is rt::spawn(f).
template <class F>
auto spawn_continuation(F&& f) {
  detail::spawn_target t;
  t.continuation = true;
  return spawn_with(t, std::forward<F>(f));
}

// Spawns onto an explicit node (queued on that node, run by its workers first).
template <class F>
auto spawn_on(node_id n, F&& f) {
  detail::spawn_target t;
  t.node = n.value;
  return spawn_with(t, std::forward<F>(f));
}

}  // namespace rt

// The task ABI between the header-only templates (spawn, join_handle, task_group) and
// libnumart. A task is a frame: a runtime-owned header of kTaskHeaderSize bytes followed by a
// payload that the templates lay out (the closure, then the result). The header's contents are
// private to runtime/worker/task.hpp; templates only reach the payload.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rt {
class runtime;
class group;
class task_group;
}  // namespace rt

namespace rt::detail {

inline constexpr std::size_t kTaskHeaderSize = 48;
inline constexpr std::size_t kTaskAlign = 16;
// Frames of the per-worker pools hold this much payload; larger or over-aligned payloads are
// allocated from the worker's node arena. A closure of up to 48 bytes plus a result of up to
// 24 bytes (with its state byte, 32) fit, so small tasks never touch the allocator.
inline constexpr std::size_t kPooledPayload = 80;

struct task;
struct task_group_state;

struct task_ops {
  // Runs the closure, stores its result or exception in the payload, destroys the closure.
  void (*run)(void* payload) noexcept;
  // Destroys what the payload still holds: the result (after run) or the closure (never run).
  void (*drop)(void* payload, bool ran) noexcept;
  // Non-null when the payload's exception slot may hold an exception (join_handle tasks):
  // returns true when the run ended in an exception. Used to report detached failures.
  bool (*failed)(void* payload) noexcept;
};

struct spawn_target {
  runtime* rt = nullptr;            // null: the current worker's runtime, else the default one
  group* affinity = nullptr;        // rt::group, or null
  int node = -1;                    // explicit node (spawn_on), or -1
  task_group_state* members = nullptr;  // task_group bookkeeping, or null
  bool continuation = false;        // spawn_continuation: placed like an exec'd task
};

// Allocates a frame for `ops` with a payload of `size` bytes aligned to `align`.
// Throws rt::runtime_stopped when the target runtime is shutting down (nothing is allocated).
task* task_alloc(const spawn_target& target, const task_ops* ops, std::size_t size, std::size_t align);
// Frees a frame that was allocated but never submitted (the closure's constructor threw).
void task_abandon(task* t) noexcept;
// Hands the task to the scheduler (the wake path decides where it runs).
void task_submit(task* t) noexcept;
// Waits until the task has run; on a worker it runs other tasks meanwhile.
void task_wait(task* t);
// The handle is done with the task: after join (joined), or dropped unjoined (detach).
void task_release(task* t, bool joined) noexcept;

inline void* task_payload(task* t) noexcept {
  return reinterpret_cast<unsigned char*>(t) + kTaskHeaderSize;
}

}  // namespace rt::detail

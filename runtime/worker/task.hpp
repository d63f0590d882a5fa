// The task frame header (the runtime-owned kTaskHeaderSize bytes of every frame).
// docs/design/tasks.md describes the life of a frame; its invariants are I-TASK-N.
#pragma once

#include <cstdint>

#include "rt/detail/task.hpp"
#include "sync/atomics.hpp"

namespace rt::detail {

class scheduler;
struct group_state;

// state bits. DONE is set once by the executor; RELEASED once by the handle (join or drop);
// WAITER by an outside thread that sleeps on the futex; INLINE by a joiner that ran the task
// itself. Bits kTaskWaiterShift.. hold the id + 1 of a worker blocked in join on this task, so
// the executor learns whom to unpark from its own RMW (I-TASK-4).
inline constexpr std::uint32_t kTaskDone = 1u;
inline constexpr std::uint32_t kTaskReleased = 2u;
inline constexpr std::uint32_t kTaskWaiter = 4u;
inline constexpr std::uint32_t kTaskInline = 8u;
inline constexpr unsigned kTaskWaiterShift = 8;

// flags (written once by task_alloc, before the frame is published).
inline constexpr std::uint16_t kFramePooled = 1u;   // from, and back to, the spawner's pool
inline constexpr std::uint16_t kFrameContinuation = 2u;  // rt::spawn_continuation (exec placement)
inline constexpr std::uint16_t kFrameStandard = 4u;  // an outside thread's kPooledFrameSize frame (I-POOL-3)

struct task {
  // Filled by task_alloc; read by whoever runs, joins or frees the task. Published to other
  // workers by the deque/mailbox/injection-queue push (release), so plain fields suffice.
  const task_ops* ops;
  scheduler* sched;
  task_group_state* members;   // task_group bookkeeping, or null
  group_state* affinity;       // rt::group, or null
  // I-TASK-1: DONE is set with release by the executor after the payload holds the result;
  // the joiner's acquire load of DONE makes the result visible. I-TASK-2: the frame is freed
  // by whichever of executor and handle sets the second of DONE and RELEASED (acq_rel RMW),
  // except on the inline path (I-TASK-3), where the joiner alone owns the frame.
  sync::native::atomic<std::uint32_t> state;
  std::uint16_t flags;
  std::int16_t spawner;        // worker that spawned it, -1 for outside threads
  std::int16_t node;           // explicit node (spawn_on), -1 for none
  std::int32_t depth;          // the spawner's nesting depth (I-HELP-1); 0 from outside
};

static_assert(sizeof(task) <= kTaskHeaderSize, "the task header must fit kTaskHeaderSize");
static_assert(kTaskHeaderSize % kTaskAlign == 0, "the payload must stay kTaskAlign-aligned");

inline constexpr std::size_t kPooledFrameSize = kTaskHeaderSize + kPooledPayload;

}  // namespace rt::detail

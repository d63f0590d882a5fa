// The asymmetric fence (docs/design/parking.md I-PARK-7): a Dekker pair whose two sides run
// at very different rates (every spawn versus every park) can put the whole cost of ordering on
// the rare side. The frequent side keeps only a compiler barrier; the rare side waits for a
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) begun after its own fence (its own, or one that
// overlapping callers share, I-PARK-11), which makes every running thread of the process
// execute a full memory barrier before it returns. Either a frequent-side store was drained
// before that barrier (and the rare side's later loads see it), or the frequent side's later
// loads run after it (and see the rare side's earlier stores): the store-buffering outcome is
// forbidden exactly as with a seq_cst fence on both sides.
//
// Linux 4.14 or later; a kernel without it, or a seccomp filter that refuses it, makes
// available() false, and callers use a seq_cst fence on both sides instead. ThreadSanitizer
// does not model membarrier, so the tsan build never uses it.
#pragma once

#include <atomic>

namespace rt::sync {

class asym_fence {
 public:
  // Registers the process for expedited private membarriers once; false when the kernel or a
  // seccomp filter refuses (then the symmetric fences must be used).
  static bool available() noexcept;
  // The frequent side: orders nothing at run time by itself, only keeps the compiler from
  // moving the store after the load. Valid only paired with heavy().
  static void light() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }
  // The rare side: a full barrier on this thread (a seq_cst fence), then one on every running
  // thread of the process by a membarrier that began after that fence and has returned. Calls
  // that overlap share one (I-PARK-11): the kernel serialises membarrier callers on one mutex
  // (perf on this machine: membarrier_private_expedited spinning on it), so each waits for the
  // one in flight anyway; a caller that finds one begun after its fence and returned issues
  // none. True when this call issued the membarrier, false when it shared another caller's.
  // Precondition: available() returned true.
  static bool heavy() noexcept;
};

}  // namespace rt::sync

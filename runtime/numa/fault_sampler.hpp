// The SIGSEGV handler behind NUMA hinting faults (docs/design/sampling.md I-SAMPLE-9..12;
// DESIGN.md §1 "NUMA hinting fault"; docs/adr/0008-stack-overflow.md for the chain).
//
// A fault on a protected page of a registered region (regions.hpp) is ours: the handler
// restores the page, records a sample into the thread's ring (context.hpp) when the thread
// has a context, and returns; the instruction runs again. Every other fault goes to the
// handler that was installed before ours, exactly as without numart: a previous sa_sigaction
// or sa_handler is called; SIG_DFL or SIG_IGN is put back as SIG_DFL and the handler returns,
// so the fault repeats and kills the process with SIGSEGV (a SIGSEGV sent by kill() is
// raised again instead, since returning would not repeat it).
//
// Installed once per process (SA_SIGINFO | SA_ONSTACK; never removed). The stack guard
// (runtime/worker/stack_guard.cpp) may be installed before or after it; either way a stack
// overflow still reaches it and is reported (I-SAMPLE-12).
#pragma once

#include <cstdint>

namespace rt::numa {

// Installs the handler on the first call (thread-safe); later calls do what
// keep_fault_handler_first() does. region_registry::protect_next_window() calls it before it
// protects anything; the lead may call it earlier.
void install_fault_handler() noexcept;
// If the handler is installed but another one was installed over it since (the stack guard
// at the first worker's start, a user's), puts ours back in front and calls that one for every
// fault that is not ours before the one we found first (I-SAMPLE-12). No-op before install.
void keep_fault_handler_first() noexcept;
bool fault_handler_installed() noexcept;

// Process-wide, since the handler was installed. Statistics (relaxed), any thread.
struct fault_counters {
  std::uint64_t sampled = 0;         // our faults with a sample pushed
  std::uint64_t dropped = 0;         // our faults whose sample the ring dropped
  std::uint64_t without_context = 0; // our faults on threads without a context: restored only
  std::uint64_t restore_failed = 0;  // our faults whose mprotect failed (the repeat fault is not ours: passed on)
  std::uint64_t in_progress = 0;     // faults on a page another thread was restoring or protecting
  std::uint64_t retried = 0;         // faults returned once for a retry (I-SAMPLE-10)
  std::uint64_t passed_on = 0;       // faults handed to the previous handler
};
fault_counters fault_stats() noexcept;

}  // namespace rt::numa

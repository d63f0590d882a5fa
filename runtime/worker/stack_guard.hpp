// Stack-overflow reporting for worker threads (docs/adr/0008-stack-overflow.md).
//
// A task that recurses too deeply (plain recursion, or rt::spawn + join nested 10^5 deep) runs
// off the end of its worker's stack into the guard page. Without help the process dies with a
// bare SIGSEGV: the kernel cannot even run a handler, there is no stack left to run it on. The
// stack guard gives each worker an alternate signal stack and a SIGSEGV/SIGBUS handler that,
// when the fault lies just below the current worker's stack, prints one line naming the worker
// and its stack size. Either way the process still dies with SIGSEGV (or SIGBUS), exactly as it
// would have without numart: the handler never recovers from a fault.
#pragma once

namespace rt::detail::stack_guard {

// Called by each worker thread as it starts: records the thread's stack bounds and guard
// region, gives the thread an alternate signal stack, and on the first call in the process
// installs the handler (once, thread-safe), chained to whatever handler was installed before.
// Idempotent per thread (a second call only updates the id). Never throws: if the thread's
// bounds or an alternate stack cannot be had, the thread simply gets no report.
void enter_worker(int worker_id) noexcept;

// Called by the worker thread as it exits: stops reporting for it and frees its alternate
// signal stack. Harmless on a thread that never entered.
void leave_worker() noexcept;

}  // namespace rt::detail::stack_guard

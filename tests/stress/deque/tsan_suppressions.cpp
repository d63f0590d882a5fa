// ThreadSanitizer build only (RT_TSAN, cmake/numart_options.cmake). Boost.Lockfree's queue and
// free list overlay a node's link on memory that another thread may still read through a stale,
// tag-protected pointer, and read a node's payload before the CAS that validates it; both are
// by design (the tag/CAS discards the stale value) and TSan reports them (boostorg/lockfree#78).
// The suppression names Boost's headers only: a race on a task's own fields, which live in this
// test's code, is still reported. docs/design/deque.md, "TSan".
#if defined(RT_TSAN)
extern "C" const char* __tsan_default_suppressions() { return "race:boost/lockfree/\n"; }
#endif

// LeakSanitizer (asan preset), for this binary only: the children of these tests leak the
// runtimes they inherited, by design (docs/adr/0007-fork.md: an orphaned runtime's workers,
// queues and frames are not freed in the child), and they leave with std::exit, where LSan
// would report them and exit 1. Without a sanitizer this function is never called.
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "detect_leaks=0"; }

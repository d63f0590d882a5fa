// Each statement runs in a fresh child (threadsafe death tests re-execute the binary) that
// starts from SIG_DFL for SIGSEGV, so "the previous handler" is what the test installs.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "numa/context.hpp"
#include "numa/fault_sampler.hpp"
#include "numa/regions.hpp"
#include "worker/stack_guard.hpp"

namespace {

using namespace rt::numa;

#if defined(NUMART_TEST_UBSAN)
constexpr bool kUbsanCatchesNullStores = true;
#else
constexpr bool kUbsanCatchesNullStores = false;
#endif

int key_region = 0, key_task = 0;

std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

char* map_pages(std::size_t n, int prot) {
  void* p = ::mmap(nullptr, n * page(), prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  return static_cast<char*>(p);
}

void say(const char* s) { static_cast<void>(::write(STDERR_FILENO, s, std::strlen(s))); }

void fresh() { ::signal(SIGSEGV, SIG_DFL); }

// A registry with one protected page, the handler installed: the state of a process whose
// balancer is sampling. Leaked on purpose: the child dies with it.
char* sampling_setup() {
  char* region = map_pages(1, PROT_READ | PROT_WRITE);
  auto* reg = new region_registry;
  reg->add(&key_region, region, page(), 0);
  if (reg->protect_next_window(1).pages_protected != 1) std::abort();
  return region;
}

void write_to_protected_page_outside_regions() {
  char* own = map_pages(1, PROT_NONE);
  *static_cast<volatile char*>(own) = 1;
}

void write_through_null() {
  static volatile std::uintptr_t zero = 0;
  *reinterpret_cast<volatile int*>(zero) = 1;
}

void custom_siginfo(int, siginfo_t*, void*) {
  say("custom sa_sigaction reached\n");
  ::_exit(42);
}
void custom_plain(int) {
  say("custom sa_handler reached\n");
  ::_exit(43);
}

// Runs fn on a thread with a 256 KiB stack: as worker `id` of the stack guard when id >= 0.
void on_small_thread(int id, void (*fn)()) {
  struct args {
    int id;
    void (*fn)();
  } a{id, fn};
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0 || ::pthread_attr_setstacksize(&attr, 256 * 1024) != 0) std::abort();
  pthread_t th;
  if (::pthread_create(
          &th, &attr,
          [](void* p) -> void* {
            const auto* x = static_cast<const args*>(p);
            if (x->id >= 0) rt::detail::stack_guard::enter_worker(x->id);
            x->fn();
            return nullptr;
          },
          &a) != 0)
    std::abort();
  ::pthread_join(th, nullptr);
}

[[gnu::noinline]] std::uint64_t dive(std::uint64_t depth, std::uint64_t limit) {
  volatile unsigned char frame[384];
  frame[0] = static_cast<unsigned char>(depth);
  frame[sizeof frame - 1] = frame[0];
  if (depth >= limit) return frame[sizeof frame - 1];
  return dive(depth + 1, limit) + frame[(depth & 1) != 0 ? sizeof frame - 1 : 0];
}
void dive_forever() {
  volatile std::uint64_t limit = UINT64_MAX;
  static_cast<void>(dive(0, limit));
}

class Segv : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(Segv, AFaultOutsideEveryRegionDiesWithSigsegv) {
  EXPECT_EXIT(
      {
        fresh();
        sampling_setup();
        write_to_protected_page_outside_regions();
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST_F(Segv, ANullWriteDiesWithSigsegv) {
  if (kUbsanCatchesNullStores) GTEST_SKIP() << "UBSan reports the null store before it faults";
  EXPECT_EXIT(
      {
        fresh();
        sampling_setup();
        write_through_null();
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST_F(Segv, AnIgnoredSigsegvStillKills) {
  EXPECT_EXIT(
      {
        fresh();
        sampling_setup();
        ::signal(SIGSEGV, SIG_IGN);
        keep_fault_handler_first();  // finds SIG_IGN over ours: that becomes "below"
        write_to_protected_page_outside_regions();
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST_F(Segv, ASigsegvSentWithKillStillKills) {
  EXPECT_EXIT(
      {
        fresh();
        sampling_setup();
        ::kill(::getpid(), SIGSEGV);
        ::pause();
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST_F(Segv, APreviousSaSigactionHandlerIsReached) {
  EXPECT_EXIT(
      {
        fresh();
        struct sigaction sa {};
        sa.sa_sigaction = &custom_siginfo;
        sa.sa_flags = SA_SIGINFO;
        ::sigaction(SIGSEGV, &sa, nullptr);
        sampling_setup();
        write_to_protected_page_outside_regions();
      },
      testing::ExitedWithCode(42), "custom sa_sigaction reached");
}

TEST_F(Segv, APreviousSaHandlerIsReached) {
  EXPECT_EXIT(
      {
        fresh();
        ::signal(SIGSEGV, &custom_plain);
        sampling_setup();
        write_to_protected_page_outside_regions();
      },
      testing::ExitedWithCode(43), "custom sa_handler reached");
}

// A hinting fault is handled (one sample), then a real crash still crashes.
TEST_F(Segv, ASampledFaultThenARealCrashStillCrashes) {
  EXPECT_EXIT(
      {
        fresh();
        char* region = sampling_setup();
        static sample_ring ring(64);
        enter_sampling(&ring, 0);
        set_running_group(&key_task);
        *static_cast<volatile char*>(region) = 7;
        if (ring.counters().pushed == 1 && region[0] == 7) say("sampled once\n");
        write_to_protected_page_outside_regions();
      },
      testing::KilledBySignal(SIGSEGV), "sampled once");
}

// The stack guard installed first (at the first worker's start), the sampler over it: an
// overflow reaches the guard through the sampler.
TEST_F(Segv, StackGuardFirstAnOverflowIsStillReported) {
  EXPECT_EXIT(
      {
        fresh();
        on_small_thread(3, [] {
          sampling_setup();  // installs the sampler over the guard
          dive_forever();
        });
      },
      testing::KilledBySignal(SIGSEGV), "numart: worker 3 overflowed its stack");
}

// The sampler installed first, the stack guard over it (a worker started later): the next
// re-check (enter_sampling, or the next scan) puts the sampler back in front and keeps the
// guard in the chain, so samples still work and an overflow is still reported.
TEST_F(Segv, SamplerFirstAnOverflowIsStillReportedAndSamplesStillWork) {
  EXPECT_EXIT(
      {
        fresh();
        static char* region = sampling_setup();
        on_small_thread(5, [] {  // enter_worker installs the guard over the sampler
          static sample_ring ring(64);
          enter_sampling(&ring, 0);
          *static_cast<volatile char*>(region) = 1;
          *static_cast<volatile char*>(region) = 2;
          if (ring.counters().pushed == 1) say("sampled once\n");
          dive_forever();
        });
      },
      testing::KilledBySignal(SIGSEGV), "sampled once\n(.|\n)*numart: worker 5 overflowed its stack");
}

// Same order, but a non-sampling fault after the guard went in over us: the guard sees it first
// (through us), and the process dies with SIGSEGV.
TEST_F(Segv, SamplerFirstARealCrashStillCrashes) {
  EXPECT_EXIT(
      {
        fresh();
        sampling_setup();
        on_small_thread(6, [] {
          keep_fault_handler_first();
          write_to_protected_page_outside_regions();
        });
      },
      testing::KilledBySignal(SIGSEGV), "");
}

}  // namespace

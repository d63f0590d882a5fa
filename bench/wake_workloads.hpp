// The wake-path workloads of issue 4, written once and instantiated for numart and for oneTBB
// so that both sides run the same code (shared/WORKLOADS.md describes the originals):
//
// * hackbench-like: G groups of F senders and F receivers. A receiver is a state block (a
//   message ring, a count, a checksum, under the receiver's lock) plus an affinity: an
//   rt::group on numart, nothing on oneTBB (oneTBB has no per-task affinity). A sender is a
//   task that, `loops` times over its group's F receivers, spawns one delivery task per
//   message into the receiver's affinity; the delivery copies the message into the receiver's
//   ring. One fork-join scope holds every task; the run ends when every message is delivered.
//   Unlike hackbench's blocking sockets, nothing suspends: a full F x F graph of deliveries,
//   each placed by the wake path.
// * schbench-like: M message tasks; each, per batch, takes ONE timestamp and spawns W worker
//   tasks stamped with it; a worker records wake-up latency = its start - the stamp, serves a
//   request (a fixed busy loop, calibrated once, the same on both sides) and, when it is the
//   batch's last worker to finish, spawns its message task's next batch (schbench's workers
//   wake their message thread by posting themselves). Requests/s = worker tasks / wall time.
// * execl-like: a chain of steps; each step spawns the next (its continuation) and returns, so
//   one step runs at a time; a migration is a step whose worker differs from the previous
//   step's. A ticker thread outside the pool submits a fixed busy task every period during
//   the run, so the other worker is partly busy. In it the steps belong to a fork-join scope
//   whose root waits in the pool.
// * execl-like on an idle pool: the same chain with no ticker and no scope: an outside thread
//   submits the first step, each step continues detached, and the last one signals the outside
//   thread. Every other worker is idle, so each step's placement chooses between the
//   spawner's worker and idle ones.
//
// A side (numart_side, tbb_side) provides: slots() (pool thread indexes are [0, slots)),
// current() (the calling pool thread's index, -1 elsewhere), affinity + make_affinity(),
// scope (spawn(f), spawn(affinity&, f), wait()), execute(root) (run root on the pool and wait),
// submit(f) (from a thread outside the pool, detached) and continue_detached(f) (from a pool
// task, detached, as its last act).
#pragma once

#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rt/rt.hpp"

namespace wake {

using clk = std::chrono::steady_clock;

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now().time_since_epoch()).count();
}

// A fixed amount of CPU work: `iters` dependent multiply-adds the compiler must keep.
inline void spin(std::uint64_t iters) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (std::uint64_t i = 0; i < iters; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
}

// Iterations of spin() per microsecond on the calling thread: the fastest of 15 timed runs of
// 2^19 iterations (the least disturbed one: the machine may be shared), measured once and used
// by both sides.
inline double spin_iters_per_us() {
  constexpr std::uint64_t kIters = std::uint64_t{1} << 19;
  double best_ns = 0;
  for (int r = 0; r < 15; ++r) {
    const std::int64_t t0 = now_ns();
    spin(kIters);
    const auto ns = static_cast<double>(now_ns() - t0);
    if (r == 0 || ns < best_ns) best_ns = ns;
  }
  return static_cast<double>(kIters) * 1e3 / std::max(best_ns, 1.0);
}

// ---- sides -------------------------------------------------------------------------------

class numart_side {
 public:
  explicit numart_side(rt::runtime& r) : rt_(&r) {}
  int slots() const { return rt_->workers(); }
  static int current() noexcept { return rt::runtime::current_worker(); }
  rt::runtime& runtime() const { return *rt_; }

  using affinity = rt::group;
  std::unique_ptr<affinity> make_affinity(const std::string& name) const {
    return std::make_unique<rt::group>(*rt_, name);
  }

  class scope {
   public:
    explicit scope(numart_side& s) : tg_(*s.rt_) {}
    template <class F>
    void spawn(F&& f) {
      tg_.spawn(std::forward<F>(f));
    }
    template <class F>
    void spawn(affinity& a, F&& f) {
      tg_.spawn(a, std::forward<F>(f));
    }
    // The step's last act: its continuation (placed like an exec'd task).
    template <class F>
    void spawn_continuation(F&& f) {
      tg_.spawn_continuation(std::forward<F>(f));
    }
    void wait() { tg_.wait(); }

   private:
    rt::task_group tg_;
  };

  template <class F>
  void execute(F&& root) {
    rt_->spawn(std::forward<F>(root)).join();
  }
  // Dropping the handle detaches the task (docs/adr/0003-detached-handles.md).
  template <class F>
  void submit(F&& f) {
    auto detached = rt_->spawn(std::forward<F>(f));
  }
  template <class F>
  static void continue_detached(F&& f) {
    static_cast<void>(rt::spawn_continuation(std::forward<F>(f)));
  }

 private:
  rt::runtime* rt_;
};

class tbb_side {
 public:
  explicit tbb_side(tbb::task_arena& a) : arena_(&a) {}
  int slots() const { return arena_->max_concurrency(); }
  static int current() noexcept { return tbb::this_task_arena::current_thread_index(); }

  // oneTBB has no per-task affinity: a receiver's affinity is empty and its deliveries are
  // ordinary task_group tasks.
  struct affinity {};
  std::unique_ptr<affinity> make_affinity(const std::string&) const { return std::make_unique<affinity>(); }

  class scope {
   public:
    explicit scope(tbb_side&) {}
    template <class F>
    void spawn(F&& f) {
      tg_.run(std::forward<F>(f));
    }
    template <class F>
    void spawn(affinity&, F&& f) {
      tg_.run(std::forward<F>(f));
    }
    // oneTBB has no continuation placement: an ordinary task.
    template <class F>
    void spawn_continuation(F&& f) {
      tg_.run(std::forward<F>(f));
    }
    void wait() { tg_.wait(); }

   private:
    tbb::task_group tg_;
  };

  template <class F>
  void execute(F&& root) {
    arena_->execute(std::forward<F>(root));
  }
  template <class F>
  void submit(F&& f) {
    arena_->enqueue(std::forward<F>(f));
  }
  // oneTBB has no continuation placement: the arena's queue, as for a submit.
  template <class F>
  void continue_detached(F&& f) {
    arena_->enqueue(std::forward<F>(f));
  }

 private:
  tbb::task_arena* arena_;
};

// ---- hackbench-like ----------------------------------------------------------------------

inline constexpr std::size_t kMessageBytes = 32;  // a small message: the delivery closure stays inline
inline constexpr std::size_t kRingBytes = 4096;   // the receiver's buffer, overwritten in a ring

struct message {
  std::uint32_t sender;  // global sender index
  std::uint32_t seq;     // 0 .. loops-1
  std::array<unsigned char, kMessageBytes - 8> body;
};
static_assert(sizeof(message) == kMessageBytes);

template <class Side>
class hackbench {
 public:
  // `groups` groups of `fan` senders and `fan` receivers; every sender sends `loops` messages
  // to every receiver of its group.
  hackbench(Side& side, int groups, int fan, int loops)
      : side_(&side), groups_(groups), fan_(fan), loops_(loops),
        receivers_(static_cast<std::size_t>(groups) * static_cast<std::size_t>(fan)) {
    for (std::size_t r = 0; r < receivers_.size(); ++r) {
      receivers_[r].aff = side.make_affinity("recv-" + std::to_string(r));
      receivers_[r].ran_on.assign(static_cast<std::size_t>(side.slots()), 0);
    }
  }

  // One full run: every sender of every group, until the last message is delivered.
  void run() {
    for (auto& r : receivers_) r.reset();
    side_->execute([this] {
      typename Side::scope sc(*side_);
      for (int g = 0; g < groups_; ++g)
        for (int s = 0; s < fan_; ++s) sc.spawn([this, &sc, g, s] { send(sc, g, s); });
      sc.wait();
    });
  }

  std::uint64_t messages() const {
    return static_cast<std::uint64_t>(groups_) * static_cast<std::uint64_t>(fan_) * static_cast<std::uint64_t>(fan_) *
           static_cast<std::uint64_t>(loops_);
  }

  // Empty when every receiver got exactly fan x loops messages with the expected checksum and
  // every delivery ran on a pool thread; else what went wrong.
  std::string verify() const {
    for (std::size_t r = 0; r < receivers_.size(); ++r) {
      const receiver& rc = receivers_[r];
      const auto g = static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(fan_);
      std::uint64_t want = 0;
      for (std::uint64_t s = 0; s < static_cast<std::uint64_t>(fan_); ++s)
        for (std::uint64_t l = 0; l < static_cast<std::uint64_t>(loops_); ++l)
          want += tag(static_cast<std::uint32_t>(g * static_cast<std::uint64_t>(fan_) + s),
                      static_cast<std::uint32_t>(l));
      if (rc.count != static_cast<std::uint64_t>(fan_) * static_cast<std::uint64_t>(loops_) || rc.checksum != want)
        return "receiver " + std::to_string(r) + " got " + std::to_string(rc.count) + " messages, expected " +
               std::to_string(fan_ * loops_) + " (or a wrong checksum)";
      if (rc.outside != 0) return "receiver " + std::to_string(r) + ": a delivery ran outside the pool";
    }
    return {};
  }

  // Mean over receivers of the share of its deliveries run by the pool thread that ran most
  // of them: 1 = every receiver's messages were handled on one thread (its affinity held);
  // 1 / slots = spread evenly.
  double affinity_share() const {
    double sum = 0;
    for (const receiver& rc : receivers_) {
      const std::uint64_t top = *std::max_element(rc.ran_on.begin(), rc.ran_on.end());
      sum += rc.count == 0 ? 0.0 : static_cast<double>(top) / static_cast<double>(rc.count);
    }
    return sum / static_cast<double>(receivers_.size());
  }

 private:
  struct alignas(64) receiver {
    std::unique_ptr<typename Side::affinity> aff;
    std::mutex lock;  // the channel's lock: deliveries to one receiver may run on several threads
    std::array<unsigned char, kRingBytes> ring{};
    std::size_t head = 0;
    std::uint64_t count = 0;
    std::uint64_t checksum = 0;
    std::uint64_t outside = 0;
    std::vector<std::uint64_t> ran_on;  // deliveries per pool thread

    void reset() {
      head = count = checksum = outside = 0;
      std::fill(ran_on.begin(), ran_on.end(), 0);
    }
    void deliver(const message& m) {
      const int w = Side::current();
      std::lock_guard<std::mutex> lk(lock);
      std::memcpy(ring.data() + head, &m, sizeof m);
      head = (head + sizeof m) % kRingBytes;
      ++count;
      checksum += tag(m.sender, m.seq);
      if (w >= 0 && static_cast<std::size_t>(w) < ran_on.size())
        ++ran_on[static_cast<std::size_t>(w)];
      else
        ++outside;
    }
  };
  static_assert(kRingBytes % kMessageBytes == 0);

  static std::uint64_t tag(std::uint32_t sender, std::uint32_t seq) {
    return (static_cast<std::uint64_t>(sender) << 32) + seq + 1;
  }

  void send(typename Side::scope& sc, int g, int s) {
    message m{};
    m.sender = static_cast<std::uint32_t>(g * fan_ + s);
    for (int l = 0; l < loops_; ++l) {
      m.seq = static_cast<std::uint32_t>(l);
      m.body.fill(static_cast<unsigned char>(l));
      for (int r = 0; r < fan_; ++r) {
        receiver* rc = &receivers_[static_cast<std::size_t>(g * fan_ + r)];
        sc.spawn(*rc->aff, [rc, m] { rc->deliver(m); });
      }
    }
  }

  Side* side_;
  int groups_;
  int fan_;
  int loops_;
  std::vector<receiver> receivers_;
};

// ---- schbench-like -----------------------------------------------------------------------

template <class Side>
class schbench {
 public:
  // `messages` message tasks, each running `batches` batches of `workers` worker tasks; a
  // request is `work_iters` iterations of spin().
  schbench(Side& side, int messages, int workers, int batches, std::uint64_t work_iters)
      : side_(&side), messages_(messages), workers_(workers), batches_(batches), work_iters_(work_iters),
        chains_(static_cast<std::size_t>(messages)) {
    for (chain& c : chains_) {
      c.latency_ns.assign(static_cast<std::size_t>(workers) * static_cast<std::size_t>(batches), -1);
      c.moved.assign(c.latency_ns.size(), 0);
      c.runs.assign(c.latency_ns.size(), 0);
    }
  }

  void run() {
    for (chain& c : chains_) {
      std::fill(c.latency_ns.begin(), c.latency_ns.end(), -1);
      std::fill(c.moved.begin(), c.moved.end(), 0);
      std::fill(c.runs.begin(), c.runs.end(), 0);
    }
    side_->execute([this] {
      typename Side::scope sc(*side_);
      for (int m = 0; m < messages_; ++m) sc.spawn([this, &sc, m] { dispatch(sc, m, 0); });
      sc.wait();
    });
  }

  std::uint64_t requests() const {
    return static_cast<std::uint64_t>(messages_) * static_cast<std::uint64_t>(workers_) *
           static_cast<std::uint64_t>(batches_);
  }

  // Empty when every request of every batch ran exactly once, with a non-negative latency;
  // else what went wrong.
  std::string verify() const {
    for (std::size_t m = 0; m < chains_.size(); ++m) {
      const chain& c = chains_[m];
      for (std::size_t i = 0; i < c.runs.size(); ++i) {
        if (c.runs[i] != 1)
          return "message task " + std::to_string(m) + ": request " + std::to_string(i) + " ran " +
                 std::to_string(c.runs[i]) + " times";
        if (c.latency_ns[i] < 0) return "message task " + std::to_string(m) + ": a negative wake-up latency";
      }
    }
    return {};
  }

  // Wake-up latencies of the last run, in microseconds.
  std::vector<double> latencies_us() const {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(requests()));
    for (const chain& c : chains_)
      for (std::int64_t ns : c.latency_ns) out.push_back(static_cast<double>(ns) / 1e3);
    return out;
  }

  // Share of requests that ran on another pool thread than the one that spawned them.
  double moved_share() const {
    std::uint64_t moved = 0;
    for (const chain& c : chains_)
      for (unsigned char b : c.moved) moved += b;
    return static_cast<double>(moved) / static_cast<double>(requests());
  }

 private:
  struct alignas(64) chain {
    std::atomic<int> pending{0};           // workers of the current batch still running
    // Indexed [batch * workers + w], written by that request's worker task only.
    std::vector<std::int64_t> latency_ns;
    std::vector<unsigned char> moved;
    std::vector<unsigned char> runs;
  };

  // The message task: one timestamp for the whole batch, then one spawn per worker.
  void dispatch(typename Side::scope& sc, int m, int batch) {
    chain& c = chains_[static_cast<std::size_t>(m)];
    // Relaxed: the spawns below publish it to the workers that decrement it.
    c.pending.store(workers_, std::memory_order_relaxed);
    const std::int64_t stamp = now_ns();
    const int from = Side::current();
    for (int w = 0; w < workers_; ++w)
      sc.spawn([this, &sc, m, batch, w, stamp, from] { serve(sc, m, batch, w, stamp, from); });
  }

  void serve(typename Side::scope& sc, int m, int batch, int w, std::int64_t stamp, int from) {
    const std::int64_t start = now_ns();
    chain& c = chains_[static_cast<std::size_t>(m)];
    const std::size_t i =
        static_cast<std::size_t>(batch) * static_cast<std::size_t>(workers_) + static_cast<std::size_t>(w);
    c.latency_ns[i] = start - stamp;
    c.moved[i] = Side::current() != from ? 1 : 0;
    ++c.runs[i];
    spin(work_iters_);
    // Every decrement of this batch precedes, in `pending`'s modification order, the one that
    // reads 1, and that one's next dispatch stores the new count after it. acq_rel also
    // orders the other workers' samples before the next batch (not needed: the scope's wait
    // publishes every sample to the reader).
    if (c.pending.fetch_sub(1, std::memory_order_acq_rel) == 1 && batch + 1 < batches_)
      sc.spawn([this, &sc, m, batch] { dispatch(sc, m, batch + 1); });
  }

  Side* side_;
  int messages_;
  int workers_;
  int batches_;
  std::uint64_t work_iters_;
  std::vector<chain> chains_;
};

// ---- execl-like --------------------------------------------------------------------------

template <class Side>
class execl_chain {
 public:
  // `steps` sequential steps; during run() a ticker thread submits a task of `bg_iters`
  // spin() iterations every `bg_period`.
  execl_chain(Side& side, std::uint64_t steps, std::uint64_t bg_iters, std::chrono::microseconds bg_period)
      : side_(&side), steps_(steps), bg_iters_(bg_iters), bg_period_(bg_period) {}

  // The chain on an idle pool: no ticker, no scope.
  void run_on_idle_pool() {
    reset();
    finished_.store(false, std::memory_order_relaxed);
    const std::int64_t t0 = now_ns();
    side_->submit([this] { detached_step(); });
    finished_.wait(false, std::memory_order_acquire);
    chain_ns_ = now_ns() - t0;
  }

  void run() {
    reset();
    bg_done_.store(0, std::memory_order_relaxed);
    bg_pending_.store(0, std::memory_order_relaxed);
    std::atomic<bool> stop{false};
    std::thread ticker([this, &stop] { tick(stop); });
    const std::int64_t t0 = now_ns();
    side_->execute([this] {
      typename Side::scope sc(*side_);
      sc.spawn([this, &sc] { step(sc); });
      sc.wait();
    });
    chain_ns_ = now_ns() - t0;
    stop.store(true, std::memory_order_relaxed);
    ticker.join();
  }

  std::uint64_t steps() const { return done_; }
  // Wall time of the last run's chain, from the root's submission to the last step's end.
  double chain_seconds() const { return static_cast<double>(chain_ns_) * 1e-9; }
  double migrations_per_step() const {
    return done_ < 2 ? 0.0 : static_cast<double>(migrations_) / static_cast<double>(done_ - 1);
  }
  std::uint64_t background_tasks() const { return bg_done_.load(std::memory_order_relaxed); }

  std::string verify() const {
    if (done_ != steps_) return "the chain ran " + std::to_string(done_) + " steps, expected " + std::to_string(steps_);
    if (outside_ != 0) return "a step ran outside the pool";
    return {};
  }

 private:
  void reset() {
    done_ = 0;
    migrations_ = 0;
    outside_ = 0;
    last_ = -1;
  }

  // Steps run one at a time (each is spawned by the previous one as its last act, and the
  // spawn publishes the previous step's writes), so these fields need no atomics.
  // True while more steps are due.
  bool count_step() {
    const int w = Side::current();
    if (w < 0) ++outside_;
    if (done_ > 0 && w != last_) ++migrations_;
    last_ = w;
    return ++done_ < steps_;
  }
  void step(typename Side::scope& sc) {
    if (count_step()) sc.spawn_continuation([this, &sc] { step(sc); });
  }
  void detached_step() {
    if (count_step()) {
      side_->continue_detached([this] { detached_step(); });
      return;
    }
    finished_.store(true, std::memory_order_release);  // pairs with run_on_idle_pool's wait
    finished_.notify_one();
  }

  // Runs until `stop`, then waits for its tasks, which reference this object.
  void tick(const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(bg_period_);
      bg_pending_.fetch_add(1, std::memory_order_relaxed);
      side_->submit([this] {
        spin(bg_iters_);
        bg_done_.fetch_add(1, std::memory_order_relaxed);
        bg_pending_.fetch_sub(1, std::memory_order_release);
      });
    }
    while (bg_pending_.load(std::memory_order_acquire) != 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  Side* side_;
  std::uint64_t steps_;
  std::uint64_t bg_iters_;
  std::chrono::microseconds bg_period_;
  std::uint64_t done_ = 0;
  std::uint64_t migrations_ = 0;
  std::uint64_t outside_ = 0;
  int last_ = -1;
  std::int64_t chain_ns_ = 1;
  std::atomic<std::uint64_t> bg_done_{0};
  std::atomic<std::uint64_t> bg_pending_{0};
  // The idle-pool chain's last step ran. Static: the waiter may return and destroy the chain
  // between the last step's store and its notify_one(); chains of one side never overlap.
  static inline std::atomic<bool> finished_{false};
};

}  // namespace wake

// The idle set: which workers search and which sleep (docs/design/parking.md).
// Modelled on the Go/Tokio scheduler: at most `max_searching` workers search at once; a spawn
// wakes a sleeper only when nobody searches; the last searcher to find work wakes another.
//
// Two counters on two cache lines: searching_ (workers searching) and unparked_ (workers not
// registered as sleepers that can search: a joiner that cannot, I-PARK-12, stays counted, so
// new work never waits on it). Written by workers (transitions) and notifiers (wake-ups), all RMWs
// seq_cst (I-PARK-1/2). should_wake() reads unparked_ first, and searching_ only when someone
// sleeps: a spawn storm with nobody asleep reads a line that nobody writes, while the thieves
// move searching_ once per steal (I-PARK-6). The sleepers list is guarded by lock_ and is only
// touched on the slow paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sync/atomics.hpp"

namespace rt::sync {

template <class S>
class idle_set {
 public:
  idle_set(int workers, int max_searching)
      : workers_(workers), max_searching_(max_searching < 1 ? 1 : max_searching),
        unparked_(static_cast<std::uint32_t>(workers)), sleeping_(static_cast<std::size_t>(workers), 0),
        as_searcher_(static_cast<std::size_t>(workers), 0), searchable_(static_cast<std::size_t>(workers), 1) {
    sleepers_.reserve(static_cast<std::size_t>(workers));
  }

  // A worker with no local work asks to search; refused when enough already do.
  bool try_start_searching() noexcept {
    if (searching_.load(S::seq_cst) >= static_cast<std::uint32_t>(max_searching_)) return false;
    searching_.fetch_add(1, S::seq_cst);
    return true;
  }
  // A searcher found work (or gives up): returns true when it was the last searcher (I-SEARCH-1).
  bool stop_searching() noexcept { return searching_.fetch_sub(1, S::seq_cst) == 1; }

  // Phase one of parking (I-PARK-2): the worker registers as a sleeper. The caller must then
  // issue a seq_cst fence and re-check every queue before it commits to parker::park().
  // Returns true when this worker was the last searcher.
  // A worker blocked in a join registers the same way with `joiner` set: spawns may then wake
  // it to help, and the joiners count keeps the runtime from looking quiescent while a task is
  // still in the middle of its join (I-SHUT-3). A joiner that may not help (I-HELP-1: past its
  // help floor) registers with `can_search` false: it stays off the sleepers list and counted
  // in unparked_, so a wake-up for new work never picks it and a notifier with only such
  // sleepers has nobody to wake (I-PARK-12); directed wakes and cancels still find it.
  bool prepare_park(int w, bool was_searching, bool joiner = false, bool can_search = true) noexcept {
    lock();
    if (joiner) joiners_.fetch_add(1, S::seq_cst);
    ++epoch_;
    const bool last = was_searching && searching_.fetch_sub(1, S::seq_cst) == 1;
    if (can_search) {
      unparked_.fetch_sub(1, S::seq_cst);
      sleepers_.push_back(w);
    }
    sleeping_[static_cast<std::size_t>(w)] = 1;
    searchable_[static_cast<std::size_t>(w)] = can_search ? 1 : 0;
    unlock();
    return last;
  }

  // A worker that registered but found work on its re-check removes itself. Returns
  // already_woken when a notifier already took its registration; then a token is (or will be)
  // pending in its parker and the notifier's intent is honoured by the caller (I-PARK-5).
  enum class cancel_result { cancelled, already_woken };
  cancel_result cancel_park(int w, bool joiner = false) noexcept {
    lock();
    cancel_result r = cancel_result::already_woken;
    if (sleeping_[static_cast<std::size_t>(w)]) {
      remove_locked(w);
      r = cancel_result::cancelled;
    }
    if (joiner) joiners_.fetch_sub(1, S::seq_cst);
    ++epoch_;
    unlock();
    return r;
  }

  // A hint for the wake path (relaxed): whether any worker that can search is registered as a
  // sleeper.
  bool anyone_parked() const noexcept {
    return unparked_.load(S::relaxed) < static_cast<std::uint32_t>(workers_);
  }

  // Notifier side: true when a sleeper should be woken for new shared work.
  bool should_wake() const noexcept {
    return unparked_.load(S::seq_cst) < static_cast<std::uint32_t>(workers_) && searching_.load(S::seq_cst) == 0;
  }

  // Takes the newest sleeper off the list as a searcher (the list holds only sleepers that can
  // search, I-PARK-12); -1 when none should be woken.
  int take_sleeper_to_search() noexcept {
    return take_sleeper_to_search([](int) { return true; });
  }
  // The same, taking the newest sleeper that `prefer` accepts when there is one (I-STEAL-19:
  // a sleeper of a node that no group prefers). `prefer` runs under the lock: it must not block.
  template <class P>
  int take_sleeper_to_search(P prefer) noexcept {
    if (!should_wake()) return -1;
    lock();
    int w = -1;
    if (should_wake() && !sleepers_.empty()) {
      std::size_t at = sleepers_.size() - 1;
      for (std::size_t i = sleepers_.size(); i-- > 0;) {
        if (prefer(sleepers_[i])) {
          at = i;
          break;
        }
      }
      w = sleepers_[at];
      sleepers_.erase(sleepers_.begin() + static_cast<std::ptrdiff_t>(at));
      sleeping_[static_cast<std::size_t>(w)] = 0;
      as_searcher_[static_cast<std::size_t>(w)] = 1;
      searching_.fetch_add(1, S::seq_cst);  // first: a notifier in between sees a searcher
      unparked_.fetch_add(1, S::seq_cst);
      ++epoch_;
    }
    unlock();
    return w;
  }
  // Directed wake of a searcher (I-STEAL-19: a searcher hands the remote tiers to worker w):
  // takes w's registration if it sleeps and may search, counting w as a searcher (after_wake
  // says as_searcher), whatever the number searching. False when w is not such a sleeper.
  bool take_sleeper_as_searcher(int w) noexcept {
    lock();
    const bool taken = sleeping_[static_cast<std::size_t>(w)] != 0 && searchable_[static_cast<std::size_t>(w)] != 0;
    if (taken) {
      searching_.fetch_add(1, S::seq_cst);  // first: a notifier in between sees a searcher
      remove_locked(w);
      as_searcher_[static_cast<std::size_t>(w)] = 1;
      ++epoch_;
    }
    unlock();
    return taken;
  }

  // Directed wake (mailbox hand-off, shutdown): takes worker w's registration if it sleeps.
  bool take_sleeper(int w) noexcept {
    lock();
    bool taken = sleeping_[static_cast<std::size_t>(w)] != 0;
    if (taken) {
      remove_locked(w);
      as_searcher_[static_cast<std::size_t>(w)] = 0;
      ++epoch_;
    }
    unlock();
    return taken;
  }

  // After parker::park() returns: still registered means the wake-up was for an earlier
  // registration or spurious, so park again (I-PARK-4). Otherwise returns whether the worker
  // was woken as a searcher (it then counts in `searching`).
  enum class wake_kind { still_parked, as_searcher, directed };
  wake_kind after_wake(int w) noexcept {
    lock();
    wake_kind k = sleeping_[static_cast<std::size_t>(w)] ? wake_kind::still_parked
                  : as_searcher_[static_cast<std::size_t>(w)] ? wake_kind::as_searcher
                                                              : wake_kind::directed;
    as_searcher_[static_cast<std::size_t>(w)] = 0;
    unlock();
    return k;
  }

  // Quiescence (I-SHUT-3), in two steps around a re-check of every queue: quiescent_epoch()
  // returns a non-zero token when every worker is registered and none is a blocked joiner;
  // confirm_quiescent(token) runs `commit` under the lock if no registration, cancellation
  // or wake-up happened since, and says whether it did.
  std::uint32_t joiner_count() const noexcept { return joiners_.load(S::seq_cst); }
  std::uint64_t quiescent_epoch() noexcept {
    lock();
    std::uint64_t e = unparked_.load(S::seq_cst) == 0 && joiners_.load(S::relaxed) == 0 ? epoch_ : 0;
    unlock();
    return e;
  }
  template <class F>
  bool confirm_quiescent(std::uint64_t token, const F& commit) noexcept {
    lock();
    const bool same = token != 0 && token == epoch_;
    if (same) commit();
    unlock();
    return same;
  }

 private:
  // Takes a registered sleeper w off the registration: off the list and back into unparked_
  // when it can search, else (I-PARK-12) it was on neither.
  void remove_locked(int w) noexcept {
    sleeping_[static_cast<std::size_t>(w)] = 0;
    if (searchable_[static_cast<std::size_t>(w)] == 0) return;
    for (std::size_t i = 0; i < sleepers_.size(); ++i) {
      if (sleepers_[i] == w) {
        sleepers_[i] = sleepers_.back();
        sleepers_.pop_back();
        break;
      }
    }
    unparked_.fetch_add(1, S::seq_cst);
  }
  void lock() noexcept {
    while (lock_.exchange(true, S::acquire)) {
      while (lock_.load(S::relaxed)) S::cpu_relax();
    }
  }
  void unlock() noexcept { lock_.store(false, S::release); }

  const int workers_;
  const int max_searching_;
  alignas(kCacheLine) typename S::template atomic<std::uint32_t> searching_{0};
  alignas(kCacheLine) typename S::template atomic<std::uint32_t> unparked_;
  alignas(kCacheLine) typename S::template atomic<bool> lock_{false};
  // Workers registered while blocked in a join: changed under lock_ (seq_cst RMWs), read
  // without it by completions that may have to wake a joiner (I-TASK-5).
  typename S::template atomic<std::uint32_t> joiners_{0};
  // Guarded by lock_: bumped by every registration, cancellation and wake-up (I-SHUT-3).
  std::uint64_t epoch_ = 1;
  // Guarded by lock_.
  std::vector<int> sleepers_;
  std::vector<unsigned char> sleeping_;
  std::vector<unsigned char> as_searcher_;
  std::vector<unsigned char> searchable_;  // by worker, meaningful while it sleeps
};

}  // namespace rt::sync

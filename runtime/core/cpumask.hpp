// cpumask: a dynamic bitset over worker (or PU) indexes, and for_each_cpu_wrap.
//
// The Linux scheduler scans sched-domain spans with for_each_cpu_wrap() so that CPUs looking
// for an idle sibling start at different places and do not all pile onto the same one
// (seed 000 patch 2/9, c743f0a5c50f). The 000 patch 3/9 changelog reports that the walker
// before that commit "would skip over CPUs when bits were consecutive in the bitmask". The walk
// here visits every set bit exactly once; tests/unit/core/wrap_test.cpp checks it against a
// reference order and shows the same check rejects a walker with that defect.
//
// Invariants (checked with RT_ASSERT, ids cited below):
//   I-CPUMASK-1  set/clear/test take a bit < size().
//   I-CPUMASK-2  operator& and operator| combine masks of the same size().
//   I-CPUMASK-3  a wrap walk starts at start < size() (any start when size() == 0).
//   Storage bits at positions >= size() in the last word are always zero; next(), count(),
//   empty() and operator== rely on it, and every mutator preserves it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/assert.hpp"

namespace rt::core {

class cpumask {
 public:
  cpumask() = default;
  explicit cpumask(std::size_t nbits) : nbits_(nbits), words_((nbits + kWordBits - 1) / kWordBits, 0) {}

  std::size_t size() const noexcept { return nbits_; }

  void set(std::size_t bit) {
    RT_ASSERT(bit < nbits_, "I-CPUMASK-1", "cpumask::set bit index out of range");
    words_[bit / kWordBits] |= one(bit);
  }
  void clear(std::size_t bit) {
    RT_ASSERT(bit < nbits_, "I-CPUMASK-1", "cpumask::clear bit index out of range");
    words_[bit / kWordBits] &= ~one(bit);
  }
  bool test(std::size_t bit) const {
    RT_ASSERT(bit < nbits_, "I-CPUMASK-1", "cpumask::test bit index out of range");
    return (words_[bit / kWordBits] & one(bit)) != 0;
  }

  // Number of set bits.
  std::size_t count() const noexcept {
    std::size_t c = 0;
    for (const std::uint64_t w : words_) c += static_cast<std::size_t>(std::popcount(w));
    return c;
  }

  // True when no bit is set (a mask of size 0 is empty).
  bool empty() const noexcept {
    for (const std::uint64_t w : words_) {
      if (w != 0) return false;
    }
    return true;
  }

  // First set bit >= from, or size() when there is none (also when from >= size()).
  std::size_t next(std::size_t from) const noexcept {
    if (from >= nbits_) return nbits_;
    std::size_t wi = from / kWordBits;
    std::uint64_t w = words_[wi] & (~std::uint64_t{0} << (from % kWordBits));
    for (;;) {
      if (w != 0) return wi * kWordBits + static_cast<std::size_t>(std::countr_zero(w));
      if (++wi == words_.size()) return nbits_;
      w = words_[wi];
    }
  }

  std::size_t first() const noexcept { return next(0); }

  cpumask operator&(const cpumask& o) const {
    RT_ASSERT(nbits_ == o.nbits_, "I-CPUMASK-2", "cpumask operator& on masks of different sizes");
    cpumask r(nbits_);
    for (std::size_t i = 0; i < words_.size(); ++i) r.words_[i] = words_[i] & o.words_[i];
    return r;
  }
  cpumask operator|(const cpumask& o) const {
    RT_ASSERT(nbits_ == o.nbits_, "I-CPUMASK-2", "cpumask operator| on masks of different sizes");
    cpumask r(nbits_);
    for (std::size_t i = 0; i < words_.size(); ++i) r.words_[i] = words_[i] | o.words_[i];
    return r;
  }

  // Equal when both the size and the set bits agree.
  bool operator==(const cpumask& o) const noexcept { return nbits_ == o.nbits_ && words_ == o.words_; }

  // f(bit) for every set bit, in ascending order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t wi = 0; wi < words_.size(); ++wi) {
      for (std::uint64_t w = words_[wi]; w != 0; w &= w - 1) {
        f(wi * kWordBits + static_cast<std::size_t>(std::countr_zero(w)));
      }
    }
  }

 private:
  static constexpr std::size_t kWordBits = 64;
  static constexpr std::uint64_t one(std::size_t bit) noexcept { return std::uint64_t{1} << (bit % kWordBits); }

  std::size_t nbits_ = 0;
  std::vector<std::uint64_t> words_;
};

// The set bits of a mask in wrap order from `start`: start, start+1, ..., size-1, 0, ...,
// start-1, each set bit exactly once, whether or not `start` itself is set. Usable in
// range-for (select_idle_cpu counts and breaks). The mask must outlive the range and keep its
// size during the walk. The walk reads the mask as it goes: a bit cleared before the walk
// reaches it is not visited (how the kernel's select_idle_core drops a core's SMT siblings).
class wrap_range {
 public:
  class iterator {
   public:
    using iterator_concept = std::input_iterator_tag;
    using iterator_category = std::input_iterator_tag;
    using value_type = std::size_t;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    std::size_t operator*() const noexcept { return cur_; }
    iterator& operator++() noexcept {
      seek(cur_ + 1);
      return *this;
    }
    void operator++(int) noexcept { seek(cur_ + 1); }
    friend bool operator==(const iterator& it, std::default_sentinel_t) noexcept {
      return it.mask_ == nullptr || it.cur_ == it.mask_->size();
    }

   private:
    friend class wrap_range;
    iterator(const cpumask* m, std::size_t start) noexcept : mask_(m), start_(start) { seek(start); }

    // Moves to the first set bit at or after `from` in wrap order. Before wrapping, the
    // search runs up to the end of the mask; after wrapping, a bit >= start_ ends the walk.
    // Each step searches from the bit after the current one, so consecutive set bits are
    // all visited (the old cpumask_next_wrap of 000 patch 2 lost them).
    void seek(std::size_t from) noexcept {
      const std::size_t n = mask_->size();
      if (!wrapped_) {
        cur_ = mask_->next(from);
        if (cur_ < n) return;
        wrapped_ = true;
        from = 0;
      }
      cur_ = mask_->next(from);
      if (cur_ >= start_) cur_ = n;
    }

    const cpumask* mask_ = nullptr;
    std::size_t start_ = 0;
    std::size_t cur_ = 0;
    bool wrapped_ = false;
  };

  wrap_range(const cpumask& m, std::size_t start) : mask_(&m), start_(start) {
    RT_ASSERT(start < m.size() || m.size() == 0, "I-CPUMASK-3", "wrap walk start out of range");
  }
  iterator begin() const noexcept { return iterator(mask_, start_); }
  std::default_sentinel_t end() const noexcept { return {}; }

 private:
  const cpumask* mask_;
  std::size_t start_;
};

inline wrap_range wrap(const cpumask& m, std::size_t start) { return wrap_range(m, start); }
// A temporary mask would die before a range-for over it ran (C++20 range-init rules).
void wrap(const cpumask&&, std::size_t) = delete;

// Calls f(bit) for every set bit of m in wrap order from `start` (see wrap_range). f returns
// void, or bool where false stops the walk.
template <class F>
void for_each_cpu_wrap(const cpumask& m, std::size_t start, F&& f) {
  using result = std::invoke_result_t<F&, std::size_t>;
  static_assert(std::is_void_v<result> || std::is_same_v<result, bool>,
                "for_each_cpu_wrap: f(bit) must return void or bool");
  for (const std::size_t bit : wrap(m, start)) {
    if constexpr (std::is_void_v<result>) {
      f(bit);
    } else {
      if (!f(bit)) return;
    }
  }
}

}  // namespace rt::core

// rt::parallel_for(begin, end, f): f(i) for every i in [begin, end), split recursively in
// halves down to an automatic grain (parallel_for_chunks_per_worker chunks per worker).
#pragma once

#include <cstddef>
#include <utility>

#include "rt/task_group.hpp"

namespace rt {

namespace detail {
// The grain for a range of n iterations on the current (or default) runtime.
std::size_t parallel_for_grain(std::size_t n);

template <class F>
void parallel_for_split(std::size_t b, std::size_t e, std::size_t grain, const F& f) {
  task_group g;
  while (e - b > grain) {
    std::size_t mid = b + (e - b) / 2;
    g.spawn([mid, e, grain, &f] { parallel_for_split(mid, e, grain, f); });
    e = mid;
  }
  for (std::size_t i = b; i < e; ++i) f(i);
  g.wait();
}
}  // namespace detail

template <class F>
void parallel_for(std::size_t begin, std::size_t end, const F& f) {
  if (end <= begin) return;
  detail::parallel_for_split(begin, end, detail::parallel_for_grain(end - begin), f);
}

}  // namespace rt

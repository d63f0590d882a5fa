// Strong id types: an index that cannot be passed where another kind of index is expected
// (a worker id where an LLC index belongs, and so on). node_id is public (include/rt/) and is
// not defined here.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>

#include "core/assert.hpp"

namespace rt::core {

// One id type per Tag. Construction from int is explicit; value() gives the int back and
// index() the same value as a container subscript (I-IDS-1: only non-negative ids index).
template <class Tag>
class strong_id {
 public:
  constexpr strong_id() noexcept = default;
  constexpr explicit strong_id(int v) noexcept : v_(v) {}

  constexpr int value() const noexcept { return v_; }
  std::size_t index() const {
    RT_ASSERT(v_ >= 0, "I-IDS-1", "negative id used as an index");
    return static_cast<std::size_t>(v_);
  }

  friend constexpr bool operator==(strong_id, strong_id) noexcept = default;
  friend constexpr auto operator<=>(strong_id, strong_id) noexcept = default;

 private:
  int v_ = 0;
};

struct worker_id_tag {};
struct llc_id_tag {};

// A worker thread, 0..workers-1 in layout order (policy/layout.hpp).
using worker_id = strong_id<worker_id_tag>;
// An LLC domain, an index into topology::llcs.
using llc_id = strong_id<llc_id_tag>;

}  // namespace rt::core

template <class Tag>
struct std::hash<rt::core::strong_id<Tag>> {
  std::size_t operator()(rt::core::strong_id<Tag> id) const noexcept { return std::hash<int>{}(id.value()); }
};
